"""The keyword side of the memories' hybrid search on PostgreSQL, as FTS5 gives it.

The SQLite search (`search.hybrid`, `search.keywords`) reads FTS5 in three
ways, each given here from the `memory_terms` postings (`schema`):

- the vocabulary (`memories_fts_vocab`): how many rows hold a term, and the
  rows of the first 64 terms a compound head begins, summed
  (`PgTermCounts`, the engine's `TermCounts` with the same cache, so
  `search.keyword_query` builds the same `KeywordQuery` from the same
  numbers: terms, weights, MATCH budget, `newest`, `others`, `every`);
- the MATCH of a query's driving terms, ranked by bm25 (`RANKED`): its
  `newest` bound (the rows from the `newest`-th newest match on), the rows
  holding every term first when some do not drive it (`every`), the best
  `wanted` of them, then joined with the memories and their filters;
- the bm25 of given rows (`BM25_OF`), for candidates the vectors found.

bm25 is FTS5's formula in FTS5's order, as `keywords.PostgresKeywords`
computes it (N, n and avgdl over the whole index, archived rows too). A
common term's postings are never all read: n is an index-only count, the
`newest` bound comes from each term's newest rows, `tf` is read only from
the bound on, `every` probes the matched rows' postings, and `BM25_OF`
reads only its rows' (docs/benchmarks/postgres.md, "Keyword search at 1M"). The
MATCH expression is the engine's; its quoted terms are read back from it
(`match_terms`), in its order, which is the order bm25 sums them in.
"""

from __future__ import annotations

from collections.abc import Sequence
import re
from typing import Any, Final

from ..search import KeywordQuery, RowCounter, TermCounts
from .bm25 import BM25_B, BM25_K1, MIN_IDF, score_sum, scored_ctes

_QUOTED: Final = re.compile(r'"((?:[^"]|"")*)"(\*?)')

# Rows holding each term (kind 1), and the rows of the first 64 terms each
# head begins, summed term by term (kind 2), as `search.keywords._prefix_sql`
# reads the FTS5 vocabulary; "C" order is FTS5's byte order.
_VOCABULARY: Final = """
SELECT 1 AS kind, q.term AS key,
    (SELECT count(*) FROM {terms} t WHERE t.term = q.term) AS value
FROM unnest($1::text[]) AS q(term)
UNION ALL
SELECT 2, h.head, (
    SELECT sum(s.n) FROM (
        SELECT count(*) AS n FROM {terms} t
        WHERE t.term >= h.head AND t.term < h.head || U&'\\+10FFFF'
        GROUP BY t.term ORDER BY t.term LIMIT 64
    ) AS s
)
FROM unnest($2::text[]) AS h(head)
"""
VOCABULARY: Final = _VOCABULARY.format(terms="memory_terms")

TOTAL_ROWS: Final = "SELECT coalesce(sum(rows), 0) FROM memory_term_totals"


# The MATCH's terms ($1, $2: prefixes), FTS5's statistics and each matching
# row's bm25 ($3 MIN_IDF, $4 k1, $5 b): `bm25`'s fragments, as in `keywords`,
# each term's postings read only from `lowest` on (`scored_ctes`' `within`).
def _scored(within: str, before: str = "") -> str:
    return (
        scored_ctes(
            terms="memory_terms",
            key="memory_id",
            columns=("tf",),
            tf="sum(tf)::float8",
            totals="memory_term_totals",
            floor="$3",
            within=within,
            before=before,
        )
        + ",\n"
    )


_BM25: Final = score_sum(length="s.term_count", k1="$4", b="$5")

# The MATCH's lowest row: with $6 newest > 0, its newest-th newest row. That
# row is among its own term's newest $6 rows, so each term's newest $6 (a
# backward range of the primary key, distinct for a prefix) are all read,
# never a common term's every posting.
_LOWEST_OF: Final = """
lowest AS MATERIALIZED (
    SELECT CASE WHEN {newest}::int > 0 THEN coalesce((
        SELECT d.{key} FROM (
            SELECT DISTINCT p.{key} FROM query CROSS JOIN LATERAL (
                (SELECT t.{key} FROM {terms} t
                WHERE NOT query.prefix AND t.term = query.term
                ORDER BY t.{key} DESC LIMIT {newest}::int)
                UNION ALL
                (SELECT DISTINCT t.{key} FROM {terms} t
                WHERE query.prefix AND t.term >= query.term
                    AND t.term < query.term || U&'\\+10FFFF'
                    AND starts_with(t.term, query.term)
                ORDER BY t.{key} DESC LIMIT {newest}::int)
            ) AS p
        ) AS d
        ORDER BY d.{key} DESC OFFSET greatest({newest}::int - 1, 0) LIMIT 1
    ), 0) ELSE 0 END AS id
),"""


def lowest_cte(terms: str, key: str, newest: str) -> str:
    """Return the CTE `lowest` (ending with a comma) over the postings `terms`.

    The `id` from which a MATCH with the bound `newest` (a parameter, 0:
    every row) reads its rows, as `_LOWEST` is for memories.
    """
    return _LOWEST_OF.format(terms=terms, key=key, newest=newest)


_LOWEST: Final = lowest_cte("memory_terms", "memory_id", "$6")

# The ranked MATCH: $6 newest (0: every row), $7 and $8 the terms outside
# it (prefixes), $9 the rows fetched (`wanted`) for `every`, $10 for the
# MATCH (NULL: all), $11 the rows returned; the filters' parameters follow.
# Formats: {vector} (the embedding or NULL), {join}, {where}. `every` looks
# each matched row's postings up (the primary key for an exact term), never
# a term's whole list.
RANKED: Final = (
    _scored(">= (SELECT id FROM lowest)", _LOWEST)  # noqa: S608 - constant fragments
    + """
matched AS MATERIALIZED (SELECT DISTINCT memory_id FROM freq),
every_row AS MATERIALIZED (
    SELECT r.memory_id AS id FROM matched r
    WHERE cardinality($7::text[]) > 0 AND NOT EXISTS (
        SELECT 1 FROM unnest($7::text[], $8::bool[]) AS q(term, prefix)
        WHERE NOT (
            (NOT q.prefix AND EXISTS (
                SELECT 1 FROM memory_terms t
                WHERE t.term = q.term AND t.memory_id = r.memory_id))
            OR (q.prefix AND EXISTS (
                SELECT 1 FROM memory_terms t
                WHERE t.memory_id = r.memory_id AND t.term >= q.term
                    AND t.term < q.term || U&'\\+10FFFF'
                    AND starts_with(t.term, q.term)))
        )
    )
    ORDER BY r.memory_id DESC LIMIT $9
),
scored AS (
    SELECT freq.memory_id AS id,"""
    + _BM25
    + """AS rank
    FROM freq
    JOIN weights ON weights.ord = freq.ord
    JOIN memories s ON s.id = freq.memory_id
    CROSS JOIN totals
    GROUP BY freq.memory_id
),
f AS MATERIALIZED (
    SELECT scored.id, scored.rank FROM scored
    ORDER BY scored.id IN (SELECT id FROM every_row) DESC, scored.rank, scored.id
    LIMIT $10
)
SELECT m.id, m.terms, f.rank, {vector}, (SELECT count(*) FROM f)
FROM f JOIN memories m ON m.id = f.id {join}
WHERE {where} ORDER BY f.rank, m.id LIMIT $11
"""
)
# The parameters RANKED takes before the filters'.
RANKED_PARAMS: Final = 11

# The bm25 of the rows $6 (any status; NULL where the MATCH misses them):
# `(id, bm25 or NULL, terms, NULL)`, as `HybridSearch._bm25_of`. Only
# their postings are read (n is counted from the index).
BM25_OF: Final = (
    _scored("= ANY($6::int8[])")  # noqa: S608 - constant fragments
    + """
scored AS (
    SELECT freq.memory_id AS id,"""
    + _BM25
    + """AS rank
    FROM freq
    JOIN weights ON weights.ord = freq.ord
    JOIN memories s ON s.id = freq.memory_id
    CROSS JOIN totals
    GROUP BY freq.memory_id
)
SELECT m.id, scored.rank, m.terms, NULL
FROM memories m LEFT JOIN scored ON scored.id = m.id
WHERE m.id = ANY($6::int8[])
"""
)


def match_terms(expression: str) -> tuple[list[str], list[bool]]:
    """Return the quoted terms of an engine's MATCH expression, in order, and their prefix flags."""
    terms: list[str] = []
    flags: list[bool] = []
    for quoted, star in _QUOTED.findall(expression):
        terms.append(quoted.replace('""', '"'))
        flags.append(bool(star))
    return terms, flags


def bm25_args(keywords: KeywordQuery) -> list[Any]:
    """Return the first five parameters of RANKED and BM25_OF for `keywords`."""
    terms, flags = match_terms(keywords.expression)
    return [terms, flags, MIN_IDF, BM25_K1, BM25_B]


def every_args(keywords: KeywordQuery) -> tuple[list[str], list[bool]]:
    """Return the terms outside the MATCH that `every` needs, and their prefix flags."""
    if not keywords.every:
        return [], []
    terms = list(keywords.others)
    return terms, [term in keywords.prefixes for term in terms]


class PgTermCounts(TermCounts):
    """`TermCounts` over postings (`memory_terms`, `message_terms`): FTS5's numbers.

    Called with the table's row count (never a `RowCounter`: PostgreSQL
    reads it with `TOTAL_ROWS`), on an asyncpg connection.
    """

    def __init__(self, terms: str = "memory_terms") -> None:
        """Count in `terms`, a postings table (a trusted name)."""
        super().__init__(terms)
        self._vocabulary = _VOCABULARY.format(terms=terms)

    async def look_up(
        self,
        conn: Any,
        words: tuple[Sequence[str], Sequence[str]],
        rows: RowCounter | int,
    ) -> tuple[dict[str, int], dict[str, int], int]:
        """Rows holding each exact term and each head's terms, and the table's rows."""
        if isinstance(rows, RowCounter):
            raise TypeError("PgTermCounts takes the row count, not a RowCounter")
        self._current(rows)
        terms, heads = words
        counts = {term: self._kept[term] for term in terms if term in self._kept}
        sums = {
            head: self._kept[head + "*"] for head in heads if head + "*" in self._kept
        }
        fresh = [term for term in dict.fromkeys(terms) if term not in counts]
        fresh_heads = [head for head in dict.fromkeys(heads) if head not in sums]
        found: dict[str, int] = {}
        found_sums = dict.fromkeys(fresh_heads, 0)
        if fresh or fresh_heads:
            for record in await conn.fetch(self._vocabulary, fresh, fresh_heads):
                kind, key, value = int(record[0]), str(record[1]), record[2]
                if kind == 1 and value:
                    found[key] = int(value)
                elif kind == 2:
                    found_sums[key] = int(value or 0)
        for term, count in found.items():
            self._keep(term, count)
        for head, count in found_sums.items():
            self._keep(head + "*", count)
        return counts | found, sums | found_sums, rows


def ranked_rows(records: Sequence[Any]) -> list[tuple[int, str, float, Any, int]]:
    """RANKED's records as `(id, terms, bm25, vector or None, matches fetched)`."""
    return [(int(r[0]), str(r[1]), float(r[2]), r[3], int(r[4])) for r in records]


def of_rows(records: Sequence[Any]) -> list[tuple[int, float | None, str, None]]:
    """BM25_OF's records as `KeywordQuery.hits` reads them."""
    return [
        (int(r[0]), None if r[1] is None else float(r[1]), str(r[2]), None)
        for r in records
    ]
