"""Tests of hybrid search: vectors, both backends, concurrency, fast paths.

Most tests run on both vector backends through the `store` fixture.
"""

from __future__ import annotations

import asyncio
from contextlib import closing
from pathlib import Path
import random
import sqlite3
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    MAX_SEARCH_LIMIT,
    InvalidVectorError,
    MemoryStore,
    MemoryType,
    NewMemory,
    SearchQuery,
    Signal,
    UnknownMemoryError,
    VectorDimensionError,
)
from custom_components.memory.engine.search import (
    HybridSearch,
    semantic as semantic_module,
)
from custom_components.memory.engine.vectors.index import as_unit_vector
from tests.engine.conftest import (
    BOTH,
    DIM,
    KEYWORD,
    MODEL,
    SEMANTIC,
    Backend,
    StoreFactory,
    ids,
    memory,
    near,
    vector,
)

# -- hybrid search --------------------------------------------------------------------


async def test_semantic_only_and_both_signals(store: MemoryStore) -> None:
    """A memory with no shared word is found semantically; shared words add keyword."""
    nuts = (
        await store.add(memory("Anna is allergic to nuts"), vector=vector("nuts"))
    ).item
    garage = (
        await store.add(memory("The garage door code is 1234"), vector=vector("garage"))
    ).item
    hits = await store.search(SearchQuery(text="peanut reaction", vector=near("nuts")))
    assert hits[0].item.id == nuts.id
    assert hits[0].matched == SEMANTIC
    assert hits[0].score > 0.9
    assert all(hit.matched == SEMANTIC for hit in hits)

    hits = await store.search(SearchQuery(text="garage", vector=near("garage")))
    assert hits[0].item.id == garage.id
    assert hits[0].matched == BOTH
    assert hits[0].score == pytest.approx(1.0)
    assert [hit.matched for hit in hits[1:]] == [SEMANTIC]

    keyword_only = await store.search(SearchQuery(text="garage"))
    assert ids(keyword_only) == [garage.id]
    assert keyword_only[0].matched == KEYWORD

    # Unrelated memories score a cosine near or under zero: min_score 0
    # (the default) drops the negative ones.
    vector_only = await store.search(SearchQuery(vector=near("nuts"), min_score=-1))
    assert ids(vector_only) == [nuts.id, garage.id]
    assert all(hit.matched == SEMANTIC for hit in vector_only)
    assert vector_only[0].score == pytest.approx(
        float(np.dot(as_unit_vector(near("nuts")), as_unit_vector(vector("nuts")))),
        abs=1e-5,
    )


async def test_query_vector_dimension(store: MemoryStore) -> None:
    """A query of another dimension than the model's raises."""
    await store.add(memory("Something"), vector=vector(1))
    with pytest.raises(VectorDimensionError) as info:
        await store.search(SearchQuery(text="something", vector=vector(1, DIM + 1)))
    assert info.value.key == "vector_dimension"
    assert info.value.placeholders == {"expected": str(DIM), "got": str(DIM + 1)}


@pytest.mark.parametrize(
    "bad", [[0.0] * DIM, [float("nan")] * DIM, [1.0] * (DIM - 1) + [float("inf")]]
)
async def test_invalid_vectors(store: MemoryStore, bad: list[float]) -> None:
    """NaN, infinite and zero vectors are refused everywhere."""
    item = (await store.add(memory("Valid"), vector=vector(1))).item
    with pytest.raises(InvalidVectorError) as info:
        await store.add(memory("Invalid"), vector=bad)
    assert info.value.key == "invalid_vector"
    with pytest.raises(InvalidVectorError):
        await store.set_vectors({item.id: bad})
    with pytest.raises(InvalidVectorError):
        await store.search(
            SearchQuery(text="valid", vector=np.asarray(bad, dtype=np.float32))
        )
    stats = await store.stats()
    assert stats.active == 1
    assert stats.vectors_by_model == {MODEL: 1}
    assert ids(await store.search(SearchQuery(vector=vector(1)))) == [item.id]


async def test_vector_dimension_mismatch_stores_nothing(store: MemoryStore) -> None:
    """The first vector fixes the dimension; others raise and roll back."""
    first = (await store.add(memory("First"), vector=vector(1))).item
    with pytest.raises(VectorDimensionError) as info:
        await store.add(memory("Second"), vector=vector(2, DIM * 2))
    assert info.value.placeholders == {"expected": str(DIM), "got": str(DIM * 2)}
    with pytest.raises(VectorDimensionError):
        await store.set_vectors({first.id: vector(3, DIM - 1)})
    stats = await store.stats()
    assert stats.active == 1
    assert stats.vectors_by_model == {MODEL: 1}
    assert await store.search(SearchQuery(text="second")) == []
    hits = await store.search(SearchQuery(vector=vector(1)))
    assert ids(hits) == [first.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_mixed_dimensions_in_first_batch(store: MemoryStore) -> None:
    """A model's first batch must agree on a dimension."""
    with pytest.raises(VectorDimensionError):
        await store.add_many(
            [memory("One"), memory("Two")], vectors=[vector(1, 8), vector(2, 12)]
        )
    assert (await store.stats()).by_status == {}


async def test_add_many_partial_vectors(store: MemoryStore) -> None:
    """Memories without a vector are keyword-only until one is set."""
    with_vec, without = await store.add_many(
        [memory("Has a vector"), memory("Has none")], vectors=[vector(1), None]
    )
    assert (await store.stats()).vectors_by_model == {MODEL: 1}
    assert ids(await store.search(SearchQuery(vector=vector(2)))) == [with_vec.item.id]
    await store.set_vectors({without.item.id: vector(2)})
    await store.set_vectors({})
    hits = await store.search(SearchQuery(vector=vector(2)))
    assert ids(hits)[0] == without.item.id
    assert sorted(ids(hits)) == [with_vec.item.id, without.item.id]


async def test_twin_keeps_its_vector(store: MemoryStore) -> None:
    """Re-adding a twin with another vector does not replace the stored one."""
    first = (await store.add(memory("Same text"), vector=vector(1))).item
    again = await store.add(memory("same text"), vector=vector(2))
    assert not again.created
    hits = await store.search(SearchQuery(vector=vector(1)))
    assert ids(hits) == [first.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_set_vectors_replaces(store: MemoryStore) -> None:
    """set_vectors replaces an item's vector in table and index."""
    first = (await store.add(memory("Moves around"), vector=vector(1))).item
    other = (await store.add(memory("Stays"), vector=vector(2))).item
    await store.set_vectors({first.id: vector(3)})
    hits = await store.search(SearchQuery(vector=vector(3)))
    assert ids(hits) == [first.id, other.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert (await store.stats()).vectors_by_model == {MODEL: 2}
    old = await store.search(SearchQuery(vector=vector(1)))
    assert old[0].score < 0.9


async def test_set_vectors_unknown_id(store: MemoryStore) -> None:
    """Vectors for unknown ids raise and store nothing, not even the known ones."""
    item = (await store.add(memory("Known"))).item
    with pytest.raises(UnknownMemoryError) as info:
        await store.set_vectors({item.id: vector(1), item.id + 5: vector(2)})
    assert info.value.placeholders == {"ids": str(item.id + 5)}
    assert (await store.stats()).vectors_by_model == {}
    assert await store.search(SearchQuery(vector=vector(1))) == []


async def test_models_never_mix(open_store: StoreFactory) -> None:
    """Vectors of model "a" are never used by a store searching with model "b"."""
    store_a = await open_store(model="a")
    first = (await store_a.add(memory("Apple pie recipe"), vector=vector(1))).item
    second = (await store_a.add(memory("Pear cake"), vector=vector(2))).item
    await store_a.close()

    store_b = await open_store(model="b")
    assert store_b.model == "b"
    assert await store_b.search(SearchQuery(vector=vector(1))) == []
    hits = await store_b.search(SearchQuery(text="apple", vector=vector(1)))
    assert ids(hits) == [first.id]
    assert hits[0].matched == KEYWORD
    # Model b has its own dimension, learned from its first vector.
    await store_b.set_vectors({second.id: vector(5, 8)})
    hits = await store_b.search(SearchQuery(vector=vector(5, 8)))
    assert ids(hits) == [second.id]
    assert hits[0].matched == SEMANTIC
    with pytest.raises(VectorDimensionError):
        await store_b.search(SearchQuery(vector=vector(1)))
    stats = await store_b.stats()
    assert stats.vectors_by_model == {"a": 2, "b": 1}
    assert stats.active_model == "b"
    await store_b.close()

    store_a = await open_store(model="a")
    hits = await store_a.search(SearchQuery(vector=vector(1)))
    assert ids(hits) == [first.id, second.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


# -- both backends agree ----------------------------------------------------------------

WORDS = [
    "kitchen",
    "garden",
    "anna",
    "ben",
    "coffee",
    "tea",
    "door",
    "window",
    "light",
    "heating",
    "boiler",
    "car",
    "garage",
    "dog",
    "cat",
    "plant",
    "water",
    "music",
    "movie",
    "dinner",
    "lunch",
    "school",
    "work",
    "bike",
]
BIG_DIM = 384
# Vectors shaped like sentence embeddings (topics, noise), queries near a
# memory: on structureless random ones the numpy index's one-bit codes cannot
# rank a top 50 whose cosines differ by less than their error, and no
# embedding model makes them.
_SPACE = np.random.default_rng(2025)
BIG_TOPICS = _SPACE.standard_normal((20, 16, BIG_DIM)) / np.sqrt(BIG_DIM)
BIG_SCALE = np.exp(_SPACE.normal(0.0, 0.35, size=BIG_DIM))


def _embedding_like(rng: np.random.Generator) -> npt.NDArray[np.float32]:
    topic, sub = int(rng.integers(20)), int(rng.integers(16))
    noise = rng.standard_normal(BIG_DIM) / np.sqrt(BIG_DIM)
    mixed = BIG_TOPICS[topic, 0] + 0.7 * BIG_TOPICS[topic, sub] + 0.8 * noise
    made: npt.NDArray[np.float32] = (mixed * BIG_SCALE).astype(np.float32)
    return made


def _near(
    vectors: list[npt.NDArray[np.float32]], rng: np.random.Generator
) -> npt.NDArray[np.float32]:
    stored = vectors[int(rng.integers(len(vectors)))]
    noise = rng.standard_normal(BIG_DIM) / np.sqrt(BIG_DIM)
    query: npt.NDArray[np.float32] = (
        stored / np.linalg.norm(stored) + 0.5 * noise
    ).astype(np.float32)
    return query


def _big_dataset(count: int) -> tuple[list[NewMemory], list[npt.NDArray[np.float32]]]:
    rng = np.random.default_rng(2026)
    memories = []
    for i in range(count):
        words = rng.choice(WORDS, size=4, replace=False)
        memories.append(
            memory(
                f"Note {i}: {' '.join(words)}",
                scope=("household", "anna", "ben")[i % 3],
                type=(MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EVENT)[
                    i % 5 % 3
                ],
                tags=(str(words[0]),) if i % 4 == 0 else (),
            )
        )
    vectors = [_embedding_like(rng) for _ in range(count)]
    return memories, vectors


def _big_queries(
    count: int, vectors: list[npt.NDArray[np.float32]]
) -> list[SearchQuery]:
    rng = np.random.default_rng(7)
    queries = []
    for i in range(count):
        words = " ".join(
            str(w) for w in rng.choice(WORDS, size=1 + i % 3, replace=False)
        )
        filters: dict[str, Any] = {}
        if i % 5 == 1:
            filters["scopes"] = ("anna",)
        if i % 5 == 2:
            filters["types"] = (MemoryType.EVENT,)
        if i % 5 == 3:
            filters["tags"] = (str(rng.choice(WORDS)),)
        queries.append(
            SearchQuery(
                text=words if i % 4 != 0 else "",
                vector=(_near(vectors, rng) if i % 4 != 1 else None),
                limit=int(rng.integers(1, MAX_SEARCH_LIMIT + 1)),
                **filters,
            )
        )
    return queries


async def test_backends_give_identical_results(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    """Both backends: the same top 10, up to near ties, for the same data and queries.

    Further down (limits up to 50) a memory at the edge of the semantic
    pool may be in one backend's candidates and not the other's: the numpy
    index's one-bit codes and vec0's int8 codes err differently (issue #25
    accepts recall@10 >= 0.99 against the exact scan). Such a memory also
    moves the places of those below it in the candidates' cosine order, and
    a place adds a rank bonus (`fusion.RANK_BONUS`: about 5e-4 between two
    places in the twenties), so the top 10's scores agree to 1e-3 and two
    memories that close may swap places.
    """
    memories, vectors = _big_dataset(2_000)
    queries = _big_queries(50, vectors)
    results: dict[str, list[list[tuple[int, float, tuple[Signal, ...]]]]] = {}
    backends: tuple[Backend, ...] = ("numpy", "sqlite-vec")
    for backend in backends:
        store = await store_factory(tmp_path / f"{backend}.db", vector_backend=backend)
        assert store.vector_backend == backend
        added = await store.add_many(memories, vectors=vectors)
        assert all(result.created for result in added)
        results[backend] = [
            [(hit.item.id, hit.score, hit.matched) for hit in await store.search(query)]
            for query in queries
        ]
    semantic_queries = 0
    for query, numpy_hits, vec_hits in zip(
        queries, results["numpy"], results["sqlite-vec"], strict=True
    ):
        # Place by place the scores agree, and a memory in both top 10s
        # scores alike: only memories a rank bonus apart may swap places.
        np.testing.assert_allclose(
            [hit[1] for hit in numpy_hits[:10]],
            [hit[1] for hit in vec_hits[:10]],
            atol=1e-3,
        )
        theirs = {hit[0]: hit[1] for hit in vec_hits[:10]}
        for item_id, score, _signals in numpy_hits[:10]:
            assert abs(score - theirs.get(item_id, score)) < 1e-3
        if query.vector is not None:
            assert numpy_hits, query
            semantic_queries += 1
    assert semantic_queries >= 30


def _far_from(
    query: npt.NDArray[np.float32], rng: np.random.Generator
) -> npt.NDArray[np.float32]:
    """Make a vector with a small positive cosine to `query` (about 0.2)."""
    other = rng.standard_normal(len(query)).astype(np.float32)
    other -= float(other @ query) / float(query @ query) * query
    other *= float(np.linalg.norm(query)) / float(np.linalg.norm(other))
    return (other + 0.2 * query).astype(np.float32)


@pytest.mark.parametrize("filter_kind", ["scopes", "types", "tags"])
async def test_selective_filter_finds_far_items(
    store: MemoryStore, filter_kind: str
) -> None:
    """A filter matching a few far-away vectors still returns them (exact scan)."""
    rng = np.random.default_rng(11)
    query = rng.standard_normal(DIM).astype(np.float32)
    crowd = [
        query + 0.3 * rng.standard_normal(DIM).astype(np.float32) for _ in range(1_000)
    ]
    await store.add_many(
        [memory(f"Crowd member {i}") for i in range(1_000)], vectors=crowd
    )
    far = [_far_from(query, rng) for _ in range(3)]
    added = await store.add_many(
        [
            memory(
                f"Lonely item {i}",
                scope="guest",
                type=MemoryType.INSTRUCTION,
                tags=("rare",),
            )
            for i in range(3)
        ],
        vectors=far,
    )
    lonely = {result.item.id for result in added}
    unfiltered = await store.search(SearchQuery(vector=query, limit=MAX_SEARCH_LIMIT))
    assert not lonely & set(ids(unfiltered))
    options: dict[str, dict[str, Any]] = {
        "scopes": {"scopes": ("guest",)},
        "types": {"types": (MemoryType.INSTRUCTION,)},
        "tags": {"tags": ("rare",)},
    }
    filters = options[filter_kind]
    hits = await store.search(SearchQuery(vector=query, **filters))
    assert set(ids(hits)) == lonely
    assert all(hit.matched == SEMANTIC for hit in hits)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < score < 0.5 for score in scores)


async def _crowd(
    store: MemoryStore, rng: np.random.Generator
) -> npt.NDArray[np.float32]:
    """Store 300 memories near a random query vector; return the query."""
    query = rng.standard_normal(DIM).astype(np.float32)
    await store.add_many(
        [memory(f"Crowd member {i}") for i in range(300)],
        vectors=[
            query + 0.3 * rng.standard_normal(DIM).astype(np.float32)
            for _ in range(300)
        ],
    )
    return query


async def test_exact_scan_is_bounded(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past EXACT_SCAN_MAX filtered items, only the index's candidates count."""
    rng = np.random.default_rng(12)
    query = await _crowd(store, rng)
    await store.add_many(
        [memory(f"Lonely item {i}", scope="guest") for i in range(3)],
        vectors=[_far_from(query, rng) for _ in range(3)],
    )
    monkeypatch.setattr(semantic_module, "EXACT_SCAN_MAX", 2)
    assert await store.search(SearchQuery(vector=query, scopes=("guest",))) == []
    monkeypatch.setattr(semantic_module, "EXACT_SCAN_MAX", 3)
    assert len(await store.search(SearchQuery(vector=query, scopes=("guest",)))) == 3


# -- concurrency -----------------------------------------------------------------------


async def test_failed_keyword_query_cancels_the_vector_scan(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vector scan runs beside the keyword query; a keyword failure stops it."""
    await store.add(memory("Mia is allergic to nuts"), vector=vector(1))
    scans: list[asyncio.Task[Any]] = []
    original = HybridSearch._semantic

    async def slow_semantic(*args: Any, **kwargs: Any) -> Any:
        task = asyncio.current_task()
        assert task is not None
        scans.append(task)
        await asyncio.sleep(10)
        return await original(*args, **kwargs)

    async def broken_keyword(*_args: Any, **_kwargs: Any) -> Any:
        await asyncio.sleep(0)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(HybridSearch, "_semantic", slow_semantic)
    monkeypatch.setattr(HybridSearch, "_keyword", broken_keyword)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        await store.search(SearchQuery(text="nuts", vector=vector(1)))
    assert len(scans) == 1
    assert scans[0].cancelled()


async def test_concurrent_adds_and_searches(store: MemoryStore) -> None:
    """100 adds and 100 searches at once: all stored, nothing locked."""
    adds = [
        store.add(memory(f"Concurrent memory number {i}"), vector=vector(i))
        for i in range(100)
    ]
    searches = [
        store.search(
            SearchQuery(
                text="concurrent memory" if i % 2 else "",
                vector=vector(i) if i % 3 else None,
            )
        )
        for i in range(100)
    ]
    added, searched = await asyncio.gather(
        asyncio.gather(*adds), asyncio.gather(*searches)
    )
    assert all(result.created for result in added)
    assert len({result.item.id for result in added}) == 100
    assert len(searched) == 100
    assert all(isinstance(hits, list) for hits in searched)
    stats = await store.stats()
    assert stats.active == 100
    assert stats.vectors_by_model == {MODEL: 100}
    assert len(await store.search(SearchQuery(text="concurrent", limit=50))) == 50
    hits = await store.search(SearchQuery(vector=vector(42)))
    assert hits[0].item.content == "Concurrent memory number 42"


async def test_concurrent_mixed_writes(store: MemoryStore) -> None:
    """Adds, forgets, vector updates and searches interleave safely."""
    base = await store.add_many([memory(f"Base {i}") for i in range(20)])
    base_ids = [result.item.id for result in base]
    jobs: list[Any] = [store.add(memory(f"Extra {i}")) for i in range(20)]
    jobs += [store.forget([item_id]) for item_id in base_ids[:10]]
    jobs += [store.set_vectors({item_id: vector(item_id)}) for item_id in base_ids[10:]]
    jobs += [store.search(SearchQuery(text="base")) for _ in range(20)]
    jobs += [store.expire_due() for _ in range(5)]
    await asyncio.gather(*jobs)
    stats = await store.stats()
    assert stats.by_status == {"active": 30, "archived": 10}
    assert stats.vectors_by_model == {MODEL: 10}


# -- fast paths give the full ranking's results -------------------------------------

_REFERENCE_BM25 = "bm25(memories_fts)"


async def _expression(store: MemoryStore, text: str) -> str:
    """Return the MATCH expression the store makes of `text`."""
    keywords = await store.finder._hybrid.keyword_query(
        store.finder._corpus(store.reader, False), text, None
    )
    assert keywords is not None
    return keywords.expression


def _reference_keyword(
    path: Path, expression: str, scopes: tuple[str, ...], limit: int = 50
) -> list[tuple[int, float]]:
    """bm25 of every match joined and filtered, as search ranked before."""
    with closing(sqlite3.connect(path)) as conn:
        marks = ",".join("?" * len(scopes))
        sql = f"SELECT m.id, {_REFERENCE_BM25} AS rank FROM memories_fts "  # noqa: S608
        sql += (
            "JOIN memories m ON m.id = memories_fts.rowid "
            "WHERE memories_fts MATCH ? AND m.status = 'active' "
            f"AND m.scope IN ({marks}) ORDER BY rank, m.id LIMIT ?"
        )
        rows = conn.execute(sql, [expression, *scopes, limit]).fetchall()
    return [(int(row[0]), float(row[1])) for row in rows]


async def _apple_store(store_factory: StoreFactory) -> tuple[MemoryStore, list[int]]:
    """600 memories with "apple": 20 of them Anna's, long (low bm25)."""
    store = await store_factory()
    rng = random.Random(5)
    filler = ["garden", "kitchen", "table", "window", "morning", "evening", "orchard"]
    memories = [
        memory(f"apple note {i} " + " ".join(rng.choices(filler, k=rng.randint(1, 6))))
        for i in range(580)
    ]
    memories += [
        memory(
            f"apple note anna {i} " + " ".join(rng.choices(filler, k=30)),
            scope="person.anna",
        )
        for i in range(20)
    ]
    added = await store.add_many(memories)
    return store, [result.item.id for result in added[580:]]


async def test_keyword_pool_equals_full_ranking(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """FTS5's own top matches, filtered, equal ranking every match (both paths)."""
    store, anna = await _apple_store(store_factory)
    apple = await _expression(store, "apple")
    for scopes in ((HOUSEHOLD,), (HOUSEHOLD, "person.anna"), ("person.anna",)):
        query = SearchQuery(text="apple", scopes=scopes)
        hits, cosines, _keywords = await store.finder._hybrid._keyword(
            store.finder._corpus(store.reader, False),
            store.finder._request(query),
            None,
        )
        reference = _reference_keyword(db_path, apple, scopes)
        assert [hit[0] for hit in hits] == [item_id for item_id, _ in reference]
        assert [hit[1] for hit in hits] == pytest.approx(
            [bm25 for _, bm25 in reference]
        )
        assert cosines == {}
    # Anna's memories rank below the first 200 matches: the filtered ranking
    # falls back to every match and still finds them all.
    assert set(anna).isdisjoint(
        item_id
        for item_id, _ in _reference_keyword(
            db_path, apple, (HOUSEHOLD, "person.anna"), 200
        )
    )
    found = await store.search(
        SearchQuery(text="apple", scopes=("person.anna",), limit=MAX_SEARCH_LIMIT)
    )
    assert sorted(ids(found)) == sorted(anna)


async def test_pool_bm25_equals_full_ranking(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """bm25 of the semantic pool alone equals its value in the full ranking."""
    store, anna = await _apple_store(store_factory)
    # Both words drive the MATCH (1,200 rows between them), so the full
    # ranking is FTS5's alone.
    store.match_budget = 2000
    extra = await store.add(memory("pear without the fruit word"))
    keywords = await store.finder._hybrid.keyword_query(
        store.finder._corpus(store.reader, False), "apple note", None
    )
    assert keywords is not None
    reference = dict(
        _reference_keyword(db_path, keywords.expression, (HOUSEHOLD,), 1000)
    )
    some = sorted(reference)[::37]
    hits = await store.finder._hybrid.keyword_of(
        store.reader, keywords, [*some, extra.item.id]
    )
    assert [hit[0] for hit in hits] == sorted(some, key=lambda i: (reference[i], i))
    assert [hit[1] for hit in hits] == [
        pytest.approx(reference[i])
        for i in sorted(some, key=lambda i: (reference[i], i))
    ]
    assert all(hit[2] == 1.0 for hit in hits)  # both words in each
    assert (
        await store.finder._hybrid.keyword_query(
            store.finder._corpus(store.reader, False), "?!", None
        )
        is None
    )
    assert await store.finder._hybrid.keyword_of(store.reader, None, some) == []
    assert await store.finder._hybrid.keyword_of(store.reader, keywords, []) == []
    assert anna  # person-scoped ones exist but were not asked for


async def test_keyword_hits_carry_their_exact_cosine(store: MemoryStore) -> None:
    """The keyword query brings each hit's stored vector: its exact cosine."""
    added = await store.add_many(
        [memory(f"Boiler service note {i}") for i in range(8)],
        vectors=[vector(i) if i % 2 else None for i in range(8)],
    )
    query = vector(99)
    corpus = store.finder._corpus(store.reader, False)
    hits, cosines, _keywords = await store.finder._hybrid._keyword(
        corpus,
        store.finder._request(SearchQuery(text="boiler")),
        await corpus.vectors(query),
    )
    assert len(hits) == 8
    expected = {
        result.item.id: float(as_unit_vector(vector(i)) @ as_unit_vector(query))
        for i, result in enumerate(added)
        if i % 2
    }
    assert cosines == pytest.approx(expected, abs=1e-6)


async def test_hybrid_scores_every_candidate_on_both_signals(
    store_factory: StoreFactory,
) -> None:
    """With full pools, keyword hits get cosines and pool members get bm25."""
    store = await store_factory()
    words = ["heating", "boiler", "radiator", "thermostat"]
    memories = [memory(f"{words[i % 4]} note number {i}") for i in range(120)]
    vectors = [vector(i) for i in range(120)]
    added = await store.add_many(memories, vectors=vectors)
    query = SearchQuery(text="heating", vector=vector(5), limit=MAX_SEARCH_LIMIT)
    hits = await store.search(query)
    by_id = {hit.item.id: hit for hit in hits}
    # Memory 5 (a "radiator" note) is nearest but not a keyword hit; memory 4
    # ("heating") is a keyword hit whatever its cosine.
    assert by_id[added[5].item.id].matched == SEMANTIC
    assert Signal.KEYWORD in by_id[added[4].item.id].matched
    keyword_hits = [hit for hit in hits if Signal.KEYWORD in hit.matched]
    assert {hit.item.content.split()[0] for hit in keyword_hits} == {"heating"}
    # Scores are the fused ones: the same search twice gives the same list.
    assert [(hit.item.id, hit.score) for hit in await store.search(query)] == [
        (hit.item.id, hit.score) for hit in hits
    ]


async def test_pool_rows_outside_a_bounded_match_score_on_the_other_terms(
    store: MemoryStore,
) -> None:
    """A pool member holding only terms left out of the MATCH gets their bm25."""
    added = await store.add_many(
        [memory(f"Kitchen note number {i}") for i in range(30)]
        + [memory("Boiler pressure low")]
        + [memory(f"Garden note {i}") for i in range(60)]
    )
    store.match_budget = 5
    keywords = await store.finder._hybrid.keyword_query(
        store.finder._corpus(store.reader, False), "kitchen boiler", None
    )
    assert keywords is not None
    assert keywords.expression == '"boiler"'
    kitchen = [result.item.id for result in added[:3]]
    boiler, garden = added[30].item.id, added[40].item.id
    hits = await store.finder._hybrid.keyword_of(
        store.reader, keywords, [*kitchen, boiler, garden]
    )
    assert hits[0][0] == boiler  # the rare term's row first
    assert {hit[0] for hit in hits} == {boiler, *kitchen}
    assert all(hit[1] < 0 and 0 < hit[2] < 1 for hit in hits[1:])


async def test_a_hybrid_query_rescores_fewer_candidates_than_a_vector_query(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With words the index proposes HYBRID_OVERSAMPLE pools, without SEMANTIC_OVERSAMPLE.

    The keyword hits the smaller pool leaves out are still candidates: the
    memory holding the words, far from the query's vector, comes first.
    """
    rng = np.random.default_rng(25)
    query = await _crowd(store, rng)
    far = (
        await store.add(
            memory("The boiler key hangs by the door"), vector=_far_from(query, rng)
        )
    ).item
    index = store.finder._vectors.index
    assert index is not None
    asked: list[int] = []
    knn = index.knn

    async def counting_knn(unit: Any, k: int) -> Any:
        asked.append(k)
        return await knn(unit, k)

    monkeypatch.setattr(index, "knn", counting_knn)
    await store.search(SearchQuery(vector=query))
    hybrid = await store.search(SearchQuery(text="boiler key", vector=query))
    pool = semantic_module.SEMANTIC_POOL
    assert asked == [
        pool * semantic_module.SEMANTIC_OVERSAMPLE,
        pool * semantic_module.HYBRID_OVERSAMPLE,
    ]
    assert semantic_module.HYBRID_OVERSAMPLE < semantic_module.SEMANTIC_OVERSAMPLE
    assert hybrid[0].item.id == far.id
    assert hybrid[0].matched == KEYWORD
