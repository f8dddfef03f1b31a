"""Keyword search on PostgreSQL with FTS5's bm25, number for number.

The SQLite engine ranks a MATCH of analysed terms, OR-ed, compound heads as
prefixes (`"term"*`), with `bm25(memories_fts)`. `PostgresKeywords.search`
takes the same terms and prefixes and returns the same hits `(id, bm25,
coverage)`, best (lowest bm25) first, ties by id as `ORDER BY rank, rowid`.

FTS5's bm25 (`fts5_aux.c`), with N the rows the index holds (every row of
`memories`, whatever its status), n a term's rows among them (for a prefix,
the rows holding any term it begins), tf its tokens in a row (a prefix: every
token it begins), dl the row's tokens and avgdl the tokens over N:

    idf   = ln((N - n + 0.5) / (n + 0.5)), 1e-6 when that is ≤ 0
    score = -Σ idf · tf · (k1 + 1) / (tf + k1 · (1 - b + b · dl / avgdl))

with k1 = 1.2 and b = 0.75, summed over the query's terms in their order
(an ordered aggregate), in double precision as FTS5 computes it. N and the
token total come from `memory_term_totals`, n and tf from `memory_terms`
(`schema`): only then are the rows filtered (active, in the scopes), as a
MATCH scores against its whole index before the join filters.

`coverage` is the engine's (`search.KeywordQuery.coverage`): the share of
the query's terms a row holds, each weighted by `search.idf` of its rows.
What this round leaves to the SQLite engine alone: the MATCH budget and its
`newest` bound, compound parts looked up in the vocabulary, earlier turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from .bm25 import KeywordHit, counts_sql, query_flags, ranked_hits, ranking_sql

_SEARCH: Final = ranking_sql(
    terms="memory_terms",
    key="memory_id",
    columns=("tf",),
    tf="sum(tf)::float8",
    totals="memory_term_totals",
    rows="memories",
    where=(
        "m.status = ANY($3::text[])"
        " AND ($4::text[] IS NULL OR m.scope = ANY($4::text[]))"
    ),
    limit="$8",
)
_COUNTS: Final = counts_sql(
    terms="memory_terms", key="memory_id", totals="memory_term_totals"
)


class PostgresKeywords:
    """Keyword search over the `memory_terms` postings of one database."""

    def __init__(self, pool: Any) -> None:
        """Hold the asyncpg pool of a database `schema.migrate` set up."""
        self._pool = pool

    async def search(
        self,
        terms: Sequence[str],
        *,
        prefixes: Iterable[str] = (),
        scopes: Sequence[str] | None = None,
        statuses: Sequence[str] = ("active",),
        limit: int | None = None,
    ) -> list[KeywordHit]:
        """Rows holding any of `terms` (those in `prefixes`: a term they begin).

        Ranked by FTS5's bm25 over the whole index, then ids; only rows of
        `statuses` and, when given, `scopes`; at most `limit` (None: all).
        """
        query = query_flags(terms, prefixes)
        if not query[0]:
            return []
        async with self._pool.acquire() as connection:
            return await ranked_hits(
                connection,
                (_SEARCH, _COUNTS),
                query,
                (list(statuses), None if scopes is None else list(scopes)),
                (limit,),
            )
