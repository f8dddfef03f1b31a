"""Where the embedding queue keeps its jobs: a protocol, and SQLite's side of it.

`EmbeddingQueue` reads and writes its jobs only through a `JobStore`, so it
runs on either backend. `SqliteJobs` is `jobs.py` on a `MemoryStore`'s
database (its reader, and its writer under the store's lock, whose
listeners hear each write). A store of another backend offers its own by
`embedding_jobs(instance)` (`JobSource`): `PostgresStore` gives
`postgres.PostgresJobs`, which claims what it hands out in the instance's
name, so that queues of several Home Assistants sharing one database never
embed the same job twice. `job_store` picks between them.

`kinds` are the kinds of text a store embeds, memories first, both
on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
import os
import socket
from typing import Any, Final, Protocol, runtime_checkable
import uuid

import numpy.typing as npt

from ..memory_store import MemoryStore
from ..models import MemoryItem, Vector
from ..store import DatabaseAccess
from ..vectors import Readings
from .jobs import (
    KINDS,
    Job,
    JobTables,
    QueueStatus,
    cached_vectors,
    due_jobs,
    enqueue,
    finish_rebuilds,
    has_jobs,
    is_rebuilding,
    mark_ready,
    model_dimensions,
    newest_ids,
    next_due,
    queue_status,
    record_failure,
    start_rebuild,
    store_message_vectors,
)
from .providers import DimensionChangedError, ProviderError

# This process's name for its claims (a queue's default instance): the same
# for every queue of the process, another for each process and machine.
PROCESS_INSTANCE: Final = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True, slots=True)
class Queued:
    """What queueing one kind did: jobs added, highest id seen, rebuild under way.

    `rebuilding` is read only when asked to start rebuilds (else False).
    """

    added: int
    seen: int
    rebuilding: bool = False


class _Enqueue(Protocol):
    def __call__(
        self,
        conn: Any,
        kind: JobTables,
        model: str,
        *,
        after: int,
        clock: Callable[[], float],
    ) -> Awaitable[tuple[int, int]]: ...


@dataclass(frozen=True, slots=True)
class EnqueueSteps:
    """A backend's job-table calls, same names and arguments (`jobs.py`'s)."""

    has_jobs: Callable[[Any, JobTables, str], Awaitable[bool]]
    enqueue: _Enqueue
    start_rebuild: Callable[[Any, JobTables, str, int, float], Awaitable[None]]
    is_rebuilding: Callable[[Any, JobTables, str], Awaitable[bool]]


SQLITE_STEPS: Final = EnqueueSteps(has_jobs, enqueue, start_rebuild, is_rebuilding)


async def enqueue_kinds(
    conn: Any,
    steps: EnqueueSteps,
    kinds: Iterable[JobTables],
    model: str,
    *,
    after: Mapping[JobTables, int],
    clock: Callable[[], float],
    rebuild: bool,
) -> dict[JobTables, Queued]:
    """Queue each kind's texts above `after` with no job, on `conn` (one transaction).

    With `rebuild`, a kind with no job yet starts a rebuild of what it added.
    """
    queued = {}
    for kind in kinds:
        known = rebuild and await steps.has_jobs(conn, kind, model)
        added, seen = await steps.enqueue(
            conn, kind, model, after=after[kind], clock=clock
        )
        if rebuild and added and not known:
            await steps.start_rebuild(conn, kind, model, added, clock())
        running = rebuild and await steps.is_rebuilding(conn, kind, model)
        queued[kind] = Queued(added, seen, running)
    return queued


class JobStore(Protocol):
    """The job tables of one store, as the embedding queue uses them."""

    @property
    def kinds(self) -> tuple[JobTables, ...]:
        """The kinds of text this store embeds, memories first."""
        ...

    async def model_dimensions(self, model: str) -> int | None:
        """Return the vector length recorded for `model`, if it stored any vector."""
        ...

    async def newest_ids(self) -> dict[JobTables, int]:
        """Return the highest id of each kind's table (0 when empty)."""
        ...

    async def enqueue(
        self,
        kinds: Iterable[JobTables],
        model: str,
        *,
        after: Mapping[JobTables, int],
        clock: Callable[[], float],
        rebuild: bool = False,
    ) -> dict[JobTables, Queued]:
        """Queue texts above `after` with no job, in one transaction.

        With `rebuild`, a kind `model` never had jobs of starts a rebuild.
        """
        ...

    async def due_jobs(
        self, kind: JobTables, model: str, *, batch_size: int, now: float
    ) -> list[Job]:
        """Fresh jobs in a batch; a job that failed before goes alone."""
        ...

    async def next_due(self, model: str) -> float | None:
        """When the earliest pending job (of either kind) is due, if any is."""
        ...

    async def cached_vectors(
        self, model: str, hashes: Sequence[bytes]
    ) -> dict[bytes, Vector]:
        """Vectors this model already made for the same texts."""
        ...

    async def mark_ready(
        self, kind: JobTables, model: str, hashes: Mapping[int, bytes], now: float
    ) -> None:
        """Mark these rows' jobs ready, with the hash of the text embedded."""
        ...

    async def record_failure(
        self,
        kind: JobTables,
        model: str,
        jobs: Sequence[Job],
        error: ProviderError,
        now: float,
    ) -> None:
        """Back off these jobs; after `MAX_ATTEMPTS` leave them in `error`."""
        ...

    async def store_message_vectors(
        self, model: str, vectors: Mapping[int, Vector], now: float
    ) -> list[int] | DimensionChangedError:
        """Write the vectors of messages that still exist; returns their ids."""
        ...

    async def finish_rebuilds(
        self, kinds: Iterable[JobTables], model: str
    ) -> dict[JobTables, bool]:
        """End the rebuilds with no pending job left; return which still run."""
        ...

    async def queue_status(
        self, model: str, *, rebuilding: bool, messages_rebuilding: bool
    ) -> QueueStatus:
        """Count this model's jobs by state, memories and messages apart."""
        ...


@runtime_checkable
class JobSource(Protocol):
    """A store of another backend: its vectors, and its own job tables."""

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` after every committed change."""
        ...

    async def set_vectors(self, vectors: Mapping[int, npt.ArrayLike]) -> None:
        """Store (or replace) vectors of the store's model for existing items."""
        ...

    async def get_many(self, ids: Sequence[int]) -> dict[int, MemoryItem]:
        """Memories by id; missing ids are absent from the result."""
        ...

    def embedding_jobs(self, instance: str) -> JobStore:
        """Return the store's job tables, claimed in `instance`'s name."""
        ...

    @property
    def readings(self) -> Readings:
        """How well the model reads each language, for its searches to weigh."""
        ...


# What the queue embeds for: SQLite's store, or another backend's.
type QueueStore = MemoryStore | JobSource


class SqliteJobs:
    """`jobs.py` on a SQLite store's database: one process, no claims."""

    kinds: Final = KINDS

    def __init__(self, database: DatabaseAccess) -> None:
        """Read through the store's reader, write under its lock."""
        self._db = database

    async def model_dimensions(self, model: str) -> int | None:
        """Return the vector length recorded for `model`, if it stored any vector."""
        return await model_dimensions(self._db.reader, model)

    async def newest_ids(self) -> dict[JobTables, int]:
        """Return the highest id of each kind's table (0 when empty)."""
        return await newest_ids(self._db.reader)

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
        async with self._db.transaction() as conn:
            return await enqueue_kinds(
                conn,
                SQLITE_STEPS,
                kinds,
                model,
                after=after,
                clock=clock,
                rebuild=rebuild,
            )

    async def due_jobs(
        self, kind: JobTables, model: str, *, batch_size: int, now: float
    ) -> list[Job]:
        """Fresh jobs in a batch; a job that failed before goes alone."""
        return await due_jobs(
            self._db.reader, kind, model, batch_size=batch_size, now=now
        )

    async def next_due(self, model: str) -> float | None:
        """When the earliest pending job (of either kind) is due, if any is."""
        return await next_due(self._db.reader, model)

    async def cached_vectors(
        self, model: str, hashes: Sequence[bytes]
    ) -> dict[bytes, Vector]:
        """Vectors this model already made for the same texts, of either kind."""
        return await cached_vectors(self._db.reader, model, hashes)

    async def mark_ready(
        self, kind: JobTables, model: str, hashes: Mapping[int, bytes], now: float
    ) -> None:
        """Mark these rows' jobs ready, with the hash of the text embedded."""
        async with self._db.transaction() as conn:
            await mark_ready(conn, kind, model, hashes, now)

    async def record_failure(
        self,
        kind: JobTables,
        model: str,
        jobs: Sequence[Job],
        error: ProviderError,
        now: float,
    ) -> None:
        """Back off these jobs; after `MAX_ATTEMPTS` leave them in `error`."""
        async with self._db.transaction() as conn:
            await record_failure(conn, kind, model, jobs, error, now)

    async def store_message_vectors(
        self, model: str, vectors: Mapping[int, Vector], now: float
    ) -> list[int] | DimensionChangedError:
        """Write the vectors of messages that still exist; returns their ids."""
        async with self._db.transaction() as conn:
            return await store_message_vectors(conn, model, vectors, now)

    async def finish_rebuilds(
        self, kinds: Iterable[JobTables], model: str
    ) -> dict[JobTables, bool]:
        """End the rebuilds with no pending job left; return which still run."""
        async with self._db.transaction() as conn:
            return await finish_rebuilds(conn, kinds, model)

    async def queue_status(
        self, model: str, *, rebuilding: bool, messages_rebuilding: bool
    ) -> QueueStatus:
        """Count this model's jobs by state, memories and messages apart."""
        return await queue_status(
            self._db.reader,
            model,
            rebuilding=rebuilding,
            messages_rebuilding=messages_rebuilding,
        )


def job_store(store: QueueStore, instance: str) -> JobStore:
    """Return the job tables of `store`: its own (`JobSource`), else SQLite's."""
    if isinstance(store, JobSource):
        return store.embedding_jobs(instance)
    return SqliteJobs(store)
