"""The vectors of `PostgresStore`: its model's index, made when a dimension is known.

`memory_vectors` takes its dimension from the first vector any instance
stores (`vectors.create_vector_table`), so the index of the store's model
(`PgVectorIndex`) and the search over it (`PostgresSearch`) are made at
open when the table exists, else at the first `set_vectors`, else when a
search with a query vector finds that another instance made the table
meanwhile. Until then searches are keyword only, as on SQLite with no
vectors. Opening never builds an HNSW index in line: the first `load`
starts the background builds the model's memory and message vectors call
for (`hnsw_builds`), and `close` (the store's) cancels and awaits them. Also here: the stored unit vectors of some memories, the counts by
model for `stats` (those `vector_changes`' triggers keep), a query's cosine scale (`VectorSample`), and the
removal of a reworded memory's vectors of every model, as SQLite's
`update_content` does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError, UnknownMemoryError
from ..models import Vector
from ..search import MATCH_BUDGET
from ..sql import storable_ids
from ..vectors import Readings, Scale, as_unit_vector
from .hnsw_builds import stop_builds
from .message_vectors import PgMessageVectors
from .search import PostgresSearch
from .search_vectors import VectorSample
from .vector_changes import CHANGES
from .vectors import HNSW_THRESHOLD, TABLE, PgVectorIndex, table_dim

_EXISTS: Final = "SELECT to_regclass($1) IS NOT NULL"
# Each model's vectors, from the deltas `vector_changes`' triggers append.
COUNTS: Final = (
    f"SELECT model, sum(rows) FROM {CHANGES} GROUP BY model "  # noqa: S608
    "HAVING sum(rows) > 0 ORDER BY model"
)


class StoreVectors:
    """The store's model's vectors, its index and the search that uses them."""

    # Rows of a model at which its HNSW indexes are built (tests lower it).
    hnsw_threshold: int = HNSW_THRESHOLD

    def __init__(
        self,
        pool: Any,
        model: str | None,
        instance: str | None,
        language: str,
        clock: Callable[[], float],
        readings: Readings | None = None,
    ) -> None:
        """Hold the pool (vector codec registered) and the model; keywords only yet.

        `instance` (the store's) names the writer in the `VECTORS_SET`
        notice each store of vectors sends, so other instances hear it.
        """
        self._pool = pool
        self._instance = instance
        self._model = model
        self._language = language
        self._readings = readings or Readings(language)
        self._clock = clock
        self._index: PgVectorIndex | None = None
        self._sample: VectorSample | None = None
        self._messages_checked = False
        self.search = self._make_search(MATCH_BUDGET)

    def _make_search(self, budget: int) -> PostgresSearch:
        search = PostgresSearch(
            self._pool,
            vectors=self._index,
            language=self._language,
            clock=self._clock,
            readings=self._readings,
        )
        search.match_budget = budget
        return search

    @property
    def index(self) -> PgVectorIndex | None:
        """The model's index (None: no model, or no vectors in the database yet)."""
        return self._index

    async def load(self) -> bool:
        """Make the index if the model has a table to live in; say whether it has."""
        if self._index is not None:
            return True
        if self._model is None:
            return False
        if not self._messages_checked:
            # The messages' index, as `set_vectors` of the queue would: a
            # store moved here with many message vectors gets it now.
            self._messages_checked = True
            await PgMessageVectors(
                self._pool, self._model, threshold=self.hnsw_threshold
            ).maybe_build()
        async with self._pool.acquire() as connection:
            dim = await table_dim(connection)
        if dim is None:
            return False
        await self._use(self._new_index(dim))
        return True

    def _new_index(self, dim: int) -> PgVectorIndex:
        assert self._model is not None  # noqa: S101 - checked by callers
        index = PgVectorIndex(
            self._pool, self._model, dim, threshold=self.hnsw_threshold
        )
        index.notice_as = self._instance
        return index

    async def close(self) -> None:
        """Cancel and await every background HNSW build on the store's pool."""
        await stop_builds(self._pool)

    async def _use(self, index: PgVectorIndex) -> None:
        """Create the table (the HNSW build starts as needed); search with the index."""
        await index.create()
        self._index = index
        self._sample = VectorSample(index.model)
        self.search = self._make_search(self.search.match_budget)

    async def set_vectors(self, vectors: Mapping[int, npt.ArrayLike]) -> bool:
        """Store (or replace) the model's vectors of existing memories, as SQLite.

        No model is an `InvalidInputError`, an unknown id an
        `UnknownMemoryError` naming them all, before anything is written.
        Returns whether any vector was stored.
        """
        if self._model is None:
            raise InvalidInputError("the store has no embedding model for vectors")
        # Checked here; `PostgresSearch.set_vectors` scales them, once: a
        # unit vector scaled again may change in its last bits.
        units = {item_id: as_unit_vector(vector) for item_id, vector in vectors.items()}
        if not units:
            return False
        await self._check_ids(list(units))
        if not await self.load():
            first = next(iter(units.values()))
            await self._use(self._new_index(len(first)))
        await self.search.set_vectors(vectors)
        return True

    async def _check_ids(self, ids: Sequence[int]) -> None:
        """Raise `UnknownMemoryError` naming every id with no memory."""
        unique = sorted(set(ids))
        async with self._pool.acquire() as connection:
            found = {
                int(record[0])
                for record in await connection.fetch(
                    "SELECT id FROM memories WHERE id = ANY($1::int8[])",
                    storable_ids(unique),
                )
            }
        if missing := [item_id for item_id in unique if item_id not in found]:
            named = ", ".join(map(str, missing))
            raise UnknownMemoryError(f"no memory with id {named}", ids=named)

    async def stored(self, ids: Sequence[int]) -> dict[int, Vector]:
        """Read the model's unit vectors of `ids` (those that have one)."""
        unique = storable_ids(sorted(set(ids)))
        if not unique or not await self.load():
            return {}
        assert self._index is not None  # noqa: S101 - load made it
        async with self._pool.acquire() as connection:
            records = await connection.fetch(
                f"SELECT memory_id, embedding FROM {TABLE} "  # noqa: S608
                "WHERE model = $1 AND memory_id = ANY($2::int8[])",
                self._index.model,
                unique,
            )
        return {
            int(record[0]): np.asarray(record[1], dtype=np.float32)
            for record in records
        }

    async def counts(self) -> dict[str, int]:
        """How many vectors each model has stored (models with none left out).

        The counts the triggers keep (`vector_changes`), summed by model: a
        read of a few rows a model, not a scan of every vector.
        """
        async with self._pool.acquire() as connection:
            if not await connection.fetchval(_EXISTS, CHANGES):
                return {}
            records = await connection.fetch(COUNTS)
        return {str(record[0]): int(record[1]) for record in records}

    async def cosine_scale(self, unit: Vector) -> Scale | None:
        """Give how a unit query scores with unrelated memories (the model's)."""
        if not await self.load():
            return None
        assert self._sample is not None  # noqa: S101 - load made it
        async with self._pool.acquire() as connection:
            return await self._sample.scale(connection, unit)

    async def remove_all_models(self, item_id: int) -> None:
        """Delete a memory's vectors of every model (its text changed)."""
        async with self._pool.acquire() as connection:
            if await connection.fetchval(_EXISTS, TABLE):
                await connection.execute(
                    f"DELETE FROM {TABLE} WHERE memory_id = $1",  # noqa: S608
                    item_id,
                )
