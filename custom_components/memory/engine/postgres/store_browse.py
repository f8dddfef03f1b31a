"""Browsing memories on PostgreSQL page by page, as `store.browse` does on SQLite.

The same `BrowseQuery` (scopes, types, status with `expiring`, tags,
origins, creation dates, newest or most recalled first, a limit), the same
order (the order key, then the id, largest first), the same total and the
same keyset cursor (`encode_cursor` of the page's last key and id), so a
cursor one backend wrote pages the other alike. The count and the page are
read in one read-only REPEATABLE READ transaction: a write of another
instance between them cannot make the total disagree with the page.
"""

from __future__ import annotations

from typing import Any, Final

from ..models import to_timestamp
from ..store import (
    ITEM_COLUMNS,
    BrowsePage,
    BrowseQuery,
    decode_cursor,
    encode_cursor,
    normalize_tags,
    row_to_item,
    validate_limit,
)

# What each order sorts by (largest first, then the newest id), as SQLite's.
ORDER_KEY: Final = {"newest": "m.created_at", "recalled": "m.recall_count"}


def browse_filters(query: BrowseQuery, now: float) -> tuple[list[str], list[Any]]:
    """Return the query's filters as SQL on `memories m`, parameters from $1."""
    clauses: list[str] = []
    params: list[Any] = []

    def arg(value: Any, cast: str = "") -> str:
        params.append(value)
        return f"${len(params)}{cast}"

    if query.scopes is not None:
        clauses.append(f"m.scope = ANY({arg(list(query.scopes), '::text[]')})")
    if query.status == "expiring":
        clauses.append(f"m.status = 'active' AND m.expires_at > {arg(now)}")
    elif query.status == "active":
        clauses.append(
            f"m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > {arg(now)})"
        )
    elif query.status != "any":
        clauses.append(f"m.status = {arg(str(query.status))}")
    if query.types:
        kinds = [str(kind) for kind in query.types]
        clauses.append(f"m.type = ANY({arg(kinds, '::text[]')})")
    if query.origins:
        origins = [str(origin) for origin in query.origins]
        clauses.append(f"m.origin = ANY({arg(origins, '::text[]')})")
    if query.tags:
        tags = list(normalize_tags(query.tags))
        clauses.append(
            "m.id IN (SELECT memory_id FROM memory_tags WHERE tag = "  # noqa: S608
            f"ANY({arg(tags, '::text[]')}))"
        )
    if query.since is not None:
        clauses.append(f"m.created_at >= {arg(to_timestamp(query.since))}")
    if query.until is not None:
        clauses.append(f"m.created_at < {arg(to_timestamp(query.until))}")
    return clauses, params


async def browse(pool: Any, query: BrowseQuery, now: float) -> BrowsePage:
    """Return one page of the memories `query` selects, their total and next cursor."""
    validate_limit(query.limit)
    if query.scopes is not None and not query.scopes:
        return BrowsePage([], 0, None)
    clauses, params = browse_filters(query, now)
    where = " AND ".join(clauses) or "true"
    key = ORDER_KEY[query.order]
    page_clauses, page_params = list(clauses), list(params)
    if query.cursor is not None:
        after, after_id = decode_cursor(query.cursor)
        at = len(page_params)
        page_clauses.append(f"({key}, m.id) < (${at + 1}::float8, ${at + 2}::int8)")
        page_params.extend([after, after_id])
    page_where = " AND ".join(page_clauses) or "true"
    async with (
        pool.acquire() as connection,
        connection.transaction(isolation="repeatable_read", readonly=True),
    ):
        total = await connection.fetchval(
            f"SELECT count(*) FROM memories m WHERE {where}",  # noqa: S608
            *params,
        )
        records = await connection.fetch(
            f"SELECT {ITEM_COLUMNS}, {key} AS page_key, m.id AS page_id "  # noqa: S608
            f"FROM memories m WHERE {page_where} "
            f"ORDER BY {key} DESC, m.id DESC LIMIT ${len(page_params) + 1}",
            *page_params,
            query.limit + 1,
        )
    items = [row_to_item(tuple(record)) for record in records[: query.limit]]
    if len(records) <= query.limit:
        return BrowsePage(items, int(total), None)
    last = records[query.limit - 1]
    cursor = encode_cursor(float(last["page_key"]), int(last["page_id"]))
    return BrowsePage(items, int(total), cursor)
