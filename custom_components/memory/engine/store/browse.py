"""Browsing memories page by page: filters, an order, and a cursor that stays put.

What the Memory panel lists when nobody typed a search (a search goes
through `search.py` and ranks by relevance): the memories of some scopes,
filtered by type, status (active, archived, superseded, or active and
expiring), tags, origin and creation date, newest first or most recalled
first, a page at a time. Pages are cut by a keyset cursor (the last row's
order key and id), not an offset, so page 2,000 of 100,000 memories costs
what page 1 does, and a memory added meanwhile does not shift the pages
(`keyset_page`, which pages the panel's conversations too).
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
import sqlite3
from typing import Any, Final, Literal

import aiosqlite

from ..errors import PageCursorError
from ..models import MemoryItem, MemoryType, Origin, to_timestamp
from ..sql import placeholders, read_one
from .rows import ITEM_COLUMNS, normalize_tags, row_to_item, validate_limit

type BrowseStatus = Literal["active", "archived", "superseded", "expiring", "any"]
type BrowseOrder = Literal["newest", "recalled"]

# How far `history` follows a chain each way.
MAX_CHAIN: Final = 50
# What each order sorts by (largest first, then the newest id).
_ORDER_KEY: Final = {"newest": "m.created_at", "recalled": "m.recall_count"}


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


def browse_filters(query: BrowseQuery, now: float) -> tuple[list[str], list[Any]]:
    """Return the query's filters as SQL on `memories m`, and their values."""
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


async def count_rows(
    conn: aiosqlite.Connection,
    table: str,
    clauses: Sequence[str],
    params: Sequence[Any],
) -> int:
    """Count the rows of `table` (with its alias) that every clause keeps."""
    row = await read_one(
        conn,
        f"SELECT count(*) FROM {table} WHERE {' AND '.join(clauses) or '1'}",  # noqa: S608
        list(params),
    )
    return int(row[0]) if row else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Keyset:
    """What a keyset page lists: a table, its columns, and the order key."""

    # The table with its alias ("memories m").
    table: str
    columns: str
    # Values the columns bind (subqueries), before the clauses' values.
    column_params: Sequence[Any] = ()
    # Largest first, ties by the larger row id.
    key: str
    row_id: str


async def keyset_page(
    conn: aiosqlite.Connection,
    keyset: Keyset,
    clauses: Sequence[str],
    params: Sequence[Any],
    *,
    limit: int,
    cursor: str | None,
) -> tuple[list[sqlite3.Row], int, str | None]:
    """Return a page of rows, largest key first, the total, and the next cursor.

    Rows are ordered by (`keyset.key`, `keyset.row_id`) descending; a page starts after the
    cursor the one before it returned (None: the first page), so a row
    added meanwhile does not shift the pages and page 2,000 costs what
    page 1 does. The next cursor is None on the last page.
    """
    total = await count_rows(conn, keyset.table, clauses, params)
    key, row_id = keyset.key, keyset.row_id
    page_clauses, page_params = list(clauses), list(params)
    if cursor is not None:
        after, after_id = decode_cursor(cursor)
        page_clauses.append(f"({key}, {row_id}) < (?, ?)")
        page_params.extend([after, after_id])
    rows = list(
        await conn.execute_fetchall(
            f"SELECT {keyset.columns}, {key} AS page_key, {row_id} AS page_id "  # noqa: S608
            f"FROM {keyset.table} WHERE {' AND '.join(page_clauses) or '1'} "
            f"ORDER BY {key} DESC, {row_id} DESC LIMIT ?",
            [*keyset.column_params, *page_params, limit + 1],
        )
    )
    if len(rows) <= limit:
        return rows, total, None
    last = rows[limit - 1]
    return (
        rows[:limit],
        total,
        encode_cursor(float(last["page_key"]), int(last["page_id"])),
    )


async def browse(
    conn: aiosqlite.Connection, query: BrowseQuery, now: float
) -> BrowsePage:
    """Return one page of the memories `query` selects, and their total."""
    validate_limit(query.limit)
    if query.scopes is not None and not query.scopes:
        return BrowsePage([], 0, None)
    clauses, params = browse_filters(query, now)
    rows, total, cursor = await keyset_page(
        conn,
        Keyset(
            table="memories m",
            columns=ITEM_COLUMNS,
            key=_ORDER_KEY[query.order],
            row_id="m.id",
        ),
        clauses,
        params,
        limit=query.limit,
        cursor=query.cursor,
    )
    return BrowsePage([row_to_item(row) for row in rows], total, cursor)


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
