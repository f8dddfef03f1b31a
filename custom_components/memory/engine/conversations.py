"""The conversation log: every Assist message, kept for search and digestion.

Its tables live in the memory database (created by a migration in
`schema.py`); writes go through the store's single-writer transaction and
reads through its reader connection, so the log never blocks a recall.

A conversation row is one chat session. Home Assistant may reuse a
conversation id once a session has ended, so the row id is the key and the
conversation id is an attribute. Every message carries the scope of the
person who was speaking (or the household), which is what searches filter
on: one person's conversations never reach another person's results. Two
people may speak in one session (one continues the other's conversation):
the row keeps who started it, each message its own speaker, and a listing
for some scopes shows a conversation as the first of its speakers among
them, with their messages only. Messages are never edited, only added and
erased.

With an embedding model, user and assistant messages also get vectors (made
by `embedding_queue.py`, kept in `message_embeddings`), and a search given a
query vector ranks by both signals with the same fusion as memories. The
vectors are searched through an in-memory int8 index (`NumpyIndex`) that is
derived data: it catches up from the table on each semantic search, and
purges take their ids out of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
import contextlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
import sqlite3
from typing import Any, Final

import aiosqlite
import numpy as np

from .errors import InvalidInputError, InvalidLimitError, StoreError
from .fusion import fuse
from .memory_rows import validate_scope
from .models import (
    HOUSEHOLD,
    MAX_SEARCH_LIMIT,
    Signal,
    Vector,
    from_timestamp,
    to_timestamp,
)
from .semantic import SEMANTIC_POOL, cosines_outside_pool, semantic_pool
from .sql import IDS, placeholders, rows_in
from .store import MemoryStore
from .text import fts_match_expression, query_terms, term_coverage
from .vectors import NumpyIndex, as_unit_vector

# Longer texts are cut (with a marker): a chat message is not a memory, and a
# tool result (an entity dump, say) should not bloat the database.
MAX_MESSAGE_CHARS: Final = 16_000
TRUNCATED_MARK: Final = " […]"
# Candidates the keyword search ranks before the minimum score and limit.
KEYWORD_POOL: Final = 50
# FTS5 column weights: content, data (tool calls and results).
BM25_WEIGHTS: Final = (1.0, 0.3)
_LOAD_BATCH: Final = 4096

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

_MESSAGE_COLUMNS: Final = (
    "m.id, m.conversation, c.conversation_id, m.role, m.content, m.data, "
    "m.tool_name, m.tool_call_id, m.scope, m.agent_id, m.user_id, m.device_id, "
    "m.created_at"
)
# A conversation's columns after its scope (which a listing may choose).
_CONVERSATION_REST: Final = (
    "c.agent_id, c.user_id, c.device_id, c.started_at, c.updated_at, c.ended_at, "
    "(SELECT count(*) FROM conversation_messages m WHERE m.conversation = c.id) "
    "AS messages"
)
_CONVERSATION_COLUMNS: Final = f"c.id, c.conversation_id, c.scope, {_CONVERSATION_REST}"


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


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredConversation:
    """A conversation as stored; `ended_at` is None while it may go on."""

    id: int
    conversation_id: str
    scope: str
    agent_id: str | None
    user_id: str | None
    device_id: str | None
    started_at: datetime
    updated_at: datetime
    ended_at: datetime | None
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


def _cut(text: str) -> str:
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    return text[: MAX_MESSAGE_CHARS - len(TRUNCATED_MARK)] + TRUNCATED_MARK


def _time(value: float | None) -> datetime:
    moment = from_timestamp(value)
    assert moment is not None  # noqa: S101 - NOT NULL columns
    return moment


def _row_to_message(row: sqlite3.Row) -> StoredMessage:
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


def _row_to_conversation(row: sqlite3.Row) -> StoredConversation:
    return StoredConversation(
        id=row["id"],
        conversation_id=row["conversation_id"],
        scope=row["scope"],
        agent_id=row["agent_id"],
        user_id=row["user_id"],
        device_id=row["device_id"],
        started_at=_time(row["started_at"]),
        updated_at=_time(row["updated_at"]),
        ended_at=from_timestamp(row["ended_at"]),
        messages=int(row["messages"]),
    )


class ConversationLog:
    """Appends, finds and erases conversation messages in the memory database."""

    def __init__(self, store: MemoryStore) -> None:
        """Use `store`'s connections; it must be open before any call."""
        self._store = store
        # Vectors of the store's model, loaded on the first semantic search;
        # `_indexed` is the last `message_embeddings.id` read into it.
        self._index: NumpyIndex | None = None
        self._dim = 0
        self._indexed = 0
        self._index_lock = asyncio.Lock()

    # -- writes -------------------------------------------------------------

    async def save(
        self, batch: Sequence[tuple[int | None, ConversationInfo, Sequence[NewMessage]]]
    ) -> list[int]:
        """Save conversations and append their messages, in one transaction.

        Each entry is `(row id or None for a new conversation, info,
        messages)`; returns the row ids in the same order. Everything is
        validated before anything is written.
        """
        for _key, info, messages in batch:
            validate_scope(info.scope)
            if not info.conversation_id:
                raise InvalidInputError("a conversation needs an id")
            for message in messages:
                validate_scope(message.scope)
        keys: list[int] = []
        async with self._store.transaction() as conn:
            for key, info, messages in batch:
                keys.append(await self._save_one(conn, key, info, messages))
        return keys

    async def _save_one(
        self,
        conn: aiosqlite.Connection,
        key: int | None,
        info: ConversationInfo,
        messages: Sequence[NewMessage],
    ) -> int:
        started = to_timestamp(info.started_at)
        times = [to_timestamp(message.created_at) for message in messages]
        ended = to_timestamp(info.ended_at)
        updated = max(value for value in (started, ended, *times) if value is not None)
        meta = (info.scope, info.agent_id, info.user_id, info.device_id)
        if key is None:
            async with conn.execute(
                "INSERT INTO conversations (conversation_id, scope, agent_id, "
                "user_id, device_id, started_at, updated_at, ended_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (info.conversation_id, *meta, started, updated, ended),
            ) as cursor:
                row = await cursor.fetchone()
            assert row is not None  # noqa: S101 - RETURNING always yields
            key = int(row[0])
        else:
            # Who started it stays; someone continuing it speaks in messages.
            async with conn.execute(
                "UPDATE conversations SET agent_id = coalesce(agent_id, ?), "
                "updated_at = max(updated_at, ?), "
                "ended_at = coalesce(?, ended_at) WHERE id = ? RETURNING id",
                (info.agent_id, updated, ended, key),
            ) as cursor:
                if await cursor.fetchone() is None:
                    # Erased meanwhile (retention): start it anew if there is
                    # anything new to keep; an empty row is not worth one.
                    if not messages:
                        return key
                    return await self._save_one(conn, None, info, messages)
        await conn.executemany(
            "INSERT INTO conversation_messages (conversation, role, content, data, "
            "tool_name, tool_call_id, scope, agent_id, user_id, device_id, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    key,
                    str(message.role),
                    _cut(message.content),
                    _cut(message.data),
                    message.tool_name,
                    message.tool_call_id,
                    message.scope,
                    message.agent_id,
                    message.user_id,
                    message.device_id,
                    created,
                )
                for message, created in zip(messages, times, strict=True)
            ],
        )
        return key

    async def close_open(self) -> int:
        """End conversations left open (a restart drops live sessions).

        They end when they were last updated; returns how many there were.
        """
        async with self._store.transaction() as conn:
            cursor = await conn.execute(
                "UPDATE conversations SET ended_at = updated_at WHERE ended_at IS NULL"
            )
            return cursor.rowcount

    async def purge(self, ids: Sequence[int]) -> list[int]:
        """Erase messages by id, leaving no copy of their text; returns the ids.

        Unknown ids are ignored (a message may already be gone to retention).
        """
        unique = sorted(set(ids))
        if not unique:
            return []
        erased: list[int] = []
        scopes: set[str] = set()
        async with self._store.transaction() as conn:
            for row in await rows_in(
                conn,
                f"DELETE FROM conversation_messages WHERE id IN ({IDS}) "  # noqa: S608
                "RETURNING id, scope",
                unique,
            ):
                erased.append(int(row[0]))
                scopes.add(str(row[1]))
            if erased:
                await self._optimize(conn)
        if erased:
            await self._unindex(erased)
            await self._store.truncate_wal()
            await self._store.erased(scopes)
        return sorted(erased)

    async def purge_before(self, cutoff: datetime) -> int:
        """Erase messages older than `cutoff`, and conversations left empty.

        Retention: returns how many messages went. A conversation that still
        has newer messages stays.
        """
        before = to_timestamp(cutoff)
        async with self._store.transaction() as conn:
            async with conn.execute(
                "DELETE FROM conversation_messages WHERE created_at < ? "
                "RETURNING id, scope",
                (before,),
            ) as cursor:
                rows = await cursor.fetchall()
            ids = [int(row[0]) for row in rows]
            erased = len(ids)
            await conn.execute(
                "DELETE FROM conversations WHERE updated_at < ? AND NOT EXISTS "
                "(SELECT 1 FROM conversation_messages m "
                "WHERE m.conversation = conversations.id)",
                (before,),
            )
            if erased:
                await self._optimize(conn)
        if erased:
            await self._unindex(ids)
            await self._store.truncate_wal()
            await self._store.erased(str(row[1]) for row in rows)
        return erased

    @staticmethod
    async def _optimize(conn: aiosqlite.Connection) -> None:
        # Merging the index segments drops the erased rows' tokens for good.
        await conn.execute(
            "INSERT INTO conversation_messages_fts (conversation_messages_fts) "
            "VALUES ('optimize')"
        )

    # -- reads --------------------------------------------------------------

    async def conversations(
        self,
        *,
        scopes: tuple[str, ...] | None = None,
        since: datetime | None = None,
        ended: bool | None = None,
        limit: int = 100,
    ) -> list[StoredConversation]:
        """Conversations updated since a time, newest first.

        With `scopes`, those where someone of these scopes spoke, each shown
        as the first such speaker (`messages` still counts every message).
        """
        columns = _CONVERSATION_COLUMNS
        clauses: list[str] = []
        params: list[Any] = []
        if scopes is not None:
            if not scopes:
                return []
            among = f"m.scope IN ({placeholders(len(scopes))})"
            columns = (
                "c.id, c.conversation_id, (SELECT m.scope FROM "  # noqa: S608
                "conversation_messages m WHERE m.conversation = c.id AND "
                f"{among} ORDER BY m.id LIMIT 1) AS scope, {_CONVERSATION_REST}"
            )
            clauses.append(
                "EXISTS (SELECT 1 FROM conversation_messages m "  # noqa: S608
                f"WHERE m.conversation = c.id AND {among})"
            )
            params.extend([*scopes, *scopes])
        if since is not None:
            clauses.append("c.updated_at >= ?")
            params.append(to_timestamp(since))
        if ended is not None:
            clauses.append("c.ended_at IS NOT NULL" if ended else "c.ended_at IS NULL")
        where = " AND ".join(clauses) or "1"
        async with self._store.reader.execute(
            f"SELECT {columns} FROM conversations c "  # noqa: S608
            f"WHERE {where} ORDER BY c.updated_at DESC, c.id DESC LIMIT ?",
            [*params, limit],
        ) as cursor:
            rows = await cursor.fetchall()
        return [_row_to_conversation(row) for row in rows]

    async def messages(self, conversation: int) -> list[StoredMessage]:
        """Every message of one conversation (by row id), oldest first."""
        async with self._store.reader.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
            "JOIN conversations c ON c.id = m.conversation "
            "WHERE m.conversation = ? ORDER BY m.id",
            (conversation,),
        ) as cursor:
            rows = await cursor.fetchall()
        return [_row_to_message(row) for row in rows]

    async def messages_of(
        self, conversations: Sequence[int]
    ) -> dict[int, list[StoredMessage]]:
        """Every message of these conversations (by row id), oldest first in each.

        One query per 500 conversations, not one per conversation; one with
        no message is absent from the result.
        """
        unique = sorted(set(conversations))
        found: dict[int, list[StoredMessage]] = {}
        for row in await rows_in(
            self._store.reader,
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
            "JOIN conversations c ON c.id = m.conversation "
            f"WHERE m.conversation IN ({IDS}) ORDER BY m.conversation, m.id",
            unique,
        ):
            message = _row_to_message(row)
            found.setdefault(message.conversation, []).append(message)
        return found

    async def get_messages(self, ids: Sequence[int]) -> dict[int, StoredMessage]:
        """Messages by id; missing ids are absent from the result."""
        unique = sorted(set(ids))
        rows = await rows_in(
            self._store.reader,
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
            "JOIN conversations c ON c.id = m.conversation "
            f"WHERE m.id IN ({IDS})",
            unique,
        )
        return {row["id"]: _row_to_message(row) for row in rows}

    async def search(self, query: MessageQuery) -> list[MessageHit]:
        """Find messages by keywords and meaning, scored like memories.

        0..1, best first; each hit names the signals that found it. Scope and
        time filters apply to both signals in SQL, so a message outside the
        query's scopes is never a candidate.
        """
        if not 1 <= query.limit <= MAX_SEARCH_LIMIT:
            raise InvalidLimitError(
                f"limit must be 1 to {MAX_SEARCH_LIMIT}",
                limit=str(query.limit),
                max=str(MAX_SEARCH_LIMIT),
            )
        if query.scopes is not None and not query.scopes:
            return []
        clauses: list[str] = []
        params: list[Any] = []
        if query.scopes is not None:
            clauses.append(f"m.scope IN ({placeholders(len(query.scopes))})")
            params.extend(query.scopes)
        if query.since is not None:
            clauses.append("m.created_at >= ?")
            params.append(to_timestamp(query.since))
        filters = (" AND ".join(clauses) or "1", params)
        text = query.text.strip()
        if text in {"", "*"} and query.vector is None:
            return await self._recent(filters, query.limit)
        # The vector scan runs in a worker thread: start it first so that it
        # overlaps the FTS5 query, as the memory search does.
        semantic_task = asyncio.create_task(self._semantic(query, filters))
        try:
            keyword = await self._keyword(text, filters, max(KEYWORD_POOL, query.limit))
        except BaseException:
            semantic_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, StoreError):
                await semantic_task
            raise
        semantic = await semantic_task
        have = {hit[0] for hit in keyword}
        outside = [item_id for item_id, _ in semantic if item_id not in have]
        if outside and len(keyword) >= max(KEYWORD_POOL, query.limit):
            # The keyword pool was full: semantic hits beyond it may match too.
            keyword += await self._keyword(text, filters, len(outside), only=outside)
        similarity = await self._similarity(query, semantic, [h[0] for h in keyword])
        fused = fuse(keyword, semantic, similarity)
        ranked = [entry for entry in fused if entry.score >= query.min_score][
            : query.limit
        ]
        found = await self.get_messages([entry.id for entry in ranked])
        return [
            MessageHit(
                message=found[entry.id], score=entry.score, matched=entry.signals
            )
            for entry in ranked
            if entry.id in found
        ]

    async def _recent(
        self, filters: tuple[str, list[Any]], limit: int
    ) -> list[MessageHit]:
        where, params = filters
        async with self._store.reader.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
            "JOIN conversations c ON c.id = m.conversation "
            f"WHERE {where} ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
            [*params, limit],
        ) as cursor:
            rows = await cursor.fetchall()
        return [MessageHit(message=_row_to_message(row), score=1.0) for row in rows]

    async def _keyword(
        self,
        text: str,
        filters: tuple[str, list[Any]],
        limit: int,
        only: Sequence[int] = (),
    ) -> list[tuple[int, float, float]]:
        """FTS5 hits `(id, bm25, coverage)`, best first; `only` restricts ids."""
        expression = fts_match_expression(text)
        if expression is None:
            return []  # no words (only punctuation): nothing to match
        where, params = filters
        weights = ", ".join(str(weight) for weight in BM25_WEIGHTS)
        restrict = f" AND m.id IN ({placeholders(len(only))})" if only else ""
        async with self._store.reader.execute(
            "SELECT m.id, m.content, m.data, "  # noqa: S608
            f"bm25(conversation_messages_fts, {weights}) AS rank "
            "FROM conversation_messages_fts JOIN conversation_messages m "
            "ON m.id = conversation_messages_fts.rowid "
            f"WHERE conversation_messages_fts MATCH ? AND {where}{restrict} "
            "ORDER BY rank LIMIT ?",
            [expression, *params, *only, limit],
        ) as cursor:
            rows = await cursor.fetchall()
        terms = query_terms(text)
        return [
            (int(row[0]), float(row[3]), term_coverage(terms, f"{row[1]} {row[2]}"))
            for row in rows
        ]

    # -- vectors ------------------------------------------------------------

    async def _vector_index(self) -> tuple[str, int, NumpyIndex] | None:
        """Return the index of the store's model, caught up with the table."""
        model = self._store.model
        if model is None:
            return None
        reader = self._store.reader
        async with self._index_lock:
            if self._index is None:
                async with reader.execute(
                    "SELECT dim, (SELECT count(*) FROM message_embeddings "
                    "WHERE model = ?) FROM embedding_models WHERE model = ?",
                    (model, model),
                ) as cursor:
                    row = await cursor.fetchone()
                if row is None:
                    return None  # nothing embedded by this model yet
                self._dim = int(row[0])
                self._index = NumpyIndex(self._dim, capacity=int(row[1]))
                self._indexed = 0
            index = self._index
            async with reader.execute(
                "SELECT id, message_id, vector FROM message_embeddings "
                "WHERE id > ? AND model = ? ORDER BY id",
                (self._indexed, model),
            ) as cursor:
                while rows := list(await cursor.fetchmany(_LOAD_BATCH)):
                    matrix = np.frombuffer(
                        b"".join(row[2] for row in rows), dtype=np.float32
                    ).reshape(len(rows), -1)
                    await index.add([int(row[1]) for row in rows], matrix)
                    self._indexed = int(rows[-1][0])
        return model, self._dim, index

    async def _unindex(self, ids: Sequence[int]) -> None:
        """Take erased messages out of the index."""
        async with self._index_lock:
            if self._index is not None:
                await self._index.remove(ids)

    @property
    def index_bytes(self) -> int:
        """Memory held by the message vector index (0 until first used)."""
        return 0 if self._index is None else self._index.nbytes

    async def _semantic(
        self, query: MessageQuery, filters: tuple[str, list[Any]]
    ) -> list[tuple[int, float]]:
        """Find the nearest messages `(id, cosine)` passing the filters, best first.

        The int8 index proposes candidates; their float32 vectors, read with
        the filters, are scored exactly. When a selective filter (one
        person's messages) leaves too few, its subset is scanned exactly.
        """
        if query.vector is None:
            return []
        found = await self._vector_index()
        if found is None:
            return []
        model, dim, index = found
        unit = as_unit_vector(query.vector)
        if len(unit) != dim:
            return []  # not this model's query: keywords only
        where, params = filters
        base = (
            "SELECT e.message_id, e.vector FROM message_embeddings e "  # noqa: S608
            "JOIN conversation_messages m ON m.id = e.message_id "
            f"WHERE e.model = ? AND {where}"
        )
        return await semantic_pool(
            self._store.reader,
            index,
            unit,
            base=base,
            args=[model, *params],
            key="e.message_id",
            pool=max(SEMANTIC_POOL, query.limit),
        )

    async def _similarity(
        self,
        query: MessageQuery,
        semantic: Sequence[tuple[int, float]],
        ids: Sequence[int],
    ) -> dict[int, float]:
        """Exact cosines of keyword hits outside the semantic pool."""
        model = self._store.model
        if query.vector is None or model is None:
            return {}
        return await cosines_outside_pool(
            self._store.reader,
            query.vector,
            semantic,
            ids,
            table="message_embeddings",
            key="message_id",
            model=model,
        )
