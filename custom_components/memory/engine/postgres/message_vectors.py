"""Message vectors in PostgreSQL with pgvector: `message_vectors`, exact below a size, HNSW above.

SQLite keeps the unit vectors the embedding queue makes of user and
assistant messages in `message_embeddings (id, message_id, model, vector)`;
here they are `message_vectors (model, message_id, seq, embedding)`, made
by schema step 6 -> 7 (`MESSAGE_VECTORS_STEP`, idempotent, under the
schema's advisory lock). `message_id` references `conversation_messages`
on delete cascade, so an erased message's vector goes with it in the same
transaction (SQLite's log deletes it by hand).

Unlike `memory_vectors` (`vectors.py`), whose dimension is fixed by the
first vector stored, `embedding` is a `vector` of any dimension: the table
exists from the schema step on, and each model's rows share the model's
dimension (`PostgresJobs.store_message_vectors` refuses another, as
SQLite's `embedding_models` does). An HNSW index needs a fixed dimension,
so a model's index is on the expression `embedding::vector(DIM)`, partial
on the model (`index_name`), and every search orders by that expression:
exact below `HNSW_THRESHOLD` rows of the model, HNSW above, with
`vectors.py`'s graph and search settings (measured there for memories).

The index is built in the background (`hnsw_builds`: concurrently, one
process at a time, never in line), then the table analysed (so the
planner, which may not have seen the rows yet, takes it), once a write
(`maybe_build`, after the queue stores vectors) or the store's open finds
the model at the threshold without a valid index; searches scan exactly
until then. `seq` numbers the writes as `message_embeddings.id` does (a replaced
vector takes a new one): the log's cosine scale (`MessageScale`) offers
the vectors in that order, as SQLite's message index does, so both give
the same level and spread. A write numbered before one already read but
committed after it is left out of that process's sample (SQLite has one
writer and no such gap); a sample, not a result, is what it changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import hashlib
from typing import Any, Final

import numpy as np

from ..models import Vector
from ..search import SEMANTIC_OVERSAMPLE
from ..sql import chunks
from ..vectors import CosineScale, Scale
from .hnsw_builds import build_locked, building, index_state, start_build
from .search_vectors import rescore_pool, scores_of
from .vectors import (
    EF_SEARCH_MAX,
    HNSW_EF_CONSTRUCTION,
    HNSW_EF_SEARCH,
    HNSW_M,
    HNSW_THRESHOLD,
)

TABLE: Final = "message_vectors"
_LOAD_BATCH: Final = 4096

MESSAGE_VECTORS_STEP: Final = (
    "CREATE SEQUENCE IF NOT EXISTS message_vectors_seq",
    f"""
    CREATE TABLE IF NOT EXISTS {TABLE} (
        model text NOT NULL,
        message_id bigint NOT NULL
            REFERENCES conversation_messages(id) ON DELETE CASCADE,
        seq bigint NOT NULL DEFAULT nextval('message_vectors_seq'),
        embedding vector NOT NULL,
        PRIMARY KEY (model, message_id)
    )
    """,
    f"ALTER SEQUENCE message_vectors_seq OWNED BY {TABLE}.seq",
    f"CREATE INDEX IF NOT EXISTS message_vectors_message ON {TABLE} (message_id)",
    f"CREATE INDEX IF NOT EXISTS message_vectors_order ON {TABLE} (model, seq)",
)

# Upsert of one vector: a replaced one takes a new `seq`, as SQLite's
# INSERT OR REPLACE gives its row a new id.
UPSERT: Final = (
    f"INSERT INTO {TABLE} (model, message_id, embedding) "  # noqa: S608
    "VALUES ($1, $2, $3) ON CONFLICT (model, message_id) DO UPDATE "
    "SET embedding = EXCLUDED.embedding, seq = EXCLUDED.seq"
)


def _literal(text: str) -> str:
    """`text` as an SQL string literal (standard_conforming_strings is on)."""
    return "'" + text.replace("'", "''") + "'"


def index_name(model: str) -> str:
    """Name the HNSW index of `model`'s message vectors by its hash."""
    digest = hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]
    return f"{TABLE}_hnsw_{digest}"


def unit_rows(vectors: Mapping[int, Vector], ids: Sequence[int]) -> list[Any]:
    """Return the unit float32 vectors of `ids`, scaled as SQLite's `store_message_vectors`."""
    return [
        (vectors[item_id] / np.linalg.norm(vectors[item_id])).astype(np.float32)
        for item_id in ids
    ]


async def model_dim(conn: Any, model: str) -> int | None:
    """Return the dimension of `model`'s message vectors (None: it has none)."""
    value = await conn.fetchval(
        f"SELECT vector_dims(embedding) FROM {TABLE} WHERE model = $1 LIMIT 1",  # noqa: S608
        model,
    )
    return None if value is None else int(value)


async def store_vectors(
    conn: Any, model: str, vectors: Mapping[int, Vector]
) -> list[int]:
    """Write unit vectors of messages that still exist (in `conn`'s transaction).

    Returns their ids; the messages erased meanwhile are left out, as SQLite.
    """
    ids = sorted(vectors)
    alive = [
        int(record[0])
        for record in await conn.fetch(
            "SELECT id FROM conversation_messages WHERE id = ANY($1::int8[]) "
            "ORDER BY id FOR KEY SHARE",
            ids,
        )
    ]
    if alive:
        units = unit_rows(vectors, alive)
        await conn.executemany(
            UPSERT, [(model, item_id, units[n]) for n, item_id in enumerate(alive)]
        )
    return alive


class PgMessageVectors:
    """One model's message vectors: nearest neighbours, exact cosines, the scale."""

    def __init__(
        self,
        pool: Any,
        model: str,
        *,
        threshold: int = HNSW_THRESHOLD,
        ef_search: int = HNSW_EF_SEARCH,
    ) -> None:
        """Bind to a pool (vector codec registered) and a model; nothing read yet."""
        self._pool = pool
        self.model = model
        self._threshold = threshold
        self._ef_search = ef_search
        self._index = index_name(model)
        self._where = f"model = {_literal(model)}"
        self._scale = CosineScale()
        self._scaled = 0  # the last `seq` offered to the scale

    async def dim(self) -> int | None:
        """Return the model's dimension (None: no message vector of it yet)."""
        async with self._pool.acquire() as conn:
            return await model_dim(conn, self.model)

    async def has_hnsw(self) -> bool:
        """Say whether the model's HNSW index exists and is valid (searches use it)."""
        async with self._pool.acquire() as conn:
            return bool(await index_state(conn, self._index))

    async def maybe_build(self) -> bool:
        """Start the background build at the threshold unless the index is valid.

        Returns whether a build task started. Cheap: the index's catalog row
        and a count that stops at the threshold (`_reaches`).
        """
        if building(self._pool, self._index):
            return False
        async with self._pool.acquire() as conn:
            state = await index_state(conn, self._index)
            if state or (state is None and not await self._reaches(conn)):
                return False
        return start_build(self._pool, self._index, self._build)

    async def _reaches(self, conn: Any) -> bool:
        """Say whether the model has `threshold` rows, reading at most that many."""
        count = await conn.fetchval(
            f"SELECT count(*) FROM (SELECT 1 FROM {TABLE} WHERE {self._where}"  # noqa: S608
            " LIMIT $1) AS enough",
            self._threshold,
        )
        return int(count) >= self._threshold

    async def _build(self) -> bool:
        """Build in the background: under the lock, if the rows call for it."""
        return await build_locked(self._pool, self._index, self._plan, analyze=TABLE)

    async def _plan(self, conn: Any) -> str | None:
        """Return the build's statement, or None below the threshold or without vectors."""
        dim = await model_dim(conn, self.model)
        if dim is None or not await self._reaches(conn):
            return None
        return (
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {self._index} ON {TABLE}"
            f" USING hnsw ((embedding::vector({int(dim)})) vector_cosine_ops)"
            f" WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
            f" WHERE {self._where}"
        )

    def _search_sql(self, dim: int, *, explain: bool = False) -> str:
        cast = f"embedding::vector({int(dim)})"
        sql = (
            f"SELECT message_id, 1 - ({cast} <=> $1) FROM {TABLE} "  # noqa: S608
            f"WHERE {self._where} ORDER BY {cast} <=> $1 LIMIT $2"
        )
        return f"EXPLAIN {sql}" if explain else sql

    async def knn(
        self, unit: Vector, k: int, *, explain: bool = False
    ) -> list[tuple[int, float]] | str:
        """Top-k `(message id, cosine)`, best first: HNSW when built, else exact.

        With `explain`, PostgreSQL's plan of that search instead.
        """
        ef = min(max(self._ef_search, k), EF_SEARCH_MAX)
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(f"SET LOCAL hnsw.ef_search = {ef}")
            if k > ef:
                await conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            rows = await conn.fetch(
                self._search_sql(len(unit), explain=explain), unit, k
            )
        if explain:
            return "\n".join(str(row[0]) for row in rows)
        return [(int(row[0]), float(row[1])) for row in rows]

    async def semantic_pool(
        self,
        unit: Vector,
        where: tuple[str, list[Any]],
        size: int,
        oversample: int = SEMANTIC_OVERSAMPLE,
    ) -> list[tuple[int, float]]:
        """Find the `size` nearest messages `(id, cosine)` passing `where`, best first.

        SQLite's `semantic.semantic_pool`: `oversample` times the
        pool proposed by the index, their float32 vectors that pass the
        filters (`where`: SQL on messages as `m`, parameters from $2)
        scored exactly; a selective filter's subset scanned whole, up to
        EXACT_SCAN_MAX rows.
        """
        wanted = size * oversample
        found = await self.knn(unit, wanted)
        assert isinstance(found, list)  # noqa: S101 - not an explain
        return await rescore_pool(
            self._pool,
            unit,
            found,
            sql=(
                f"SELECT e.message_id, e.embedding FROM {TABLE} e "  # noqa: S608
                "JOIN conversation_messages m ON m.id = e.message_id "
                f"WHERE e.model = $1 AND {where[0]}"
            ),
            params=[self.model, *where[1]],
            id_column="e.message_id",
            size=size,
            every=len(found) < wanted,
        )

    async def exact_cosines(self, unit: Vector, ids: Sequence[int]) -> dict[int, float]:
        """Cosines of the stored vectors of `ids` (those that have one)."""
        scores: dict[int, float] = {}
        async with self._pool.acquire() as conn:
            for chunk in chunks(sorted(ids)):
                records = await conn.fetch(
                    f"SELECT message_id, embedding FROM {TABLE} "  # noqa: S608
                    "WHERE model = $1 AND message_id = ANY($2::int8[]) "
                    "ORDER BY message_id",
                    self.model,
                    list(chunk),
                )
                scores.update(scores_of(records, unit))
        return scores

    async def scale(self, unit: Vector) -> Scale | None:
        """How unrelated messages score with `unit`: the sample, caught up by `seq`."""
        async with self._pool.acquire() as conn:
            while records := await conn.fetch(
                f"SELECT seq, embedding FROM {TABLE} WHERE model = $1 "  # noqa: S608
                "AND seq > $2 ORDER BY seq LIMIT $3",
                self.model,
                self._scaled,
                _LOAD_BATCH,
            ):
                self._scale.add(
                    np.stack([np.asarray(r[1], dtype=np.float32) for r in records])
                )
                self._scaled = int(records[-1][0])
        return self._scale.scale(unit)
