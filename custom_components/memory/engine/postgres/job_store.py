"""The embedding queue's jobs on PostgreSQL: `jobs.py` behind the engine's `JobStore`.

`PostgresStore.embedding_jobs(instance)` hands `EmbeddingQueue` a
`PostgresJobs`, as a SQLite store's queue uses `embedding.SqliteJobs`:
the same calls, answered by `jobs.py`'s functions of the same names, with
the queue's instance name passed to those that claim (`due_jobs`), wait
for another's claim (`next_due`) or finish only what the instance still
holds (`mark_ready`, `record_failure`). So queues of several Home
Assistants draining one database embed each job once.

Three calls are this module's own: a model's dimension (`memory_vectors`
has one for every model, known once the model stored a vector; else that of
the model's message vectors), the vectors already made for the same texts,
found through either kind's jobs and vectors (`memory_vectors`,
`message_vectors`), and `store_message_vectors`, which writes
`message_vectors` (`message_vectors.store_vectors`) as SQLite's writes
`message_embeddings`: a dimension other than the model's is refused
(`DimensionChangedError`, nothing written), then the model's HNSW index is
built once its rows reach the threshold. Its `kinds` are SQLite's: memories,
then messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from ..embedding import (
    KINDS,
    DimensionChangedError,
    EnqueueSteps,
    Job,
    JobTables,
    ProviderError,
    Queued,
    QueueStatus,
    enqueue_kinds,
    vector_length,
)
from ..models import Vector
from .jobs import (
    due_jobs,
    enqueue,
    finish_rebuilds,
    has_jobs,
    is_rebuilding,
    mark_ready,
    newest_ids,
    next_due,
    queue_status,
    record_failure,
    start_rebuild,
)
from .message_vectors import (
    TABLE as MESSAGE_TABLE,
    PgMessageVectors,
    model_dim,
    store_vectors,
)
from .notify import ChangeKind, notify
from .vectors import TABLE, table_dim

_STEPS: Final = EnqueueSteps(has_jobs, enqueue, start_rebuild, is_rebuilding)

_CACHED: Final = (
    f"SELECT j.text_hash, e.embedding FROM embedding_jobs j JOIN {TABLE} e "  # noqa: S608
    "ON e.model = j.model AND e.memory_id = j.memory_id "
    "WHERE j.model = $1 AND j.text_hash = ANY($2::bytea[])"
)
_CACHED_MESSAGES: Final = (
    "SELECT j.text_hash, e.embedding FROM message_embedding_jobs j "  # noqa: S608
    f"JOIN {MESSAGE_TABLE} e ON e.model = j.model AND e.message_id = j.message_id "
    "WHERE j.model = $1 AND j.text_hash = ANY($2::bytea[])"
)


class PostgresJobs:
    """The job tables of one database, claimed in one instance's name."""

    kinds: Final = KINDS

    def __init__(self, pool: Any, instance: str, writer: str | None = None) -> None:
        """Hold the store's pool (vector codec registered) and the claimant.

        `writer` (the store's `sender`; default the claimant) names the
        writer in the `EMBEDDINGS_READY` notice `mark_ready` sends.
        """
        self._pool = pool
        self.instance = instance
        self._writer = instance if writer is None else writer

    async def model_dimensions(self, model: str) -> int | None:
        """Return the vector length of `model`, if it stored any vector."""
        async with self._pool.acquire() as connection:
            return await _dimensions(connection, model)

    async def newest_ids(self) -> dict[JobTables, int]:
        """Return the highest id of each kind's table (0 when empty)."""
        return await newest_ids(self._pool)

    async def enqueue(
        self,
        kinds: Iterable[JobTables],
        model: str,
        *,
        after: Mapping[JobTables, int],
        clock: Callable[[], float],
        rebuild: bool = False,
    ) -> dict[JobTables, Queued]:
        """Queue texts above `after` with no job, in one transaction."""
        async with self._pool.acquire() as conn, conn.transaction():
            return await enqueue_kinds(
                conn, _STEPS, kinds, model, after=after, clock=clock, rebuild=rebuild
            )

    async def due_jobs(
        self, kind: JobTables, model: str, *, batch_size: int, now: float
    ) -> list[Job]:
        """Claim fresh jobs in a batch; a job that failed before goes alone."""
        async with self._pool.acquire() as conn, conn.transaction():
            return await due_jobs(
                conn,
                kind,
                model,
                batch_size=batch_size,
                now=now,
                instance=self.instance,
            )

    async def next_due(self, model: str) -> float | None:
        """When the earliest pending job is due (another's claim: when it lapses)."""
        return await next_due(self._pool, model, instance=self.instance)

    async def cached_vectors(
        self, model: str, hashes: Sequence[bytes]
    ) -> dict[bytes, Vector]:
        """Vectors this model already made for the same texts, of either kind."""
        async with self._pool.acquire() as connection:
            records = list(
                await connection.fetch(_CACHED_MESSAGES, model, list(hashes))
            )
            if await table_dim(connection) is not None:
                records += await connection.fetch(_CACHED, model, list(hashes))
        return {
            bytes(record[0]): np.asarray(record[1], dtype=np.float32)
            for record in records
        }

    async def mark_ready(
        self, kind: JobTables, model: str, hashes: Mapping[int, bytes], now: float
    ) -> None:
        """Mark the jobs this instance still holds ready, and release them.

        A memory reworded meanwhile lost its claim: it stays pending. Those
        marked are told to other instances (`EMBEDDINGS_READY`, their ids),
        in the same transaction.
        """
        async with self._pool.acquire() as conn, conn.transaction():
            marked = await mark_ready(
                conn, kind, model, hashes, now, instance=self.instance
            )
            if marked:
                await notify(
                    conn,
                    ChangeKind.EMBEDDINGS_READY,
                    instance=self._writer,
                    scopes=(),
                    ids=marked,
                )

    async def record_failure(
        self,
        kind: JobTables,
        model: str,
        jobs: Sequence[Job],
        error: ProviderError,
        now: float,
    ) -> None:
        """Back off the jobs this instance still holds, and release them."""
        await record_failure(
            self._pool, kind, model, jobs, error, now, instance=self.instance
        )

    async def store_message_vectors(
        self, model: str, vectors: Mapping[int, Vector], now: float
    ) -> list[int] | DimensionChangedError:
        """Write the vectors of messages that still exist; returns their ids.

        Or, when their length is not the model's, the error (nothing written).
        """
        del now  # SQLite's records the model's first use; the rows say it here
        async with self._pool.acquire() as conn, conn.transaction():
            recorded = await _dimensions(conn, model)
            changed = vector_length(model, vectors, recorded)
            if isinstance(changed, DimensionChangedError):
                return changed
            alive = await store_vectors(conn, model, vectors)
        if alive:
            await PgMessageVectors(self._pool, model).maybe_build()
        return alive

    async def finish_rebuilds(
        self, kinds: Iterable[JobTables], model: str
    ) -> dict[JobTables, bool]:
        """End the rebuilds with no pending job left; return which still run."""
        async with self._pool.acquire() as conn, conn.transaction():
            return await finish_rebuilds(conn, kinds, model)

    async def queue_status(
        self, model: str, *, rebuilding: bool, messages_rebuilding: bool
    ) -> QueueStatus:
        """Count this model's jobs by state, memories and messages apart."""
        return await queue_status(
            self._pool,
            model,
            rebuilding=rebuilding,
            messages_rebuilding=messages_rebuilding,
        )


async def _dimensions(connection: Any, model: str) -> int | None:
    """Return the vector length of `model`: its memories' (the table's), else its messages'."""
    dim = await table_dim(connection)
    if dim is not None and await connection.fetchval(
        f"SELECT EXISTS (SELECT 1 FROM {TABLE} WHERE model = $1)",  # noqa: S608
        model,
    ):
        return dim
    return await model_dim(connection, model)
