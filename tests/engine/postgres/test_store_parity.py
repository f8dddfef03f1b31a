"""PostgresStore answers as MemoryStore: the same calls, the same answers, compared.

The household memories of three languages are added to a SQLite
`MemoryStore` and to a `PostgresStore` through the facades alone (with
vectors, in batches, on one fake clock; some archived, some purged, some
expired, a few recalled). Then each question is searched with keywords only
and hybrid (its vector), with and without a scope: the same memories in
the same order, scores within 1e-9, the same signals. Browsing walks every
order and status page by page: the same items, totals and cursor strings,
and a cursor written by one backend pages the other alike. The counts of
`stats` and each query's cosine scale are the same, once the SQLite store
was opened again after the purges: its cosine sample is drawn at open and
then only grows (a purged vector stays in it until the next open), where
PostgreSQL's is drawn again from what is stored whenever the model's
vectors change. Before that the rankings agree but hybrid scores differ in
the fourth decimal.

The set holds no repeated text, so both backends number rows alike (a
de-duplicated INSERT would spend one of PostgreSQL's identity values): ids
are compared as they are. SQLite's semantic pool is made exact (its numpy
index is approximate), as in `test_search_parity`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache
import math
import re
import zlib

import numpy as np
import numpy.typing as npt
import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    MemoryStore,
    MemoryType,
    NewMemory,
    Origin,
    SearchQuery,
    Source,
)
from custom_components.memory.engine.models import Vector
from custom_components.memory.engine.postgres import PostgresStore
from custom_components.memory.engine.search import semantic
from custom_components.memory.engine.store import BrowseQuery
from tests.engine.conftest import MODEL, START, FakeClock, StoreFactory
from tests.engine.postgres.stores import PgStores
from tests.test_household_data import memories, questions

DIM = 32
LANGUAGES = ("de", "en", "fr")
SCOPES = ("person.alice", "person.bob", HOUSEHOLD)
TYPES = (MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EVENT)
HOUR = 3600.0
_WORD = re.compile(r"\w+")


@cache
def _word(word: str) -> npt.NDArray[np.float64]:
    return np.random.default_rng(zlib.crc32(word.encode())).normal(size=DIM)


def embed(text: str, seed: int) -> Vector:
    """Make a seeded vector of `text`: its words' vectors summed, plus its own noise."""
    total = np.random.default_rng(seed).normal(size=DIM)
    for word in _WORD.findall(text.lower()):
        total = total + _word(word)
    result: Vector = total.astype(np.float32)
    return result


class Pair:
    """A SQLite store and a PostgreSQL store, filled alike through their facades."""

    def __init__(
        self,
        lite: MemoryStore,
        pg: PostgresStore,
        clock: FakeClock,
        factory: StoreFactory,
    ) -> None:
        """Hold both stores, their clock, and how to open SQLite's again."""
        self.lite = lite
        self.factory = factory
        self.pg = pg
        self.clock = clock

    async def fill(self) -> list[int]:
        """Add the household, then archive, purge, recall and expire some."""
        added: list[int] = []
        n = 0
        for lang in LANGUAGES:
            batch: list[NewMemory] = []
            source = Source(origin=Origin.TOOL, conversation_id=f"talk-{lang}")
            for text in memories(lang).values():
                batch.append(
                    NewMemory(
                        content=text,
                        source=source,
                        language=lang,
                        scope=SCOPES[n % 3],
                        type=TYPES[n % 3],
                        tags=("family",) if n % 4 == 1 else (),
                    )
                )
                n += 1
            vectors = [embed(m.content, len(added) + i) for i, m in enumerate(batch)]
            lite = await self.lite.add_many(batch, vectors=vectors)
            pg = await self.pg.add_many(batch, vectors=vectors)
            assert [r.item for r in pg] == [r.item for r in lite]
            assert all(r.created for r in lite)
            added += [r.item.id for r in lite]
            self.clock.advance(HOUR)
        for store in (self.lite, self.pg):
            await store.forget(added[3::13])
            await store.forget(added[5::17], purge=True)
            await store.mark_recalled(added[::7])
            await store.mark_recalled(added[::14])
            await store.update_details(added[1], expires_at=self._at(HOUR))
            await store.update_details(added[2], expires_at=self._at(10 * HOUR))
        self.clock.advance(2 * HOUR)
        assert await self.lite.expire_due() == await self.pg.expire_due()
        # SQLite's cosine sample is drawn at open and only grows while open
        # (a purged vector stays in it); PostgreSQL's is drawn from what is
        # stored. Opened again, SQLite's is drawn from what is stored too.
        await self.lite.close()
        self.lite = await self.factory()
        return added

    def _at(self, later: float) -> datetime:
        return datetime.fromtimestamp(self.clock.now + later, UTC)

    async def search(self, query: SearchQuery) -> int:
        """Search both; assert the same hits, order, scores and signals."""
        lite = await self.lite.search(query)
        pg = await self.pg.search(query)
        context = (query.text, query.scopes, query.vector is None)
        assert [h.item for h in pg] == [h.item for h in lite], context
        for a, b in zip(lite, pg, strict=True):
            assert math.isclose(a.score, b.score, rel_tol=0, abs_tol=1e-9), context
            assert a.matched == b.matched, context
        return len(lite)

    async def walk(self, query: BrowseQuery) -> int:
        """Page through both; the same pages and cursors, each cursor read by both."""
        pages = 0
        cursor: str | None = None
        while True:
            lite = await self.lite.browse(replace(query, cursor=cursor))
            pg = await self.pg.browse(replace(query, cursor=cursor))
            assert pg == lite, (query, pages)
            pages += 1
            if lite.cursor is None:
                return pages
            cursor = lite.cursor


@pytest.fixture
async def pair(
    store_factory: StoreFactory,
    postgres_database: str,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Pair]:
    """Both stores, empty, on one clock; SQLite's semantic pool made exact."""
    monkeypatch.setattr(semantic, "SEMANTIC_OVERSAMPLE", 1000)
    monkeypatch.setattr(semantic, "HYBRID_OVERSAMPLE", 1000)
    stores = PgStores(postgres_database, clock)
    try:
        yield Pair(await store_factory(), await stores.open(), clock, store_factory)
    finally:
        await stores.close_all()


async def test_search_ranks_alike(pair: Pair) -> None:
    """Every question, keywords only and hybrid, all scopes and one: the same hits."""
    await pair.fill()
    compared = both = 0
    for lang in LANGUAGES:
        for number, question in enumerate(questions(lang).values()):
            text = question["question" if number % 2 else "paraphrase"]
            base = SearchQuery(text=text, language=lang, limit=20)
            for query in (
                base,
                replace(base, vector=embed(text, 99)),
                replace(base, vector=embed(text, 98), scopes=("person.bob",)),
            ):
                compared += await pair.search(query)
            hybrid = await pair.pg.search(replace(base, vector=embed(text, 99)))
            both += sum(len(hit.matched) == 2 for hit in hybrid)
    assert compared > 500
    assert both > 50


async def test_browse_pages_alike(pair: Pair) -> None:
    """Every order and status, filters, small pages: the same pages and cursors."""
    await pair.fill()
    pages = 0
    for order in ("newest", "recalled"):
        for status in ("active", "archived", "superseded", "expiring", "any"):
            pages += await pair.walk(BrowseQuery(order=order, status=status, limit=7))
    pages += await pair.walk(BrowseQuery(scopes=("person.alice",), limit=5))
    pages += await pair.walk(BrowseQuery(tags=("family",), types=(MemoryType.FACT,)))
    pages += await pair.walk(BrowseQuery(origins=(Origin.TOOL,), limit=9))
    since = datetime.fromtimestamp(START + HOUR, UTC)
    until = datetime.fromtimestamp(START + 2 * HOUR, UTC)
    span = BrowseQuery(since=since, until=until, status="any", limit=11)
    pages += await pair.walk(span)
    # The second batch (English) was added in that hour; a few were purged.
    assert (
        len(memories("en")) - 10
        < (await pair.pg.browse(span)).total
        < len(memories("en"))
    )
    assert (await pair.pg.browse(BrowseQuery(scopes=()))).total == 0
    pages += await pair.walk(BrowseQuery(scopes=()))
    assert pages > 30


async def test_a_small_match_budget_ranks_alike(pair: Pair) -> None:
    """A MATCH budget of 12 rows, set on both facades: the same hits still."""
    await pair.fill()
    pair.lite.match_budget = pair.pg.match_budget = 12
    assert pair.pg.match_budget == 12
    compared = 0
    for question in questions("en").values():
        base = SearchQuery(text=question["question"], language="en", limit=20)
        compared += await pair.search(base)
        compared += await pair.search(replace(base, vector=embed(base.text, 3)))
    assert compared > 100


async def test_stats_and_cosine_scale_alike(pair: Pair) -> None:
    """The sensors' counts and a query's cosine scale are the same on both."""
    added = await pair.fill()
    lite, pg = await pair.lite.stats(), await pair.pg.stats()
    assert (pg.by_status, pg.active_by_type, pg.active_by_scope) == (
        lite.by_status,
        lite.active_by_type,
        lite.active_by_scope,
    )
    assert pg.vectors_by_model == lite.vectors_by_model
    assert pg.vectors_by_model[MODEL] == len(added) - len(added[5::17])
    assert (pg.vector_backend, lite.vector_backend) == ("pgvector", "numpy")
    unit = np.asarray(embed("peanut allergy", 5), dtype=np.float32)
    unit /= np.linalg.norm(unit)
    lite_scale = pair.lite.cosine_scale(unit)
    pg_scale = await pair.pg.cosine_scale(unit)
    assert lite_scale is not None
    assert pg_scale is not None
    assert math.isclose(pg_scale.level, lite_scale.level, abs_tol=1e-6)
    assert math.isclose(pg_scale.spread, lite_scale.spread, abs_tol=1e-6)
    # The same bits: each vector scaled to length one once, as SQLite does.
    lite_vectors = await pair.lite.stored_vectors(added)
    pg_vectors = await pair.pg.stored_vectors(added)
    assert pg_vectors.keys() == lite_vectors.keys()
    assert all(np.array_equal(pg_vectors[i], v) for i, v in lite_vectors.items())
