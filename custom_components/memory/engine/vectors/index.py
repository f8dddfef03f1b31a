"""Vector index backends: numpy binary codes, or sqlite-vec `vec0` when asked for.

Both return an approximate top-k that the store re-scores exactly from the
float32 vectors in the `embeddings` table, so both give the same results on
the same data. numpy keeps one bit a dimension
(`vector_codes`: 6 MB for 100k vectors of 384 dimensions, a seventh of int8
codes) and ranks by a cosine estimate from them, shortlisted by Hamming
distance when large. vec0 keeps int8 codes with one shared scale and
compares them by L2 distance, its fastest kernel, split in shards scanned in
parallel (see SqliteVecIndex). Each index is derived data: the store
builds the numpy one from the codes it stores beside the vectors
(`add_codes`), and rebuilds vec0 from `embeddings` whenever it looks out
of sync.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
import sqlite3
import threading
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np
import numpy.typing as npt

from ..errors import InvalidVectorError
from ..transactions import immediate_transaction
from .codes import encode_unit, estimate, hamming, pack_signs, rotate, words_per_row

if TYPE_CHECKING:
    import aiosqlite

    from ..models import Vector

BACKEND_NUMPY: Final = "numpy"
BACKEND_SQLITE_VEC: Final = "sqlite-vec"

_INT8_MAX: Final = 127.0
# Above this many rows, NumpyIndex.knn ranks every row by the Hamming
# distance of its codes to the query's signs (48 bytes a row at 384 dims,
# XOR and popcount) and estimates cosines only for the closest
# max(_SHORTLIST_PER_K * k, rows / _SHORTLIST_SHARE): at 100k rows and k=200
# that is 4,000 rows; recall@10 after re-scoring was the same with 2,000 on
# bench/engine.py's vectors and LoCoMo's (docs/benchmarks/engine.md).
_SHORTLIST_MIN_ROWS: Final = 20_000
_SHORTLIST_PER_K: Final = 20
_SHORTLIST_SHARE: Final = 25
# vec0 codes share one scale (vec0_scale) and are compared by L2 distance:
# for unit vectors that ranks like cosine, and vec0's L2 kernel is ~35 %
# faster than its cosine one (which recomputes both norms every time).
VEC0_CLIP_SIGMAS: Final = 8.0
# Each vec0 shard is asked for its share of k plus 1/VEC0_SHARD_MARGIN of it
# (k = 200, two shards: 125 each); the exact top 50 after re-scoring was the
# same as numpy's for every query of bench/engine.py, even at 100 each.
VEC0_SHARD_MARGIN: Final = 4


def as_unit_vector(vector: npt.ArrayLike) -> Vector:
    """Return a float32 copy scaled to length one; raise on NaN, inf or zero."""
    unit: Vector = _unit_rows(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
    return unit


def as_unit_vectors(
    vectors: Sequence[npt.ArrayLike | None],
) -> list[Vector | None]:
    """`as_unit_vector` of each vector given (None stays None), a batch at once.

    Vectors of one length are scaled as the rows of one array, by the same
    arithmetic as one alone (each row's result is the same bits); other
    batches go one by one. The error is `as_unit_vector`'s.
    """
    given: dict[int, npt.ArrayLike] = {
        n: vector for n, vector in enumerate(vectors) if vector is not None
    }
    units: list[Vector | None] = [None] * len(vectors)
    if not given:
        return units
    try:
        matrix = np.asarray(list(given.values()), dtype=np.float32)
    except TypeError, ValueError:  # ragged: lengths differ
        matrix = np.empty((0, 0), dtype=np.float32)
    if matrix.ndim == 2 and matrix.shape[0] == len(given):
        rows = list(_unit_rows(matrix))
    else:
        rows = [as_unit_vector(vector) for vector in given.values()]
    for n, row in zip(given, rows, strict=True):
        units[n] = row
    return units


def _unit_rows(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Each row scaled to length one; raise on an empty, non-finite or zero row."""
    if matrix.shape[1] == 0 or not np.all(np.isfinite(matrix)):
        raise InvalidVectorError("vector has no values or non-finite values")
    norms = np.linalg.norm(matrix, axis=1)
    if not np.all(norms > 0) or not np.all(np.isfinite(norms)):
        raise InvalidVectorError("vector has zero length")
    scaled: npt.NDArray[np.float32] = (matrix / norms[:, None]).astype(np.float32)
    return scaled


def vec0_scale(dim: int) -> float:
    """Return the int8 scale shared by `vec0` codes: 127 at VEC0_CLIP_SIGMAS sigmas.

    A unit vector's components are about 1/sqrt(dim) (sigma); larger ones
    (rare outlier dimensions) are clipped, which only blurs the candidate
    ranking that exact re-scoring then corrects.
    """
    return _INT8_MAX * float(np.sqrt(dim)) / VEC0_CLIP_SIGMAS


def vec0_codes(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.int8]:
    """int8 codes with one shared scale, so that L2 distance ranks by cosine."""
    scale = vec0_scale(vectors.shape[-1])
    codes: npt.NDArray[np.int8] = np.clip(
        np.rint(vectors * scale), -_INT8_MAX, _INT8_MAX
    ).astype(np.int8)
    return codes


class VectorIndex(Protocol):
    """What the store needs from a backend."""

    @property
    def backend(self) -> str:
        """Name shown in diagnostics."""

    @property
    def dim(self) -> int:
        """Dimension of the vectors it holds."""

    async def add(self, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Insert or replace unit vectors."""

    async def remove(self, ids: Sequence[int]) -> None:
        """Drop ids; unknown ids are ignored."""

    async def knn(self, query: Vector, k: int) -> list[tuple[int, float]]:
        """Approximate top-k ids by cosine, best first."""

    async def count(self) -> int:
        """How many vectors the index holds."""

    async def clear(self) -> None:
        """Remove everything (before a rebuild)."""

    async def close(self) -> None:
        """Release memory."""


def _nearest(distance: npt.NDArray[np.uint16], count: int) -> npt.NDArray[np.intp]:
    """Return the `count` rows of smallest Hamming distance, in row order.

    Distances are small integers, so they are counted (`bincount`) rather
    than partitioned: every row below the cut distance, then the first rows
    at it; 0.35 ms at 100k rows against 0.65 for `argpartition` and a sort.
    """
    counts = np.cumsum(np.bincount(distance))
    cut = int(np.searchsorted(counts, count))
    keep = distance < cut
    below = int(counts[cut - 1]) if cut else 0
    keep[np.flatnonzero(distance == cut)[: count - below]] = True
    return np.flatnonzero(keep)


class NumpyIndex:
    """Binary codes held in memory (`vector_codes`), scored off the event loop.

    60 bytes a row at 384 dimensions (id, 48 bytes of bits, a factor): a
    seventh of int8 codes. `knn` ranks by the codes' cosine estimate, over
    every row of a small index and over the rows nearest by Hamming distance
    of a large one (see _SHORTLIST_MIN_ROWS); the store re-scores the k it
    returns exactly.
    """

    def __init__(self, dim: int, capacity: int = 0) -> None:
        """Pre-size for `capacity` rows so a bulk load does not over-allocate."""
        self._dim = dim
        self._words = words_per_row(dim)
        self._lock = threading.Lock()
        self._size = 0
        capacity = max(capacity, 1024)
        self._ids = np.zeros(capacity, dtype=np.int64)
        # Word j of every row is `_bits[j]`: the Hamming scan reads each
        # word column in one contiguous pass (`codes.hamming`).
        self._bits = np.zeros((self._words, capacity), dtype=np.uint64)
        self._factors = np.zeros(capacity, dtype=np.float32)

    @property
    def backend(self) -> str:
        """Name shown in diagnostics."""
        return BACKEND_NUMPY

    @property
    def dim(self) -> int:
        """Dimension of the vectors it holds."""
        return self._dim

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays."""
        return self._ids.nbytes + self._bits.nbytes + self._factors.nbytes

    def _grow(self, needed: int) -> None:
        capacity = len(self._ids)
        if needed <= capacity:
            return
        capacity = max(needed, capacity + capacity // 2)
        ids = np.zeros(capacity, dtype=np.int64)
        bits = np.zeros((self._words, capacity), dtype=np.uint64)
        factors = np.zeros(capacity, dtype=np.float32)
        ids[: self._size] = self._ids[: self._size]
        bits[:, : self._size] = self._bits[:, : self._size]
        factors[: self._size] = self._factors[: self._size]
        self._ids, self._bits, self._factors = ids, bits, factors

    def _remove_locked(self, ids: Sequence[int] | npt.NDArray[np.int64]) -> None:
        if not len(ids) or not self._size:
            return
        keep = ~np.isin(self._ids[: self._size], np.asarray(ids, dtype=np.int64))
        kept = int(keep.sum())
        if kept == self._size:
            return
        self._ids[:kept] = self._ids[: self._size][keep]
        self._bits[:, :kept] = self._bits[:, : self._size][:, keep]
        self._factors[:kept] = self._factors[: self._size][keep]
        self._size = kept

    def add_sync(self, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Insert or replace; callable from any thread."""
        if not len(ids):
            return
        if vectors.shape != (len(ids), self._dim):
            raise InvalidVectorError(
                f"expected {len(ids)} vectors of {self._dim} dimensions, "
                f"got shape {vectors.shape}"
            )
        self.add_codes(ids, *encode_unit(vectors))

    def add_codes(
        self,
        ids: Sequence[int] | npt.NDArray[np.int64],
        bits: npt.NDArray[np.uint64],
        factors: npt.NDArray[np.float32],
    ) -> None:
        """Insert or replace rows by their codes (`codes.encode_unit`'s); any thread."""
        if not len(ids):
            return
        if bits.shape != (len(ids), self._words) or factors.shape != (len(ids),):
            raise InvalidVectorError(
                f"expected the codes of {len(ids)} vectors of {self._dim} dimensions"
            )
        with self._lock:
            self._remove_locked(ids)
            self._grow(self._size + len(ids))
            end = self._size + len(ids)
            self._ids[self._size : end] = ids
            self._bits[:, self._size : end] = bits.T
            self._factors[self._size : end] = factors
            self._size = end

    def _rows(self, rows: npt.NDArray[np.intp] | slice) -> npt.NDArray[np.uint64]:
        """Return the codes of `rows`, row by row (as `codes.estimate` reads them)."""
        return np.ascontiguousarray(self._bits[:, rows].T)

    def knn_sync(self, query: Vector, k: int) -> list[tuple[int, float]]:
        """Approximate top-k by estimated cosine; callable from any thread."""
        query = rotate(query.reshape(1, -1))[0]
        with self._lock:
            size = self._size
            if size == 0 or k <= 0:
                return []
            shortlist = max(_SHORTLIST_PER_K * k, size // _SHORTLIST_SHARE)
            if size > _SHORTLIST_MIN_ROWS and shortlist < size:
                distance = hamming(self._bits[:, :size], pack_signs(query))
                rows = _nearest(distance, shortlist)
                scores = estimate(self._rows(rows), self._factors[rows], query)
                ids = self._ids[rows]
            else:
                scores = estimate(
                    self._rows(slice(0, size)), self._factors[:size], query
                )
                ids = self._ids[:size].copy()
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        order = top[np.argsort(-scores[top], kind="stable")]
        return [(int(ids[row]), float(scores[row])) for row in order]

    async def add(self, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Insert or replace unit vectors."""
        await asyncio.to_thread(self.add_sync, ids, vectors)

    async def remove(self, ids: Sequence[int]) -> None:
        """Drop ids; unknown ids are ignored."""
        with self._lock:
            self._remove_locked(ids)

    async def knn(self, query: Vector, k: int) -> list[tuple[int, float]]:
        """Approximate top-k ids by cosine, best first."""
        return await asyncio.to_thread(self.knn_sync, query, k)

    async def count(self) -> int:
        """How many vectors the index holds."""
        return self._size

    async def clear(self) -> None:
        """Remove everything."""
        with self._lock:
            self._size = 0

    async def close(self) -> None:
        """Release the arrays."""
        with self._lock:
            self._size = 0
            self._ids = np.zeros(0, dtype=np.int64)
            self._bits = np.zeros((self._words, 0), dtype=np.uint64)
            self._factors = np.zeros(0, dtype=np.float32)


class SqliteVecIndex:
    """A `vec0` table with int8 codes (one shared scale), L2 distance, in shards.

    Rows are spread over `len(readers)` partitions of the table by
    `rowid % shards` (a vec0 partition key: each shard has its own chunks).
    A search scans every shard at the same time, each on its own read
    connection (and aiosqlite thread; SQLite runs without the GIL), then
    merges their candidates: vec0 has no SIMD in its PyPI build, and one
    thread scanning 100k rows takes ~45 ms, two halves in parallel ~20 ms.
    Writes go through the store's writer connection (under its lock), so a
    search never waits for a write.
    """

    def __init__(
        self,
        writer: aiosqlite.Connection,
        readers: Sequence[aiosqlite.Connection],
        table: str,
        dim: int,
    ) -> None:
        """Bind to a table name the store derived from the model name."""
        if not readers:
            raise ValueError("SqliteVecIndex needs at least one reader")
        self._writer = writer
        self._readers = tuple(readers)
        self._table = table
        self._dim = dim
        # The shard count is in the column's name, so a table made for
        # another count is seen as an old layout and rebuilt.
        self._shard_column = f"shard_of_{len(self._readers)}"

    @property
    def backend(self) -> str:
        """Name shown in diagnostics."""
        return BACKEND_SQLITE_VEC

    @property
    def dim(self) -> int:
        """Dimension of the vectors it holds."""
        return self._dim

    @property
    def shards(self) -> int:
        """How many partitions a search scans in parallel."""
        return len(self._readers)

    async def create(self) -> None:
        """Create the table if it does not exist (or has an old layout).

        Tables of an earlier version (per-row scales and cosine distance, or
        no shards, or another shard count) are dropped; the store then
        rebuilds them from `embeddings`.
        """
        rows = await self._writer.execute_fetchall(
            "SELECT sql FROM sqlite_master WHERE name = ?", (self._table,)
        )
        old = next(iter(rows), None)
        if old is not None and (
            "distance_metric=cosine" in str(old[0])
            or f"{self._shard_column} integer partition key" not in str(old[0])
        ):
            await self._writer.execute(f"DROP TABLE {self._table}")
        await self._writer.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {self._table} USING vec0("
            f"{self._shard_column} integer partition key, "
            f"embedding int8[{self._dim}])"
        )

    async def add(self, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Insert or replace unit vectors."""
        if not len(ids):
            return
        codes = vec0_codes(vectors)
        shards = self.shards
        rows = [
            (int(item_id), int(item_id) % shards, code.tobytes())
            for item_id, code in zip(ids, codes, strict=True)
        ]
        # One transaction, not one per row: a 100k rebuild takes ~1 s, not ~10 s.
        if self._writer.in_transaction:
            await self._insert(ids, rows)
        else:
            async with immediate_transaction(self._writer):
                await self._insert(ids, rows)

    async def _insert(
        self, ids: Sequence[int], rows: list[tuple[int, int, bytes]]
    ) -> None:
        await self.remove(ids)
        await self._writer.executemany(
            f"INSERT INTO {self._table} (rowid, {self._shard_column}, embedding) "
            "VALUES (?, ?, vec_int8(?))",
            rows,
        )

    async def remove(self, ids: Sequence[int]) -> None:
        """Drop ids; unknown ids are ignored."""
        await self._writer.executemany(
            f"DELETE FROM {self._table} WHERE rowid = ?",
            [(int(item_id),) for item_id in ids],
        )

    async def knn(self, query: Vector, k: int) -> list[tuple[int, float]]:
        """Approximate top-k ids by cosine, best first.

        Each shard is asked for its share of k plus a quarter (the ids are
        spread evenly, so the global top k is in the shards' top k/n with a
        margin); a shard that has fewer rows than that is exhausted, and if
        the others were not, they are asked again for all k, so that fewer
        than k results still means the index holds no more.
        """
        if k <= 0:
            return []
        code = vec0_codes(query.reshape(1, -1))[0].tobytes()
        shards = self.shards
        share = -(-k // shards)
        wanted = min(k, share + -(-share // VEC0_SHARD_MARGIN))
        found = await asyncio.gather(
            *(self._knn_shard(shard, code, wanted) for shard in range(shards))
        )
        if wanted < k and sum(map(len, found)) < k:
            found = [
                rows if len(rows) < wanted else await self._knn_shard(shard, code, k)
                for shard, rows in enumerate(found)
            ]
        merged = sorted(
            (row for rows in found for row in rows), key=lambda row: (row[1], row[0])
        )[:k]
        # |a - b|^2 = 2 - 2 cos(a, b) for unit vectors, at scale^2.
        scale = vec0_scale(self._dim)
        return [
            (item_id, 1.0 - distance**2 / (2 * scale * scale))
            for item_id, distance in merged
        ]

    async def _knn_shard(
        self, shard: int, code: bytes, k: int
    ) -> list[tuple[int, float]]:
        """Top-k `(id, L2 distance)` of one shard, on that shard's reader."""
        try:
            rows = await self._readers[shard].execute_fetchall(
                f"SELECT rowid, distance FROM {self._table} "
                f"WHERE embedding MATCH vec_int8(?) AND k = ? "
                f"AND {self._shard_column} = ? ORDER BY distance",
                (code, k, shard),
            )
        except sqlite3.OperationalError as err:
            # A concurrent search can hold the reader on a snapshot taken
            # before the first vector created this table: it has no vectors.
            if "no such table" in str(err):
                return []
            raise
        return [(int(row[0]), float(row[1])) for row in rows]

    async def count(self) -> int:
        """How many vectors the index holds.

        Read through the writer, which created the table: the readers may
        still be on an older snapshot.
        """
        async with self._writer.execute(
            f"SELECT count(*) FROM {self._table}"
        ) as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def clear(self) -> None:
        """Drop and re-create the table, which also frees its chunks."""
        await self._writer.execute(f"DROP TABLE IF EXISTS {self._table}")
        await self.create()

    async def close(self) -> None:
        """Nothing held outside the database."""
