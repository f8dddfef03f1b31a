"""PgVectorIndex against a real PostgreSQL 18 with pgvector, no mocks.

Below the threshold `knn` is the exact top-k numpy computes over the same
vectors; above it the HNSW index exists, the planner uses it, and its
recall@10 against exact is at least 0.99 on 200 queries. The vectors are
clustered like sentence embeddings (topics with spread), the queries near
stored ones, as in bench/engine.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import numpy as np
import numpy.typing as npt
import pytest

from custom_components.memory.engine.errors import (
    InvalidVectorError,
    VectorDimensionError,
)
from custom_components.memory.engine.postgres import (
    PgVectorIndex,
    create_vector_table,
    register_vector,
)
from custom_components.memory.engine.postgres.hnsw_builds import (
    stop_builds,
    wait_builds,
)
from custom_components.memory.engine.postgres.vectors import TABLE, index_name
from custom_components.memory.engine.vectors import VectorIndex
from tests.postgres_server import START_TIMEOUT

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT),
]

DIM = 384
MODEL = "all-minilm-l6-v2"

type Floats = npt.NDArray[np.float32]


def unit(matrix: npt.NDArray[np.float64]) -> Floats:
    """Rows scaled to length one, as float32."""
    rows: Floats = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(
        np.float32
    )
    return rows


def clustered(count: int, seed: int, dim: int = DIM) -> Floats:
    """Make unit vectors around 50 topic centres, spread like sentence embeddings."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(50, dim))
    topics = rng.integers(0, 50, size=count)
    return unit(centres[topics] + 1.6 * rng.normal(size=(count, dim)))


def near(vectors: Floats, count: int, seed: int) -> Floats:
    """Make queries near some stored vectors."""
    rng = np.random.default_rng(seed)
    picked = vectors[rng.integers(0, len(vectors), size=count)].astype(np.float64)
    return unit(picked + 0.05 * rng.normal(size=picked.shape))


def exact_top(vectors: Floats, ids: list[int], query: Floats, k: int) -> list[int]:
    """Return the exact top-k ids by cosine, in float64."""
    scores = vectors.astype(np.float64) @ query.astype(np.float64)
    order = np.argsort(-scores, kind="stable")[:k]
    return [ids[row] for row in order]


@pytest.fixture
async def pool(postgres_database: str) -> AsyncIterator[asyncpg.Pool]:
    """Yield a small pool on the test's database, each connection with the codec."""
    made = await asyncpg.create_pool(
        postgres_database, min_size=1, max_size=2, init=register_vector
    )
    try:
        yield made
    finally:
        await stop_builds(made)
        await made.close()


async def make_index(pool: asyncpg.Pool, **kwargs: int) -> PgVectorIndex:
    """Make and create an index of MODEL."""
    index = PgVectorIndex(pool, MODEL, DIM, **kwargs)
    await index.create()
    return index


async def test_exact_below_the_threshold_is_numpys_top_k(pool: asyncpg.Pool) -> None:
    """Ids in numpy's order, cosines within 1e-5; no HNSW index yet."""
    vectors = clustered(600, seed=1)
    ids = [10 + 3 * n for n in range(len(vectors))]
    index = await make_index(pool)
    await index.add(ids, vectors)
    assert await index.count() == len(vectors)
    assert not await index.has_hnsw()
    for query in near(vectors, 20, seed=2):
        found = await index.knn(query, 10)
        assert [item_id for item_id, _ in found] == exact_top(vectors, ids, query, 10)
        by_id = dict(zip(ids, vectors.astype(np.float64) @ query, strict=True))
        for item_id, cosine in found:
            assert cosine == pytest.approx(by_id[item_id], abs=1e-5)
        assert [c for _, c in found] == sorted((c for _, c in found), reverse=True)
    # Fewer rows than k: all of them.
    assert len(await index.knn(vectors[0], 1000)) == len(vectors)
    assert await index.knn(vectors[0], 0) == []


async def test_hnsw_above_the_threshold_keeps_recall(pool: asyncpg.Pool) -> None:
    """Crossing the threshold builds the index; its recall@10 is >= 0.99."""
    vectors = clustered(3000, seed=3)
    ids = list(range(1, len(vectors) + 1))
    index = await make_index(pool, threshold=2000, ef_search=100)
    await index.add(ids[:1500], vectors[:1500])
    assert not await index.has_hnsw()
    await index.add(ids[1500:], vectors[1500:])
    await wait_builds(pool)  # the build runs in the background
    async with pool.acquire() as connection:
        names = {
            row["indexname"]
            for row in await connection.fetch(
                "SELECT indexname FROM pg_indexes WHERE tablename = $1", TABLE
            )
        }
    assert index_name(MODEL) in names
    # The planner takes the index at this ef_search (the recall is HNSW's).
    plan = await index.plan(vectors[0], 10)
    assert index_name(MODEL) in plan
    assert await index.index_bytes() > 0
    queries = near(vectors, 200, seed=4)
    hits = 0
    for query in queries:
        found = [item_id for item_id, _ in await index.knn(query, 10)]
        hits += len(set(found) & set(exact_top(vectors, ids, query, 10)))
    assert hits / (10 * len(queries)) >= 0.99
    # The exact path still answers exactly with the index there.
    query = queries[0]
    assert index_name(MODEL) not in await index.plan(query, 10, exact=True)
    exact = await index.knn(query, 10, exact=True)
    assert [item_id for item_id, _ in exact] == exact_top(vectors, ids, query, 10)
    # The engine's pool (k = 200) comes back whole, above ef_search.
    assert len(await index.knn(query, 200)) == 200
    assert len(await index.knn(query, 1500)) == 1500


async def test_upsert_replaces_and_remove_removes(pool: asyncpg.Pool) -> None:
    """A second add of an id replaces its vector; remove drops only given ids."""
    vectors = clustered(20, seed=5)
    made = await make_index(pool)
    index: VectorIndex = made  # what the store needs of an index
    assert (index.backend, index.dim) == ("pgvector", DIM)
    await index.add(list(range(20)), vectors)
    await index.add([7], vectors[3:4])
    assert await index.count() == 20
    found = dict(await index.knn(vectors[3], 2))
    assert set(found) == {3, 7}
    assert found[7] == pytest.approx(1.0, abs=1e-5)
    await index.remove([7, 8, 999])
    assert await index.count() == 18
    assert {item_id for item_id, _ in await index.knn(vectors[3], 20)} == (
        set(range(20)) - {7, 8}
    )
    await index.remove([])
    await index.add([], np.zeros((0, DIM), dtype=np.float32))
    assert await index.count() == 18
    await index.close()  # the pool is the caller's: still usable
    assert await made.count() == 18


async def test_models_are_apart(pool: asyncpg.Pool) -> None:
    """Two models share the table, never their rows; clear empties one."""
    vectors = clustered(30, seed=6)
    first = await make_index(pool, threshold=10)
    other = PgVectorIndex(pool, "other 'model'", DIM, threshold=10)
    await other.create()
    await first.add(list(range(30)), vectors)
    await other.add([100, 101], vectors[:2])
    await wait_builds(pool)
    assert await first.has_hnsw()
    assert not await other.has_hnsw()
    assert {i for i, _ in await other.knn(vectors[0], 10)} == {100, 101}
    assert all(i < 30 for i, _ in await first.knn(vectors[0], 30))
    await first.clear()
    assert await first.count() == 0
    assert not await first.has_hnsw()
    assert await other.count() == 2
    await other.build_hnsw()  # now, whatever its size (the benchmark's call)
    assert await other.has_hnsw()


async def test_dimension_mismatch_is_an_engine_error(pool: asyncpg.Pool) -> None:
    """A vector of another length, or a table of another dimension: VectorDimensionError."""
    index = await make_index(pool)
    short = unit(np.ones((1, DIM - 1)))
    with pytest.raises(VectorDimensionError) as caught:
        await index.add([1], short)
    assert caught.value.key == "vector_dimension"
    with pytest.raises(VectorDimensionError):
        await index.knn(short[0], 5)
    with pytest.raises(VectorDimensionError):
        await PgVectorIndex(pool, "bigger", 768).create()
    async with pool.acquire() as connection:
        with pytest.raises(VectorDimensionError):
            await create_vector_table(connection, 512)
        with pytest.raises(VectorDimensionError):
            await create_vector_table(connection, 0)
    with pytest.raises(InvalidVectorError):
        await index.add([1, 2], unit(np.ones((1, DIM))))
    with pytest.raises(InvalidVectorError):
        await index.add([1], np.full((1, DIM), np.nan, dtype=np.float32))
    assert await index.count() == 0


async def test_a_table_of_another_dimension_refuses_writes_clearly(
    pool: asyncpg.Pool,
) -> None:
    """An index told the wrong dimension, past create: the server's refusal is ours."""
    await make_index(pool)
    stray = PgVectorIndex(pool, MODEL, 8)
    with pytest.raises(VectorDimensionError):
        await stray.add([1], unit(np.ones((1, 8))))


async def test_two_instances_create_the_table_at_once(postgres_database: str) -> None:
    """Two first vectors stored at once: both creators succeed, one table results."""
    connections = [await asyncpg.connect(postgres_database) for _ in range(4)]
    try:
        for _ in range(10):
            await connections[0].execute(f"DROP TABLE IF EXISTS {TABLE}")
            await asyncio.gather(
                *(create_vector_table(connection, 8) for connection in connections)
            )
            assert (
                await connections[0].fetchval(
                    "SELECT count(*) FROM pg_class WHERE relname = $1", TABLE
                )
                == 1
            )
    finally:
        for connection in connections:
            await connection.close()
