"""PostgreSQL's keyword search reads a common term's postings only from its MATCH's bound.

At a million memories a common word is in hundreds of thousands of rows;
FTS5 scores only the MATCH's newest budget of them (`KeywordQuery.newest`),
and so must PostgreSQL: the ranked MATCH (`search_keywords.RANKED`) reads
each term's newest rows for the bound and the postings (with `tf`, from the
table) only from there on, and the bm25 of given rows (`BM25_OF`) only
their own postings; n is counted from the index. Checked on the plans
(`EXPLAIN ANALYZE`): no scan of `memory_terms` reading the postings' `tf`
returns more rows than asked for, while 400 rows hold the word. The results are
the newest rows, ranked (parity with SQLite: `test_search_parity`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from custom_components.memory.engine import NewMemory, Origin, SearchQuery, Source
from custom_components.memory.engine.postgres import PostgresMemories, PostgresSearch
from custom_components.memory.engine.postgres.search import where
from custom_components.memory.engine.postgres.search_keywords import (
    BM25_OF,
    RANKED,
    RANKED_PARAMS,
    bm25_args,
    every_args,
)

SOURCE = Source(origin=Origin.TOOL)
ROWS = 400
BUDGET = 12


def _table_rows(plan: dict[str, Any]) -> list[int]:
    """Rows each scan of `memory_terms` reading postings' `tf` returned (all loops)."""
    found: list[int] = []
    if plan.get("Relation Name") == "memory_terms" and any(
        column.endswith(".tf") for column in plan.get("Output", ())
    ):
        found.append(int(plan["Actual Rows"] * plan["Actual Loops"]))
    for child in plan.get("Plans", ()):
        found += _table_rows(child)
    return found


async def _explained(pool: Any, sql: str, *args: Any) -> list[int]:
    async with pool.acquire() as connection, connection.transaction():
        # A few hundred rows fit a page or two, where reading them all is
        # the planner's cheapest way; at scale it takes the index's ranges.
        await connection.execute("SET LOCAL enable_bitmapscan = off")
        await connection.execute("SET LOCAL enable_seqscan = off")
        text = await connection.fetchval(
            "EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) " + sql, *args
        )
    return _table_rows(json.loads(text)[0]["Plan"])


async def test_a_common_terms_postings_are_read_from_the_bound_only(
    postgres_pool: Any,
) -> None:
    """A word in 400 rows, a budget of 12: 12 postings read, the newest 12 found."""
    memories = PostgresMemories(postgres_pool)
    added = await memories.add_many(
        [
            NewMemory(content=f"the lamp in room {n} glows {n % 7}", source=SOURCE)
            for n in range(ROWS)
        ]
    )
    newest = sorted(result.item.id for result in added)[-BUDGET:]
    search = PostgresSearch(postgres_pool)
    search.match_budget = BUDGET
    query = SearchQuery(text="lamp", limit=10)
    async with postgres_pool.acquire() as connection:
        keywords = await search.keyword_query(connection, "lamp", None)
    assert keywords is not None and keywords.newest == BUDGET
    clause, params = where(query, time.time(), RANKED_PARAMS + 1)
    sql = RANKED.format(vector="NULL::bytea", join="", where=clause)
    others, flags = every_args(keywords)
    head = [*bm25_args(keywords), keywords.newest, others, flags, 200, 200, 50]
    read = await _explained(postgres_pool, sql, *head, *params)
    assert read and max(read) <= BUDGET
    of = await _explained(postgres_pool, BM25_OF, *bm25_args(keywords), newest[:3])
    assert of and max(of) <= 3
    hits = await search.search(query)
    assert len(hits) == 10
    assert {hit.item.id for hit in hits} <= set(newest)
