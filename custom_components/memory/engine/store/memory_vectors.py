"""The active model's vectors of memories: stored in `embeddings`, indexed.

The index (numpy, or sqlite-vec's `vec0` shards) is derived data: built
from the `embeddings` table at open, or later with `load_index`, and kept
in step with every write of vectors; so is a sample of the vectors
(`cosine_scale.CosineScale`), which tells fusion how unrelated texts score.
"""

from __future__ import annotations

from collections.abc import Mapping
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


class MemoryVectors(Database):
    """The database, with the active model's vectors of memories and their index."""

    # A sample of the active model's stored vectors (set with the index).
    _vector_scale: CosineScale | None = None

    def cosine_scale(self, unit: Vector) -> Scale | None:
        """Give how a unit query scores with unrelated memories (active model)."""
        return None if self._vector_scale is None else self._vector_scale.scale(unit)

    async def _model_dim(self, conn: aiosqlite.Connection, model: str) -> int | None:
        rows = await conn.execute_fetchall(
            "SELECT dim FROM embedding_models WHERE model = ?", (model,)
        )
        row = next(iter(rows), None)
        return int(row[0]) if row else None

    async def _load_index(self) -> None:
        """Build the active model's index from `embeddings` (derived data)."""
        writer, reader = self._require()
        self._index = None
        self._index_pending = False
        self._vector_scale = sample = CosineScale()
        if self._model is None:
            return
        dim = await self._model_dim(reader, self._model)
        if dim is None:
            return
        async with reader.execute(
            "SELECT count(*) FROM embeddings WHERE model = ?", (self._model,)
        ) as cursor:
            row = await cursor.fetchone()
        stored = int(row[0]) if row else 0
        index: VectorIndex
        if self._sqlite_vec:
            assert self._vector_reader is not None  # noqa: S101 - opened with reader
            vec_index = SqliteVecIndex(
                writer,
                [self._vector_reader, *self._shard_readers],
                _model_table(self._model),
                dim,
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
                        (self._model, self._model, SAMPLE_SIZE),
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
            "SELECT memory_id, vector FROM embeddings WHERE model = ?", (self._model,)
        ) as cursor:
            while rows := list(await cursor.fetchmany(_LOAD_BATCH)):
                ids = [row[0] for row in rows]
                matrix = np.frombuffer(
                    b"".join(row[1] for row in rows), dtype=np.float32
                ).reshape(len(rows), dim)
                await index.add(ids, matrix)
                sample.add(matrix)
        self._index = index

    async def _store_vectors(
        self, conn: aiosqlite.Connection, vectors: Mapping[int, Vector]
    ) -> None:
        """Write unit vectors of the active model; learn its dimension once."""
        assert self._model is not None  # noqa: S101 - checked by callers
        dims = {len(vector) for vector in vectors.values()}
        known = await self._model_dim(conn, self._model)
        expected = known if known is not None else min(dims)
        if dims != {expected}:
            raise VectorDimensionError(
                f"model {self._model} makes {expected}-dimensional vectors, "
                f"got {sorted(dims)}",
                expected=str(expected),
                got=",".join(str(dim) for dim in sorted(dims)),
            )
        if known is None:
            await conn.execute(
                "INSERT INTO embedding_models (model, dim, created_at) VALUES (?, ?, ?)",
                (self._model, expected, self._clock()),
            )
        await conn.executemany(
            "INSERT OR REPLACE INTO embeddings (memory_id, model, vector) "
            "VALUES (?, ?, ?)",
            [
                (item_id, self._model, vector.tobytes())
                for item_id, vector in vectors.items()
            ],
        )

    async def _index_add(self, vectors: Mapping[int, Vector]) -> None:
        if self._index is None:
            await self._load_index()
            return  # freshly built from the table, which holds these vectors
        ids = list(vectors)
        matrix = np.stack([vectors[i] for i in ids])
        await self._index.add(ids, matrix)
        if self._vector_scale is not None:
            self._vector_scale.add(matrix)

    async def set_vectors(self, vectors: Mapping[int, npt.ArrayLike]) -> None:
        """Store (or replace) vectors of the store's model for existing items."""
        writer, _reader = self._require()
        if self._model is None:
            raise InvalidInputError("the store has no embedding model for vectors")
        units = {item_id: as_unit_vector(vector) for item_id, vector in vectors.items()}
        if not units:
            return
        async with self._write_lock:
            await check_ids(writer, list(units))
            async with immediate_transaction(writer):
                await self._store_vectors(writer, units)
            await self._index_add(units)
        self._changed()
