"""The exports' reads on PostgreSQL, as `store.exports` on SQLite.

Every memory a `BrowseQuery`'s filters select (`store_browse`'s
`browse_filters`, the panel's own), by id and on no page; how many of a
scope's memories of some types changed after a time; the scopes that have
an active memory. The same rows as SQLite's, so `memories.json` and
`MEMORY.md` come out byte for byte the same on either backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..models import MemoryItem, MemoryType
from ..store import ITEM_COLUMNS, BrowseQuery, row_to_item
from .store_browse import browse_filters


async def browse_all(pool: Any, query: BrowseQuery, now: float) -> list[MemoryItem]:
    """Every memory `query`'s filters select at `now`, by id (order and page unused)."""
    if query.scopes is not None and not query.scopes:
        return []
    clauses, params = browse_filters(query, now)
    async with pool.acquire() as connection:
        records = await connection.fetch(
            f"SELECT {ITEM_COLUMNS} FROM memories m "  # noqa: S608
            f"WHERE {' AND '.join(clauses) or 'true'} ORDER BY m.id",
            *params,
        )
    return [row_to_item(tuple(record)) for record in records]


async def count_changed(
    pool: Any, scope: str, since: float | None, types: Sequence[MemoryType]
) -> int:
    """How many of `scope`'s memories of `types` (none: 0) changed after `since`."""
    if not types:
        return 0
    query = BrowseQuery(scopes=(scope,), types=tuple(types), status="any")
    clauses, params = browse_filters(query, 0.0)
    if since is not None:
        params.append(since)
        clauses.append(f"m.updated_at > ${len(params)}")
    async with pool.acquire() as connection:
        count = await connection.fetchval(
            f"SELECT count(*) FROM memories m WHERE {' AND '.join(clauses)}",  # noqa: S608
            *params,
        )
    return int(count)


async def active_scopes(pool: Any) -> list[str]:
    """List the scopes that have an active memory (expired or not), sorted."""
    async with pool.acquire() as connection:
        records = await connection.fetch(
            "SELECT DISTINCT scope FROM memories WHERE status = 'active'"
        )
    return sorted(str(record[0]) for record in records)
