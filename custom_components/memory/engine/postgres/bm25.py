"""FTS5's bm25 as one PostgreSQL statement over a postings table.

Memories (`keywords`) and messages (`message_search`) rank the same way,
over their own postings, statistics and rows: `ranking_sql` builds the ranking
statement, `counts_sql` the statement that reads the index's rows and each
query term's rows (for the engine's idf weights; `index_counts_sql` the same
from the postings' index), `totals_ddl` the
triggers that keep an index's row and token totals and `compact_totals`
the statement that folds them. The formula is FTS5's
(`fts5_aux.c`; see `keywords`' docstring): the terms' frequencies first,
the rows filtered only after, as a MATCH scores against its whole index.

Parameters of `ranking_sql`'s statement: `$1` the terms, `$2` whether each is a
prefix (a compound head, `"term"*`), `$5` the idf floor, `$6` k1, `$7` b;
the caller's `where` and `limit` use the others. A prefix matches every
term it begins (`>= term AND < term || U+10FFFF`, then `starts_with`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..search import idf

# FTS5's bm25 parameters (its defaults, which the engine keeps).
BM25_K1: Final = 1.2
BM25_B: Final = 0.75
# FTS5's floor of a term's idf (a term in more than half the rows).
MIN_IDF: Final = 1e-6


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """A row a keyword search found: its id, FTS5's bm25 (≤ 0) and coverage."""

    id: int
    bm25: float
    coverage: float

    def as_tuple(self) -> tuple[int, float, float]:
        """Return `(id, bm25, coverage)`, as the SQLite engine's hits are."""
        return self.id, self.bm25, self.coverage


def query_flags(
    terms: Sequence[str], prefixes: Iterable[str]
) -> tuple[list[str], list[bool]]:
    """Return the query's terms (each once, in order) and whether each is a prefix."""
    order = list(dict.fromkeys(term for term in terms if term))
    heads = set(prefixes)
    return order, [term in heads for term in order]


async def ranked_hits(
    connection: Any,
    statements: tuple[str, str],
    terms: tuple[list[str], list[bool]],
    own: tuple[Any, Any],
    more: Sequence[Any],
) -> list[KeywordHit]:
    """Run `ranking_sql`'s and `counts_sql`'s `statements` for `terms`.

    `own` fills `$3` and `$4`, the idf floor, k1 and b fill `$5` to `$7`,
    `more` the rest. Each hit's coverage is the engine's: the idf
    (`search.idf`) of the query terms it holds over the query's.
    """
    ranking, counting = statements
    total, counts = await connection.fetchrow(counting, *terms)
    records = await connection.fetch(
        ranking, *terms, *own, MIN_IDF, BM25_K1, BM25_B, *more
    )
    weights = [idf(int(count), int(total)) for count in counts]
    whole = sum(weights) or 1.0
    return [
        KeywordHit(
            id=int(record["id"]),
            bm25=float(record["bm25"]),
            coverage=sum(weights[at - 1] for at in record["held"]) / whole,
        )
        for record in records
    ]


_QUERY = """
WITH query AS (
    SELECT q.term, q.prefix, q.ord::int AS ord
    FROM unnest($1::text[], $2::bool[]) WITH ORDINALITY AS q(term, prefix, ord)
)"""
_PREFIX = """t.term >= query.term
            AND t.term < query.term || U&'\\+10FFFF'
            AND starts_with(t.term, query.term)"""


def scored_ctes(
    *,
    terms: str,
    key: str,
    columns: Sequence[str],
    tf: str,
    totals: str,
    floor: str = "$5",
    within: str | None = None,
    before: str = "",
) -> str:
    """Return the `WITH` list of the query's terms up to their idf (`weights`).

    Then the terms' frequencies in each row (`freq`: `ord`, `key`, `tf`),
    the index's totals, and each term's idf floored at the parameter
    `floor`. `terms` is the postings table (`term`, `key`, `columns`), `tf` the
    expression of a term's frequency in a row over them (summed, weighted
    as FTS5 weighs its columns), `totals` the table of row and token deltas.

    `within` (a condition on a posting's `t.{key}`, such as `>= $9`) bounds
    `freq` to the rows the caller scores, so a common term's postings are
    not all read (with `tf`, from the table) and grouped: its n is then
    counted apart, from the postings' index alone (`_counted`). `before`
    adds CTEs (ending with a comma) after `query`, for `within` to read.
    """
    picked = ", ".join(f"t.{column}" for column in columns)
    bound = "" if within is None else f" AND t.{key} {within}"
    docs = (
        "SELECT ord, count(*) AS n FROM freq GROUP BY ord"
        if within is None
        else _counted(terms, key)
    )
    return f"""{_QUERY},{before}
postings AS (
    SELECT query.ord, p.{key}, {", ".join(f"p.{column}" for column in columns)}
    FROM query CROSS JOIN LATERAL (
        SELECT t.{key}, {picked} FROM {terms} t
        WHERE NOT query.prefix AND t.term = query.term{bound}
        UNION ALL
        SELECT t.{key}, {picked} FROM {terms} t
        WHERE query.prefix AND {_PREFIX}{bound}
    ) AS p
),
freq AS (
    SELECT ord, {key}, {tf} AS tf
    FROM postings GROUP BY ord, {key}
),
docs AS {"" if within is None else "MATERIALIZED "}(
    {docs}
),
totals AS (
    SELECT greatest(coalesce(sum(rows), 0), 1)::float8 AS n_rows,
        coalesce(sum(tokens), 0)::float8 AS n_tokens
    FROM {totals}
),
weights AS (
    SELECT docs.ord, docs.n,
        CASE WHEN raw.idf <= 0 THEN {floor}::float8 ELSE raw.idf END AS idf
    FROM docs CROSS JOIN totals CROSS JOIN LATERAL (
        SELECT ln(((totals.n_rows - docs.n::float8) + 0.5::float8)
            / (docs.n::float8 + 0.5::float8)) AS idf
    ) AS raw
)"""  # noqa: S608 - table and column names are the room's own constants


def _counted(terms: str, key: str) -> str:
    """Return the SELECT of each query term's rows (n), from the postings' index.

    An exact term has one posting a row (the primary key `(term, key)`), so
    its n is an index-only count; a prefix counts the distinct rows of the
    terms it begins. The same n as counting `freq` unbounded, terms no row
    holds left out as there.
    """
    return f"""SELECT ord, n FROM (
        SELECT query.ord, CASE WHEN query.prefix
            THEN (SELECT count(DISTINCT t.{key}) FROM {terms} t WHERE {_PREFIX})
            ELSE (SELECT count(*) FROM {terms} t WHERE t.term = query.term)
            END AS n
        FROM query
    ) AS counted WHERE n > 0"""  # noqa: S608 - the room's own constant names


def score_sum(*, length: str, k1: str = "$6", b: str = "$7") -> str:
    """Return a row's bm25 over `freq` joined to `weights` and `totals`.

    `length` is the row's length in tokens (its `term_count`); `k1` and
    `b` the parameters holding them. Summed in the query's term order, as
    FTS5 sums.
    """
    return f"""-sum(
        weights.idf * (
            (freq.tf * ({k1}::float8 + 1.0::float8))
            / (freq.tf + {k1}::float8 * (
                (1.0::float8 - {b}::float8)
                + {b}::float8 * {length}::float8
                    / (totals.n_tokens / totals.n_rows)
            ))
        )
        ORDER BY freq.ord
    )"""


def ranking_sql(  # noqa: PLR0913 - the statement's parts, keyword-only
    *,
    terms: str,
    key: str,
    columns: Sequence[str],
    tf: str,
    totals: str,
    rows: str,
    where: str,
    limit: str,
    within: str | None = None,
    before: str = "",
) -> str:
    """Return the ranking statement: `(id, bm25, held)` best first, ties by id.

    `terms`, `key`, `columns`, `tf`, `totals`, `within` and `before` as for
    `scored_ctes`; `rows` the table whose `term_count` is a row's length
    and which `where` filters (as `m`). `held` lists the query terms (by
    position, from 1) a row holds.
    """
    ctes = scored_ctes(
        terms=terms,
        key=key,
        columns=columns,
        tf=tf,
        totals=totals,
        within=within,
        before=before,
    )
    return f"""{ctes}
SELECT freq.{key} AS id,
    {score_sum(length="m.term_count")} AS bm25,
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


def index_counts_sql(*, terms: str, key: str, totals: str) -> str:
    """Return `counts_sql`'s statement, each term's rows counted from the index.

    The same row: an exact term has one posting a row (the primary key
    `(term, key)`), so its n is an index-only count of its range, never a
    filter over every posting; a prefix counts the distinct rows of the
    terms its range holds.
    """
    return f"""
SELECT (SELECT greatest(coalesce(sum(rows), 0), 1) FROM {totals}),
    array(
        SELECT CASE WHEN q.prefix
            THEN (SELECT count(DISTINCT t.{key}) FROM {terms} t
                WHERE t.term >= q.term AND t.term < q.term || U&'\\+10FFFF'
                    AND starts_with(t.term, q.term))
            ELSE (SELECT count(*) FROM {terms} t WHERE t.term = q.term)
            END
        FROM unnest($1::text[], $2::bool[]) WITH ORDINALITY AS q(term, prefix, ord)
        ORDER BY q.ord
    )
"""  # noqa: S608 - table and column names are the room's own constants


def totals_ddl(table: str, totals: str) -> tuple[str, ...]:
    """Return the function and triggers that keep `totals` in step with `table`.

    One delta row a statement (transition tables: `added`, `removed`) of the
    rows and tokens (`term_count`) the index holds, so concurrent writers
    never lock a shared row; `compact_totals` folds them now and then.
    Named `{table}_totals`, `{table}_totals_insert` and so on.
    """
    function = f"{table}_totals"
    return (
        f"""
        CREATE FUNCTION {function}() RETURNS trigger
            LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                INSERT INTO {totals} (rows, tokens)
                    SELECT count(*), coalesce(sum(term_count), 0) FROM added
                    HAVING count(*) > 0;
            ELSIF TG_OP = 'DELETE' THEN
                INSERT INTO {totals} (rows, tokens)
                    SELECT -count(*), -coalesce(sum(term_count), 0) FROM removed
                    HAVING count(*) > 0;
            ELSE
                INSERT INTO {totals} (rows, tokens)
                    SELECT 0, delta FROM (
                        SELECT coalesce((SELECT sum(term_count) FROM added), 0)
                            - coalesce((SELECT sum(term_count) FROM removed), 0)
                            AS delta
                    ) AS change
                    WHERE delta <> 0;
            END IF;
            RETURN NULL;
        END
        $$
        """,  # noqa: S608 - table names are the room's own constants
        f"""
        CREATE TRIGGER {function}_insert AFTER INSERT ON {table}
            REFERENCING NEW TABLE AS added
            FOR EACH STATEMENT EXECUTE FUNCTION {function}()
        """,
        f"""
        CREATE TRIGGER {function}_delete AFTER DELETE ON {table}
            REFERENCING OLD TABLE AS removed
            FOR EACH STATEMENT EXECUTE FUNCTION {function}()
        """,
        f"""
        CREATE TRIGGER {function}_update AFTER UPDATE ON {table}
            REFERENCING OLD TABLE AS removed NEW TABLE AS added
            FOR EACH STATEMENT EXECUTE FUNCTION {function}()
        """,
    )


def compact_totals(totals: str) -> str:
    """Return the statement that folds `totals`' delta rows into one."""
    return f"""
WITH gone AS (DELETE FROM {totals} RETURNING rows, tokens)
INSERT INTO {totals} (rows, tokens)
    SELECT sum(rows), sum(tokens) FROM gone HAVING count(*) > 0
"""  # noqa: S608 - table names are the room's own constants
