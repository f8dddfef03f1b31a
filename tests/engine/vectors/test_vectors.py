"""Unit tests of the vector helpers and both index backends."""

from __future__ import annotations

from pathlib import Path
import sqlite3
from typing import TYPE_CHECKING

import aiosqlite
import numpy as np
import numpy.typing as npt
import pytest
import sqlite_vec

from custom_components.memory.engine import InvalidVectorError
from custom_components.memory.engine.vectors import index as vectors_module
from custom_components.memory.engine.vectors.codes import rotation
from custom_components.memory.engine.vectors.index import (
    BACKEND_NUMPY,
    BACKEND_SQLITE_VEC,
    NumpyIndex,
    SqliteVecIndex,
    as_unit_vector,
    as_unit_vectors,
    vec0_codes,
    vec0_scale,
)
from tests.engine.conftest import unit, vector

if TYPE_CHECKING:
    from custom_components.memory.engine.models import Vector


def _units(count: int, dim: int, seed: int = 0) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, dim)).astype(np.float32)
    units: npt.NDArray[np.float32] = (
        matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    ).astype(np.float32)
    return units


def test_as_unit_vector_scales_to_length_one() -> None:
    """Any finite non-zero vector becomes a float32 unit vector."""
    result = as_unit_vector([3, 4])
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, [0.6, 0.8], rtol=1e-6)
    nested = as_unit_vector(np.array([[1.0, 0.0], [0.0, 0.0]], dtype=np.float64))
    assert nested.shape == (4,)
    assert float(np.linalg.norm(nested)) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "bad",
    [
        [],
        [0.0, 0.0, 0.0],
        [1.0, float("nan")],
        [float("inf"), 1.0],
        [-float("inf")],
    ],
)
def test_as_unit_vector_rejects(bad: list[float]) -> None:
    """Empty, zero, NaN and infinite vectors raise InvalidVectorError."""
    with pytest.raises(InvalidVectorError) as info:
        as_unit_vector(bad)
    assert info.value.key == "invalid_vector"


def test_as_unit_vectors_equal_one_by_one() -> None:
    """A batch scales each vector to the same bits as alone; None stays None."""
    rng = np.random.default_rng(7)
    given: list[npt.ArrayLike | None] = [
        rng.standard_normal(384),
        None,
        rng.standard_normal(384).astype(np.float32),
        list(rng.standard_normal(384)),
    ]
    units = as_unit_vectors(given)
    assert units[1] is None
    for one, batch in zip(given, units, strict=True):
        if one is not None:
            assert batch is not None
            assert batch.dtype == np.float32
            assert batch.tobytes() == as_unit_vector(one).tobytes()
    assert as_unit_vectors([None, None]) == [None, None]
    # Lengths that differ go one by one (the store then names the dimension).
    mixed = as_unit_vectors([[3, 4], [0, 0, 2]])
    assert [list(np.round(u, 6)) for u in mixed if u is not None] == [
        [0.6, 0.8],
        [0.0, 0.0, 1.0],
    ]


@pytest.mark.parametrize("bad", [[0.0, 0.0], [1.0, float("nan")], [float("inf"), 1.0]])
def test_as_unit_vectors_reject_like_one(bad: list[float]) -> None:
    """A bad vector anywhere in the batch raises `as_unit_vector`'s error."""
    with pytest.raises(InvalidVectorError) as info:
        as_unit_vectors([[1.0, 2.0], None, bad])
    assert info.value.key == "invalid_vector"


def _exact_top(
    vectors: npt.NDArray[np.float32], ids: npt.NDArray[np.int64], query: Vector, k: int
) -> list[int]:
    return [int(ids[row]) for row in np.argsort(-(vectors @ query), kind="stable")[:k]]


def _rescored_top(
    found: list[tuple[int, float]],
    by_id: dict[int, npt.NDArray[np.float32]],
    query: Vector,
    k: int,
) -> list[int]:
    """Re-score the candidates exactly and keep the best k, as the store does."""
    exact = sorted(
        ((-float(by_id[item_id] @ query), item_id) for item_id, _score in found)
    )
    return [item_id for _score, item_id in exact[:k]]


async def test_numpy_index_knn_estimates_cosines_best_first() -> None:
    """The index returns k ids by estimated cosine, best first, near the exact."""
    vectors = _embeddings(3000, seed=2)
    index = NumpyIndex(384)
    assert index.backend == BACKEND_NUMPY
    ids = np.arange(1, 3001)
    await index.add(list(ids), vectors)
    assert await index.count() == 3000
    query = _near(vectors[7], np.random.default_rng(7))
    result = await index.knn(query, 200)
    assert len(result) == 200
    scores = [score for _id, score in result]
    assert scores == sorted(scores, reverse=True)
    by_id = dict(zip(ids.tolist(), vectors, strict=True))
    exact = np.asarray([by_id[item_id] @ query for item_id, _score in result])
    # One bit a dimension: the estimate is off by ~0.04 (1/sqrt(dim)).
    assert float(np.mean(np.abs(exact - scores))) < 0.06
    assert _rescored_top(result, by_id, query, 10) == _exact_top(
        vectors, ids, query, 10
    )
    # Asking for more than it holds returns everything.
    assert len(await index.knn(query, 5000)) == 3000
    assert await index.knn(query, 0) == []


async def test_numpy_index_replace_and_remove() -> None:
    """Adding an existing id replaces its vector; removing unknown ids is fine."""
    index = NumpyIndex(4)
    east, north = (
        np.array([[1, 0, 0, 0]], np.float32),
        np.array([[0, 1, 0, 0]], np.float32),
    )
    await index.add([1], east)
    await index.add([2], north)
    best, other = await index.knn(east[0], 2)
    assert best[0] == 1
    assert best[1] == pytest.approx(1.0, abs=1e-5)
    assert other[0] == 2
    assert other[1] < 0.5
    await index.add([1], north)  # replace
    assert await index.count() == 2
    both = sorted(await index.knn(north[0], 2))
    assert [item_id for item_id, _score in both] == [1, 2]
    assert [score for _id, score in both] == pytest.approx([1.0, 1.0], abs=1e-5)
    await index.remove([2, 99])
    assert await index.count() == 1
    assert [item_id for item_id, _ in await index.knn(north[0], 5)] == [1]
    await index.remove([99])  # nothing to remove
    await index.remove([])
    await index.add([], np.zeros((0, 4), np.float32))
    assert await index.count() == 1
    await index.clear()
    assert await index.count() == 0
    assert await index.knn(north[0], 5) == []
    await index.remove([1])  # empty index


async def test_numpy_index_grows_and_keeps_rows() -> None:
    """Past its capacity the index grows and keeps every earlier row."""
    index = NumpyIndex(64, capacity=0)
    start_bytes = index.nbytes
    vectors = _units(2500, 64, seed=3)
    for start in range(0, 2500, 500):
        ids = list(range(start + 1, start + 501))
        await index.add(ids, vectors[start : start + 500])
    assert await index.count() == 2500
    assert index.nbytes > start_bytes
    for row in (0, 1023, 1024, 2499):
        # A row's own code estimates its cosine with itself exactly.
        best_id, score = (await index.knn(vectors[row], 1))[0]
        assert best_id == row + 1
        assert score == pytest.approx(1.0, abs=1e-5)
    await index.close()
    assert await index.count() == 0
    assert index.nbytes == 0


def test_numpy_index_presized() -> None:
    """A bulk load of `capacity` rows is allocated once: id, sign bits, factor."""
    assert NumpyIndex(4, capacity=5000).nbytes == 5000 * (8 + 8 + 4)
    # 60 bytes a row at 384 dimensions, against 396 for int8 codes (and
    # 1,536 for float32).
    assert NumpyIndex(384, capacity=100_000).nbytes == 100_000 * 60


async def test_numpy_index_rejects_another_dimension() -> None:
    """Vectors of another dimension raise and leave the index as it was."""
    index = NumpyIndex(100)  # not a whole number of bytes or words
    vectors = _units(50, 100, seed=12)
    await index.add(list(range(50)), vectors)
    with pytest.raises(InvalidVectorError):
        await index.add([7], _units(1, 384, seed=13))
    with pytest.raises(InvalidVectorError):
        await index.add([7, 8], vectors[:1])
    assert await index.count() == 50
    best_id, score = (await index.knn(vectors[7], 1))[0]
    assert best_id == 7
    assert score == pytest.approx(1.0, abs=1e-5)


def _embeddings(count: int, seed: int, dim: int = 384) -> npt.NDArray[np.float32]:
    """Make unit vectors shaped like sentence embeddings (as bench/engine.py's).

    A shared direction, 40 topics of 16 sub-topics each, noise, and uneven
    dimensions (six of them outliers): cosines of unrelated rows ~0.1, of
    one topic ~0.5, of the nearest row ~0.8.
    """
    rng = np.random.default_rng(seed)
    shared = _units(1, dim, seed=seed + 1)[0]
    topics = _units(40, dim, seed=seed + 2)
    subtopics = _units(40 * 16, dim, seed=seed + 3).reshape(40, 16, dim)
    scale = np.exp(rng.normal(0.0, 0.35, size=dim))
    scale[rng.choice(dim, size=6, replace=False)] *= 4.0
    topic, sub = rng.integers(0, 40, count), rng.integers(0, 16, count)
    noise = rng.standard_normal((count, dim)) / np.sqrt(dim)
    matrix = (
        0.35 * shared + topics[topic] + 0.7 * subtopics[topic, sub] + 0.8 * noise
    ) * scale
    units: npt.NDArray[np.float32] = (
        matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    ).astype(np.float32)
    return units


def _near(row: npt.NDArray[np.float32], rng: np.random.Generator) -> Vector:
    """Make a query about a stored row: that row plus half as much noise."""
    return unit(row + 0.5 * rng.standard_normal(len(row)) / np.sqrt(len(row)))


def _clustered(count: int, dim: int, seed: int) -> npt.NDArray[np.float32]:
    """Make unit vectors around 40 centres, like sentence embeddings by topic."""
    rng = np.random.default_rng(seed)
    centres = _units(40, dim, seed=seed + 1)
    matrix = centres[rng.integers(0, 40, count)] + 0.03 * rng.standard_normal(
        (count, dim)
    )
    units: npt.NDArray[np.float32] = (
        matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    ).astype(np.float32)
    return units


async def test_numpy_index_recall_after_rescoring() -> None:
    """The exact top 10 is among the 200 candidates the store re-scores.

    On embedding-like vectors, with queries near stored rows (a question
    near the memory it asks about): recall@10 after exact re-scoring at
    least 0.99 (issue #25), at the full scan and the shortlisted size.
    """
    for count in (8000, 30_000):
        vectors = _embeddings(count, seed=14)
        ids = np.arange(1, count + 1)
        index = NumpyIndex(384)
        await index.add(list(ids), vectors)
        by_id = dict(zip(ids.tolist(), vectors, strict=True))
        rng = np.random.default_rng(15)
        recall = 0.0
        for row in rng.choice(count, size=40, replace=False):
            query = _near(vectors[row], rng)
            found = await index.knn(query, 200)
            top = _rescored_top(found, by_id, query, 10)
            recall += len(set(top) & set(_exact_top(vectors, ids, query, 10))) / 10
        assert recall / 40 >= 0.99


async def test_numpy_index_finds_the_row_a_query_is_near_in_random_data() -> None:
    """On structureless random vectors too, the row a query was made from is first.

    (The rest of such a top 10 is noise, cosines ~0.15 apart by less than
    the estimate's error: no quantiser ranks it, and no sentence embedding
    looks like it.)
    """
    vectors = _units(20_000, 384, seed=16)
    index = NumpyIndex(384)
    await index.add(list(range(20_000)), vectors)
    rng = np.random.default_rng(17)
    for row in rng.choice(20_000, size=20, replace=False):
        query = unit(vectors[row] + rng.standard_normal(384) / np.sqrt(384))
        found = await index.knn(query, 200)
        assert max(found, key=lambda pair: float(vectors[pair[0]] @ query))[0] == row


async def test_numpy_index_codes_stay_with_their_ids() -> None:
    """Above the shortlist bound, after adds, replacements and removals.

    A row's own code estimates its cosine with itself as exactly 1, so a
    code moved to another id would show.
    """
    DIM = 384  # noqa: N806 - the dimension of the models in use
    assert vectors_module._SHORTLIST_MIN_ROWS < 30_000
    vectors = _embeddings(30_000, seed=8)
    index = NumpyIndex(DIM)
    ids = np.arange(1, 30_001)
    for start in range(0, 30_000, 5000):
        await index.add(list(ids[start : start + 5000]), vectors[start : start + 5000])
    # Replace and remove some rows: the bits must stay aligned with their ids.
    replaced = _embeddings(1000, seed=9)
    await index.add(list(ids[:1000]), replaced)
    vectors[:1000] = replaced
    await index.remove(list(ids[1000:2000]))
    assert await index.count() == 29_000
    rng = np.random.default_rng(10)
    rows = [*rng.choice(1000, size=10), *rng.choice(np.arange(2000, 30_000), size=10)]
    for row in rows:
        best_id, score = (await index.knn(vectors[row], 200))[0]
        assert best_id == ids[row]
        assert score == pytest.approx(1.0, abs=1e-5)
    for row in rng.choice(np.arange(1000, 2000), size=10):
        found = {item_id for item_id, _score in await index.knn(vectors[row], 200)}
        assert ids[row] not in found


async def test_numpy_index_shortlist_is_by_sign() -> None:
    """A row whose rotated signs nearly all differ from the query's is not scored when large."""
    signs = np.where(np.arange(63) % 3 == 0, -1.0, 1.0)
    # Built in the rotated space (rotate(v) = v @ R.T, so v = y @ R).
    turned_query = unit([1.0, *(0.001 * signs)])
    turned_opposite = unit([1.0, *(-0.001 * signs)])  # cosine 0.99998
    query = unit(turned_query @ rotation(64))
    opposite = unit(turned_opposite @ rotation(64))
    for rows, expected_first in ((1000, True), (25_000, False)):
        index = NumpyIndex(64)
        await index.add(list(range(1, rows + 1)), _units(rows, 64, seed=11))
        await index.add([0], opposite.reshape(1, -1))
        found = [item_id for item_id, _score in await index.knn(query, 10)]
        assert (found[0] == 0) is expected_first
        assert (0 in found) is expected_first


async def test_sqlite_vec_index(tmp_path: Path) -> None:
    """The vec0 backend adds, replaces, removes, ranks and clears."""
    async with aiosqlite.connect(tmp_path / "vec.db") as conn:
        await conn.enable_load_extension(True)
        await conn.load_extension(sqlite_vec.loadable_path())
        index = SqliteVecIndex(conn, [conn, conn], "vec_test", 32)
        assert index.backend == BACKEND_SQLITE_VEC
        await index.create()
        vectors = _units(100, 32, seed=4)
        await index.add(list(range(1, 101)), vectors)
        await index.add([], vectors[:0])
        assert await index.count() == 100
        query = unit(vector(9, 32))
        expected = [int(i) + 1 for i in np.argsort(-(vectors @ query))[:5]]
        result = await index.knn(query, 5)
        assert [item_id for item_id, _ in result] == expected
        np.testing.assert_allclose(
            [score for _, score in result],
            np.sort(vectors @ query)[::-1][:5],
            atol=0.02,
        )
        assert await index.knn(query, 0) == []
        await index.add([expected[0]], -vectors[expected[0] - 1 : expected[0]])
        assert await index.count() == 100
        assert (await index.knn(query, 1))[0][0] == expected[1]
        await index.remove([expected[1], 12345])
        assert await index.count() == 99
        await index.clear()
        assert await index.count() == 0
        await index.close()


def _in_transaction(conn: aiosqlite.Connection) -> bool:
    return conn.in_transaction


async def test_sqlite_vec_index_add_is_atomic(tmp_path: Path) -> None:
    """A failing add rolls back its own transaction, removals included."""
    async with aiosqlite.connect(tmp_path / "vec.db", isolation_level=None) as conn:
        await conn.enable_load_extension(True)
        await conn.load_extension(sqlite_vec.loadable_path())
        index = SqliteVecIndex(conn, [conn, conn], "vec_test", 8)
        await index.create()
        vectors = _units(3, 8, seed=5)
        await index.add([1, 2, 3], vectors)
        with pytest.raises(sqlite3.OperationalError):
            # Codes of the wrong length: vec0 refuses the second row.
            await index.add([1, 4], _units(2, 16, seed=6))
        assert not _in_transaction(conn)
        assert await index.count() == 3
        assert (await index.knn(vectors[0], 1))[0][0] == 1
        # Inside a caller's transaction the caller decides.
        await conn.execute("BEGIN")
        await index.add([4], _units(1, 8, seed=7))
        assert _in_transaction(conn)
        await conn.execute("ROLLBACK")
        assert await index.count() == 3


async def test_sqlite_vec_reader_on_a_snapshot_before_the_table(
    tmp_path: Path,
) -> None:
    """A reader whose snapshot predates the vec0 table sees no vectors, not an error."""
    path = tmp_path / "vec.db"
    async with (
        aiosqlite.connect(path, isolation_level=None) as writer,
        aiosqlite.connect(path, isolation_level=None) as reader,
    ):
        for conn in (writer, reader):
            await conn.enable_load_extension(True)
            await conn.load_extension(sqlite_vec.loadable_path())
        await writer.execute("PRAGMA journal_mode = WAL")
        await writer.execute("CREATE TABLE t (x)")
        await writer.execute("INSERT INTO t VALUES (1)")
        # A search in progress holds the reader's snapshot open.
        await reader.execute("BEGIN")
        await reader.execute("SELECT * FROM t")
        index = SqliteVecIndex(writer, [reader, reader], "vec_test", 8)
        await index.create()
        vectors = _units(3, 8, seed=8)
        await index.add([1, 2, 3], vectors)
        assert await index.count() == 3
        assert await index.knn(vectors[0], 2) == []
        await reader.execute("COMMIT")
        assert (await index.knn(vectors[0], 1))[0][0] == 1
        # Any other failure is not swallowed.
        broken = SqliteVecIndex(writer, [reader, reader], "vec_test", 8)
        with pytest.raises(sqlite3.OperationalError):
            await broken.knn(np.full(16, 0.25, dtype=np.float32), 1)


@pytest.mark.parametrize(
    "layout",
    [
        "embedding int8[8] distance_metric=cosine",  # per-row scales, cosine
        "embedding int8[8]",  # one shared scale, L2, no shards
        "shard_of_3 integer partition key, embedding int8[8]",  # other count
    ],
)
async def test_sqlite_vec_index_replaces_an_old_layout(
    tmp_path: Path, layout: str
) -> None:
    """A table of an earlier layout is re-created (the store then refills it)."""
    async with aiosqlite.connect(tmp_path / "vec.db") as conn:
        await conn.enable_load_extension(True)
        await conn.load_extension(sqlite_vec.loadable_path())
        await conn.execute(f"CREATE VIRTUAL TABLE vec_test USING vec0({layout})")
        await conn.execute(
            "INSERT INTO vec_test (rowid, embedding) VALUES (1, vec_int8(?))",
            (bytes(range(1, 9)),),
        )
        index = SqliteVecIndex(conn, [conn, conn], "vec_test", 8)
        await index.create()
        assert await index.count() == 0
        rows = list(
            await conn.execute_fetchall(
                "SELECT sql FROM sqlite_master WHERE name = 'vec_test'"
            )
        )
        assert "cosine" not in rows[0][0]
        assert "shard_of_2 integer partition key" in rows[0][0]
        vectors = _units(3, 8, seed=12)
        await index.add([1, 2, 3], vectors)
        await index.create()  # the new layout is kept
        assert await index.count() == 3
        best, score = (await index.knn(vectors[1], 1))[0]
        assert best == 2
        assert score == pytest.approx(1.0, abs=0.02)


def test_vec0_codes_share_one_scale() -> None:
    """vec0 codes: 127 at 8 sigmas of a unit vector's components, clipped."""
    assert vec0_scale(64) == pytest.approx(127.0)
    rows = np.asarray([[0.5, -0.25, 2.0, -2.0] + [0.0] * 60], dtype=np.float32)
    assert vec0_codes(rows)[0, :4].tolist() == [64, -32, 127, -127]


async def _shards(conn: aiosqlite.Connection) -> dict[int, int]:
    rows = await conn.execute_fetchall("SELECT rowid, shard_of_2 FROM vec_test")
    return {int(row[0]): int(row[1]) for row in rows}


async def test_sqlite_vec_index_routes_ids_to_shards(tmp_path: Path) -> None:
    """Every id lives in shard `id % 2`, once, through adds, replaces and removes."""
    async with aiosqlite.connect(tmp_path / "vec.db", isolation_level=None) as conn:
        await conn.enable_load_extension(True)
        await conn.load_extension(sqlite_vec.loadable_path())
        index = SqliteVecIndex(conn, [conn, conn], "vec_test", 16)
        assert index.shards == 2
        await index.create()
        vectors = _units(40, 16, seed=21)
        await index.add(list(range(1, 41)), vectors)
        assert await _shards(conn) == {i: i % 2 for i in range(1, 41)}
        # Replacing keeps one row per id, in the same shard, with the new vector.
        await index.add([7, 8], -vectors[:2])
        assert await _shards(conn) == {i: i % 2 for i in range(1, 41)}
        assert await index.count() == 40
        assert (await index.knn(-vectors[1], 1))[0][0] == 8
        await index.remove([7, 8, 9, 1000])
        assert await _shards(conn) == {
            i: i % 2 for i in range(1, 41) if i not in (7, 8, 9)
        }
        # Each shard's search sees only its own rows.
        odd = await index._knn_shard(1, vec0_codes(vectors[:1])[0].tobytes(), 100)
        assert sorted(item_id for item_id, _ in odd) == [
            i for i in range(1, 41, 2) if i not in (7, 9)
        ]
        with pytest.raises(ValueError, match="at least one reader"):
            SqliteVecIndex(conn, [], "vec_test", 16)


async def test_sqlite_vec_shards_give_the_unsharded_top_k(tmp_path: Path) -> None:
    """The merged shards rank as one table would, even when one shard runs out."""
    async with aiosqlite.connect(tmp_path / "vec.db", isolation_level=None) as conn:
        await conn.enable_load_extension(True)
        await conn.load_extension(sqlite_vec.loadable_path())
        sharded = SqliteVecIndex(conn, [conn, conn], "vec_test", 32)
        single = SqliteVecIndex(conn, [conn], "vec_one", 32)
        for index in (sharded, single):
            await index.create()
        vectors = _clustered(600, 32, seed=22)
        ids = list(range(1, 601))
        for index in (sharded, single):
            await index.add(ids, vectors)
        for seed in range(5):
            query = unit(vector(seed + 30, 32))
            for k in (1, 7, 40, 200):
                assert await sharded.knn(query, k) == await single.knn(query, k)
        # Shard 1 holds 2 rows, shard 0 holds 60: asked for 20 (12 + 1/4 a
        # shard), shard 0 is asked again, so 20 come back, not 15.
        await sharded.clear()
        await single.clear()
        uneven = [*range(2, 122, 2), 1, 3]
        for index in (sharded, single):
            await index.add(uneven, vectors[: len(uneven)])
        query = unit(vector(50, 32))
        found = await sharded.knn(query, 20)
        assert len(found) == 20
        assert found == await single.knn(query, 20)
        assert len(await sharded.knn(query, 100)) == 62


async def test_sqlite_vec_and_numpy_pools_agree(tmp_path: Path) -> None:
    """Re-scored exactly, the sharded vec0 and numpy candidates give one top 10."""
    dim = 384
    vectors = _embeddings(3000, seed=23)
    ids = list(range(1, 3001))
    numpy_index = NumpyIndex(dim)
    await numpy_index.add(ids, vectors)
    async with aiosqlite.connect(tmp_path / "vec.db", isolation_level=None) as conn:
        await conn.enable_load_extension(True)
        await conn.load_extension(sqlite_vec.loadable_path())
        vec_index = SqliteVecIndex(conn, [conn, conn], "vec_test", dim)
        await vec_index.create()
        await vec_index.add(ids, vectors)
        rng = np.random.default_rng(60)
        for row in rng.choice(3000, size=10, replace=False):
            query = _near(vectors[row], rng)
            exact = [int(i) + 1 for i in np.argsort(-(vectors @ query))[:10]]
            for index in (numpy_index, vec_index):
                pool = [item_id for item_id, _ in await index.knn(query, 200)]
                rescored = sorted(pool, key=lambda i: -float(vectors[i - 1] @ query))
                assert rescored[:10] == exact


@pytest.mark.parametrize(
    ("rows", "count"), [(100_000, 4_000), (25_000, 1_000), (50, 10)]
)
def test_shortlist_is_the_nearest_rows_in_order(rows: int, count: int) -> None:
    """The Hamming shortlist: exactly `count` rows, the smallest distances, in order.

    Ties at the cut go to the first rows, so the same index always gives the
    same shortlist (`argpartition` chose among ties as it liked).
    """
    distance = np.random.default_rng(rows).integers(150, 230, rows).astype(np.uint16)
    shortlist = vectors_module._nearest(distance, count)
    assert len(shortlist) == count
    assert np.all(np.diff(shortlist) > 0)
    assert sorted(distance[shortlist]) == sorted(np.sort(distance)[:count])
    cut = distance[shortlist].max()
    at_cut = np.flatnonzero(distance == cut)
    chosen = shortlist[distance[shortlist] == cut]
    assert chosen.tolist() == at_cut[: len(chosen)].tolist()
