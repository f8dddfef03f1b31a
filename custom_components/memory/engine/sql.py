"""SQL helpers the table modules share: bound `IN (…)` lists, run in chunks.

Every list of ids reaches SQLite as bound values, never as text, and a long
list is split so that one statement stays far below SQLite's bound-parameter
limit (32,766): `ID_CHUNK` values a statement, in every module.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
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
