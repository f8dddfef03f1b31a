"""One model's unit vectors in PostgreSQL with pgvector: exact below a size, HNSW above.

`PgVectorIndex` keeps the vectors of one embedding model in the table
`memory_vectors (model, memory_id, embedding vector(DIM))`, keyed by
`(model, memory_id)`. Where the memories' schema is (`schema`), `memory_id`
references `memories(id)` on delete cascade (`LINK_TO_MEMORIES`: schema
step 3 -> 4, and `create_vector_table` for a table made later), so a
purged memory's vectors go with it; without it `remove` is the way out.
Triggers count each model's vectors and writes (`vector_changes`: step
4 -> 5, and `create_vector_table`), the stamp of the search's cosine scale.

`knn` orders by pgvector's cosine distance `<=>` and returns
`1 - distance`, best first, like `NumpyIndex`. Below `HNSW_THRESHOLD` rows
of the model PostgreSQL scans them all (exact: the top-k of every row);
when `create` (the store's open) or `add` finds the model at the threshold
without a valid index, an HNSW index (`vector_cosine_ops`, `HNSW_M`,
`HNSW_EF_CONSTRUCTION`), partial on the model, is built in the background
(`hnsw_builds`: concurrently, one process at a time, never in line), and
each query sets `hnsw.ef_search` for its own transaction. Until the
index is valid the planner ignores it and searches scan exactly.
The numbers behind each constant are in docs/benchmarks/engine.md
("PostgreSQL: pgvector, exact and HNSW (#26)", `bench/pg_vectors.py`).

Filtering (scopes, active memories) is left to the caller, as with the
SQLite indexes: `search.semantic_pool` re-scores the candidates with its
filters and scans a selective filter's subset exactly. A filter inside
the query would need the memories table (and then pgvector 0.8's
`hnsw.iterative_scan`, so that a filtered HNSW scan still finds k rows).

Vectors travel in pgvector's binary form (`register_vector`, a codec on
each connection of the pool): a 16-bit dimension, 16 unused bits, then
big-endian float32s, made by one numpy cast. The text form
(`[0.1,0.2,...]`) costs Python a float repr and the server a float parse
for each of 384 components: 6,100-6,400 rows a second against
82,000-83,000 in binary (10k vectors, bench/pg_vectors.py). The `pgvector`
package would add a dependency for the same few lines.

asyncpg is imported only in this room; this module needs nothing of it but
its exceptions, imported where they are caught.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
import hashlib
import struct
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..errors import InvalidVectorError, VectorDimensionError
from ..models import Vector
from .hnsw_builds import build_locked, building, index_state, start_build, stop_build
from .notify import ChangeKind, notify
from .vector_changes import CHANGES, COMPACT_AFTER, TRACK_CHANGES, compact

BACKEND_PGVECTOR: Final = "pgvector"
TABLE: Final = "memory_vectors"
# pg_advisory_xact_lock's key while the table is made ("memvecT" in ASCII;
# the schema's is "memoryS").
TABLE_LOCK: Final = 0x6D656D76656354
# At and above this many rows of a model, the HNSW index is built in the
# background (3.5-4.3 s at 20k, once; ~38 min at 1M on two cores). Below it the exact scan answers k=200 within
# ~10 ms (p50 3-4 ms at 10k, 9.5 ms at 20k) and is exact; at 100k it
# takes 55-80 ms against HNSW's 4-10 ms (bench/pg_vectors.py).
HNSW_THRESHOLD: Final = 20_000
# 16 neighbours a node (32 on the bottom layer), pgvector's default, and a
# candidate list of 128 while building, twice the default: on
# bench/engine.py's 100k vectors the default graph (64) reached recall@10
# 0.975 at ef_search 200 and 0.990 only at 800; 128 reached 0.98-0.99 at
# 200 and 0.99-1.00 at 400 (five builds: a parallel build is not
# deterministic) for ~4 s more build (22 -> 26 s). 200 was a little
# better again, for 70 % more build time; m = 24 gained nothing over 16.
HNSW_M: Final = 16
HNSW_EF_CONSTRUCTION: Final = 128
# The candidate list of a search, at least k: pgvector's HNSW scan returns
# at most ef_search rows (without an iterative scan). The engine asks for
# k = 200; 800 keeps recall@10 >= 0.995 on every 100k build measured, where
# 400 fell to 0.990, for about 1 ms more a query (docs/benchmarks/engine.md).
HNSW_EF_SEARCH: Final = 800
EF_SEARCH_MAX: Final = 1000
# Rows an `add` sends per executemany batch.
_BATCH: Final = 1000
_HEADER: Final = struct.Struct(">HH")
_MAX_DIM: Final = 16_000  # pgvector's limit for a vector column


# Ties `memory_vectors` to `memories` when both exist and are not tied yet:
# vectors of memories already gone are dropped, then a memory's vectors go
# with it (on delete cascade, found by `memory_vectors_memory_id`). Schema
# step 3 -> 4 runs it for a table made before it, `create_vector_table` for
# one made after; two instances at once: the second finds the key there.
LINK_TO_MEMORIES: Final = """
DO $$
BEGIN
    IF to_regclass('memory_vectors') IS NOT NULL
        AND to_regclass('memories') IS NOT NULL
        AND NOT EXISTS (
            SELECT 1 FROM pg_constraint WHERE conname = 'memory_vectors_memory'
        ) THEN
        BEGIN
            DELETE FROM memory_vectors v
                WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = v.memory_id);
            ALTER TABLE memory_vectors ADD CONSTRAINT memory_vectors_memory
                FOREIGN KEY (memory_id) REFERENCES memories(id) ON DELETE CASCADE;
            CREATE INDEX IF NOT EXISTS memory_vectors_memory_id
                ON memory_vectors (memory_id);
        EXCEPTION WHEN duplicate_object THEN
            NULL;
        END;
    END IF;
END
$$
"""


def encode_vector(vector: Any) -> bytes:
    """Return pgvector's binary form of a vector: dimension, 0, float32s."""
    values = np.asarray(vector, dtype=">f4").reshape(-1)
    return _HEADER.pack(len(values), 0) + values.tobytes()


def decode_vector(data: bytes) -> Vector:
    """Return the float32 array that pgvector's binary form holds."""
    dim, _unused = _HEADER.unpack_from(data)
    decoded: Vector = np.frombuffer(
        data, dtype=">f4", count=dim, offset=_HEADER.size
    ).astype(np.float32)
    return decoded


async def register_vector(connection: Any) -> None:
    """Teach an asyncpg connection pgvector's binary form (a pool's `init`)."""
    await connection.set_type_codec(
        "vector",
        schema="public",
        encoder=encode_vector,
        decoder=decode_vector,
        format="binary",
    )


def _literal(text: str) -> str:
    """`text` as an SQL string literal (standard_conforming_strings is on)."""
    return "'" + text.replace("'", "''") + "'"


def index_name(model: str) -> str:
    """Name the HNSW index of `model` by its hash: any model name fits."""
    digest = hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]
    return f"{TABLE}_hnsw_{digest}"


async def create_vector_table(connection: Any, dim: int) -> None:
    """Create `memory_vectors` for vectors of `dim` dimensions, if missing.

    An existing table of another dimension raises `VectorDimensionError`:
    one table holds one dimension (an HNSW index needs a fixed one).
    Where `memories` exists, the table is tied to it (`LINK_TO_MEMORIES`).
    Under an advisory lock, so two instances creating it at once both
    succeed. Its triggers keep each model's counts
    (`vector_changes.TRACK_CHANGES`).
    """
    if not 0 < dim <= _MAX_DIM:
        raise VectorDimensionError(
            f"pgvector holds 1 to {_MAX_DIM} dimensions, not {dim}",
            expected=str(_MAX_DIM),
            actual=str(dim),
        )
    # Two instances storing their first vectors at once: `IF NOT EXISTS`
    # alone lets both create the table's type, and one fails.
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", TABLE_LOCK)
        await connection.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} ("
            " model text NOT NULL,"
            " memory_id bigint NOT NULL,"
            f" embedding vector({dim}) NOT NULL,"
            " PRIMARY KEY (model, memory_id))"
        )
        stored = await table_dim(connection)
        if stored != dim:
            raise VectorDimensionError(
                f"{TABLE} holds vectors of {stored} dimensions, not {dim}",
                expected=str(stored),
                actual=str(dim),
            )
        await connection.execute(LINK_TO_MEMORIES)
        await connection.execute(TRACK_CHANGES)


async def table_dim(connection: Any) -> int | None:
    """Return the dimension of `memory_vectors.embedding`, None without the table."""
    value = await connection.fetchval(
        "SELECT atttypmod FROM pg_attribute"
        " WHERE attrelid = to_regclass($1) AND attname = 'embedding'",
        TABLE,
    )
    return None if value is None else int(value)


class PgVectorIndex:
    """One model's vectors in `memory_vectors`, over an asyncpg pool.

    The pool's connections must know the binary form (`register_vector` as
    the pool's `init`). Call `create` once before use. `threshold` and
    `ef_search` default to the benchmark's choice; tests lower the
    threshold to cross it with a few thousand rows.
    """

    def __init__(
        self,
        pool: Any,
        model: str,
        dim: int,
        *,
        threshold: int = HNSW_THRESHOLD,
        ef_search: int = HNSW_EF_SEARCH,
    ) -> None:
        """Bind to a pool and a model; nothing is read or written yet.

        Once `notice_as` names a store's instance, each insert sends a
        `VECTORS_SET` notice in that name, in its transaction.
        """
        self._pool = pool
        self.notice_as: str | None = None
        self._model = model
        self._dim = dim
        self._threshold = threshold
        self._ef_search = ef_search
        self._index = index_name(model)
        self._indexed: bool | None = None
        # The model as a literal, not a parameter: a generic plan of a
        # prepared statement could not prove the partial index's predicate.
        self._where = f"model = {_literal(model)}"

    @property
    def backend(self) -> str:
        """Name shown in diagnostics."""
        return BACKEND_PGVECTOR

    @property
    def dim(self) -> int:
        """Dimension of the vectors it holds."""
        return self._dim

    @property
    def model(self) -> str:
        """The embedding model whose vectors this index holds."""
        return self._model

    async def create(self) -> None:
        """Create the table if missing; start the HNSW build if the rows call for it.

        Returns at once: the build runs in the background (`hnsw_builds`).
        """
        async with self._pool.acquire() as connection:
            await create_vector_table(connection, self._dim)
        await self._maybe_build()

    async def has_hnsw(self) -> bool:
        """Say whether the model's HNSW index exists and is valid (searches use it)."""
        async with self._pool.acquire() as connection:
            self._indexed = bool(await index_state(connection, self._index))
        return self._indexed

    def _check(self, matrix: npt.NDArray[Any], rows: int) -> None:
        """Raise an engine error for a matrix of the wrong shape or values."""
        if matrix.ndim != 2 or matrix.shape[0] != rows:
            raise InvalidVectorError(
                f"expected {rows} vectors, got an array of shape {matrix.shape}"
            )
        if matrix.shape[1] != self._dim:
            raise VectorDimensionError(
                f"model {self._model!r} has vectors of {self._dim} dimensions,"
                f" not {matrix.shape[1]}",
                expected=str(self._dim),
                actual=str(matrix.shape[1]),
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidVectorError("vector has non-finite values")

    async def add(self, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Insert or replace unit vectors; at the threshold start the HNSW build."""
        if not len(ids):
            return
        matrix = np.asarray(vectors, dtype=np.float32)
        self._check(matrix, len(ids))
        # One cast for the whole batch: the codec then copies each row's bytes.
        big = matrix.astype(">f4")
        rows = [(self._model, int(item_id), big[n]) for n, item_id in enumerate(ids)]
        await self._insert(rows)
        if not self._indexed:
            await self._maybe_build()

    async def _insert(self, rows: list[tuple[str, int, npt.NDArray[Any]]]) -> None:
        """Upsert the rows in one transaction, `_BATCH` at a time."""
        import asyncpg  # noqa: PLC0415

        sql = (
            f"INSERT INTO {TABLE} (model, memory_id, embedding)"  # noqa: S608
            " VALUES ($1, $2, $3)"
            " ON CONFLICT (model, memory_id)"
            " DO UPDATE SET embedding = EXCLUDED.embedding"
        )
        try:
            async with self._pool.acquire() as connection, connection.transaction():
                for first in range(0, len(rows), _BATCH):
                    await connection.executemany(sql, rows[first : first + _BATCH])
                if len(rows) > COMPACT_AFTER:
                    # executemany runs the statement (and its counting
                    # trigger) once a row: fold those deltas.
                    await compact(connection)
                if self.notice_as is not None:
                    await notify(
                        connection,
                        ChangeKind.VECTORS_SET,
                        instance=self.notice_as,
                        scopes=(),
                        ids=(row[1] for row in rows),
                    )
        except asyncpg.DataError as err:
            # The column's dimension is the table's, not this index's.
            raise VectorDimensionError(
                f"{TABLE} refused the vectors: {err}",
                expected=str(self._dim),
                actual=str(self._dim),
            ) from err

    async def _maybe_build(self) -> None:
        """Start the background build once the rows reach the threshold, unless valid.

        Cheap: the index's catalog row and the counts `vector_changes`
        keeps, never a scan of the rows.
        """
        if building(self._pool, self._index):
            return
        async with self._pool.acquire() as connection:
            state = await index_state(connection, self._index)
            self._indexed = bool(state)
            if state or (
                state is None and await self._rows(connection) < self._threshold
            ):
                return
        start_build(self._pool, self._index, self._build)

    async def _rows(self, connection: Any) -> int:
        """Count the model's rows by `vector_changes`' deltas (no scan of the vectors)."""
        value = await connection.fetchval(
            f"SELECT coalesce(sum(rows), 0) FROM {CHANGES} WHERE model = $1",  # noqa: S608
            self._model,
        )
        return int(value)

    def _statement(self, m: int, ef_construction: int) -> str:
        return (
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {self._index} ON {TABLE}"
            f" USING hnsw (embedding vector_cosine_ops)"
            f" WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
            f" WHERE {self._where}"
        )

    async def _build(self) -> bool:
        """Build in the background: under the lock, if the rows still call for it."""

        async def plan(connection: Any) -> str | None:
            if await self._rows(connection) < self._threshold:
                return None
            return self._statement(HNSW_M, HNSW_EF_CONSTRUCTION)

        built = await build_locked(self._pool, self._index, plan)
        self._indexed = self._indexed or built
        return built

    async def build_hnsw(
        self, *, m: int = HNSW_M, ef_construction: int = HNSW_EF_CONSTRUCTION
    ) -> None:
        """Build the model's HNSW index now (if missing), whatever its size; wait for it.

        Concurrently and under the build's lock, as in the background; while
        another process holds it, waits for that build to end. `m` and
        `ef_construction` are for the benchmark's comparisons.
        """

        async def plan(_connection: Any) -> str:
            return self._statement(m, ef_construction)

        # The other build ends within its BUILD_TIMEOUT, or with its session.
        while not await build_locked(self._pool, self._index, plan):  # noqa: ASYNC110 - another process holds the lock
            await asyncio.sleep(1.0)
        self._indexed = True

    async def drop_hnsw(self) -> None:
        """Drop the model's HNSW index: queries scan exactly until it is rebuilt."""
        await stop_build(self._pool, self._index)
        async with self._pool.acquire() as connection:
            await connection.execute(f"DROP INDEX IF EXISTS {self._index}")
        self._indexed = False

    async def remove(self, ids: Sequence[int]) -> None:
        """Drop ids; unknown ids are ignored."""
        if not len(ids):
            return
        async with self._pool.acquire() as connection:
            await connection.execute(
                f"DELETE FROM {TABLE} WHERE {self._where}"  # noqa: S608
                " AND memory_id = ANY($1::bigint[])",
                [int(item_id) for item_id in ids],
            )

    def _settings(self, k: int, *, exact: bool) -> str:
        """Return the `SET LOCAL` statements of a search for k rows, as one string."""
        if exact:
            return "SET LOCAL enable_indexscan = off"
        ef = min(max(self._ef_search, k), EF_SEARCH_MAX)
        settings = f"SET LOCAL hnsw.ef_search = {ef}"
        if k > ef:
            settings += "; SET LOCAL hnsw.iterative_scan = strict_order"
        return settings

    async def _search(
        self, query: Vector, k: int, *, exact: bool, explain: bool
    ) -> list[Any]:
        """Run the search (or EXPLAIN it) in a transaction with its settings."""
        vector = np.asarray(query, dtype=np.float32).reshape(1, -1)
        self._check(vector, 1)
        sql = (
            f"SELECT memory_id, 1 - (embedding <=> $1) AS cosine FROM {TABLE}"  # noqa: S608
            f" WHERE {self._where} ORDER BY embedding <=> $1 LIMIT $2"
        )
        async with self._pool.acquire() as connection, connection.transaction():
            # Both settings in one round trip (the simple query protocol).
            await connection.execute(self._settings(k, exact=exact))
            rows: list[Any] = await connection.fetch(
                f"EXPLAIN {sql}" if explain else sql, vector[0], k
            )
        return rows

    async def knn(
        self, query: Vector, k: int, *, exact: bool = False
    ) -> list[tuple[int, float]]:
        """Top-k ids by cosine, best first: HNSW when built, else exact.

        `exact` scans every row even when the HNSW index exists (the
        benchmark's and the tests' reference). The search's ef_search is
        `max(ef_search, k)` up to pgvector's 1000; a larger k turns on the
        iterative scan (strict order), so that k rows still come back.
        pgvector 0.8's planner weighs ef_search against the rows: on a
        table not much larger than ef_search it may scan exactly instead.
        """
        if k <= 0:
            return []
        rows = await self._search(query, k, exact=exact, explain=False)
        return [(int(row[0]), float(row[1])) for row in rows]

    async def plan(self, query: Vector, k: int, *, exact: bool = False) -> str:
        """Return PostgreSQL's plan for `knn(query, k)`, with the same settings."""
        rows = await self._search(query, max(k, 1), exact=exact, explain=True)
        return "\n".join(str(row[0]) for row in rows)

    async def count(self) -> int:
        """How many vectors of the model the table holds."""
        async with self._pool.acquire() as connection:
            value = await connection.fetchval(
                f"SELECT count(*) FROM {TABLE} WHERE {self._where}"  # noqa: S608
            )
        return int(value)

    async def index_bytes(self) -> int:
        """Return the HNSW index's size on disk (`pg_relation_size`), 0 without one."""
        async with self._pool.acquire() as connection:
            value = await connection.fetchval(
                "SELECT pg_relation_size(to_regclass($1))", self._index
            )
        return int(value or 0)

    async def clear(self) -> None:
        """Remove the model's vectors and its HNSW index (before a rebuild)."""
        await stop_build(self._pool, self._index)
        async with self._pool.acquire() as connection, connection.transaction():
            await connection.execute(f"DROP INDEX IF EXISTS {self._index}")
            await connection.execute(f"DELETE FROM {TABLE} WHERE {self._where}")  # noqa: S608
        self._indexed = False

    async def close(self) -> None:
        """Stop this model's background build, if any; the pool is the caller's."""
        await stop_build(self._pool, self._index)
