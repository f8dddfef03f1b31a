"""The active model's vectors of memories: stored in `embeddings`, indexed.

The index (numpy, or sqlite-vec's `vec0` shards) is derived data: built
from the `embeddings` table at open, or later with `load_index`, and kept
in step with every write of vectors; so is a sample of the vectors
(`cosine_scale.CosineScale`), which tells fusion how unrelated texts score.
`MemoryVectors` holds the `Database` and registers with it as derived data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import hashlib
from typing import Final

import aiosqlite
import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError, VectorDimensionError
from ..models import Vector
from ..transactions import immediate_transaction
from ..vectors import (
    SAMPLE_SIZE,
    CosineScale,
    NumpyIndex,
    Scale,
    SqliteVecIndex,
    VectorIndex,
    as_unit_vector,
)
from .database import Database
from .rows import check_ids

_LOAD_BATCH: Final = 4096


def _model_table(model: str) -> str:
    return "vec_" + hashlib.sha256(model.encode()).hexdigest()[:16]


class MemoryVectors:
    """The active model's vectors of memories in a database, and their index."""

    def __init__(self, database: Database) -> None:
        """Hold `database`; the index is built when it opens (or `load_index`)."""
        self._db = database
        self._index: VectorIndex | None = None
        # A sample of the active model's stored vectors (set with the index).
        self._vector_scale: CosineScale | None = None
        self._loaded = False
        database.add_derived(self)

    @property
    def index(self) -> VectorIndex | None:
        """The active model's index; None before it is built or without vectors."""
        return self._index

    @property
    def loaded(self) -> bool:
        """Whether the index was built since the database opened."""
        return self._loaded

    async def close(self) -> None:
        """Release the index (the database is closing)."""
        self._loaded = False
        if self._index is not None:
            await self._index.close()
            self._index = None

    def cosine_scale(self, unit: Vector) -> Scale | None:
        """Give how a unit query scores with unrelated memories (active model)."""
        return None if self._vector_scale is None else self._vector_scale.scale(unit)

    async def _model_dim(self, conn: aiosqlite.Connection, model: str) -> int | None:
        rows = await conn.execute_fetchall(
            "SELECT dim FROM embedding_models WHERE model = ?", (model,)
        )
        row = next(iter(rows), None)
        return int(row[0]) if row else None

    async def load(self) -> None:
        """Build the active model's index from `embeddings` (derived data)."""
        writer, reader = self._db.connections()
        self._index = None
        self._loaded = True
        self._vector_scale = sample = CosineScale()
        model = self._db.model
        if model is None:
            return
        dim = await self._model_dim(reader, model)
        if dim is None:
            return
        async with reader.execute(
            "SELECT count(*) FROM embeddings WHERE model = ?", (model,)
        ) as cursor:
            row = await cursor.fetchone()
        stored = int(row[0]) if row else 0
        index: VectorIndex
        if self._db.uses_sqlite_vec:
            vec_index = SqliteVecIndex(
                writer, self._db.vector_readers, _model_table(model), dim
            )
            await vec_index.create()
            index = vec_index
            if await index.count() == stored:
                # The index is intact and not read: the sample is drawn
                # from the stored vectors, spread over the ids.
                rows = list(
                    await reader.execute_fetchall(
                        "SELECT vector FROM embeddings WHERE model = ? AND memory_id "
                        "IN (SELECT memory_id FROM embeddings WHERE model = ? "
                        "ORDER BY (memory_id * 2654435761) % 4294967296 LIMIT ?)",
                        (model, model, SAMPLE_SIZE),
                    )
                )
                if rows:
                    sample.add(
                        np.frombuffer(
                            b"".join(row[0] for row in rows), dtype=np.float32
                        ).reshape(len(rows), dim)
                    )
                self._index = index
                return
            await index.clear()
        else:
            index = NumpyIndex(dim, capacity=stored)
        async with reader.execute(
            "SELECT memory_id, vector FROM embeddings WHERE model = ?", (model,)
        ) as cursor:
            while rows := list(await cursor.fetchmany(_LOAD_BATCH)):
                ids = [row[0] for row in rows]
                matrix = np.frombuffer(
                    b"".join(row[1] for row in rows), dtype=np.float32
                ).reshape(len(rows), dim)
                await index.add(ids, matrix)
                sample.add(matrix)
        self._index = index

    async def store(
        self, conn: aiosqlite.Connection, vectors: Mapping[int, Vector]
    ) -> None:
        """Write unit vectors of the active model; learn its dimension once.

        In the caller's transaction, with writes held; `index_add` follows
        once it committed.
        """
        model = self._db.model
        assert model is not None  # noqa: S101 - checked by callers
        dims = {len(vector) for vector in vectors.values()}
        known = await self._model_dim(conn, model)
        expected = known if known is not None else min(dims)
        if dims != {expected}:
            raise VectorDimensionError(
                f"model {model} makes {expected}-dimensional vectors, "
                f"got {sorted(dims)}",
                expected=str(expected),
                got=",".join(str(dim) for dim in sorted(dims)),
            )
        if known is None:
            await conn.execute(
                "INSERT INTO embedding_models (model, dim, created_at) VALUES (?, ?, ?)",
                (model, expected, self._db.now()),
            )
        await conn.executemany(
            "INSERT OR REPLACE INTO embeddings (memory_id, model, vector) "
            "VALUES (?, ?, ?)",
            [(item_id, model, vector.tobytes()) for item_id, vector in vectors.items()],
        )

    async def delete(self, conn: aiosqlite.Connection, item_id: int) -> None:
        """Delete a memory's vectors of every model (its text changed).

        In the caller's transaction, with writes held; `remove` follows.
        """
        await conn.execute("DELETE FROM embeddings WHERE memory_id = ?", (item_id,))

    async def remove(self, ids: Sequence[int]) -> None:
        """Take memories out of the index (purged, or their text changed)."""
        if self._index is not None:
            await self._index.remove(ids)

    async def counts(self, conn: aiosqlite.Connection) -> dict[str, int]:
        """How many vectors each model has stored."""
        async with conn.execute(
            "SELECT model, count(*) FROM embeddings GROUP BY model"
        ) as cursor:
            return {row[0]: int(row[1]) for row in await cursor.fetchall()}

    async def index_add(self, vectors: Mapping[int, Vector]) -> None:
        """Add vectors just committed to the index (writes held)."""
        if self._index is None:
            await self.load()
            return  # freshly built from the table, which holds these vectors
        ids = list(vectors)
        matrix = np.stack([vectors[i] for i in ids])
        await self._index.add(ids, matrix)
        if self._vector_scale is not None:
            self._vector_scale.add(matrix)

    async def set_vectors(self, vectors: Mapping[int, npt.ArrayLike]) -> None:
        """Store (or replace) vectors of the store's model for existing items."""
        writer, _reader = self._db.connections()
        if self._db.model is None:
            raise InvalidInputError("the store has no embedding model for vectors")
        units = {item_id: as_unit_vector(vector) for item_id, vector in vectors.items()}
        if not units:
            return
        async with self._db.write_lock:
            await check_ids(writer, list(units))
            async with immediate_transaction(writer):
                await self.store(writer, units)
            await self.index_add(units)
        self._db.changed()
