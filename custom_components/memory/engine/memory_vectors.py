"""The active model's vectors of memories: stored in `embeddings`, indexed.

The index (numpy, or sqlite-vec's `vec0` shards) is derived data: built
from the `embeddings` table at open, or later with `load_index`, and kept
in step with every write of vectors.
"""

from __future__ import annotations

from collections.abc import Mapping
import hashlib
from typing import Final

import aiosqlite
import numpy as np
import numpy.typing as npt

from .database import Database
from .errors import InvalidInputError, VectorDimensionError
from .memory_rows import check_ids
from .models import Vector
from .transactions import immediate_transaction
from .vectors import NumpyIndex, SqliteVecIndex, VectorIndex, as_unit_vector

_LOAD_BATCH: Final = 4096


def _model_table(model: str) -> str:
    return "vec_" + hashlib.sha256(model.encode()).hexdigest()[:16]


class MemoryVectors(Database):
    """The database, with the active model's vectors of memories and their index."""

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
        await self._index.add(ids, np.stack([vectors[i] for i in ids]))

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
