"""The active model's vectors of memories: stored in `embeddings`, indexed.

The index (numpy, or sqlite-vec's `vec0` shards) is derived data: built at
open, or later with `load_index`, and kept in step with every write of
vectors; so is a sample of the vectors (`scale.CosineScale`), which tells
fusion how unrelated texts score. `MemoryVectors` holds the `Database` and
registers with it as derived data.

The numpy index is built from `embedding_codes`: each vector's binary code
(`vectors.codes`), written with the vector in its transaction and gone with
it by the table's foreign key. Opening reads those 52 bytes a row instead
of 1,536 and does not rotate anything; of the vectors it reads only the
cosine sample's rows, chosen by the same draws as when every vector was
offered. Codes whose fingerprint (`store_settings`, `vector_codes <model>`)
is not the running code's, or that do not match the vectors one for one,
are made again from the vectors in one transaction: at the first open
after migration 12, and after any change to the rotation or the layout. A
failed write of them (a full disk) leaves the index built in memory and
the codes to the next open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from functools import partial
import hashlib
import logging
import sqlite3
from typing import Final

import aiosqlite
import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError, VectorDimensionError
from ..models import Vector
from ..sql import IDS, read_one, read_pages, rows_in
from ..transactions import immediate_transaction, on_writer
from ..vectors import (
    SAMPLE_SIZE,
    CosineScale,
    NumpyIndex,
    Scale,
    SqliteVecIndex,
    VectorIndex,
    as_unit_vector,
    code_blob_size,
    code_fingerprint,
    codes_from_blobs,
    codes_to_blobs,
    encode_unit,
)
from .database import Database
from .rows import check_ids

_LOGGER = logging.getLogger(__name__)

_LOAD_BATCH: Final = 4096
# A page of the model's vectors, in id order (`read_pages`): a range scan of
# the primary key (model, memory_id).
_VECTOR_PAGE: Final = (
    "SELECT memory_id, vector FROM embeddings WHERE model = ? AND memory_id > ? "
    "ORDER BY memory_id LIMIT ?"
)
# `store_settings` name (+ the model) of the stored codes' fingerprint.
_CODES_SETTING: Final = "vector_codes "

type Codes = tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]

_WRITE_CODES: Final = (
    "INSERT OR REPLACE INTO embedding_codes (model, memory_id, code) VALUES (?, ?, ?)"
)


def _code_rows(
    model: str, ids: Sequence[int], codes: Codes
) -> list[tuple[str, int, bytes]]:
    """`embedding_codes` rows of `ids`' codes."""
    return [
        (model, int(item_id), blob)
        for item_id, blob in zip(ids, codes_to_blobs(*codes), strict=True)
    ]


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
        """Build the active model's index from the stored codes (derived data)."""
        writer, reader = self._db.connections()
        self._index = None
        self._vector_scale = None
        self._loaded = True
        model = self._db.model
        dim = None if model is None else await self._model_dim(reader, model)
        if model is None or dim is None:
            self._vector_scale = CosineScale()
            return
        row = await read_one(
            reader, "SELECT count(*) FROM embeddings WHERE model = ?", (model,)
        )
        stored = int(row[0]) if row else 0
        if self._db.uses_sqlite_vec:
            self._index, self._vector_scale = await self._load_vec0(
                writer, reader, model, dim, stored
            )
            return
        index = NumpyIndex(dim, capacity=stored)
        sample = CosineScale()
        ids = await self._read_codes(reader, model, dim, stored, index)
        if ids is None or not await self._read_sample(reader, model, dim, ids, sample):
            await index.clear()
            sample = CosineScale()
            await self._make_codes(writer, reader, model, dim, index, sample)
        self._index, self._vector_scale = index, sample

    async def _read_codes(
        self,
        reader: aiosqlite.Connection,
        model: str,
        dim: int,
        stored: int,
        index: NumpyIndex,
    ) -> npt.NDArray[np.int64] | None:
        """Fill `index` from current stored codes; their ids, or None if stale."""
        rows = await reader.execute_fetchall(
            "SELECT value FROM store_settings WHERE name = ?", (_CODES_SETTING + model,)
        )
        known = next(iter(rows), None)
        if known is None or int(known[0]) != code_fingerprint(dim):
            return None
        size = code_blob_size(dim)
        parts: list[npt.NDArray[np.int64]] = []
        async for batch in read_pages(
            reader,
            "SELECT memory_id, code FROM embedding_codes WHERE model = ? "
            "AND memory_id > ? ORDER BY memory_id LIMIT ?",
            (model,),
            size=_LOAD_BATCH,
        ):
            data = b"".join(row[1] for row in batch)
            if len(data) != size * len(batch):
                return None
            ids = np.fromiter((row[0] for row in batch), np.int64, len(batch))
            index.add_codes(ids, *codes_from_blobs(data, dim))
            parts.append(ids)
        ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        # One code a vector: the foreign key keeps no code without its
        # vector; a vector written without its code is made again.
        return ids if len(ids) == stored else None

    async def _read_sample(
        self,
        reader: aiosqlite.Connection,
        model: str,
        dim: int,
        ids: npt.NDArray[np.int64],
        sample: CosineScale,
    ) -> bool:
        """Read the vectors the sample keeps of `ids` (in the order offered)."""
        chosen = [int(ids[position]) for position in sample.choose(len(ids), dim)]
        rows = await rows_in(
            reader,
            f"SELECT memory_id, vector FROM embeddings WHERE model = ? "
            f"AND memory_id IN ({IDS})",
            chosen,
            before=(model,),
        )
        found = {int(row[0]): bytes(row[1]) for row in rows}
        if len(found) != len(chosen) or any(
            len(found[item_id]) != 4 * dim for item_id in chosen
        ):
            return False
        sample.fill(
            np.frombuffer(
                b"".join(found[item_id] for item_id in chosen), dtype=np.float32
            ).reshape(len(chosen), dim)
        )
        return True

    async def _make_codes(
        self,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        model: str,
        dim: int,
        index: NumpyIndex,
        sample: CosineScale,
    ) -> None:
        """Fill `index` and `sample` from the vectors, and store their codes anew."""
        made: list[tuple[list[int], Codes]] = []
        async for rows in read_pages(reader, _VECTOR_PAGE, (model,), size=_LOAD_BATCH):
            ids = [row[0] for row in rows]
            matrix = np.frombuffer(
                b"".join(row[1] for row in rows), dtype=np.float32
            ).reshape(len(rows), dim)
            codes = await asyncio.to_thread(encode_unit, matrix)
            index.add_codes(ids, *codes)
            sample.add(matrix)
            made.append((ids, codes))
        try:
            async with immediate_transaction(writer):
                await writer.execute(
                    "DELETE FROM embedding_codes WHERE model = ?", (model,)
                )
                for ids, codes in made:
                    await self._write_codes(writer, model, ids, codes)
                await writer.execute(
                    "INSERT OR REPLACE INTO store_settings (name, value) VALUES (?, ?)",
                    (_CODES_SETTING + model, code_fingerprint(dim)),
                )
        except sqlite3.Error as err:
            _LOGGER.warning(
                "The memory vector codes were not stored; the next start makes "
                "them again: %s",
                err,
            )

    @staticmethod
    async def _write_codes(
        conn: aiosqlite.Connection, model: str, ids: Sequence[int], codes: Codes
    ) -> None:
        await conn.executemany(_WRITE_CODES, _code_rows(model, ids, codes))

    async def _load_vec0(
        self,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        model: str,
        dim: int,
        stored: int,
    ) -> tuple[VectorIndex, CosineScale]:
        """Open the vec0 index (sqlite-vec by name), rebuilt if out of step."""
        sample = CosineScale()
        index = SqliteVecIndex(
            writer, self._db.vector_readers, _model_table(model), dim
        )
        await index.create()
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
            return index, sample
        await index.clear()
        async for rows in read_pages(reader, _VECTOR_PAGE, (model,), size=_LOAD_BATCH):
            ids = [row[0] for row in rows]
            matrix = np.frombuffer(
                b"".join(row[1] for row in rows), dtype=np.float32
            ).reshape(len(rows), dim)
            await index.add(ids, matrix)
            sample.add(matrix)
        return index, sample

    async def store(
        self, conn: aiosqlite.Connection, vectors: Mapping[int, Vector]
    ) -> Codes:
        """Write unit vectors of the active model (`write`, in one hand-off).

        In the caller's transaction, with writes held; `index_add` follows
        once it committed, given the codes returned (of `vectors`, in their
        order), so the index holds exactly the codes stored.
        """
        return await on_writer(conn, partial(self.write, vectors=vectors))

    def write(self, conn: sqlite3.Connection, vectors: Mapping[int, Vector]) -> Codes:
        """On the writer's thread: `store`'s statements; learn the dimension once.

        The memories' own write calls it in its hand-off (`MemoryTable`).
        """
        model = self._db.model
        assert model is not None  # noqa: S101 - checked by callers
        dims = {len(vector) for vector in vectors.values()}
        row = conn.execute(
            "SELECT dim FROM embedding_models WHERE model = ?", (model,)
        ).fetchone()
        known = int(row[0]) if row else None
        expected = known if known is not None else min(dims)
        if dims != {expected}:
            raise VectorDimensionError(
                f"model {model} makes {expected}-dimensional vectors, "
                f"got {sorted(dims)}",
                expected=str(expected),
                got=",".join(str(dim) for dim in sorted(dims)),
            )
        if known is None:
            conn.execute(
                "INSERT INTO embedding_models (model, dim, created_at) VALUES (?, ?, ?)",
                (model, expected, self._db.now()),
            )
        conn.executemany(
            "INSERT OR REPLACE INTO embeddings (memory_id, model, vector) "
            "VALUES (?, ?, ?)",
            [(item_id, model, vector.tobytes()) for item_id, vector in vectors.items()],
        )
        # Their codes, as the numpy index makes them (`index_add`), in the
        # same transaction: the next open reads these.
        ids = list(vectors)
        codes = encode_unit(np.stack([vectors[item_id] for item_id in ids]))
        conn.executemany(_WRITE_CODES, _code_rows(model, ids, codes))
        return codes

    def index_codes(self, ids: Sequence[int], codes: Codes) -> bool:
        """Add committed vectors' codes to a loaded numpy index; any thread.

        False when the index is not a loaded numpy one: `index_add` then
        does what is needed.
        """
        if not isinstance(self._index, NumpyIndex):
            return False
        self._index.add_codes(ids, *codes)
        return True

    async def delete(self, conn: aiosqlite.Connection, item_id: int) -> None:
        """Delete a memory's vectors of every model (its text changed).

        Their codes go with them (the foreign key). In the caller's transaction, with writes held; `remove` follows.
        """
        await conn.execute("DELETE FROM embeddings WHERE memory_id = ?", (item_id,))

    async def remove(self, ids: Sequence[int]) -> None:
        """Take memories out of the index (purged, or their text changed)."""
        if self._index is not None:
            await self._index.remove(ids)

    async def counts(self, conn: aiosqlite.Connection) -> dict[str, int]:
        """How many vectors each model has stored."""
        rows = await conn.execute_fetchall(
            "SELECT model, count(*) FROM embeddings GROUP BY model"
        )
        return {row[0]: int(row[1]) for row in rows}

    async def index_add(
        self, vectors: Mapping[int, Vector], codes: Codes, *, indexed: bool = False
    ) -> None:
        """Add vectors just committed to the index (writes held).

        `codes` are what `store` wrote for them: the numpy index takes those
        rather than turning the vectors again. `indexed`: `index_codes`
        already put them in, only the cosine sample is left.
        """
        if self._index is None:
            await self.load()
            return  # freshly built from the table, which holds these vectors
        ids = list(vectors)
        matrix = np.stack([vectors[i] for i in ids])
        if isinstance(self._index, NumpyIndex):
            if not indexed:
                await asyncio.to_thread(self._index.add_codes, ids, *codes)
        else:
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
                codes = await self.store(writer, units)
            await self.index_add(units, codes)
        self._db.changed()
