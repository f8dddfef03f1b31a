"""How many rows an FTS5 index holds, and how many hold each term.

The vocabulary counts a term by reading its whole list of rows (about 20 ns a
row: 0.7 ms for a term in 32k rows, ten times that at a million), so the counts
of common terms are kept between searches (`TermCounts`) until the table has
grown or shrunk by CACHE_DRIFT; rare and absent terms are always looked up
(cheap, and a new row's new word is found at once). Each statement is a
hand-off to the connection's thread, which costs more than most of these
lookups while the vector side holds the other core: the text is analysed first
(no term, no statement), and the row count's check, the terms' and the compound
heads' counts are one statement (`TermCounts.look_up`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import aiosqlite

# `TermCounts` keeps the counts of terms in at least this many rows...
CACHE_ROWS: Final = 256
# ... until the table's row count has moved by more than this share of it
# (the weights barely move before that)...
CACHE_DRIFT: Final = 0.01
# ... and at most this many terms.
CACHE_TERMS: Final = 4096


class RowCounter:
    """Counts a table's rows again only after a write (`PRAGMA data_version`).

    The check rides along with the vocabulary lookup (`TermCounts.look_up`):
    one statement, one hand-off to the connection's thread.
    """

    def __init__(self, table: str) -> None:
        """Count `table` (a trusted name, never user text)."""
        self._table = table
        self._counted: tuple[tuple[int, int], int] | None = None

    def probe(self, conn: aiosqlite.Connection) -> tuple[str, list[Any]]:
        """Return a SELECT of `(0, data_version, rows or -1 if unchanged)`, its parameters."""
        kept = self._counted
        # data_version changes when another connection (the writer) commits;
        # the count is only run (CASE) when it did.
        version = kept[0][1] if kept is not None and kept[0][0] == id(conn) else -1
        sql = (
            "SELECT 0, v, CASE WHEN v = ? THEN -1 ELSE "  # noqa: S608
            f"(SELECT count(*) FROM {self._table}) END "
            "FROM (SELECT data_version AS v FROM pragma_data_version)"
        )
        return sql, [version]

    def take(self, conn: aiosqlite.Connection, version: int, rows: int) -> int:
        """Keep what `probe` read (`rows` -1: unchanged); return the row count."""
        if rows >= 0 or self._counted is None:
            self._counted = ((id(conn), version), max(rows, 0))
        return self._counted[1]

    async def count(self, conn: aiosqlite.Connection) -> int:
        """Rows of the table as `conn` sees them."""
        sql, params = self.probe(conn)
        rows = list(await conn.execute_fetchall(sql, params))
        return self.take(conn, int(rows[0][1]), int(rows[0][2]))


def _prefix_sql(vocab: str) -> str:
    """SELECT the rows of the first 64 terms from `?` up to (without) `?` (summed)."""
    return (
        f"SELECT sum(doc) FROM (SELECT doc FROM {vocab} "  # noqa: S608
        "WHERE term >= ? AND term < ? LIMIT 64)"
    )


class TermCounts:
    """Rows holding each term of one vocabulary, common terms' counts kept.

    A count of at least CACHE_ROWS is kept until the table's row count
    (`total`) moves by more than CACHE_DRIFT of it; smaller counts, absent
    terms and prefixes below CACHE_ROWS are looked up every time.
    """

    def __init__(self, vocab: str) -> None:
        """Count in `vocab`, an fts5vocab 'row' table (a trusted name)."""
        self.vocab = vocab
        self._kept: dict[str, int] = {}
        self._total = -1

    def _current(self, total: int) -> bool:
        """Forget the kept counts if the table moved; return whether it did."""
        if abs(total - self._total) > CACHE_DRIFT * max(self._total, 0):
            self._kept.clear()
            self._total = total
            return True
        return False

    def _keep(self, key: str, rows: int) -> None:
        if rows >= CACHE_ROWS and len(self._kept) < CACHE_TERMS:
            self._kept[key] = rows

    async def terms(
        self, conn: aiosqlite.Connection, terms: Sequence[str], total: int
    ) -> dict[str, int]:
        """Rows holding each exact term (absent: none)."""
        return (await self.look_up(conn, (terms, ()), total))[0]

    async def look_up(
        self,
        conn: aiosqlite.Connection,
        words: tuple[Sequence[str], Sequence[str]],
        rows: RowCounter | int,
    ) -> tuple[dict[str, int], dict[str, int], int]:
        """Rows holding each exact term and each head's terms, and the table's rows.

        `words` is `(terms, heads)`; `rows` the table's row count or its
        `RowCounter`. One statement reads what is not kept: the counter's
        check, the terms, the heads (`_prefix_sql`). Should the row count
        have moved past CACHE_DRIFT, the kept counts served are read again.
        """
        terms, heads = words
        parts: list[str] = []
        params: list[Any] = []
        if isinstance(rows, RowCounter):
            sql, args = rows.probe(conn)
            parts.append(sql)
            params += args
        else:
            self._current(rows)
        counts = {term: self._kept[term] for term in terms if term in self._kept}
        sums = {
            head: self._kept[head + "*"] for head in heads if head + "*" in self._kept
        }
        fresh = [term for term in dict.fromkeys(terms) if term not in counts]
        if fresh:
            parts.append(
                f"SELECT 1, term, doc FROM {self.vocab} "  # noqa: S608
                f"WHERE term IN ({', '.join('?' * len(fresh))})"
            )
            params += fresh
        fresh_heads = [head for head in dict.fromkeys(heads) if head not in sums]
        for head in fresh_heads:
            parts.append(f"SELECT 2, ?, ({_prefix_sql(self.vocab)})")
            params += [head, head, head + "\U0010ffff"]
        total = rows if isinstance(rows, int) else 0
        found: dict[str, int] = {}
        found_sums = dict.fromkeys(fresh_heads, 0)
        if parts:
            for kind, key, value in await conn.execute_fetchall(
                " UNION ALL ".join(parts), params
            ):
                if kind == 0 and isinstance(rows, RowCounter):
                    total = rows.take(conn, int(key), int(value))
                elif kind == 1:
                    found[str(key)] = int(value)
                else:
                    found_sums[str(key)] = int(value or 0)
        if isinstance(rows, RowCounter) and self._current(total) and (counts or sums):
            # The kept counts are stale: read them again.
            again = await self.look_up(conn, (list(counts), list(sums)), total)
            counts, sums = again[0], again[1]
        for term, count in found.items():
            self._keep(term, count)
        for head, count in found_sums.items():
            self._keep(head + "*", count)
        return counts | found, sums | found_sums, total

    async def prefix(self, conn: aiosqlite.Connection, head: str, total: int) -> int:
        """Rows holding some term that starts with `head` (summed over terms)."""
        return (await self.look_up(conn, ((), (head,)), total))[1][head]
