"""FTS5's bm25 as one PostgreSQL statement over a postings table.

Memories (`keywords`) and messages (`message_search`) rank the same way,
over their own postings, statistics and rows: `ranking_sql` builds the ranking
statement, `counts_sql` the statement that reads the index's rows and each
query term's rows (for the engine's idf weights). The formula is FTS5's
(`fts5_aux.c`; see `keywords`' docstring): the terms' frequencies first,
the rows filtered only after, as a MATCH scores against its whole index.

Parameters of `ranking_sql`'s statement: `$1` the terms, `$2` whether each is a
prefix (a compound head, `"term"*`), `$5` the idf floor, `$6` k1, `$7` b;
the caller's `where` and `limit` use the others. A prefix matches every
term it begins (`>= term AND < term || U+10FFFF`, then `starts_with`).
"""

from __future__ import annotations

from collections.abc import Sequence

_QUERY = """
WITH query AS (
    SELECT q.term, q.prefix, q.ord::int AS ord
    FROM unnest($1::text[], $2::bool[]) WITH ORDINALITY AS q(term, prefix, ord)
)"""
_PREFIX = """t.term >= query.term
            AND t.term < query.term || U&'\\+10FFFF'
            AND starts_with(t.term, query.term)"""


def ranking_sql(
    *,
    terms: str,
    key: str,
    columns: Sequence[str],
    tf: str,
    totals: str,
    rows: str,
    where: str,
    limit: str,
) -> str:
    """Return the ranking statement: `(id, bm25, held)` best first, ties by id.

    `terms` is the postings table (`term`, `key`, `columns`), `tf` the
    expression of a term's frequency in a row over them (summed, weighted
    as FTS5 weighs its columns), `totals` the table of row and token deltas,
    `rows` the table whose `term_count` is a row's length and which `where`
    filters (as `m`). `held` lists the query terms (by position, from 1)
    a row holds.
    """
    picked = ", ".join(f"t.{column}" for column in columns)
    return f"""{_QUERY},
postings AS (
    SELECT query.ord, p.{key}, {", ".join(f"p.{column}" for column in columns)}
    FROM query CROSS JOIN LATERAL (
        SELECT t.{key}, {picked} FROM {terms} t
        WHERE NOT query.prefix AND t.term = query.term
        UNION ALL
        SELECT t.{key}, {picked} FROM {terms} t
        WHERE query.prefix AND {_PREFIX}
    ) AS p
),
freq AS (
    SELECT ord, {key}, {tf} AS tf
    FROM postings GROUP BY ord, {key}
),
docs AS (
    SELECT ord, count(*) AS n FROM freq GROUP BY ord
),
totals AS (
    SELECT greatest(coalesce(sum(rows), 0), 1)::float8 AS n_rows,
        coalesce(sum(tokens), 0)::float8 AS n_tokens
    FROM {totals}
),
weights AS (
    SELECT docs.ord, docs.n,
        CASE WHEN raw.idf <= 0 THEN $5::float8 ELSE raw.idf END AS idf
    FROM docs CROSS JOIN totals CROSS JOIN LATERAL (
        SELECT ln(((totals.n_rows - docs.n::float8) + 0.5::float8)
            / (docs.n::float8 + 0.5::float8)) AS idf
    ) AS raw
)
SELECT freq.{key} AS id,
    -sum(
        weights.idf * (
            (freq.tf * ($6::float8 + 1.0::float8))
            / (freq.tf + $6::float8 * (
                (1.0::float8 - $7::float8)
                + $7::float8 * m.term_count::float8
                    / (totals.n_tokens / totals.n_rows)
            ))
        )
        ORDER BY freq.ord
    ) AS bm25,
    array_agg(freq.ord ORDER BY freq.ord) AS held
FROM freq
JOIN weights ON weights.ord = freq.ord
JOIN {rows} m ON m.id = freq.{key}
CROSS JOIN totals
WHERE {where}
GROUP BY freq.{key}
ORDER BY bm25, freq.{key}
LIMIT {limit}
"""  # noqa: S608 - table and column names are the room's own constants


def counts_sql(*, terms: str, key: str, totals: str) -> str:
    """Return the statement of the index's rows and each query term's rows.

    `$1` and `$2` as for `ranking_sql`; one row: the rows the index holds (at
    least 1), and the rows holding each term, in the query's order.
    """
    return f"""
SELECT (SELECT greatest(coalesce(sum(rows), 0), 1) FROM {totals}),
    array(
        SELECT (SELECT count(DISTINCT t.{key}) FROM {terms} t
            WHERE CASE WHEN q.prefix
                THEN t.term >= q.term AND t.term < q.term || U&'\\+10FFFF'
                    AND starts_with(t.term, q.term)
                ELSE t.term = q.term END)
        FROM unnest($1::text[], $2::bool[]) WITH ORDINALITY AS q(term, prefix, ord)
        ORDER BY q.ord
    )
"""  # noqa: S608 - table and column names are the room's own constants
