"""Assist Memory's storage and retrieval engine.

A library with no Home Assistant imports: the integration drives it, plain
pytest tests it, and `bench/` measures it.
"""

from .conversations import (
    ConversationInfo,
    ConversationLog,
    MessageHit,
    MessageQuery,
    MessageRole,
    NewMessage,
    StoredConversation,
    StoredMessage,
)
from .errors import (
    ContentTooLongError,
    DatabaseCorruptError,
    DatabaseTooNewError,
    DatabaseUnavailableError,
    EmptyContentError,
    InvalidInputError,
    InvalidLimitError,
    InvalidScopeError,
    InvalidTagError,
    InvalidVectorError,
    StoreError,
    UnknownMemoryError,
    VectorDimensionError,
)
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
from .schema import SCHEMA_VERSION
from .store import MemoryStore

__all__ = [
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
