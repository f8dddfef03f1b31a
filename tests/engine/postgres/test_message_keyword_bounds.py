"""PostgreSQL's message keyword search reads a common term's postings only from its bound.

The SQLite log's MATCH is bounded as the memories' is: a MATCH whose rarest
terms are in more messages than the budget ranks only its newest budget of
them (`KeywordQuery.newest`). PostgreSQL's (`message_search._BOUNDED`) reads
each term's newest rows for that bound and the postings (with `tf`, from the
table) only from there on, and the bm25 of given messages (`_OF`) only
their own postings. Checked on the plans (`EXPLAIN ANALYZE`), and on the
answers: at SQLite's own budget, over more matches than it, both backends
rank the same messages, though the oldest ones score best.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
import json
from typing import Any

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    MemoryStore,
    MessageQuery,
    MessageRole,
    NewMessage,
)
from custom_components.memory.engine.postgres import (
    AnyConversationLog,
    PostgresStore,
    conversation_log,
)
from custom_components.memory.engine.postgres.conversations import (
    PostgresConversationLog,
)
from custom_components.memory.engine.postgres.message_search import (
    _BOUNDED,
    _INDEX_COUNTS,
    _OF,
    DATA_WEIGHT,
    TERMS_WEIGHT,
)
from custom_components.memory.engine.postgres.search_keywords import match_terms
from custom_components.memory.engine.search import MATCH_BUDGET
from tests.engine.conftest import FakeClock, StoreFactory
from tests.engine.postgres.stores import PgStores
from tests.postgres_server import START_TIMEOUT

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT * 4),
]

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
ROWS = 400
BUDGET = 12
# Messages whose every word is the searched one: the best bm25 of all.
STRONG = 20


@pytest.fixture
async def pg_store(postgres_database: str, clock: FakeClock) -> AsyncIterator[Any]:
    """Open a PostgresStore on a fresh database."""
    stores = PgStores(postgres_database, clock)
    try:
        yield await stores.open()
    finally:
        await stores.close_all()


async def _fill(log: AnyConversationLog, rows: int) -> list[int]:
    """Save one conversation of `rows` messages with "lamp", the oldest best."""
    messages = [
        NewMessage(
            role=MessageRole.USER,
            content=(
                "lamp lamp lamp"
                if n < STRONG
                else f"the lamp in room {n} glows {n % 7} and the hall is quiet"
            ),
            created_at=T0 + timedelta(seconds=n),
            scope=HOUSEHOLD,
        )
        for n in range(rows)
    ]
    info = ConversationInfo(conversation_id="c", started_at=T0, scope=HOUSEHOLD)
    [key] = await log.save([(None, info, messages)])
    return [message.id for message in await log.messages(key)]


def _term_scans(plan: dict[str, Any]) -> list[tuple[str, bool]]:
    """Each scan of `message_terms`: its node type, whether an index bounds it."""
    found: list[tuple[str, bool]] = []
    if plan.get("Relation Name") == "message_terms":
        found.append((str(plan["Node Type"]), "Index Cond" in plan))
    for child in plan.get("Plans", ()):
        found += _term_scans(child)
    return found


def _table_rows(plan: dict[str, Any]) -> list[int]:
    """Rows each scan of `message_terms` reading postings' `tf` returned (all loops)."""
    found: list[int] = []
    if plan.get("Relation Name") == "message_terms" and any(
        column.endswith(".tf") for column in plan.get("Output", ())
    ):
        found.append(int(plan["Actual Rows"] * plan["Actual Loops"]))
    for child in plan.get("Plans", ()):
        found += _table_rows(child)
    return found


async def _plan(pool: Any, sql: str, *args: Any) -> dict[str, Any]:
    async with pool.acquire() as connection, connection.transaction():
        # A few hundred rows fit a page or two, where reading them all is
        # the planner's cheapest way; at scale it takes the index's ranges.
        await connection.execute("SET LOCAL enable_bitmapscan = off")
        await connection.execute("SET LOCAL enable_seqscan = off")
        text = await connection.fetchval(
            "EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) " + sql, *args
        )
    plan: dict[str, Any] = json.loads(text)[0]["Plan"]
    return plan


async def _explained(pool: Any, sql: str, *args: Any) -> list[int]:
    return _table_rows(await _plan(pool, sql, *args))


async def test_a_common_terms_message_postings_are_read_from_the_bound_only(
    pg_store: PostgresStore,
) -> None:
    """A word in 400 messages, a budget of 12: 12 postings read, the newest 12 found."""
    log = conversation_log(pg_store)
    assert isinstance(log, PostgresConversationLog)
    ids = await _fill(log, ROWS)
    newest = sorted(ids)[-BUDGET:]
    log.keywords.match_budget = BUDGET
    query = MessageQuery(text="lamp", limit=10)
    hits, keywords = await log.keywords.keyword_side(query, "en")
    assert keywords is not None and keywords.newest == BUDGET
    assert sorted(hit[0] for hit in hits) == newest
    terms, flags = match_terms(keywords.expression)
    head = [terms, flags, TERMS_WEIGHT, DATA_WEIGHT, 1e-6, 1.2, 0.75]
    read = await _explained(
        pg_store.pool, _BOUNDED, *head, None, None, 10, keywords.newest
    )
    assert read and max(read) <= BUDGET
    of = await _explained(pg_store.pool, _OF, *head, newest[:3])
    assert of and max(of) <= 3
    # n still counts every message holding the word, as FTS5's idf does,
    # from the postings' index alone (its range of the term).
    async with pg_store.pool.acquire() as connection:
        total, counts = await connection.fetchrow(_INDEX_COUNTS, terms, flags)
    assert (int(total), list(counts)) == (ROWS, [ROWS])
    plan = await _plan(pg_store.pool, _INDEX_COUNTS, terms, flags)
    assert set(_term_scans(plan)) == {("Index Only Scan", True)}
    scored = await log.keywords.keyword_of(keywords, newest[:3])
    assert [hit[0] for hit in scored] == newest[:3]


async def test_over_sqlites_budget_both_rank_the_newest_matches(
    store_factory: StoreFactory, pg_store: PostgresStore
) -> None:
    """More matches than MATCH_BUDGET: the oldest, best-scoring, are left out on both."""
    lite_store: MemoryStore = await store_factory()
    lite = ConversationLog(lite_store)
    pg = conversation_log(pg_store)
    rows = MATCH_BUDGET + 2 * STRONG
    lite_ids = await _fill(lite, rows)
    pg_ids = await _fill(pg, rows)
    ids = dict(zip(lite_ids, pg_ids, strict=True))
    oldest = set(pg_ids[:STRONG])
    query = MessageQuery(text="lamp", limit=10)
    lite_hits = await lite.search(query)
    pg_hits = await pg.search(query)
    assert [ids[hit.message.id] for hit in lite_hits] == [
        hit.message.id for hit in pg_hits
    ]
    for a, b in zip(lite_hits, pg_hits, strict=True):
        assert abs(a.score - b.score) <= 1e-9
    assert len(pg_hits) == 10
    assert not {hit.message.id for hit in pg_hits} & oldest
