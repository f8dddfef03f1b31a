"""SQL helpers the table modules share: bound `IN (…)` lists, one-hand-off reads.

Every list of ids reaches SQLite as bound values, never as text, and a long
list is split so that one statement stays far below SQLite's bound-parameter
limit (32,766): `ID_CHUNK` values a statement, in every module.

Reads on the shared readers run each statement to its end in one hand-off
to aiosqlite's thread (`read_one`, `read_pages`, `execute_fetchall`): a
statement left open between hand-offs keeps its connection's read snapshot,
and every other read queued on that connection meanwhile would miss what
the writer committed since (`store/connections.py` refuses the cursor API).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
import sqlite3
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import aiosqlite

# Values per `IN (…)` of a chunked query.
ID_CHUNK: Final = 500
# SQLite's largest INTEGER, so the largest id a row can have.
MAX_ROW_ID: Final = 2**63 - 1
# Where a chunked query's statement takes the chunk's placeholders.
IDS: Final = "{ids}"


def placeholders(count: int) -> str:
    """`?,?,…` for an `IN (…)` of `count` values: values are always bound."""
    return ",".join("?" * count)


def storable_ids(ids: Iterable[int]) -> list[int]:
    """Ids SQLite can hold (1 to 2**63 - 1), unique and sorted.

    Any other id cannot exist; binding it would raise OverflowError.
    """
    return sorted({item_id for item_id in ids if 1 <= item_id <= MAX_ROW_ID})


def chunks[T](values: Sequence[T], size: int = ID_CHUNK) -> Iterator[Sequence[T]]:
    """`values` in slices of at most `size`, in order."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


async def rows_in(
    conn: aiosqlite.Connection,
    sql: str,
    values: Sequence[Any],
    *,
    before: Sequence[Any] = (),
    after: Sequence[Any] = (),
) -> list[sqlite3.Row]:
    """Run `sql` once per chunk of `values`; return every row, chunk by chunk.

    `sql` holds `IN ({ids})` (the `IDS` mark), which each run fills with the
    chunk's placeholders; `before` and `after` are bound on either side of
    the chunk's values. No values, no query.
    """
    rows: list[sqlite3.Row] = []
    for chunk in chunks(values):
        statement = sql.replace(IDS, placeholders(len(chunk)))
        # One hand-off to the connection's thread a chunk: a cursor would take
        # three (execute, fetch, close), which a search's hot path feels.
        rows.extend(await conn.execute_fetchall(statement, [*before, *chunk, *after]))
    return rows


async def read_one(
    conn: aiosqlite.Connection, sql: str, params: Sequence[Any] = ()
) -> sqlite3.Row | None:
    """Return the first row of `sql`, or None; for statements giving one row.

    One hand-off: the statement runs to its end there (a count, an EXISTS,
    a MIN, a primary-key lookup, a LIMIT 1), so it holds no read snapshot
    after it.
    """
    rows = await conn.execute_fetchall(sql, params)
    return next(iter(rows), None)


async def read_pages(
    conn: aiosqlite.Connection,
    sql: str,
    params: Sequence[Any] = (),
    *,
    key: int = 0,
    size: int = 1000,
) -> AsyncIterator[list[sqlite3.Row]]:
    """Stream `sql`'s rows in pages, each page its own complete statement.

    `sql` ends with `… AND <key> > ? ORDER BY <key> LIMIT ?` (or `WHERE
    <key> > ?`) on an integer key that the rows' first column holds; `params`
    are bound before the last key seen (starting at `key`) and the page size.
    Keyset paging, not a cursor with `fetchmany`: no statement outlives its
    hand-off, so a page sees what was committed before it, and reads queued
    on the connection between pages are not held in an old snapshot. The
    last page is shorter than `size` (or empty).
    """
    while True:
        page = list(await conn.execute_fetchall(sql, [*params, key, size]))
        if page:
            yield page
        if len(page) < size:
            return
        key = int(page[-1][0])
