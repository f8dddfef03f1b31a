"""Store: the database file and the memories table.

`database` (connections, pragmas, migrations via `schema`, the writes'
lock, listeners; held, not inherited, by the parts below), `parts` (what
its holders see of it), `integrity`, `files`, `vec0_leftovers`; the
memories table: `rows` (validation, mapping, inserts), `memories`,
`memory_vectors`, `curation`, `browse` (pages and history), `exports`
(what the exports read), `earlier` (what the recall's "Earlier" lines
read), `lookups`, `reanalysis`.
"""

from .browse import (
    MAX_CHAIN,
    BrowsePage,
    BrowseQuery,
    Keyset,
    browse,
    count_rows,
    decode_cursor,
    encode_cursor,
    history,
    keyset_page,
)
from .curation import MemoryCuration
from .database import BackendChoice, Database
from .earlier import (
    EarlierConversation,
    EarlierQuery,
    EarlierSummary,
    EarlierTurn,
    earlier_conversations,
    earlier_filters,
)
from .exports import active_scopes, browse_all, count_changed
from .files import DATABASE_SUFFIXES, marker_path, move_aside, remove_database
from .integrity import IntegrityCheck
from .lookups import active_by_topic, find_active, stored_vectors
from .memories import MemoryTable
from .memory_vectors import MemoryVectors
from .parts import DatabaseAccess, DerivedData, EraseListener
from .reanalysis import BATCH, pending, prepare, write
from .rows import (
    INSERT_COLUMNS,
    ITEM_COLUMNS,
    Prepared,
    insert_row,
    memory_key,
    memory_terms,
    normalize_tags,
    row_to_item,
    validate_limit,
    validate_memory,
    validate_scope,
)
from .schema import SCHEMA_VERSION

__all__ = [
    "BATCH",
    "DATABASE_SUFFIXES",
    "INSERT_COLUMNS",
    "ITEM_COLUMNS",
    "MAX_CHAIN",
    "SCHEMA_VERSION",
    "BackendChoice",
    "BrowsePage",
    "BrowseQuery",
    "Database",
    "DatabaseAccess",
    "DerivedData",
    "EarlierConversation",
    "EarlierQuery",
    "EarlierSummary",
    "EarlierTurn",
    "EraseListener",
    "IntegrityCheck",
    "Keyset",
    "MemoryCuration",
    "MemoryTable",
    "MemoryVectors",
    "Prepared",
    "active_by_topic",
    "active_scopes",
    "browse",
    "browse_all",
    "count_changed",
    "count_rows",
    "decode_cursor",
    "earlier_conversations",
    "earlier_filters",
    "encode_cursor",
    "find_active",
    "history",
    "insert_row",
    "keyset_page",
    "marker_path",
    "memory_key",
    "memory_terms",
    "move_aside",
    "normalize_tags",
    "pending",
    "prepare",
    "remove_database",
    "row_to_item",
    "stored_vectors",
    "validate_limit",
    "validate_memory",
    "validate_scope",
    "write",
]
