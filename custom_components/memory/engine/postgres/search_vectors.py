"""The semantic side of the memories' hybrid search on PostgreSQL.

As `search.semantic` on SQLite: the index (`PgVectorIndex`, pgvector's
cosine, exact below its HNSW threshold) proposes SEMANTIC_OVERSAMPLE times
the pool; their stored float32 vectors that pass the filters are scored
exactly with numpy; when a selective filter (one person's memories) keeps
fewer than the pool, its whole subset is scanned exactly, up to
EXACT_SCAN_MAX rows. The exact cosines are computed as SQLite's are: the
rows' float32 bytes joined into one matrix, times the unit query, so the
same vectors give the same numbers.

`VectorSample` is the model's cosine scale (`vectors.CosineScale`): the
stored vectors offered in `memory_id` order, the reservoir's seeded draws
choosing which to keep (`CosineScale.choose`), as the SQLite store builds
its sample at open; the same vectors in the same order give the same
level and spread. Another instance's writes are seen by a stamp read before
each use: the model's vector and change counts that triggers keep
(`vector_changes`), a lookup of a few rows however many vectors there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..models import Vector
from ..search import EXACT_SCAN_MAX, SEMANTIC_OVERSAMPLE, row_cosines
from ..sql import chunks
from ..vectors import CosineScale, Scale
from .vector_changes import read_stamp
from .vectors import TABLE, PgVectorIndex


def scores_of(records: Sequence[Any], unit: Vector) -> list[tuple[int, float]]:
    """Cosines with `unit` of records `(id, vector)`, as `semantic.exact_scores`."""
    if not records:
        return []
    matrix = np.frombuffer(
        b"".join(np.asarray(r[1], dtype=np.float32).tobytes() for r in records),
        dtype=np.float32,
    )
    scores = row_cosines(matrix.reshape(len(records), -1), unit)
    return [(int(r[0]), float(score)) for r, score in zip(records, scores, strict=True)]


async def exact_cosines(
    conn: Any, unit: Vector, ids: Sequence[int], model: str
) -> dict[int, float]:
    """Cosines of the stored vectors of `ids`, chunk by chunk as SQLite reads them."""
    scores: dict[int, float] = {}
    for chunk in chunks(ids):
        records = await conn.fetch(
            f"SELECT memory_id, embedding FROM {TABLE} "  # noqa: S608
            "WHERE model = $1 AND memory_id = ANY($2::int8[]) ORDER BY memory_id",
            model,
            list(chunk),
        )
        scores.update(scores_of(records, unit))
    return scores


def vectors_base(where: str) -> str:
    """SELECT `(id, vector)` of the model's ($1) vectors of memories passing `where`."""
    return (
        f"SELECT e.memory_id, e.embedding FROM {TABLE} e "  # noqa: S608
        f"JOIN memories m ON m.id = e.memory_id WHERE e.model = $1 AND {where}"
    )


async def semantic_pool(
    pool: Any,
    index: PgVectorIndex,
    unit: Vector,
    *,
    where: tuple[str, list[Any]],
    size: int,
    oversample: int = SEMANTIC_OVERSAMPLE,
) -> list[tuple[int, float]]:
    """Find the `size` nearest memories `(id, cosine)` passing `where`, best first.

    `where` is the filters' SQL (memories as `m`, parameters from $2) and
    their parameters, as `search.semantic.semantic_pool`'s `base`; the
    index proposes `oversample` times `size` candidates.
    """
    wanted = size * oversample
    candidates = await index.knn(unit, wanted)
    return await rescore_pool(
        pool,
        unit,
        candidates,
        sql=vectors_base(where[0]),
        params=[index.model, *where[1]],
        id_column="e.memory_id",
        size=size,
        every=len(candidates) < wanted,
    )


async def rescore_pool(
    pool: Any,
    unit: Vector,
    candidates: Sequence[tuple[int, float]],
    *,
    sql: str,
    params: list[Any],
    id_column: str,
    size: int,
    every: bool,
) -> list[tuple[int, float]]:
    """Score the index's candidates that pass the filters exactly; best `size` first.

    SQLite's `semantic.semantic_pool` after its index: `sql` selects
    `(id, vector)` of the rows passing the filters (`params` from $1);
    `every` means the index proposed every row it has, so all that pass
    are scored. When fewer than `size` candidates pass, a selective
    filter's subset is scanned whole, up to EXACT_SCAN_MAX rows. Memories'
    and messages' pools (`message_vectors`) both end here.
    """
    async with pool.acquire() as conn:
        if every:
            scored = scores_of(await conn.fetch(sql, *params), unit)
        else:
            ids = [item_id for item_id, _score in candidates]
            scored = scores_of(
                await conn.fetch(
                    f"{sql} AND {id_column} = ANY(${len(params) + 1}::int8[])",
                    *params,
                    ids,
                ),
                unit,
            )
        if len(scored) < size and not every:
            count = int(
                await conn.fetchval(f"SELECT count(*) FROM ({sql}) AS b", *params)  # noqa: S608
            )
            if len(scored) < count <= EXACT_SCAN_MAX:
                scored = scores_of(await conn.fetch(sql, *params), unit)
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored[:size]


class VectorSample:
    """One model's cosine scale from a sample of its stored vectors."""

    def __init__(self, model: str) -> None:
        """Sample `model`'s vectors; nothing is read until `scale`."""
        self._model = model
        self._sample = CosineScale()
        self._stamp: tuple[int, int] | None = None

    def forget(self) -> None:
        """Read the sample again at the next `scale` (the vectors changed)."""
        self._stamp = None

    async def scale(self, conn: Any, unit: Vector) -> Scale | None:
        """Give the query's level and spread among the model's stored vectors."""
        stamp = await read_stamp(conn, self._model)
        if stamp != self._stamp:
            loaded = await self._load(conn)
            self._stamp = stamp if loaded else None
        return self._sample.scale(unit)

    async def _load(self, conn: Any) -> bool:
        """Draw the sample as the SQLite store does at open (ids in order).

        False when vectors went meanwhile (the sample is then left empty and
        read again at the next use).
        """
        self._sample = sample = CosineScale()
        ids = [
            int(record[0])
            for record in await conn.fetch(
                f"SELECT memory_id FROM {TABLE} WHERE model = $1 "  # noqa: S608
                "ORDER BY memory_id",
                self._model,
            )
        ]
        if not ids:
            return True
        first = await conn.fetchval(
            f"SELECT embedding FROM {TABLE} WHERE model = $1 "  # noqa: S608
            "AND memory_id = $2",
            self._model,
            ids[0],
        )
        if first is None:
            return False
        dim = len(first)
        chosen = [ids[position] for position in sample.choose(len(ids), dim)]
        records = await conn.fetch(
            f"SELECT memory_id, embedding FROM {TABLE} "  # noqa: S608
            "WHERE model = $1 AND memory_id = ANY($2::int8[])",
            self._model,
            chosen,
        )
        found = {int(r[0]): np.asarray(r[1], dtype=np.float32) for r in records}
        if len(found) != len(chosen):
            self._sample = CosineScale()
            return False
        sample.fill(np.stack([found[item_id] for item_id in chosen]))
        return True
