"""The exports' reads of the memories table: whole selections, counts, scopes.

What `exchange` writes `memories.json` and `MEMORY.md` from, and what the
profile keeper decides by: every memory a `BrowseQuery`'s filters select
(the panel's own `browse_filters`), by id and on no page; how many of a
scope's memories of some types changed after a time; the scopes that have
an active memory. `postgres.store_exports` answers the same on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from ..models import MemoryItem, MemoryType
from .browse import BrowseQuery, browse_filters, count_rows
from .rows import ITEM_COLUMNS, row_to_item


async def browse_all(
    conn: aiosqlite.Connection, query: BrowseQuery, now: float
) -> list[MemoryItem]:
    """Every memory `query`'s filters select at `now`, by id (order and page unused)."""
    if query.scopes is not None and not query.scopes:
        return []
    clauses, params = browse_filters(query, now)
    rows = await conn.execute_fetchall(
        f"SELECT {ITEM_COLUMNS} FROM memories m "  # noqa: S608
        f"WHERE {' AND '.join(clauses) or '1'} ORDER BY m.id",
        params,
    )
    return [row_to_item(row) for row in rows]


async def count_changed(
    conn: aiosqlite.Connection,
    scope: str,
    since: float | None,
    types: Sequence[MemoryType],
) -> int:
    """How many of `scope`'s memories of `types` (none: 0) changed after `since`."""
    if not types:
        return 0
    query = BrowseQuery(scopes=(scope,), types=tuple(types), status="any")
    clauses, params = browse_filters(query, 0.0)
    if since is not None:
        clauses.append("m.updated_at > ?")
        params.append(since)
    return await count_rows(conn, "memories m", clauses, params)


async def active_scopes(conn: aiosqlite.Connection) -> list[str]:
    """List the scopes that have an active memory (expired or not), sorted."""
    rows = await conn.execute_fetchall(
        "SELECT DISTINCT scope FROM memories WHERE status = 'active'"
    )
    return sorted(str(row[0]) for row in rows)
