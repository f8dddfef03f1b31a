"""The recall's "Earlier" reads on PostgreSQL, as `store.earlier` on SQLite.

A speaker's recent conversations (the store room's `earlier_filters`, its
`?` numbered for asyncpg), each with its newest active summary memory in
the speaker's scope and its last user and assistant messages of that
scope, newest first: the same `EarlierConversation`s as SQLite's, so the
"Earlier" lines read alike on either backend.
"""

from __future__ import annotations

import itertools
from typing import Any, Final

from ..models import MemoryType
from ..store import (
    EarlierConversation,
    EarlierQuery,
    EarlierSummary,
    EarlierTurn,
    earlier_filters,
)

_SUMMARIES: Final = (
    "SELECT id, conversation_id, content, created_at, language FROM memories "
    "WHERE status = 'active' AND type = $1 AND scope = $2 AND created_at >= $3 "
    "AND conversation_id = ANY($4::text[]) ORDER BY id"
)
_TURNS: Final = (
    "SELECT role, content, language, created_at FROM conversation_messages "
    "WHERE conversation = $1 AND scope = $2 AND role IN ('user', 'assistant') "
    "AND content != '' ORDER BY id DESC LIMIT $3"
)


def _numbered(clause: str, counter: itertools.count[int]) -> str:
    """Return `clause` with each `?` as asyncpg's next `$n`."""
    parts = clause.split("?")
    return "".join(
        part + (f"${next(counter)}" if at < len(parts) - 1 else "")
        for at, part in enumerate(parts)
    )


async def earlier_conversations(
    pool: Any, query: EarlierQuery
) -> list[EarlierConversation]:
    """Return `query`'s conversations, newest first, with their summaries and turns."""
    clauses, params = earlier_filters(query)
    counter = itertools.count(1)
    where = " AND ".join(_numbered(clause, counter) for clause in clauses)
    async with pool.acquire() as connection:
        rows = await connection.fetch(
            "SELECT c.id, c.conversation_id, c.started_at FROM conversations c "  # noqa: S608
            f"WHERE {where} ORDER BY c.updated_at DESC, c.id DESC "
            f"LIMIT ${next(counter)}",
            *params,
            query.limit,
        )
        if not rows:
            return []
        summaries: dict[str, EarlierSummary] = {}
        for row in await connection.fetch(
            _SUMMARIES,
            str(MemoryType.SUMMARY),
            query.scope,
            min(float(row["started_at"]) for row in rows),
            sorted({str(row["conversation_id"]) for row in rows}),
        ):
            summaries[str(row[1])] = EarlierSummary(
                int(row[0]), str(row[2]), float(row[3]), str(row[4])
            )
        found: list[EarlierConversation] = []
        for row in rows:
            turns = await connection.fetch(
                _TURNS, int(row["id"]), query.scope, query.turns
            )
            found.append(
                EarlierConversation(
                    int(row["id"]),
                    str(row["conversation_id"]),
                    float(row["started_at"]),
                    summaries.get(str(row["conversation_id"])),
                    tuple(
                        EarlierTurn(str(t[0]), str(t[1]), str(t[2] or ""), float(t[3]))
                        for t in turns
                    ),
                )
            )
    return found
