"""Import and export: memories in and out of files.

Export: `markdown` (readable views), `export_json` (the lossless copy),
`export_files` (files on disk), `sources` (what they read of a store and a
log, on SQLite or PostgreSQL). Import: `import_entries`, `import_formats`,
`import_text`, `import_similar`, `importing` (preview and one-transaction
import by `memory.add`'s rules).
"""

from .export_files import folder_name, remove_export, write_export, written_exports
from .export_json import every_memory, render_json
from .import_entries import MAX_IMPORT_BYTES, ImportFile, ImportFormat
from .import_formats import read_import
from .importing import preview_import, run_import
from .markdown import (
    active_memories,
    changed_since,
    conversations_with_messages,
    group_by_day,
    memory_scopes,
    render_day,
    render_memories,
)
from .sources import ConversationSource, MemorySource

__all__ = [
    "MAX_IMPORT_BYTES",
    "ConversationSource",
    "ImportFile",
    "ImportFormat",
    "MemorySource",
    "active_memories",
    "changed_since",
    "conversations_with_messages",
    "every_memory",
    "folder_name",
    "group_by_day",
    "memory_scopes",
    "preview_import",
    "read_import",
    "remove_export",
    "render_day",
    "render_json",
    "render_memories",
    "run_import",
    "write_export",
    "written_exports",
]
