"""The recall's "Earlier" reads: a speaker's recent conversations, their summaries, turns.

What `recall.earlier` builds its lines from, read here so that it reads
through the store (`MemoryStore.earlier`) and not a SQLite connection:
`postgres.store_earlier` answers the same `EarlierQuery` on PostgreSQL.

The conversations of one scope updated since a time, newest first; for a
HOUSEHOLD scope those of one device, or without a device of one user
(`EarlierQuery.device_id`, `user_id`; the caller asks nothing with
neither). Of each, the newest active summary memory in that scope written
since the earliest of them started, and the last user and assistant
messages of that scope with some content, newest first. Never another
scope's messages, never tool results.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from ..models import HOUSEHOLD, MemoryType
from ..sql import IDS, rows_in


@dataclass(frozen=True, slots=True)
class EarlierQuery:
    """Whose recent conversations to read (times as timestamps)."""

    scope: str
    device_id: str | None
    user_id: str | None
    since: float
    # The current conversation's id, left out.
    exclude: str | None
    limit: int
    # The last messages read of each.
    turns: int


@dataclass(frozen=True, slots=True)
class EarlierTurn:
    """One user or assistant message of an earlier conversation."""

    role: str
    content: str
    language: str
    created_at: float


@dataclass(frozen=True, slots=True)
class EarlierSummary:
    """A summary memory of an earlier conversation."""

    id: int
    content: str
    created_at: float
    language: str


@dataclass(frozen=True, slots=True)
class EarlierConversation:
    """One earlier conversation: its row, summary and last turns (newest first)."""

    id: int
    conversation_id: str
    started_at: float
    summary: EarlierSummary | None
    turns: tuple[EarlierTurn, ...]


def earlier_filters(query: EarlierQuery) -> tuple[list[str], list[object]]:
    """Return the conversations' clauses (`?` placeholders) and their values."""
    clauses = ["c.scope = ?", "c.updated_at >= ?"]
    params: list[object] = [query.scope, query.since]
    if query.scope == HOUSEHOLD:
        if query.device_id:
            clauses.append("c.device_id = ?")
            params.append(query.device_id)
        else:
            clauses.append("c.device_id IS NULL AND c.user_id = ?")
            params.append(query.user_id)
    if query.exclude:
        clauses.append("c.conversation_id != ?")
        params.append(query.exclude)
    return clauses, params


async def earlier_conversations(
    conn: aiosqlite.Connection, query: EarlierQuery
) -> list[EarlierConversation]:
    """Return `query`'s conversations, newest first, with their summaries and turns."""
    clauses, params = earlier_filters(query)
    # Only fixed clauses are joined; every value is a parameter.
    rows = list(
        await conn.execute_fetchall(
            "SELECT c.id, c.conversation_id, c.started_at FROM conversations c "  # noqa: S608
            f"WHERE {' AND '.join(clauses)} "
            "ORDER BY c.updated_at DESC, c.id DESC LIMIT ?",
            [*params, query.limit],
        )
    )
    if not rows:
        return []
    # The newest active summary of each, in the speaker's scope, written
    # since the first started (a reused conversation id has older ones).
    summaries: dict[str, EarlierSummary] = {}
    for row in await rows_in(
        conn,
        "SELECT id, conversation_id, content, created_at, language FROM memories "  # noqa: S608
        "WHERE status = 'active' AND type = ? AND scope = ? AND created_at >= ? "
        f"AND conversation_id IN ({IDS}) ORDER BY id",
        sorted({str(row[1]) for row in rows}),
        before=[str(MemoryType.SUMMARY), query.scope, min(float(r[2]) for r in rows)],
    ):
        summaries[str(row[1])] = EarlierSummary(
            int(row[0]), str(row[2]), float(row[3]), str(row[4])
        )
    found: list[EarlierConversation] = []
    for row_id, conversation_id, started_at in rows:
        turns = await conn.execute_fetchall(
            "SELECT role, content, language, created_at FROM conversation_messages "
            "WHERE conversation = ? AND scope = ? AND role IN ('user', 'assistant') "
            "AND content != '' ORDER BY id DESC LIMIT ?",
            (row_id, query.scope, query.turns),
        )
        found.append(
            EarlierConversation(
                int(row_id),
                str(conversation_id),
                float(started_at),
                summaries.get(str(conversation_id)),
                tuple(
                    EarlierTurn(str(t[0]), str(t[1]), str(t[2] or ""), float(t[3]))
                    for t in turns
                ),
            )
        )
    return found
