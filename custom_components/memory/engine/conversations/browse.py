"""Browsing the conversation log for the Memory panel: pages, states, sources.

What the panel's Conversations view lists: the captured conversations some
scopes spoke in, newest first, a page at a time (a keyset cursor on the
start time and row id, as `browse.py` pages memories), each with its
digestion state as a person reads it:

- `waiting`: not digested yet (or new messages since), no failure;
- `done`: digested;
- `skipped`: not worth an LLM call, with why (`digest_queue.SkipReason`);
- `failed`: the last AI Task call failed, with what kind of failure, and
  when it is tried again.

Everything is counted within the scopes asked for: a conversation another
person continued shows only the messages (and the memories) of the scopes
the caller may reach. `produced` tells which memories a conversation gave:
those digestion cited a message of it for, and those a tool added during it
(same conversation id, added while this row was its latest session).
`source_of` goes the other way: the conversation and message a memory came
from, which the panel opens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
import sqlite3
from typing import Any, Final, Literal

import aiosqlite

from ..models import MemoryItem, from_timestamp, to_timestamp
from ..sql import IDS, placeholders, rows_in
from ..store import Keyset, count_rows, keyset_page, validate_limit
from .records import ConversationRecord, conversation_fields

type ConversationStatus = Literal["waiting", "done", "skipped", "failed"]
STATUSES: Final[tuple[ConversationStatus, ...]] = (
    "waiting",
    "done",
    "skipped",
    "failed",
)

# A row's state as a person reads it (rows aliased `c`); see the module doc.
STATUS_SQL: Final = (
    "CASE WHEN c.digest_state = 'skipped' THEN 'skipped' "
    "WHEN c.digest_state = 'pending' AND c.digest_attempts > 0 THEN 'failed' "
    "WHEN c.digest_state = 'pending' OR EXISTS (SELECT 1 FROM "
    "conversation_messages w WHERE w.conversation = c.id AND w.role = 'user' "
    "AND w.created_at > c.digested_at) THEN 'waiting' ELSE 'done' END"
)
# A tool's memory belongs to the latest session of its conversation id that
# had started when it was added (Home Assistant may reuse an id later).
TOOL_MEMORY_SQL: Final = (
    "mem.conversation_id = c.conversation_id AND mem.message_id IS NULL "
    "AND mem.created_at >= c.started_at AND NOT EXISTS (SELECT 1 FROM "
    "conversations later WHERE later.conversation_id = c.conversation_id "
    "AND later.started_at > c.started_at AND later.started_at <= mem.created_at)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationQuery:
    """Which conversations, from where on."""

    # None: every scope; a conversation is listed when one of them spoke.
    scopes: tuple[str, ...] | None = None
    statuses: tuple[ConversationStatus, ...] = ()
    # Started at or after `since`, before `until`.
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 50
    cursor: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationEntry(ConversationRecord):
    """A conversation as the panel lists it (counts within the scopes asked for).

    `scope` is its first speaker among those scopes.
    """

    status: ConversationStatus
    # Why it was skipped, or what kind of failure the last attempt had.
    reason: str | None
    attempts: int
    retry_at: datetime | None
    digested_at: datetime | None
    messages: int
    # The first user message within the scopes (the panel's preview).
    first_message: int | None


@dataclass(frozen=True, slots=True)
class ConversationPage:
    """One page, how many conversations match in all, and the next page's cursor."""

    items: list[ConversationEntry]
    total: int
    cursor: str | None


def _among(scopes: tuple[str, ...] | None, alias: str) -> tuple[str, list[str]]:
    """Return a clause keeping rows of `alias` (messages) in these scopes, and its values."""
    if scopes is None:
        return "1", []
    return f"{alias}.scope IN ({placeholders(len(scopes))})", list(scopes)


def row_to_entry(row: sqlite3.Row) -> ConversationEntry:
    """Map a row of an entry's columns (a `sqlite3.Row` or alike, by name) onto it."""
    return ConversationEntry(
        **conversation_fields(row),
        status=row["status"],
        reason=row["digest_error"],
        attempts=int(row["digest_attempts"]),
        retry_at=from_timestamp(row["digest_next_at"] or None)
        if row["status"] == "failed"
        else None,
        digested_at=from_timestamp(row["digested_at"]),
        messages=int(row["messages"]),
        first_message=row["first_message"],
    )


def _select(scopes: tuple[str, ...] | None) -> tuple[str, list[str]]:
    """Return the columns of an entry, and the values their scope clauses bind."""
    among, values = _among(scopes, "m")
    scope = (
        "c.scope"
        if scopes is None
        else "(SELECT m.scope FROM conversation_messages m WHERE "  # noqa: S608
        f"m.conversation = c.id AND {among} ORDER BY m.id LIMIT 1)"
    )
    # Clauses built here from placeholders; every value is bound.
    columns = (
        f"c.id, c.conversation_id, {scope} AS scope, c.agent_id, c.user_id, "  # noqa: S608
        "c.device_id, c.started_at, c.updated_at, c.ended_at, "
        f"{STATUS_SQL} AS status, c.digest_error, c.digest_attempts, "
        "c.digest_next_at, c.digested_at, "
        "(SELECT count(*) FROM conversation_messages m WHERE "
        f"m.conversation = c.id AND {among}) AS messages, "
        "(SELECT m.id FROM conversation_messages m WHERE m.conversation = c.id "
        f"AND m.role = 'user' AND {among} ORDER BY m.id LIMIT 1) AS first_message"
    )
    return columns, values * 3


def _filters(query: ConversationQuery) -> tuple[list[str], list[Any]]:
    """Return the clauses (rows aliased `c`) keeping what `query` selects, and their values."""
    clauses: list[str] = []
    params: list[Any] = []
    if query.scopes is not None:
        among, values = _among(query.scopes, "m")
        clauses.append(
            "EXISTS (SELECT 1 FROM conversation_messages m "  # noqa: S608
            f"WHERE m.conversation = c.id AND {among})"
        )
        params.extend(values)
    if query.statuses:
        clauses.append(f"({STATUS_SQL}) IN ({placeholders(len(query.statuses))})")
        params.extend(query.statuses)
    if query.since is not None:
        clauses.append("c.started_at >= ?")
        params.append(to_timestamp(query.since))
    if query.until is not None:
        clauses.append("c.started_at < ?")
        params.append(to_timestamp(query.until))
    return clauses, params


async def list_conversations(
    conn: aiosqlite.Connection, query: ConversationQuery
) -> ConversationPage:
    """Return one page of the conversations `query` selects, and their total."""
    validate_limit(query.limit)
    if query.scopes is not None and not query.scopes:
        return ConversationPage([], 0, None)
    clauses, params = _filters(query)
    columns, column_params = _select(query.scopes)
    rows, total, cursor = await keyset_page(
        conn,
        Keyset(
            table="conversations c",
            columns=columns,
            column_params=column_params,
            key="c.started_at",
            row_id="c.id",
        ),
        clauses,
        params,
        limit=query.limit,
        cursor=query.cursor,
    )
    return ConversationPage([row_to_entry(row) for row in rows], total, cursor)


async def count_conversations(
    conn: aiosqlite.Connection, query: ConversationQuery
) -> int:
    """Return how many conversations `query` selects (its limit and cursor unused)."""
    if query.scopes is not None and not query.scopes:
        return 0
    clauses, params = _filters(query)
    return await count_rows(conn, "conversations c", clauses, params)


async def get_conversation(
    conn: aiosqlite.Connection, row_id: int, scopes: tuple[str, ...] | None
) -> ConversationEntry | None:
    """One conversation row as the panel shows it; None if no scope spoke in it."""
    columns, column_values = _select(scopes)
    among, values = _among(scopes, "m")
    rows = list(
        await conn.execute_fetchall(
            f"SELECT {columns} FROM conversations c WHERE c.id = ? AND "  # noqa: S608
            "EXISTS (SELECT 1 FROM conversation_messages m WHERE "
            f"m.conversation = c.id AND {among})",
            [*column_values, row_id, *values],
        )
    )
    return row_to_entry(rows[0]) if rows else None


async def produced(
    conn: aiosqlite.Connection,
    rows: Sequence[int],
    scopes: tuple[str, ...] | None,
) -> dict[int, list[int]]:
    """Return the memories each conversation row gave (in these scopes), oldest first."""
    found: dict[int, set[int]] = {}
    among, values = _among(scopes, "mem")
    unique = sorted(set(rows))
    for row in await rows_in(
        conn,
        "SELECT m.conversation, mem.id FROM conversation_messages m "  # noqa: S608
        f"JOIN memories mem ON mem.message_id = m.id WHERE m.conversation IN ({IDS}) "
        f"AND {among}",
        unique,
        after=values,
    ):
        found.setdefault(int(row[0]), set()).add(int(row[1]))
    for row in await rows_in(
        conn,
        "SELECT c.id, mem.id FROM conversations c JOIN memories mem ON "  # noqa: S608
        f"{TOOL_MEMORY_SQL} WHERE c.id IN ({IDS}) AND {among}",
        unique,
        after=values,
    ):
        found.setdefault(int(row[0]), set()).add(int(row[1]))
    return {row: sorted(ids) for row, ids in found.items()}


async def source_of(
    conn: aiosqlite.Connection, item: MemoryItem
) -> tuple[int, int | None] | None:
    """Return the conversation row and message a memory came from, when still kept.

    The message digestion cited; for a memory a tool added during a
    conversation, the last thing said to the assistant before it was added.
    """
    if item.message_id is not None:
        rows = list(
            await conn.execute_fetchall(
                "SELECT conversation FROM conversation_messages WHERE id = ?",
                (item.message_id,),
            )
        )
        if rows:
            return int(rows[0][0]), item.message_id
    if item.source.conversation_id is None:
        return None
    created = to_timestamp(item.created_at)
    rows = list(
        await conn.execute_fetchall(
            "SELECT id FROM conversations WHERE conversation_id = ? "
            "AND started_at <= ? ORDER BY started_at DESC, id DESC LIMIT 1",
            (item.source.conversation_id, created),
        )
    )
    if not rows:
        return None
    row_id = int(rows[0][0])
    said = list(
        await conn.execute_fetchall(
            "SELECT id FROM conversation_messages WHERE conversation = ? "
            "AND role = 'user' AND created_at <= ? ORDER BY id DESC LIMIT 1",
            (row_id, created),
        )
    )
    return row_id, int(said[0][0]) if said else None
