"""PostgreSQL: the foundation of a second storage backend (issue #26).

`server` (can the engine use this server: connection, version, pgvector;
`redact_url` hides a URL's password), `schema` (the tables, versioned and
migrated under an advisory lock), `memories` (add with the SQLite store's
de-duplication, read, forget), `keywords` (search with FTS5's bm25),
`curation` (supersede, reword, details, restore, expire, recall), `reads`
(history, twins, topics, counts), `conversations` (the conversation log:
save, end, erase; `conversation_reads` its lists and pages,
`message_search` its keyword search with FTS5's bm25, `message_vectors`
its messages' vectors in pgvector, `message_hybrid` the two fused as
SQLite's log fuses them), `notify` (each
write's `pg_notify`, the `ChangeFeed` other instances listen with),
`vectors` (pgvector: exact below a size, HNSW above; `hnsw_builds` builds
the HNSW indexes in the background, one process at a time), and `store`: the
`PostgresStore` facade, `MemoryStore`'s calls composed of those parts
(`store_browse` its pages, `store_exports` what the exports read,
`store_vectors` its model's index, `store_earlier` the recall's
"Earlier" reads, `job_store` the embedding queue's jobs, claimed in its
instance's name, `secret_checks` the secret detector's recheck), its
listeners told of its own writes and, through a `ChangeFeed`, of other
instances'; `store_services`: the conversation log and digestion queue of
either backend's store (`conversation_log`, `digest_queue`), the one way
to get them; `faults`: the pool whose connection faults raise
`DatabaseUnavailableError`, the store's availability.
"""

from .bm25 import KeywordHit
from .conversation_reads import PostgresConversationReads
from .conversations import PostgresConversationLog
from .curation import PostgresCuration
from .digest_queue import PostgresDigestQueue
from .faults import COMMAND_TIMEOUT, CONNECT_TIMEOUT
from .job_store import PostgresJobs
from .keywords import PostgresKeywords
from .memories import PostgresMemories
from .message_search import PostgresMessageSearch, data_tokens
from .message_vectors import PgMessageVectors
from .notify import CHANNEL, Change, ChangeFeed, ChangeKind, ChangeListener
from .reads import PostgresReads
from .schema import SCHEMA_VERSION, migrate, schema_version
from .search import PostgresSearch
from .secret_checks import PostgresSecretChecks
from .server import (
    MIN_SERVER_VERSION,
    ServerCheck,
    ServerFacts,
    ServerProblem,
    check_server,
    classify,
    redact_url,
)
from .store import PostgresStore
from .store_services import (
    AnyConversationLog,
    AnyDigestQueue,
    AnyStore,
    conversation_log,
    digest_queue,
)
from .transfer import sqlite_to_postgres
from .transfer_back import postgres_to_sqlite
from .transfer_report import TableCount, TransferReport
from .vectors import PgVectorIndex, create_vector_table, register_vector

__all__ = [
    "CHANNEL",
    "COMMAND_TIMEOUT",
    "CONNECT_TIMEOUT",
    "MIN_SERVER_VERSION",
    "SCHEMA_VERSION",
    "AnyConversationLog",
    "AnyDigestQueue",
    "AnyStore",
    "Change",
    "ChangeFeed",
    "ChangeKind",
    "ChangeListener",
    "KeywordHit",
    "PgMessageVectors",
    "PgVectorIndex",
    "PostgresConversationLog",
    "PostgresConversationReads",
    "PostgresCuration",
    "PostgresDigestQueue",
    "PostgresJobs",
    "PostgresKeywords",
    "PostgresMemories",
    "PostgresMessageSearch",
    "PostgresReads",
    "PostgresSearch",
    "PostgresSecretChecks",
    "PostgresStore",
    "ServerCheck",
    "ServerFacts",
    "ServerProblem",
    "TableCount",
    "TransferReport",
    "check_server",
    "classify",
    "conversation_log",
    "create_vector_table",
    "data_tokens",
    "digest_queue",
    "migrate",
    "postgres_to_sqlite",
    "redact_url",
    "register_vector",
    "schema_version",
    "sqlite_to_postgres",
]
