"""The conversation log: every Assist message, kept for search and digestion.

Its tables live in the memory database (created by a migration in
`schema.py`); writes go through the database's single-writer transaction
and reads through its reader connection, so the log never blocks a recall.
The log holds the store's `Database`; its message search, the store.

A conversation row is one chat session. Home Assistant may reuse a
conversation id once a session has ended, so the row id is the key and the
conversation id is an attribute. Every message carries the scope of the
person who was speaking (or the household), which is what searches filter
on: one person's conversations never reach another person's results. Two
people may speak in one session (one continues the other's conversation):
the row keeps who started it, each message its own speaker, and a listing
for some scopes shows a conversation as the first of its speakers among
them, with their messages only. Messages are never edited, only added and
erased. This module writes, erases and lists; `message_search.py` searches,
`conversation_browse.py` pages the log for the panel, and
`conversation_models.py` holds the records.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import aiosqlite

from ..errors import InvalidInputError
from ..languages import ANALYSIS_VERSION, index_terms, language_code
from ..memory_store import MemoryStore
from ..models import MemoryItem, to_timestamp
from ..sql import IDS, chunks, placeholders, read_one, rows_in
from ..store import validate_scope
from .browse import (
    ConversationEntry,
    ConversationPage,
    ConversationQuery,
    count_conversations,
    get_conversation,
    list_conversations,
    produced,
    source_of,
)
from .records import (
    CONVERSATION_COLUMNS,
    CONVERSATION_REST,
    MESSAGE_COLUMNS,
    ConversationInfo,
    MessageHit,
    MessageQuery,
    NewMessage,
    StoredConversation,
    StoredMessage,
    cut,
    messages_by_id,
    row_to_conversation,
    row_to_message,
)
from .search import MessageSearch


class ConversationLog:
    """Appends, finds and erases conversation messages in the memory database."""

    def __init__(self, store: MemoryStore) -> None:
        """Use `store`'s database; it must be open before any call."""
        self._db = store.database
        self._search = MessageSearch(store)

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
        async with self._db.transaction() as conn:
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
            row = await read_one(
                conn,
                "INSERT INTO conversations (conversation_id, scope, agent_id, "
                "user_id, device_id, started_at, updated_at, ended_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (info.conversation_id, *meta, started, updated, ended),
            )
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
            "created_at, language, terms, analysed) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    key,
                    str(message.role),
                    cut(message.content),
                    cut(message.data),
                    message.tool_name,
                    message.tool_call_id,
                    message.scope,
                    message.agent_id,
                    message.user_id,
                    message.device_id,
                    created,
                    language,
                    index_terms(cut(message.content), language or self._db.language),
                    ANALYSIS_VERSION,
                )
                for message, created in zip(messages, times, strict=True)
                for language in (language_code(message.language, default=""),)
            ],
        )
        return key

    async def close_open(self) -> int:
        """End conversations left open (a restart drops live sessions).

        They end when they were last updated; returns how many there were.
        """
        async with self._db.transaction() as conn:
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
        async with self._db.transaction() as conn:
            for chunk in chunks(unique):
                async with conn.execute(
                    "DELETE FROM conversation_messages "  # noqa: S608
                    f"WHERE id IN ({placeholders(len(chunk))}) RETURNING id, scope",
                    chunk,
                ) as cursor:
                    for row in await cursor.fetchall():
                        erased.append(int(row[0]))
                        scopes.add(str(row[1]))
            if erased:
                await self._optimize(conn)
        if erased:
            await self._search.unindex(erased)
            await self._db.truncate_wal()
            await self._db.erased(scopes)
        return sorted(erased)

    async def erase(self, row_id: int, scopes: tuple[str, ...] | None) -> list[int]:
        """Erase a conversation's messages of these scopes (None: all); return their ids.

        The row goes with its last message; memories it gave stay.
        """
        among = "" if scopes is None else f" AND scope IN ({placeholders(len(scopes))})"
        rows = await self._db.reader.execute_fetchall(
            f"SELECT id FROM conversation_messages WHERE conversation = ?{among}",  # noqa: S608
            [row_id, *(scopes or ())],
        )
        erased = await self.purge([int(row[0]) for row in rows])
        async with self._db.transaction() as conn:
            await conn.execute(
                "DELETE FROM conversations WHERE id = ? AND NOT EXISTS (SELECT 1 "
                "FROM conversation_messages m WHERE m.conversation = conversations.id)",
                (row_id,),
            )
        return erased

    async def purge_before(self, cutoff: datetime) -> int:
        """Erase messages older than `cutoff`, and conversations left empty.

        Retention: returns how many messages went. A conversation that still
        has newer messages stays.
        """
        before = to_timestamp(cutoff)
        async with self._db.transaction() as conn:
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
            await self._search.unindex(ids)
            await self._db.truncate_wal()
            await self._db.erased(str(row[1]) for row in rows)
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
        columns = CONVERSATION_COLUMNS
        clauses: list[str] = []
        params: list[Any] = []
        if scopes is not None:
            if not scopes:
                return []
            among = f"m.scope IN ({placeholders(len(scopes))})"
            columns = (
                "c.id, c.conversation_id, (SELECT m.scope FROM "  # noqa: S608
                "conversation_messages m WHERE m.conversation = c.id AND "
                f"{among} ORDER BY m.id LIMIT 1) AS scope, {CONVERSATION_REST}"
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
        rows = await self._db.reader.execute_fetchall(
            f"SELECT {columns} FROM conversations c "  # noqa: S608
            f"WHERE {where} ORDER BY c.updated_at DESC, c.id DESC LIMIT ?",
            [*params, limit],
        )
        return [row_to_conversation(row) for row in rows]

    async def messages(self, conversation: int) -> list[StoredMessage]:
        """Every message of one conversation (by row id), oldest first."""
        rows = await self._db.reader.execute_fetchall(
            f"SELECT {MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
            "JOIN conversations c ON c.id = m.conversation "
            "WHERE m.conversation = ? ORDER BY m.id",
            (conversation,),
        )
        return [row_to_message(row) for row in rows]

    async def messages_of(
        self, conversations: Sequence[int]
    ) -> dict[int, list[StoredMessage]]:
        """Every message of these conversations (by row id), oldest first in each.

        One query per 500 conversations, not one per conversation; one with
        no message is absent from the result.
        """
        found: dict[int, list[StoredMessage]] = {}
        for row in await rows_in(
            self._db.reader,
            f"SELECT {MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
            "JOIN conversations c ON c.id = m.conversation "
            f"WHERE m.conversation IN ({IDS}) ORDER BY m.conversation, m.id",
            sorted(set(conversations)),
        ):
            message = row_to_message(row)
            found.setdefault(message.conversation, []).append(message)
        return found

    async def get_messages(self, ids: Sequence[int]) -> dict[int, StoredMessage]:
        """Messages by id; missing ids are absent from the result."""
        return await messages_by_id(self._db.reader, ids)

    async def page(self, query: ConversationQuery) -> ConversationPage:
        """One page of conversations with their digestion state (the panel's list)."""
        return await list_conversations(self._db.reader, query)

    async def count(self, query: ConversationQuery) -> int:
        """How many conversations a query selects (the panel's backlog count)."""
        return await count_conversations(self._db.reader, query)

    async def entry(
        self, row_id: int, scopes: tuple[str, ...] | None
    ) -> ConversationEntry | None:
        """One conversation as the panel lists it; None when no scope spoke in it."""
        return await get_conversation(self._db.reader, row_id, scopes)

    async def produced(
        self, rows: Sequence[int], scopes: tuple[str, ...] | None
    ) -> dict[int, list[int]]:
        """Return the ids of the memories (in these scopes) each conversation gave."""
        return await produced(self._db.reader, rows, scopes)

    async def source_of(self, item: MemoryItem) -> tuple[int, int | None] | None:
        """Return the conversation row and message a memory came from, if still kept."""
        return await source_of(self._db.reader, item)

    async def search(self, query: MessageQuery) -> list[MessageHit]:
        """Find messages by keywords and meaning, scored like memories.

        0..1, best first; each hit names the signals that found it (see
        `MessageSearch.search`).
        """
        return await self._search.search(query)

    @property
    def index_bytes(self) -> int:
        """Memory held by the message vector index (0 until first used)."""
        return self._search.index_bytes
