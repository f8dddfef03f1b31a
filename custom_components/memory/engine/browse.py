"""Browsing memories page by page: filters, an order, and a cursor that stays put.

What the Memory panel lists when nobody typed a search (a search goes
through `search.py` and ranks by relevance): the memories of some scopes,
filtered by type, status (active, archived, superseded, or active and
expiring), tags, origin and creation date, newest first or most recalled
first, a page at a time. Pages are cut by a keyset cursor (the last row's
order key and id), not an offset, so page 2,000 of 100,000 memories costs
what page 1 does, and a memory added meanwhile does not shift the pages.
`history` gives the chain of what a memory superseded and what superseded
it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
import json
from typing import Any, Final, Literal

import aiosqlite

from .errors import PageCursorError
from .memory_rows import ITEM_COLUMNS, normalize_tags, row_to_item, validate_limit
from .models import MemoryItem, MemoryType, Origin, to_timestamp
from .sql import placeholders

type BrowseStatus = Literal["active", "archived", "superseded", "expiring", "any"]
type BrowseOrder = Literal["newest", "recalled"]

# How far `history` follows a chain each way.
MAX_CHAIN: Final = 50
_ORDER: Final = {
    "newest": ("m.created_at", "m.created_at DESC, m.id DESC"),
    "recalled": ("m.recall_count", "m.recall_count DESC, m.id DESC"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class BrowseQuery:
    """Which memories, in which order, from where on."""

    # None: every scope.
    scopes: tuple[str, ...] | None = None
    types: tuple[MemoryType, ...] = ()
    status: BrowseStatus = "active"
    tags: tuple[str, ...] = ()
    origins: tuple[Origin, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    order: BrowseOrder = "newest"
    limit: int = 50
    # The page after the one `BrowsePage.cursor` ended; None: the first page.
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class BrowsePage:
    """One page, how many memories match in all, and the next page's cursor."""

    items: list[MemoryItem]
    total: int
    cursor: str | None


def encode_cursor(key: float, item_id: int) -> str:
    """Write the cursor of a page that ended at this order key and id."""
    return base64.urlsafe_b64encode(json.dumps([key, item_id]).encode()).decode()


def decode_cursor(cursor: str) -> tuple[float, int]:
    """Read a cursor; anything but one this module wrote is refused."""
    try:
        key, item_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        value = float(key)
    except (ValueError, TypeError, binascii.Error, UnicodeError) as err:
        raise PageCursorError("not a page cursor") from err
    if (
        isinstance(key, bool)
        or type(item_id) is not int
        or not -(2**63) <= item_id < 2**63
        or value != value  # NaN  # noqa: PLR0124
    ):
        raise PageCursorError("not a page cursor")
    return value, item_id


def _filters(query: BrowseQuery, now: float) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if query.scopes is not None:
        clauses.append(f"m.scope IN ({placeholders(len(query.scopes))})")
        params.extend(query.scopes)
    if query.status == "expiring":
        clauses.append("m.status = 'active' AND m.expires_at > ?")
        params.append(now)
    elif query.status == "active":
        clauses.append(
            "m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > ?)"
        )
        params.append(now)
    elif query.status != "any":
        clauses.append("m.status = ?")
        params.append(query.status)
    if query.types:
        clauses.append(f"m.type IN ({placeholders(len(query.types))})")
        params.extend(str(kind) for kind in query.types)
    if query.origins:
        clauses.append(f"m.origin IN ({placeholders(len(query.origins))})")
        params.extend(str(origin) for origin in query.origins)
    if query.tags:
        tags = normalize_tags(query.tags)
        clauses.append(
            "m.id IN (SELECT memory_id FROM memory_tags WHERE tag IN "  # noqa: S608
            f"({placeholders(len(tags))}))"
        )
        params.extend(tags)
    if query.since is not None:
        clauses.append("m.created_at >= ?")
        params.append(to_timestamp(query.since))
    if query.until is not None:
        clauses.append("m.created_at < ?")
        params.append(to_timestamp(query.until))
    return clauses, params


async def browse(
    conn: aiosqlite.Connection, query: BrowseQuery, now: float
) -> BrowsePage:
    """Return one page of the memories `query` selects, and their total."""
    validate_limit(query.limit)
    if query.scopes is not None and not query.scopes:
        return BrowsePage([], 0, None)
    clauses, params = _filters(query, now)
    where = " AND ".join(clauses) or "1"
    async with conn.execute(
        f"SELECT count(*) FROM memories m WHERE {where}",  # noqa: S608
        params,
    ) as cursor:
        row = await cursor.fetchone()
    total = int(row[0]) if row else 0
    column, order = _ORDER[query.order]
    page_clauses, page_params = list(clauses), list(params)
    if query.cursor is not None:
        key, item_id = decode_cursor(query.cursor)
        page_clauses.append(f"({column}, m.id) < (?, ?)")
        page_params.extend([key, item_id])
    rows = list(
        await conn.execute_fetchall(
            f"SELECT {ITEM_COLUMNS}, {column} FROM memories m "  # noqa: S608
            f"WHERE {' AND '.join(page_clauses) or '1'} ORDER BY {order} LIMIT ?",
            [*page_params, query.limit + 1],
        )
    )
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    items = [row_to_item(row) for row in rows]
    last = rows[-1] if rows else None
    next_cursor = (
        encode_cursor(float(last[-1]), items[-1].id) if more and last else None
    )
    return BrowsePage(items, total, next_cursor)


async def history(
    conn: aiosqlite.Connection, item: MemoryItem
) -> tuple[list[MemoryItem], list[MemoryItem]]:
    """Return what `item` superseded (oldest first) and what superseded it (in order)."""
    before: list[MemoryItem] = []
    wanted: Sequence[int] = [item.id]
    seen = {item.id}
    while wanted and len(before) < MAX_CHAIN:
        rows = await conn.execute_fetchall(
            f"SELECT {ITEM_COLUMNS} FROM memories m "  # noqa: S608
            f"WHERE m.superseded_by IN ({placeholders(len(wanted))}) ORDER BY m.id",
            list(wanted),
        )
        found = [row_to_item(row) for row in rows if int(row["id"]) not in seen]
        seen.update(older.id for older in found)
        before[:0] = found
        wanted = [older.id for older in found]
    after: list[MemoryItem] = []
    current = item
    while current.superseded_by is not None and len(after) < MAX_CHAIN:
        rows = list(
            await conn.execute_fetchall(
                f"SELECT {ITEM_COLUMNS} FROM memories m WHERE m.id = ?",  # noqa: S608
                (current.superseded_by,),
            )
        )
        if not rows or int(rows[0]["id"]) in seen:
            break
        current = row_to_item(rows[0])
        seen.add(current.id)
        after.append(current)
    return before, after
