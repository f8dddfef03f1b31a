"""The conversation log's records: what a message is, and how rows become one.

The data types the log takes and returns, the columns it reads and how a row
maps onto a `StoredMessage` or `StoredConversation`, how long a text may be,
and which messages get a vector (the rule `embedding_jobs.py` queues by, in
Python and in SQL).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
import sqlite3
from typing import Any, Final

import aiosqlite

from ..models import HOUSEHOLD, Signal, Vector, from_timestamp
from ..sql import IDS, rows_in

# Longer texts are cut (with a marker): a chat message is not a memory, and a
# tool result (an entity dump, say) should not bloat the database.
MAX_MESSAGE_CHARS: Final = 16_000
TRUNCATED_MARK: Final = " […]"

# What is embedded: user and assistant messages with at least this many
# characters once trimmed, cut to the first EMBEDDED_MAX_CHARS (a memory's
# limit; embedding models read a few hundred words at most). Tool results
# (entity dumps, JSON) and one-word replies ("OK.", "Done.", "Thank you!")
# are left to keyword search: their vectors would cost provider calls and
# memory and match nearly any question.
EMBEDDED_ROLES: Final = ("user", "assistant")
MIN_EMBEDDED_CHARS: Final = 12
EMBEDDED_MAX_CHARS: Final = 2_000
_BLANK: Final = " \t\n\r"
# The same rule in SQL, for the queue (rows aliased `m`).
EMBEDDED_MESSAGES_SQL: Final = (
    f"m.role IN ('{EMBEDDED_ROLES[0]}', '{EMBEDDED_ROLES[1]}') AND "
    "length(trim(m.content, ' ' || char(9, 10, 13))) >= "
    f"{MIN_EMBEDDED_CHARS}"
)

MESSAGE_COLUMNS: Final = (
    "m.id, m.conversation, c.conversation_id, m.role, m.content, m.data, "
    "m.tool_name, m.tool_call_id, m.scope, m.agent_id, m.user_id, m.device_id, "
    "m.created_at"
)
# A conversation's columns after its scope (which a listing may choose).
CONVERSATION_REST: Final = (
    "c.agent_id, c.user_id, c.device_id, c.started_at, c.updated_at, c.ended_at, "
    "(SELECT count(*) FROM conversation_messages m WHERE m.conversation = c.id) "
    "AS messages"
)
CONVERSATION_COLUMNS: Final = f"c.id, c.conversation_id, c.scope, {CONVERSATION_REST}"


class MessageRole(StrEnum):
    """Who wrote a message. Tool calls are part of the assistant's message."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL_RESULT = "tool_result"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationInfo:
    """What the caller knows about a conversation; saved with its messages.

    Its scope, user and device are who started it: kept from the first save,
    as later saves may come from someone continuing the conversation.
    """

    conversation_id: str
    started_at: datetime
    scope: str = HOUSEHOLD
    agent_id: str | None = None
    user_id: str | None = None
    device_id: str | None = None
    ended_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NewMessage:
    """A message to append; `data` is JSON of tool calls or a tool result."""

    role: MessageRole
    content: str
    created_at: datetime
    scope: str = HOUSEHOLD
    data: str = ""
    tool_name: str | None = None
    tool_call_id: str | None = None
    agent_id: str | None = None
    user_id: str | None = None
    device_id: str | None = None
    # The language the turn was spoken in (Assist's, e.g. "de-DE", stored as
    # "de"); '' when not known: the store's default is used to analyse it.
    language: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationRecord:
    """A row of `conversations`: the fields every view of it has.

    `ended_at` is None while the conversation may go on.
    """

    id: int
    conversation_id: str
    scope: str
    agent_id: str | None
    user_id: str | None
    device_id: str | None
    started_at: datetime
    updated_at: datetime
    ended_at: datetime | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredConversation(ConversationRecord):
    """A conversation as stored, with how many messages it has."""

    messages: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredMessage:
    """A message as stored."""

    id: int
    conversation: int
    conversation_id: str
    role: MessageRole
    content: str
    data: str
    tool_name: str | None
    tool_call_id: str | None
    scope: str
    agent_id: str | None
    user_id: str | None
    device_id: str | None
    created_at: datetime

    def as_dict(self) -> dict[str, Any]:
        """Compact form for action responses."""
        result: dict[str, Any] = {
            "id": self.id,
            "conversation_id": self.conversation_id,
            "role": str(self.role),
            "content": self.content,
            "scope": self.scope,
            "agent_id": self.agent_id,
            "device_id": self.device_id,
            "created_at": self.created_at.isoformat(),
        }
        if self.tool_name is not None:
            result["tool_name"] = self.tool_name
        if self.data:
            result["data"] = self.data
        return result


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageQuery:
    """A search of the log; empty text or `*` lists the newest messages.

    With `vector` (the query embedded by the store's model), messages are
    also found by meaning; without it, or before any message has a vector
    of that model, by keywords only.
    """

    text: str = ""
    vector: Vector | None = None
    scopes: tuple[str, ...] | None = None
    since: datetime | None = None
    limit: int = 10
    min_score: float = 0.0
    # The query's language (a tag such as "de-DE"); None: the store's.
    language: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageHit:
    """One message found by a search, scored 0..1 like memory hits."""

    message: StoredMessage
    score: float
    matched: tuple[Signal, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Return the message with its score and the signals that found it."""
        return {
            **self.message.as_dict(),
            "score": round(self.score, 4),
            "matched": [str(signal) for signal in self.matched],
        }


def embedding_text(content: str) -> str:
    """Return the part of a message that is embedded (and hashed for the cache)."""
    return content.strip(_BLANK)[:EMBEDDED_MAX_CHARS]


def cut(text: str) -> str:
    """Cut a text longer than `MAX_MESSAGE_CHARS`, marking the cut."""
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    return text[: MAX_MESSAGE_CHARS - len(TRUNCATED_MARK)] + TRUNCATED_MARK


def _time(value: float | None) -> datetime:
    moment = from_timestamp(value)
    assert moment is not None  # noqa: S101 - NOT NULL columns
    return moment


def row_to_message(row: sqlite3.Row) -> StoredMessage:
    """Map a row of `MESSAGE_COLUMNS` onto a message."""
    return StoredMessage(
        id=row["id"],
        conversation=row["conversation"],
        conversation_id=row["conversation_id"],
        role=MessageRole(row["role"]),
        content=row["content"],
        data=row["data"],
        tool_name=row["tool_name"],
        tool_call_id=row["tool_call_id"],
        scope=row["scope"],
        agent_id=row["agent_id"],
        user_id=row["user_id"],
        device_id=row["device_id"],
        created_at=_time(row["created_at"]),
    )


def conversation_fields(row: sqlite3.Row) -> dict[str, Any]:
    """Return the fields of `ConversationRecord` read from a row, by name.

    `StoredConversation` and digestion's `PendingConversation` add their own.
    """
    return {
        "id": row["id"],
        "conversation_id": row["conversation_id"],
        "scope": row["scope"],
        "agent_id": row["agent_id"],
        "user_id": row["user_id"],
        "device_id": row["device_id"],
        "started_at": _time(row["started_at"]),
        "updated_at": _time(row["updated_at"]),
        "ended_at": from_timestamp(row["ended_at"]),
    }


def row_to_conversation(row: sqlite3.Row) -> StoredConversation:
    """Map a row of `CONVERSATION_COLUMNS` onto a conversation."""
    return StoredConversation(**conversation_fields(row), messages=int(row["messages"]))


async def messages_by_id(
    reader: aiosqlite.Connection, ids: Sequence[int]
) -> dict[int, StoredMessage]:
    """Messages by id; missing ids are absent from the result."""
    rows = await rows_in(
        reader,
        f"SELECT {MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
        "JOIN conversations c ON c.id = m.conversation "
        f"WHERE m.id IN ({IDS})",
        sorted(set(ids)),
    )
    return {row["id"]: row_to_message(row) for row in rows}
