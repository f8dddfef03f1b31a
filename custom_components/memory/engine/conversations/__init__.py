"""Conversations: the message log, its pages and its search.

`log` (ConversationLog: save, read, erase), `records` (conversation and
message records, their rows), `browse` (the panel's pages, digestion states,
where a memory came from), `search` (messages found by the hybrid search).
"""

from .browse import (
    STATUS_SQL,
    STATUSES,
    TOOL_MEMORY_SQL,
    ConversationEntry,
    ConversationPage,
    ConversationQuery,
    row_to_entry,
)
from .log import ConversationLog
from .records import (
    EMBEDDED_MAX_CHARS,
    EMBEDDED_MESSAGES_SQL,
    MESSAGE_COLUMNS,
    MIN_EMBEDDED_CHARS,
    ConversationInfo,
    ConversationRecord,
    MessageHit,
    MessageQuery,
    MessageRole,
    NewMessage,
    StoredConversation,
    StoredMessage,
    conversation_fields,
    cut,
    embedding_text,
    row_to_conversation,
    row_to_message,
)

__all__ = [
    "EMBEDDED_MAX_CHARS",
    "EMBEDDED_MESSAGES_SQL",
    "MESSAGE_COLUMNS",
    "MIN_EMBEDDED_CHARS",
    "STATUSES",
    "STATUS_SQL",
    "TOOL_MEMORY_SQL",
    "ConversationEntry",
    "ConversationInfo",
    "ConversationLog",
    "ConversationPage",
    "ConversationQuery",
    "ConversationRecord",
    "MessageHit",
    "MessageQuery",
    "MessageRole",
    "NewMessage",
    "StoredConversation",
    "StoredMessage",
    "conversation_fields",
    "cut",
    "embedding_text",
    "row_to_conversation",
    "row_to_entry",
    "row_to_message",
]
