"""The semantic side both searches share (memories, conversation messages).

The vector index proposes the nearest rows; their float32 vectors, read from
their table, are scored exactly. Candidates the pool left out (keyword
hits) get their exact cosine too, so fusion weighs every candidate on both
signals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import aiosqlite
import numpy as np
import numpy.typing as npt

from ..models import Vector
from ..sql import chunks, placeholders
from ..vectors import VectorIndex, as_unit_vector

# Candidates the semantic signal contributes before fusion (tuned by
# bench/locomo.py, with `search.KEYWORD_POOL`).
SEMANTIC_POOL: Final = 50
# The vector index is asked for more than the pool, then re-scored exactly.
SEMANTIC_OVERSAMPLE: Final = 4
# ... twice the pool in a hybrid search, whose keyword hits get their exact
# cosine wherever the pool left them (100k memories, binary codes: hybrid p95
# 6.48 -> 5.90 ms; the pool's recall@50 against an exact scan 0.9925 ->
# 0.96, its misses in its last places; household rankings unchanged, LoCoMo
# within 0.001: docs/benchmarks/engine.md, "#25 ... fifth round").
HYBRID_OVERSAMPLE: Final = 2
# Below this many filtered candidates, a selective filter scans exactly.
EXACT_SCAN_MAX: Final = 20_000


def oversample(words: bool) -> int:
    """How many times the pool the vector index proposes: fewer with words.

    A hybrid query's keyword hits get their exact cosine wherever the pool
    left them, so its pool may come from fewer candidates
    (HYBRID_OVERSAMPLE) than a search by vector alone (SEMANTIC_OVERSAMPLE).
    """
    return HYBRID_OVERSAMPLE if words else SEMANTIC_OVERSAMPLE


def row_cosines(
    matrix: npt.NDArray[np.float32], unit: Vector
) -> npt.NDArray[np.float32]:
    """Each row's dot product with `unit`: the same bits wherever the row sits.

    BLAS (`matrix @ unit`, OpenBLAS's sgemv) computes a matrix's last
    `rows % 4` rows with another kernel than the others, so a row's cosine
    would depend on which rows were read with it and in what order; a
    candidate scored in two batches (a pool, a keyword hit) or by two
    backends (SQLite, PostgreSQL) must get one number. einsum's own loop
    sums each row alike, and is as fast at these sizes.
    """
    scores: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, unit)
    return scores


async def exact_scores(
    conn: aiosqlite.Connection,
    sql: str,
    args: Sequence[Any],
    unit: Vector,
    terms: dict[int, str] | None = None,
) -> list[tuple[int, float]]:
    """Cosines with a unit query of the `(id, float32 vector)` rows `sql` reads.

    With `terms`, `sql` reads each row's terms third, kept there by id.
    """
    rows = list(await conn.execute_fetchall(sql, args))
    if not rows:
        return []
    if terms is not None:
        terms.update((int(row[0]), str(row[2])) for row in rows)
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32)
    scores = row_cosines(matrix.reshape(len(rows), -1), unit)
    return [
        (int(row[0]), float(score)) for row, score in zip(rows, scores, strict=True)
    ]


async def exact_cosines(
    conn: aiosqlite.Connection,
    unit: Vector,
    ids: Sequence[int],
    *,
    table: str,
    key: str,
    model: str,
) -> dict[int, float]:
    """Cosines of the stored vectors of `ids` (column `key` of `table`)."""
    scores: dict[int, float] = {}
    for chunk in chunks(ids):
        scores.update(
            await exact_scores(
                conn,
                f"SELECT {key}, vector FROM {table} WHERE model = ? "
                f"AND {key} IN ({placeholders(len(chunk))})",
                [model, *chunk],
                unit,
            )
        )
    return scores


async def cosines_outside_pool(
    conn: aiosqlite.Connection,
    vector: Vector,
    semantic: Sequence[tuple[int, float]],
    ids: Sequence[int],
    *,
    table: str,
    key: str,
    model: str,
) -> dict[int, float]:
    """Exact cosines of those `ids` the semantic pool left out (none without one).

    A keyword hit outside the pool still gets its semantic score, so fusion
    weighs it like the pooled ones.
    """
    pooled = {item_id for item_id, _score in semantic}
    missing = sorted({item_id for item_id in ids if item_id not in pooled})
    if not semantic or not missing:
        return {}
    return await exact_cosines(
        conn, as_unit_vector(vector), missing, table=table, key=key, model=model
    )


async def semantic_pool(
    conn: aiosqlite.Connection,
    index: VectorIndex,
    unit: Vector,
    *,
    rows: tuple[str, Sequence[Any]],
    key: str,
    pool: int,
    terms: dict[int, str] | None = None,
    oversample: int = SEMANTIC_OVERSAMPLE,
) -> list[tuple[int, float]]:
    """Find the `pool` nearest rows `(id, cosine)` that `rows` admits, best first.

    `rows` is `(base, args)`: `base` selects `(id, vector)` with the
    filters (`args` bound), and with `terms` each row's terms too, kept
    there by id; the vector `index` proposes `oversample` times `pool`
    candidates, whose float32 vectors are scored exactly. When a selective
    filter (one person's rows) leaves too few of them, its whole subset is
    scanned exactly, up to `EXACT_SCAN_MAX` rows.
    """
    base, args = rows
    wanted = pool * oversample
    candidates = await index.knn(unit, wanted)
    # knn returns min(k, size) ids, so fewer than asked for means the index
    # holds no more (known without `count()`, a full scan in vec0).
    every = len(candidates) < wanted
    if every:
        sql, sql_args = base, list(args)
    else:
        ids = [item_id for item_id, _score in candidates]
        sql = f"{base} AND {key} IN ({placeholders(len(ids))})"
        sql_args = [*args, *ids]
    scored = await exact_scores(conn, sql, sql_args, unit, terms)
    if len(scored) < pool and not every:
        counted = await conn.execute_fetchall(f"SELECT count(*) FROM ({base})", args)
        count = int(next(iter(counted))[0])
        if len(scored) < count <= EXACT_SCAN_MAX:
            scored = await exact_scores(conn, base, args, unit, terms)
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored[:pool]
