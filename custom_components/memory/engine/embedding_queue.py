"""Embedding in the background, and a circuit breaker that keeps recall fast.

Adding a memory never waits for an embedding service. Each memory gets a job
per model in `embedding_jobs` (pending, ready or error with its message), so
work survives a restart; a worker embeds pending jobs in batches and retries
failures with backoff. A text already embedded by the same model (the same
memory re-embedded, the same text added again, a rebuild after switching
back to a model) is copied from `embeddings` instead of asking the provider:
the jobs table keys vectors by text hash, and purging a memory deletes its
job and vector rows with it, so no copy outlives it.

Queries go through the same provider, but behind a circuit breaker: once the
provider fails, or a query embedding takes longer than `QUERY_TIMEOUT`,
queries get no vector (search answers from keywords at once) until a probe in
the background finds the provider healthy again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
import hashlib
import logging
import time
from typing import Final

import aiosqlite
import numpy as np

from .errors import UnknownMemoryError, VectorDimensionError
from .models import Vector
from .providers import (
    PROBE_TEXT,
    DimensionChangedError,
    EmbeddingProvider,
    InvalidResponseError,
    ProviderError,
    ProviderTimeoutError,
)
from .store import MemoryStore

_LOGGER = logging.getLogger(__name__)

JOB_PENDING: Final = "pending"
JOB_READY: Final = "ready"
JOB_ERROR: Final = "error"

BATCH_SIZE: Final = 32
# A query embedding slower than this is abandoned and the breaker opens.
QUERY_TIMEOUT: Final = 2.0
QUERY_CACHE_SIZE: Final = 256
# Item failures (the provider refused a text): retries after 30 s, 2 min,
# 8 min, 32 min, then the job is left in `error` (still found by keywords).
MAX_ATTEMPTS: Final = 5
RETRY_BASE: Final = 30.0
RETRY_FACTOR: Final = 4.0
# Provider failures: probe again after 10 s, doubling up to 5 minutes.
BREAKER_BASE_DELAY: Final = 10.0
BREAKER_MAX_DELAY: Final = 300.0
_ENQUEUE_CHUNK: Final = 1000
_ERROR_CHARS: Final = 300


# Statements completed with a list of "?" placeholders, never with values.
_CACHED_SQL: Final = (
    "SELECT j.text_hash, e.vector FROM embedding_jobs j JOIN embeddings e "
    "ON e.model = j.model AND e.memory_id = j.memory_id WHERE j.model = ?"
)
_READY_SQL: Final = (
    "UPDATE embedding_jobs SET state = 'ready', attempts = 0, error = NULL, "
    "updated_at = ? WHERE model = ?"
)


def text_hash(text: str) -> bytes:
    """Hash a text as the cache keys it (with the model)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def _marks(count: int) -> str:
    return ",".join("?" * count)


class BreakerState(StrEnum):
    """Closed: requests flow. Open: the provider is left alone until a probe."""

    CLOSED = "closed"
    OPEN = "open"


class CircuitBreaker:
    """Remembers whether the provider works, and when to try it again."""

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        *,
        base_delay: float = BREAKER_BASE_DELAY,
        max_delay: float = BREAKER_MAX_DELAY,
    ) -> None:
        """Start closed: a provider is trusted until it fails."""
        self._clock = clock
        self._base_delay = base_delay
        self._max_delay = max_delay
        self.state = BreakerState.CLOSED
        self.failures = 0
        self.down_since: float | None = None
        self.retry_at = 0.0
        self.last_error: ProviderError | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def closed(self) -> bool:
        """Whether queries may use the provider."""
        return self.state is BreakerState.CLOSED

    @property
    def probe_due(self) -> bool:
        """Whether an open breaker's provider should be tried again now."""
        return not self.closed and self._clock() >= self.retry_at

    def seconds_to_probe(self) -> float:
        """Time left until the next probe (0 when closed or due)."""
        return 0.0 if self.closed else max(self.retry_at - self._clock(), 0.0)

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` after every change; returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def record_success(self) -> None:
        """Close: the provider answered."""
        if self.closed and self.failures == 0:
            return
        self.state = BreakerState.CLOSED
        self.failures = 0
        self.down_since = None
        self.last_error = None
        self._notify()

    def record_failure(self, error: ProviderError) -> None:
        """Open: the provider failed; probe again later, backing off."""
        now = self._clock()
        if self.closed:
            self.down_since = now
            _LOGGER.debug("Embedding provider failed, searching by keywords: %s", error)
        self.state = BreakerState.OPEN
        self.failures += 1
        delay = min(self._base_delay * 2.0 ** (self.failures - 1), self._max_delay)
        self.retry_at = now + delay
        self.last_error = error
        self._notify()

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueStatus:
    """Counts of one model's jobs (never any content)."""

    model: str
    pending: int = 0
    ready: int = 0
    failed: int = 0
    rebuilding: bool = False

    @property
    def total(self) -> int:
        """Memories with a job for this model."""
        return self.pending + self.ready + self.failed

    @property
    def progress(self) -> float:
        """Share of jobs done (ready or given up), in percent."""
        if not self.total:
            return 100.0
        return round(100.0 * (self.ready + self.failed) / self.total, 1)


@dataclass(frozen=True, slots=True)
class _Job:
    memory_id: int
    content: str
    text_hash: bytes
    attempts: int


async def count_missing(store: MemoryStore, model: str) -> int:
    """Memories that have no vector of `model` yet: what switching to it costs."""
    async with store.reader.execute(
        "SELECT count(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM "
        "embeddings e WHERE e.model = ? AND e.memory_id = m.id)",
        (model,),
    ) as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


class EmbeddingQueue:
    """Embeds the memories of one store with one provider and model.

    Drive it with `start()` once, then `run_once()` whenever woken (a memory
    was added) or when the delay it returned has passed; `query_vector()`
    serves searches.
    """

    def __init__(
        self,
        store: MemoryStore,
        provider: EmbeddingProvider,
        model: str,
        *,
        dimensions: int | None = None,
        breaker: CircuitBreaker | None = None,
        clock: Callable[[], float] = time.time,
        batch_size: int = BATCH_SIZE,
        query_timeout: float = QUERY_TIMEOUT,
    ) -> None:
        """`model` is the store's model name; `dimensions` what set-up measured."""
        self.store = store
        self.provider = provider
        self.model = model
        self.breaker = breaker or CircuitBreaker(clock)
        self.batch_size = batch_size
        self.query_timeout = query_timeout
        self.rebuilding = False
        self._dim = dimensions
        self._clock = clock
        self._watermark = 0
        self._query_cache: OrderedDict[bytes, Vector] = OrderedDict()
        self._query_cache_size = QUERY_CACHE_SIZE

    @property
    def dimensions(self) -> int | None:
        """The model's vector length, once known."""
        return self._dim

    # -- set-up ---------------------------------------------------------------

    async def start(self) -> int:
        """Queue every memory without a job; return how many were queued.

        The first time a model is used on memories that exist already, this
        is a rebuild: searches stay keyword-only until it is done, so they
        never rank against a half-embedded collection.
        """
        async with self.store.reader.execute(
            "SELECT dim FROM embedding_models WHERE model = ?", (self.model,)
        ) as cursor:
            row = await cursor.fetchone()
        if row is not None:
            self._dim = int(row[0])
        async with self.store.transaction() as conn:
            async with conn.execute(
                "SELECT EXISTS (SELECT 1 FROM embedding_jobs WHERE model = ?)",
                (self.model,),
            ) as cursor:
                row = await cursor.fetchone()
            known = bool(row and row[0])
            added = await self._enqueue(conn, after=0)
            if added and not known:
                await conn.execute(
                    "INSERT OR IGNORE INTO embedding_rebuilds (model, total, "
                    "started_at) VALUES (?, ?, ?)",
                    (self.model, added, self._clock()),
                )
            async with conn.execute(
                "SELECT EXISTS (SELECT 1 FROM embedding_rebuilds WHERE model = ?)",
                (self.model,),
            ) as cursor:
                row = await cursor.fetchone()
            self.rebuilding = bool(row and row[0])
        return added

    async def _enqueue(self, conn: aiosqlite.Connection, *, after: int) -> int:
        """Queue memories with an id above `after` that have no job yet."""
        added = 0
        last = after
        while True:
            async with conn.execute(
                "SELECT m.id, m.content FROM memories m WHERE m.id > ? AND NOT "
                "EXISTS (SELECT 1 FROM embedding_jobs j WHERE j.model = ? AND "
                "j.memory_id = m.id) ORDER BY m.id LIMIT ?",
                (last, self.model, _ENQUEUE_CHUNK),
            ) as cursor:
                rows = list(await cursor.fetchall())
            if not rows:
                break
            now = self._clock()
            await conn.executemany(
                "INSERT OR IGNORE INTO embedding_jobs (memory_id, model, "
                "text_hash, state, updated_at) VALUES (?, ?, ?, 'pending', ?)",
                [(row[0], self.model, text_hash(row[1]), now) for row in rows],
            )
            added += len(rows)
            last = int(rows[-1][0])
        async with conn.execute("SELECT coalesce(max(id), 0) FROM memories") as cur:
            row = await cur.fetchone()
        self._watermark = max(self._watermark, last, int(row[0]) if row else 0)
        return added

    async def sync(self) -> int:
        """Queue memories added since the last look (cheap when there are none)."""
        async with self.store.reader.execute(
            "SELECT coalesce(max(id), 0) FROM memories"
        ) as cursor:
            row = await cursor.fetchone()
        if row is None or int(row[0]) <= self._watermark:
            return 0
        async with self.store.transaction() as conn:
            return await self._enqueue(conn, after=self._watermark)

    # -- the worker -----------------------------------------------------------

    async def run_once(self) -> float | None:
        """Do one batch of work.

        Returns seconds until more work is due: 0 to call again at once, None
        when nothing is pending (wait until a memory is added).
        """
        await self.sync()
        if not self.breaker.closed and not self.breaker.probe_due:
            return self.breaker.seconds_to_probe()
        jobs = await self._due_jobs()
        if jobs:
            await self._process(jobs)
            await self._finish_rebuild()
        elif not self.breaker.closed:
            await self._probe()
        else:
            await self._finish_rebuild()
            return await self._next_due()
        return 0.0 if self.breaker.closed else self.breaker.seconds_to_probe()

    async def _due_jobs(self) -> list[_Job]:
        """Fresh jobs in a batch; a job that failed before goes alone."""
        base = (
            "SELECT j.memory_id, m.content, j.text_hash, j.attempts "
            "FROM embedding_jobs j JOIN memories m ON m.id = j.memory_id "
            "WHERE j.model = ? AND j.state = 'pending' "
        )
        reader = self.store.reader
        async with reader.execute(
            base + "AND j.attempts = 0 ORDER BY j.memory_id LIMIT ?",
            (self.model, self.batch_size),
        ) as cursor:
            rows = list(await cursor.fetchall())
        if not rows:
            async with reader.execute(
                base + "AND j.attempts > 0 AND j.next_attempt_at <= ? "
                "ORDER BY j.next_attempt_at, j.memory_id LIMIT 1",
                (self.model, self._clock()),
            ) as cursor:
                rows = list(await cursor.fetchall())
        return [_Job(int(r[0]), str(r[1]), bytes(r[2]), int(r[3])) for r in rows]

    async def _next_due(self) -> float | None:
        async with self.store.reader.execute(
            "SELECT min(next_attempt_at) FROM embedding_jobs "
            "WHERE model = ? AND state = 'pending'",
            (self.model,),
        ) as cursor:
            row = await cursor.fetchone()
        if row is None or row[0] is None:
            return None
        return max(float(row[0]) - self._clock(), 0.0)

    async def _cached(self, hashes: Sequence[bytes]) -> dict[bytes, Vector]:
        """Vectors this model already made for the same texts."""
        marks = _marks(len(hashes))
        sql = f"{_CACHED_SQL} AND j.text_hash IN ({marks})"
        async with self.store.reader.execute(sql, (self.model, *hashes)) as cursor:
            rows = await cursor.fetchall()
        return {bytes(row[0]): np.frombuffer(row[1], dtype=np.float32) for row in rows}

    async def _process(self, jobs: list[_Job]) -> None:
        vectors = await self._cached(sorted({job.text_hash for job in jobs}))
        texts = {job.text_hash: job.content for job in jobs}
        missing = [digest for digest in texts if digest not in vectors]
        failed: list[_Job] = []
        if missing:
            try:
                matrix = await self.provider.embed([texts[d] for d in missing])
                self._check_dimensions(matrix.shape[1])
            except ProviderError as err:
                if err.provider_down:
                    self.breaker.record_failure(err)
                    return
                failed = [job for job in jobs if job.text_hash in set(missing)]
                await self._record_failure(failed, err)
            else:
                self.breaker.record_success()
                vectors.update(zip(missing, matrix, strict=True))
        usable: dict[int, Vector] = {}
        for job in jobs:
            vector = vectors.get(job.text_hash)
            if vector is None:
                continue
            if not float(np.linalg.norm(vector)) > 0.0:
                failed.append(job)
                await self._record_failure(
                    [job], InvalidResponseError("the provider returned a zero vector")
                )
                continue
            usable[job.memory_id] = vector
        if usable:
            await self._store_vectors(usable)

    def _check_dimensions(self, dim: int) -> None:
        if self._dim is not None and dim != self._dim:
            raise DimensionChangedError(
                f"{self.model} made {self._dim}-dimensional vectors, now {dim}",
                expected=str(self._dim),
                got=str(dim),
            )

    async def _store_vectors(self, vectors: dict[int, Vector]) -> None:
        try:
            await self.store.set_vectors(vectors)
        except UnknownMemoryError:
            # Some were purged while being embedded: store the others.
            alive = await self.store.get_many(list(vectors))
            vectors = {i: v for i, v in vectors.items() if i in alive}
            if not vectors:
                return
            await self.store.set_vectors(vectors)
        except VectorDimensionError as err:
            self.breaker.record_failure(
                DimensionChangedError(str(err), **err.placeholders)
            )
            return
        if self._dim is None:
            self._dim = len(next(iter(vectors.values())))
        async with self.store.transaction() as conn:
            marks = _marks(len(vectors))
            sql = f"{_READY_SQL} AND memory_id IN ({marks})"
            await conn.execute(sql, (self._clock(), self.model, *vectors))

    async def _record_failure(self, jobs: list[_Job], error: ProviderError) -> None:
        """Back off these jobs; after `MAX_ATTEMPTS` leave them in `error`."""
        now = self._clock()
        message = str(error)[:_ERROR_CHARS]
        async with self.store.transaction() as conn:
            for job in jobs:
                attempts = job.attempts + 1
                state = JOB_ERROR if attempts >= MAX_ATTEMPTS else JOB_PENDING
                delay = RETRY_BASE * RETRY_FACTOR ** (attempts - 1)
                await conn.execute(
                    "UPDATE embedding_jobs SET state = ?, attempts = ?, "
                    "next_attempt_at = ?, error = ?, updated_at = ? "
                    "WHERE model = ? AND memory_id = ?",
                    (
                        state,
                        attempts,
                        now + delay,
                        message,
                        now,
                        self.model,
                        job.memory_id,
                    ),
                )
        _LOGGER.debug("Embedding of %s memories failed (%s)", len(jobs), error.key)

    async def _probe(self) -> None:
        try:
            matrix = await self.provider.embed([PROBE_TEXT], query=True)
            self._check_dimensions(matrix.shape[1])
        except ProviderError as err:
            self.breaker.record_failure(err)
        else:
            self.breaker.record_success()

    async def _finish_rebuild(self) -> None:
        if not self.rebuilding:
            return
        async with self.store.transaction() as conn:
            await conn.execute(
                "DELETE FROM embedding_rebuilds WHERE model = ? AND NOT EXISTS "
                "(SELECT 1 FROM embedding_jobs WHERE model = ? AND state = 'pending')",
                (self.model, self.model),
            )
            async with conn.execute(
                "SELECT EXISTS (SELECT 1 FROM embedding_rebuilds WHERE model = ?)",
                (self.model,),
            ) as cursor:
                row = await cursor.fetchone()
        self.rebuilding = bool(row and row[0])

    async def status(self) -> QueueStatus:
        """Count this model's jobs by state."""
        async with self.store.reader.execute(
            "SELECT state, count(*) FROM embedding_jobs WHERE model = ? GROUP BY state",
            (self.model,),
        ) as cursor:
            counts = {str(row[0]): int(row[1]) for row in await cursor.fetchall()}
        return QueueStatus(
            model=self.model,
            pending=counts.get(JOB_PENDING, 0),
            ready=counts.get(JOB_READY, 0),
            failed=counts.get(JOB_ERROR, 0),
            rebuilding=self.rebuilding,
        )

    # -- queries --------------------------------------------------------------

    async def query_vector(self, text: str) -> Vector | None:
        """Embed a query; None means search should use keywords only.

        None while a rebuild runs, while the breaker is open (at once, without
        touching the provider), for an empty query, and when the provider
        fails or takes longer than `query_timeout` (which opens the breaker).
        """
        text = text.strip()
        if not text or text == "*" or self.rebuilding or not self.breaker.closed:
            return None
        key = text_hash(text)
        cached = self._query_cache.get(key)
        if cached is not None:
            self._query_cache.move_to_end(key)
            return cached
        try:
            async with asyncio.timeout(self.query_timeout):
                matrix = await self.provider.embed([text], query=True)
            self._check_dimensions(matrix.shape[1])
        except TimeoutError:
            self.breaker.record_failure(
                ProviderTimeoutError(
                    f"a query embedding took longer than {self.query_timeout} s"
                )
            )
            return None
        except ProviderError as err:
            if err.provider_down:
                self.breaker.record_failure(err)
            return None
        vector: Vector = matrix[0]
        if not float(np.linalg.norm(vector)) > 0.0:
            return None
        self._query_cache[key] = vector
        if len(self._query_cache) > self._query_cache_size:
            self._query_cache.popitem(last=False)
        return vector

    async def close(self) -> None:
        """Forget cached query vectors and release the provider."""
        self._query_cache.clear()
        await self.provider.close()
