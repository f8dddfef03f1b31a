"""PostgresSearch ranks as MemoryStore.search does: same hits, order and scores.

The household memories of every language are stored in a SQLite
`MemoryStore` and in PostgreSQL (`PostgresMemories`, vectors in
`PgVectorIndex`), in the same order, on one fake clock: spread over three
scopes, four types, a few tags, an hour apart per language, some expiring
before the searches run, some archived and some purged. Every memory gets
the same seeded vector on both sides (a sum of one random vector per word,
plus noise of its own, so texts that share words are near). Every question
and paraphrase is searched with keywords only and with its vector (hybrid)
on both, and a quarter of them again with filters (scopes, types and tags,
since with any status, context with a minimum score, a follow-up's earlier
turn): the same memories in the same order, scores within 1e-9, the same
signals. Again with a MATCH budget of 12 rows, so that the MATCH keeps its
newest rows, terms outside it rank the rows again and `every` leads.

SQLite's numpy index is approximate (1-bit codes, re-scored exactly), and
pgvector below its HNSW threshold is exact: the SQLite reference is run
with an oversample that covers the whole set, so that both semantic pools
are the exact nearest vectors (PostgreSQL's 200 exact candidates hold the
exact 50 nearest whatever the filters).

Privacy: the same texts stored for two people and the household; a search
within one person's scopes never returns the other's copies, on either
backend, and both agree.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache
import math
import re
from typing import Any
import zlib

import asyncpg
import numpy as np
import numpy.typing as npt
import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    MemoryStore,
    MemoryType,
    NewMemory,
    Origin,
    SearchHit,
    SearchQuery,
    Source,
)
from custom_components.memory.engine.models import Vector
from custom_components.memory.engine.postgres import (
    PgVectorIndex,
    PostgresMemories,
    PostgresSearch,
    migrate,
    register_vector,
)
from custom_components.memory.engine.search import semantic
from tests.engine.conftest import MODEL, START, FakeClock, StoreFactory
from tests.postgres_server import START_TIMEOUT
from tests.test_household_data import MINIMUM, memories, questions

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT),
]

DIM = 384
ALICE = "person.alice"
BOB = "person.bob"
SCOPES = (ALICE, BOB, HOUSEHOLD)
TYPES = (MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EVENT, MemoryType.OTHER)
TAGS = ("family", "home", "health", "school", "food")
HOUR = 3600.0
DAY = 86400.0
_WORD = re.compile(r"\w+")


@cache
def _word_vector(word: str) -> npt.NDArray[np.float64]:
    return np.random.default_rng(zlib.crc32(word.encode())).normal(size=DIM)


def embed(text: str, seed: int) -> Vector:
    """Make a seeded vector of `text`: its words' vectors summed, plus its own noise."""
    total = np.random.default_rng(seed).normal(size=DIM) * 1.5
    for word in _WORD.findall(text.lower()):
        total = total + _word_vector(word)
    result: Vector = total.astype(np.float32)
    return result


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


@pytest.fixture
async def vector_pool(postgres_database: str) -> AsyncIterator[Any]:
    """Yield a pool whose connections know pgvector, on a migrated database."""
    pool = await asyncpg.create_pool(
        postgres_database, min_size=1, max_size=4, init=register_vector
    )
    try:
        async with pool.acquire() as connection:
            await migrate(connection)
        yield pool
    finally:
        await pool.close()


class Pair:
    """Both backends, their ids matched by the order they were added in."""

    def __init__(self, store: MemoryStore, pool: Any, clock: FakeClock) -> None:
        """Hold the SQLite store and the PostgreSQL parts on one clock."""
        self.store = store
        self.pool = pool
        self.clock = clock
        self.memories = PostgresMemories(pool, clock=clock)
        self.index = PgVectorIndex(pool, MODEL, DIM)
        self.search = PostgresSearch(pool, vectors=self.index, clock=clock)
        self.ids: dict[int, int] = {}
        self.compared = 0
        self.both_signals = 0

    async def add(self, batch: Sequence[NewMemory]) -> list[int]:
        """Add a batch on both; return SQLite's ids."""
        lite = await self.store.add_many(batch)
        pg = await self.memories.add_many(batch)
        assert [r.created for r in lite] == [r.created for r in pg]
        for a, b in zip(lite, pg, strict=True):
            assert self.ids.setdefault(a.item.id, b.item.id) == b.item.id
        return [r.item.id for r in lite]

    async def forget(self, ids: Sequence[int], *, purge: bool) -> None:
        """Archive (or purge) the same memories on both."""
        await self.store.forget(ids, purge=purge)
        await self.memories.forget([self.ids[i] for i in ids], purge=purge)

    async def set_vectors(self, vectors: dict[int, Vector]) -> None:
        """Store the same vectors on both, in SQLite's id order."""
        await self.index.create()
        await self.store.set_vectors(vectors)
        await self.search.set_vectors({self.ids[i]: v for i, v in vectors.items()})

    async def same(self, query: SearchQuery) -> list[SearchHit]:
        """Search both; assert the same hits, order, scores and signals."""
        lite = await self.store.search(query)
        pg = await self.search.search(query)
        context = (query.text, query.language, query.scopes, query.vector is None)
        assert [self.ids[h.item.id] for h in lite] == [h.item.id for h in pg], context
        for a, b in zip(lite, pg, strict=True):
            assert a.item.content == b.item.content, context
            assert math.isclose(a.score, b.score, rel_tol=0, abs_tol=1e-9), (
                context,
                a.item.content,
                a.score,
                b.score,
            )
            assert a.matched == b.matched, (context, a.item.content)
            self.both_signals += len(a.matched) == 2
        self.compared += len(lite)
        return lite


@pytest.fixture
async def pair(
    store_factory: StoreFactory,
    vector_pool: Any,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> Pair:
    """Both backends, empty; SQLite's semantic pool made exact (module docstring)."""
    monkeypatch.setattr(semantic, "SEMANTIC_OVERSAMPLE", 1000)
    monkeypatch.setattr(semantic, "HYBRID_OVERSAMPLE", 1000)
    return Pair(await store_factory(), vector_pool, clock)


def _household() -> dict[str, list[NewMemory]]:
    """Each language's memories, spread over scopes, types, tags and expiry."""
    batches: dict[str, list[NewMemory]] = {}
    n = 0
    for lang in sorted(MINIMUM):
        source = Source(origin=Origin.TOOL, conversation_id=f"household-{lang}")
        batch = batches.setdefault(lang, [])
        for text in memories(lang).values():
            batch.append(
                NewMemory(
                    content=text,
                    source=source,
                    language=lang,
                    scope=SCOPES[n % 3],
                    type=TYPES[n % 4],
                    tags=(TAGS[n % 5],) if n % 2 else (),
                    expires_at=_at(START + 40 * DAY) if n % 11 == 5 else None,
                )
            )
            n += 1
    return batches


def _filtered(previous: str) -> list[dict[str, Any]]:
    """Give the filter combinations a quarter of the questions are searched with too."""
    return [
        {"scopes": (ALICE, HOUSEHOLD)},
        {"types": (MemoryType.FACT, MemoryType.EVENT), "tags": ("family", "home")},
        {"since": _at(START + 5 * HOUR), "status": "any", "limit": 25},
        {"context": True, "min_score": 0.2, "limit": 5},
        {"earlier": ((previous, 0.5),), "scopes": (BOB,), "limit": 20},
    ]


async def _store_household(pair: Pair) -> None:
    """Store the household on both: archive and purge a few, vectors, expiry."""
    added: list[int] = []
    for batch in _household().values():
        added += await pair.add(batch)
        pair.clock.advance(HOUR)
    await pair.forget(added[3::17], purge=False)
    await pair.forget(added[5::23], purge=True)
    purged = set(added[5::23])
    kept = [item_id for item_id in added if item_id not in purged]
    items = await pair.store.get_many(kept)
    await pair.set_vectors(
        {item_id: embed(items[item_id].content, item_id) for item_id in kept}
    )
    pair.clock.advance(60 * DAY)  # some memories have expired meanwhile


async def test_hybrid_search_equals_sqlite_on_the_household_set(pair: Pair) -> None:
    """Every question, keywords only and hybrid, with filters: SQLite's ranking."""
    await _store_household(pair)
    searched = 0
    for lang in sorted(MINIMUM):
        previous = ""
        for number, question in enumerate(questions(lang).values()):
            for text in (question["question"], question["paraphrase"]):
                vector = embed(text, 7)
                base = SearchQuery(text=text, language=lang)
                await pair.same(base)
                await pair.same(replace(base, vector=vector))
                searched += 2
                if number % 4 or not previous:
                    previous = text
                    continue
                for extra in _filtered(previous):
                    await pair.same(replace(base, **extra))
                    await pair.same(replace(base, vector=vector, **extra))
                    searched += 2
                previous = text
        await pair.same(SearchQuery(text="", vector=embed(lang, 3), language=lang))
        await pair.same(SearchQuery(text="*", scopes=(ALICE,), limit=7))
    assert searched > 3000
    assert pair.compared > 20_000
    assert pair.both_signals > 2000


async def test_a_small_match_budget_ranks_as_sqlite(pair: Pair) -> None:
    """A budget of 12 rows: `newest`, terms outside the MATCH, `every`, `rest`."""
    await _store_household(pair)
    pair.store.match_budget = pair.search.match_budget = 12
    bounded = outside = 0
    for lang in sorted(MINIMUM):
        for number, question in enumerate(questions(lang).values()):
            text = question["question" if number % 2 else "paraphrase"]
            async with pair.pool.acquire() as connection:
                built = await pair.search.keyword_query(connection, text, lang)
            bounded += bool(built and built.newest)
            outside += bool(built and built.others)
            vector = embed(text, 5)
            extras: list[dict[str, Any]] = [
                {},
                {"scopes": (BOB, HOUSEHOLD), "limit": 30},
            ]
            for extra in extras:
                base = SearchQuery(text=text, language=lang, **extra)
                await pair.same(base)
                await pair.same(replace(base, vector=vector))
    assert bounded > 10, bounded
    assert outside > 100, (outside, pair.compared)
    assert pair.compared > 3000


async def test_one_persons_memories_never_reach_another(pair: Pair) -> None:
    """The same texts for two people and the household: each sees only their own."""
    texts = [text for lang in ("en", "de", "fr") for text in memories(lang).values()]
    source = Source(origin=Origin.TOOL, conversation_id="locomo")
    scope_of: dict[int, str] = {}
    for scope in SCOPES:
        ids = await pair.add(
            [NewMemory(content=t, source=source, scope=scope) for t in texts]
        )
        scope_of.update(dict.fromkeys(ids, scope))
    items = await pair.store.get_many(list(scope_of))
    await pair.set_vectors(
        {item_id: embed(items[item_id].content, item_id) for item_id in scope_of}
    )
    seen = 0
    for lang in ("en", "de", "fr"):
        for question in questions(lang).values():
            text = question["question"]
            for person, other in ((ALICE, BOB), (BOB, ALICE)):
                for vector in (None, embed(text, 11)):
                    query = SearchQuery(
                        text=text,
                        language=lang,
                        vector=vector,
                        scopes=(person, HOUSEHOLD),
                        limit=20,
                    )
                    hits = await pair.same(query)
                    assert all(scope_of[h.item.id] != other for h in hits)
                    assert all(h.item.scope in (person, HOUSEHOLD) for h in hits)
                    seen += sum(h.item.scope == person for h in hits)
    assert seen > 500


async def test_a_purged_memorys_vectors_go_with_it(
    pair: Pair, vector_pool: Any
) -> None:
    """`memory_vectors` references `memories`: a purge takes the vectors along."""
    source = Source(origin=Origin.TOOL)
    ids = await pair.add(
        [NewMemory(content=f"note number {n}", source=source) for n in range(4)]
    )
    await pair.set_vectors({item_id: embed(str(item_id), item_id) for item_id in ids})
    await pair.forget(ids[:2], purge=True)
    assert await pair.index.count() == 2
    hits = await pair.same(SearchQuery(text="note", vector=embed("note", 1)))
    assert len(hits) == 2
    async with vector_pool.acquire() as connection:
        with pytest.raises(asyncpg.ForeignKeyViolationError):
            await connection.execute(
                "INSERT INTO memory_vectors (model, memory_id, embedding) "
                "SELECT model, 999999, embedding FROM memory_vectors LIMIT 1"
            )
