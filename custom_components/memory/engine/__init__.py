"""Assist Memory's storage and retrieval engine.

A library with no Home Assistant imports: the integration drives it, plain
pytest tests it, and `bench/` measures it.
"""

from .conversations.log import ConversationLog
from .conversations.records import (
    ConversationInfo,
    MessageHit,
    MessageQuery,
    MessageRole,
    NewMessage,
    StoredConversation,
    StoredMessage,
)
from .errors import (
    DATABASE_ERRORS,
    ContentTooLongError,
    DatabaseCorruptError,
    DatabaseTooNewError,
    DatabaseUnavailableError,
    EmptyContentError,
    ExportNotErasedError,
    InvalidInputError,
    InvalidLimitError,
    InvalidScopeError,
    InvalidTagError,
    InvalidVectorError,
    StoreError,
    UnknownMemoryError,
    VectorDimensionError,
)
from .memory_store import MemoryStore
from .models import (
    HOUSEHOLD,
    MAX_CONTENT_CHARS,
    MAX_SEARCH_LIMIT,
    AddResult,
    MemoryItem,
    MemoryStatus,
    MemoryType,
    NewMemory,
    Origin,
    SearchHit,
    SearchQuery,
    Signal,
    Source,
    StoreStats,
)
from .store.schema import SCHEMA_VERSION

__all__ = [
    "DATABASE_ERRORS",
    "HOUSEHOLD",
    "MAX_CONTENT_CHARS",
    "MAX_SEARCH_LIMIT",
    "SCHEMA_VERSION",
    "AddResult",
    "ContentTooLongError",
    "ConversationInfo",
    "ConversationLog",
    "DatabaseCorruptError",
    "DatabaseTooNewError",
    "DatabaseUnavailableError",
    "EmptyContentError",
    "ExportNotErasedError",
    "InvalidInputError",
    "InvalidLimitError",
    "InvalidScopeError",
    "InvalidTagError",
    "InvalidVectorError",
    "MemoryItem",
    "MemoryStatus",
    "MemoryStore",
    "MemoryType",
    "MessageHit",
    "MessageQuery",
    "MessageRole",
    "NewMemory",
    "NewMessage",
    "Origin",
    "SearchHit",
    "SearchQuery",
    "Signal",
    "Source",
    "StoreError",
    "StoreStats",
    "StoredConversation",
    "StoredMessage",
    "UnknownMemoryError",
    "VectorDimensionError",
]
