"""Reading the conversation log on PostgreSQL: lists, messages, the panel's pages.

The reads of the SQLite `ConversationLog` (`conversations.log`,
`conversations.browse`), call for call, over the tables of
`schema_conversations`: the same rows in the same order, mapped by the
SQLite room's own functions (`row_to_message`, `row_to_conversation`,
`row_to_entry`), the digestion state by its own SQL (`STATUS_SQL`), the
pages by its keyset cursors (`encode_cursor`, `decode_cursor`).

Person privacy is the SQLite log's: with scopes, only conversations where
someone of them spoke are listed, each shown as its first speaker among
them, and every count, preview and produced memory is taken within them.
The scopes are bound as one `text[]` (`= ANY`); None reaches every scope
and an empty tuple none.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..conversations import (
    MESSAGE_COLUMNS,
    STATUS_SQL,
    TOOL_MEMORY_SQL,
    ConversationEntry,
    ConversationPage,
    ConversationQuery,
    StoredConversation,
    StoredMessage,
    row_to_conversation,
    row_to_entry,
    row_to_message,
)
from ..models import MemoryItem, to_timestamp
from ..store import decode_cursor, encode_cursor, validate_limit

_CONVERSATION_REST = (
    "c.agent_id, c.user_id, c.device_id, c.started_at, c.updated_at, c.ended_at, "
    "(SELECT count(*) FROM conversation_messages m WHERE m.conversation = c.id) "
    "AS messages"
)
_MESSAGES = (
    f"SELECT {MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
    "JOIN conversations c ON c.id = m.conversation "
)


class _Binds:
    """The values of one statement, each bound as `$n` in the order added."""

    def __init__(self) -> None:
        self.values: list[Any] = []

    def __call__(self, value: Any) -> str:
        """Bind `value`; return its placeholder."""
        self.values.append(value)
        return f"${len(self.values)}"


def _among(scopes: tuple[str, ...] | None, alias: str, bind: _Binds) -> str:
    """Return a clause keeping rows of `alias` in these scopes (None: every one)."""
    if scopes is None:
        return "true"
    return f"{alias}.scope = ANY({bind(list(scopes))}::text[])"


def _entry_columns(scopes: tuple[str, ...] | None, bind: _Binds) -> str:
    """Return the columns of a panel entry (as `browse._select`)."""
    among = _among(scopes, "m", bind)
    scope = (
        "c.scope"
        if scopes is None
        else "(SELECT m.scope FROM conversation_messages m WHERE "  # noqa: S608
        f"m.conversation = c.id AND {among} ORDER BY m.id LIMIT 1)"
    )
    return (
        f"c.id, c.conversation_id, {scope} AS scope, c.agent_id, c.user_id, "  # noqa: S608
        "c.device_id, c.started_at, c.updated_at, c.ended_at, "
        f"{STATUS_SQL} AS status, c.digest_error, c.digest_attempts, "
        "c.digest_next_at, c.digested_at, "
        "(SELECT count(*) FROM conversation_messages m WHERE "
        f"m.conversation = c.id AND {among}) AS messages, "
        "(SELECT m.id FROM conversation_messages m WHERE m.conversation = c.id "
        f"AND m.role = 'user' AND {among} ORDER BY m.id LIMIT 1) AS first_message"
    )


def _filters(query: ConversationQuery, bind: _Binds) -> list[str]:
    """Return the clauses (rows aliased `c`) keeping what `query` selects."""
    clauses: list[str] = []
    if query.scopes is not None:
        clauses.append(
            "EXISTS (SELECT 1 FROM conversation_messages m "  # noqa: S608
            f"WHERE m.conversation = c.id AND {_among(query.scopes, 'm', bind)})"
        )
    if query.statuses:
        clauses.append(f"({STATUS_SQL}) = ANY({bind(list(query.statuses))}::text[])")
    if query.since is not None:
        clauses.append(f"c.started_at >= {bind(to_timestamp(query.since))}")
    if query.until is not None:
        clauses.append(f"c.started_at < {bind(to_timestamp(query.until))}")
    return clauses


class PostgresConversationReads:
    """The conversation log's reads over an asyncpg pool."""

    def __init__(self, pool: Any) -> None:
        """Hold the pool of a database `schema.migrate` set up."""
        self._pool = pool

    async def _fetch(self, statement: str, values: Sequence[Any]) -> list[Any]:
        async with self._pool.acquire() as connection:
            return list(await connection.fetch(statement, *values))

    async def conversations(
        self,
        *,
        scopes: tuple[str, ...] | None = None,
        since: datetime | None = None,
        ended: bool | None = None,
        limit: int = 100,
    ) -> list[StoredConversation]:
        """Conversations updated since a time, newest first (`ConversationLog.conversations`)."""
        bind = _Binds()
        columns = f"c.id, c.conversation_id, c.scope, {_CONVERSATION_REST}"
        clauses: list[str] = []
        if scopes is not None:
            if not scopes:
                return []
            among = _among(scopes, "m", bind)
            columns = (
                "c.id, c.conversation_id, (SELECT m.scope FROM "  # noqa: S608
                "conversation_messages m WHERE m.conversation = c.id AND "
                f"{among} ORDER BY m.id LIMIT 1) AS scope, {_CONVERSATION_REST}"
            )
            clauses.append(
                "EXISTS (SELECT 1 FROM conversation_messages m "  # noqa: S608
                f"WHERE m.conversation = c.id AND {among})"
            )
        if since is not None:
            clauses.append(f"c.updated_at >= {bind(to_timestamp(since))}")
        if ended is not None:
            clauses.append("c.ended_at IS NOT NULL" if ended else "c.ended_at IS NULL")
        where = " AND ".join(clauses) or "true"
        rows = await self._fetch(
            f"SELECT {columns} FROM conversations c WHERE {where} "  # noqa: S608
            f"ORDER BY c.updated_at DESC, c.id DESC LIMIT {bind(limit)}",
            bind.values,
        )
        return [row_to_conversation(row) for row in rows]

    async def messages(self, conversation: int) -> list[StoredMessage]:
        """Every message of one conversation (by row id), oldest first."""
        rows = await self._fetch(
            f"{_MESSAGES}WHERE m.conversation = $1 ORDER BY m.id", [conversation]
        )
        return [row_to_message(row) for row in rows]

    async def messages_of(
        self, conversations: Sequence[int]
    ) -> dict[int, list[StoredMessage]]:
        """Every message of these conversations, oldest first in each; empty ones absent."""
        found: dict[int, list[StoredMessage]] = {}
        rows = await self._fetch(
            f"{_MESSAGES}WHERE m.conversation = ANY($1::int8[]) "
            "ORDER BY m.conversation, m.id",
            [sorted(set(conversations))],
        )
        for row in rows:
            message = row_to_message(row)
            found.setdefault(message.conversation, []).append(message)
        return found

    async def get_messages(self, ids: Sequence[int]) -> dict[int, StoredMessage]:
        """Messages by id; missing ids are absent from the result."""
        rows = await self._fetch(
            f"{_MESSAGES}WHERE m.id = ANY($1::int8[])", [sorted(set(ids))]
        )
        return {int(row["id"]): row_to_message(row) for row in rows}

    async def page(self, query: ConversationQuery) -> ConversationPage:
        """One page of conversations with their digestion state (the panel's list)."""
        validate_limit(query.limit)
        if query.scopes is not None and not query.scopes:
            return ConversationPage([], 0, None)
        total = await self.count(query)
        bind = _Binds()
        columns = _entry_columns(query.scopes, bind)
        clauses = _filters(query, bind)
        if query.cursor is not None:
            after, after_id = decode_cursor(query.cursor)
            clauses.append(f"(c.started_at, c.id) < ({bind(after)}, {bind(after_id)})")
        rows = await self._fetch(
            f"SELECT {columns} FROM conversations c "  # noqa: S608
            f"WHERE {' AND '.join(clauses) or 'true'} "
            f"ORDER BY c.started_at DESC, c.id DESC LIMIT {bind(query.limit + 1)}",
            bind.values,
        )
        if len(rows) <= query.limit:
            return ConversationPage([row_to_entry(row) for row in rows], total, None)
        last = rows[query.limit - 1]
        return ConversationPage(
            [row_to_entry(row) for row in rows[: query.limit]],
            total,
            encode_cursor(float(last["started_at"]), int(last["id"])),
        )

    async def count(self, query: ConversationQuery) -> int:
        """How many conversations a query selects (its limit and cursor unused)."""
        if query.scopes is not None and not query.scopes:
            return 0
        bind = _Binds()
        clauses = _filters(query, bind)
        rows = await self._fetch(
            "SELECT count(*) FROM conversations c "  # noqa: S608
            f"WHERE {' AND '.join(clauses) or 'true'}",
            bind.values,
        )
        return int(rows[0][0])

    async def entry(
        self, row_id: int, scopes: tuple[str, ...] | None
    ) -> ConversationEntry | None:
        """One conversation as the panel lists it; None when no scope spoke in it."""
        bind = _Binds()
        columns = _entry_columns(scopes, bind)
        among = _among(scopes, "m", bind)
        rows = await self._fetch(
            f"SELECT {columns} FROM conversations c WHERE c.id = {bind(row_id)} "  # noqa: S608
            "AND EXISTS (SELECT 1 FROM conversation_messages m WHERE "
            f"m.conversation = c.id AND {among})",
            bind.values,
        )
        return row_to_entry(rows[0]) if rows else None

    async def produced(
        self, rows: Sequence[int], scopes: tuple[str, ...] | None
    ) -> dict[int, list[int]]:
        """Return the memories each conversation row gave (in these scopes), oldest first."""
        bind = _Binds()
        unique = bind(sorted(set(rows)))
        among = _among(scopes, "mem", bind)
        found: dict[int, set[int]] = {}
        for row in await self._fetch(
            "SELECT m.conversation, mem.id FROM conversation_messages m "  # noqa: S608
            "JOIN memories mem ON mem.message_id = m.id "
            f"WHERE m.conversation = ANY({unique}::int8[]) AND {among} "
            "UNION ALL "
            "SELECT c.id, mem.id FROM conversations c JOIN memories mem ON "
            f"{TOOL_MEMORY_SQL} WHERE c.id = ANY({unique}::int8[]) AND {among}",
            bind.values,
        ):
            found.setdefault(int(row[0]), set()).add(int(row[1]))
        return {row: sorted(ids) for row, ids in found.items()}

    async def source_of(self, item: MemoryItem) -> tuple[int, int | None] | None:
        """Return the conversation row and message a memory came from, if still kept."""
        async with self._pool.acquire() as connection:
            if item.message_id is not None:
                row_id = await connection.fetchval(
                    "SELECT conversation FROM conversation_messages WHERE id = $1",
                    item.message_id,
                )
                if row_id is not None:
                    return int(row_id), item.message_id
            if item.source.conversation_id is None:
                return None
            created = to_timestamp(item.created_at)
            row_id = await connection.fetchval(
                "SELECT id FROM conversations WHERE conversation_id = $1 "
                "AND started_at <= $2 ORDER BY started_at DESC, id DESC LIMIT 1",
                item.source.conversation_id,
                created,
            )
            if row_id is None:
                return None
            said = await connection.fetchval(
                "SELECT id FROM conversation_messages WHERE conversation = $1 "
                "AND role = 'user' AND created_at <= $2 ORDER BY id DESC LIMIT 1",
                row_id,
                created,
            )
        return int(row_id), None if said is None else int(said)
