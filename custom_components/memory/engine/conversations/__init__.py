"""Conversations: the message log, its pages and its search.

`log` (ConversationLog: save, read, erase), `records` (conversation and
message records, their rows), `browse` (the panel's pages, digestion states,
where a memory came from), `search` (messages found by the hybrid search).
"""

from .browse import STATUSES, ConversationEntry, ConversationQuery
from .log import ConversationLog
from .records import (
    EMBEDDED_MAX_CHARS,
    EMBEDDED_MESSAGES_SQL,
    ConversationInfo,
    ConversationRecord,
    MessageHit,
    MessageQuery,
    MessageRole,
    NewMessage,
    StoredConversation,
    StoredMessage,
    conversation_fields,
    embedding_text,
)

__all__ = [
    "EMBEDDED_MAX_CHARS",
    "EMBEDDED_MESSAGES_SQL",
    "STATUSES",
    "ConversationEntry",
    "ConversationInfo",
    "ConversationLog",
    "ConversationQuery",
    "ConversationRecord",
    "MessageHit",
    "MessageQuery",
    "MessageRole",
    "NewMessage",
    "StoredConversation",
    "StoredMessage",
    "conversation_fields",
    "embedding_text",
]
