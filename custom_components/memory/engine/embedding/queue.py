"""The embedding worker: texts embedded in the background, queries at once.

Adding a memory never waits for an embedding service. Each memory gets a job
per model in `embedding_jobs` (pending, ready or error with its message), so
work survives a restart; a worker embeds pending jobs in batches and retries
failures with backoff. A text already embedded by the same model (the same
memory re-embedded, the same text added again, a rebuild after switching
back to a model) is copied from `embeddings` instead of asking the provider:
the jobs table keys vectors by text hash, and purging a memory deletes its
job and vector rows with it, so no copy outlives it.

Codes, PINs, passwords and keys never leave the home: what is sent is the
text with each secret value replaced by "[redacted]" (`secrets.redacted`;
the provider redacts whatever it is given once more). The job tables, and
which text hash a vector is cached under, are `embedding_jobs.py`'s, read
and written through a `JobStore` (`job_store.py`): SQLite's `SqliteJobs`,
or the store's own, `PostgresStore`'s, which claims each batch in the
queue's `instance` name so that queues sharing one database never embed a
job twice.

Conversation messages go through the same machinery with tables of their own
(`message_embedding_jobs`, `message_embeddings`): user and assistant messages
of at least `MIN_EMBEDDED_CHARS` characters are embedded, tool results and
one-word replies are not (keyword search finds them). Memories come first:
a batch of messages is taken only when no memory is due, so a memory added
now waits for one batch at most, never for a backlog of old messages. The
text-hash cache spans both (a message that repeats a memory costs nothing).

When it has nothing else to do, the worker measures how well the model
reads the store's language, and any language queries came in
(`vectors.Readings`): 48 texts of the integration's own, once per language
while the store is open. Searches weigh their vectors by it. A provider that
fails the measure is asked again at an idle moment READING_RETRY later.

Queries go through the same provider, but behind a circuit breaker: once the
provider fails, or a query embedding takes longer than `QUERY_TIMEOUT`,
queries get no vector (search answers from keywords at once) until a probe in
the background finds the provider healthy again (`embedding_breaker.py`).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence
import logging
import time
from typing import Final

import numpy as np

from ..errors import UnknownMemoryError, VectorDimensionError
from ..models import Vector
from ..privacy import redacted
from ..vectors import measure_reading
from .breaker import CircuitBreaker
from .job_store import PROCESS_INSTANCE, Queued, QueueStore, job_store
from .jobs import KINDS, MEMORIES, MESSAGES, Job, JobTables, QueueStatus, text_hash
from .providers import (
    PROBE_TEXT,
    DimensionChangedError,
    EmbeddingProvider,
    InvalidResponseError,
    Matrix,
    ProviderError,
    ProviderTimeoutError,
)

_LOGGER = logging.getLogger(__name__)

BATCH_SIZE: Final = 32
# A query embedding slower than this is abandoned and the breaker opens.
QUERY_TIMEOUT: Final = 2.0
QUERY_CACHE_SIZE: Final = 256
# A failed measure of how well the model reads a language is tried again
# this much later, at the worker's next idle moment (seconds).
READING_RETRY: Final = 3600.0


class EmbeddingQueue:
    """Embeds the memories and messages of one store with one provider and model.

    Drive it with `start()` once, then `run_once()` whenever woken (a memory
    or message was added) or when the delay it returned has passed;
    `query_vector()` serves searches.
    """

    def __init__(  # noqa: PLR0913 - the settings are keyword-only
        self,
        store: QueueStore,
        provider: EmbeddingProvider,
        model: str,
        *,
        dimensions: int | None = None,
        breaker: CircuitBreaker | None = None,
        clock: Callable[[], float] = time.time,
        batch_size: int = BATCH_SIZE,
        query_timeout: float = QUERY_TIMEOUT,
        instance: str = PROCESS_INSTANCE,
    ) -> None:
        """`model` is the store's model name; `dimensions` what set-up measured.

        `instance` names this queue's claims on a database several Home
        Assistants share (PostgreSQL): by default this process's name.
        """
        self.store = store
        self.instance = instance
        self._jobs = job_store(store, instance)
        self.provider = provider
        self.model = model
        self.breaker = breaker or CircuitBreaker(clock)
        self.batch_size = batch_size
        self.query_timeout = query_timeout
        self._dim = dimensions
        self._clock = clock
        self._watermarks = dict.fromkeys(KINDS, 0)
        self._rebuilding = dict.fromkeys(KINDS, False)
        self._query_cache: OrderedDict[bytes, Vector] = OrderedDict()
        self._query_cache_size = QUERY_CACHE_SIZE
        self._reading_retry_at = 0.0

    @property
    def dimensions(self) -> int | None:
        """The model's vector length, once known."""
        return self._dim

    @property
    def rebuilding(self) -> bool:
        """Whether existing memories are still being embedded (searches: keywords)."""
        return self._rebuilding[MEMORIES]

    @property
    def messages_rebuilding(self) -> bool:
        """Whether existing messages are still being embedded."""
        return self._rebuilding[MESSAGES]

    # -- set-up ---------------------------------------------------------------

    async def start(self) -> int:
        """Queue every memory and message without a job; return how many.

        The first time a model is used on memories (or messages) that exist
        already, this is a rebuild: their searches stay keyword-only until it
        is done, so they never rank against a half-embedded collection.
        """
        dim = await self._jobs.model_dimensions(self.model)
        if dim is not None:
            self._dim = dim
        kinds = self._jobs.kinds
        queued = await self._enqueue(kinds, after=dict.fromkeys(kinds, 0), rebuild=True)
        for kind, done in queued.items():
            self._rebuilding[kind] = done.rebuilding
        return sum(done.added for done in queued.values())

    async def _enqueue(
        self,
        kinds: Sequence[JobTables],
        *,
        after: dict[JobTables, int],
        rebuild: bool = False,
    ) -> dict[JobTables, Queued]:
        """Queue texts with an id above `after` that have no job yet."""
        queued = await self._jobs.enqueue(
            kinds, self.model, after=after, clock=self._clock, rebuild=rebuild
        )
        for kind, done in queued.items():
            self._watermarks[kind] = max(self._watermarks[kind], done.seen)
        return queued

    async def sync(self) -> int:
        """Queue memories and messages added since the last look (cheap if none)."""
        newest = await self._jobs.newest_ids()
        newer = [
            kind for kind in self._jobs.kinds if newest[kind] > self._watermarks[kind]
        ]
        if not newer:
            return 0
        queued = await self._enqueue(newer, after=self._watermarks)
        return sum(done.added for done in queued.values())

    # -- the worker -----------------------------------------------------------

    async def run_once(self) -> float | None:
        """Do one batch of work: memories first, then messages.

        Returns seconds until more work is due: 0 to call again at once, None
        when nothing is pending (wait until a memory or message is added).
        """
        await self.sync()
        if not self.breaker.closed and not self.breaker.probe_due:
            return self.breaker.seconds_to_probe()
        for kind in self._jobs.kinds:
            if jobs := await self._due_jobs(kind):
                await self._process(kind, jobs)
                await self._finish_rebuilds()
                break
        else:
            if not self.breaker.closed:
                await self._probe()
            else:
                await self._finish_rebuilds()
                await self._measure_reading()
                if self._reading_due():
                    return 0.0  # another language to measure
                due = await self._jobs.next_due(self.model)
                return None if due is None else max(due - self._clock(), 0.0)
        return 0.0 if self.breaker.closed else self.breaker.seconds_to_probe()

    async def _due_jobs(self, kind: JobTables) -> list[Job]:
        """Fresh jobs in a batch; a job that failed before goes alone."""
        return await self._jobs.due_jobs(
            kind, self.model, batch_size=self.batch_size, now=self._clock()
        )

    async def _process(self, kind: JobTables, jobs: list[Job]) -> None:
        vectors = await self._jobs.cached_vectors(
            self.model, sorted({job.text_hash for job in jobs})
        )
        texts = {job.text_hash: job.content for job in jobs}
        missing = [digest for digest in texts if digest not in vectors]
        if missing:
            try:
                matrix = await self.provider.embed([texts[d] for d in missing])
                self._check_dimensions(matrix.shape[1])
            except ProviderError as err:
                if err.provider_down:
                    self.breaker.record_failure(err)
                    return
                refused = set(missing)
                await self._record_failure(
                    kind, [job for job in jobs if job.text_hash in refused], err
                )
            else:
                self.breaker.record_success()
                vectors.update(zip(missing, matrix, strict=True))
        usable: dict[int, Vector] = {}
        for job in jobs:
            vector = vectors.get(job.text_hash)
            if vector is None:
                continue
            norm = float(np.linalg.norm(vector))
            if not (np.isfinite(norm) and norm > 0.0):
                await self._record_failure(
                    kind,
                    [job],
                    InvalidResponseError("the provider returned a zero vector"),
                )
                continue
            usable[job.item_id] = vector
        if not usable:
            return
        if kind is MEMORIES:
            stored = await self._store_memory_vectors(usable)
        else:
            stored = await self._store_message_vectors(usable)
        if stored and self._dim is None:
            self._dim = len(next(iter(usable.values())))
        if stored:
            # With the hash of the text the vector was made from (see
            # embedding_jobs.py).
            hashes = {job.item_id: job.text_hash for job in jobs}
            await self._jobs.mark_ready(
                kind, self.model, {i: hashes[i] for i in stored}, self._clock()
            )

    def _check_dimensions(self, dim: int) -> None:
        if self._dim is not None and dim != self._dim:
            raise DimensionChangedError(
                f"{self.model} made {self._dim}-dimensional vectors, now {dim}",
                expected=str(self._dim),
                got=str(dim),
            )

    async def _store_memory_vectors(self, vectors: dict[int, Vector]) -> list[int]:
        """Through the store, which keeps its index in step; returns the ids."""
        try:
            await self.store.set_vectors(vectors)
        except UnknownMemoryError:
            # Some were purged while being embedded: store the others.
            alive = await self.store.get_many(list(vectors))
            vectors = {i: v for i, v in vectors.items() if i in alive}
            if not vectors:
                return []
            await self.store.set_vectors(vectors)
        except VectorDimensionError as err:
            # SQLite names the length found `got`, pgvector's index `actual`.
            found = err.placeholders.get("got", err.placeholders.get("actual", ""))
            self.breaker.record_failure(
                DimensionChangedError(
                    str(err), expected=err.placeholders.get("expected", ""), got=found
                )
            )
            return []
        return list(vectors)

    async def _store_message_vectors(self, vectors: dict[int, Vector]) -> list[int]:
        """Write the vectors of messages that still exist; returns their ids."""
        stored = await self._jobs.store_message_vectors(
            self.model, vectors, self._clock()
        )
        if isinstance(stored, DimensionChangedError):
            self.breaker.record_failure(stored)
            return []
        return stored

    async def _record_failure(
        self, kind: JobTables, jobs: list[Job], error: ProviderError
    ) -> None:
        """Back off these jobs; after `MAX_ATTEMPTS` leave them in `error`."""
        await self._jobs.record_failure(kind, self.model, jobs, error, self._clock())
        _LOGGER.debug("Embedding of %s %s failed (%s)", len(jobs), kind.name, error.key)

    async def _probe(self) -> None:
        try:
            matrix = await self.provider.embed([PROBE_TEXT], query=True)
            self._check_dimensions(matrix.shape[1])
        except ProviderError as err:
            self.breaker.record_failure(err)
        else:
            self.breaker.record_success()

    def _reading_due(self) -> bool:
        """Whether a language waits to be measured, and may be now."""
        return (
            self.store.readings.next_wanted() is not None
            and self.breaker.closed
            and self._clock() >= self._reading_retry_at
        )

    async def _measure_reading(self) -> None:
        """Measure how well the model reads the next wanted language, if due."""
        readings = self.store.readings
        language = readings.next_wanted()
        if language is None or not self._reading_due():
            return

        async def embed(texts: Sequence[str], query: bool) -> Matrix:
            matrix = await self.provider.embed(texts, query=query)
            self._check_dimensions(matrix.shape[1])
            return matrix

        try:
            found = await measure_reading(embed, language)
        except ProviderError as err:
            if err.provider_down:
                self.breaker.record_failure(err)
            self._reading_retry_at = self._clock() + READING_RETRY
            _LOGGER.debug(
                "Measuring how %s reads %s failed (%s)", self.model, language, err.key
            )
            return
        self.breaker.record_success()
        readings.record(language, found)

    async def _finish_rebuilds(self) -> None:
        kinds = [kind for kind in KINDS if self._rebuilding[kind]]
        if not kinds:
            return
        self._rebuilding.update(await self._jobs.finish_rebuilds(kinds, self.model))

    async def status(self) -> QueueStatus:
        """Count this model's jobs by state, memories and messages apart."""
        return await self._jobs.queue_status(
            self.model,
            rebuilding=self.rebuilding,
            messages_rebuilding=self.messages_rebuilding,
        )

    # -- queries --------------------------------------------------------------

    async def query_vector(self, text: str, *, messages: bool = False) -> Vector | None:
        """Embed a query; None means search should use keywords only.

        For memories, or with `messages` for the conversation log. None while
        that collection is being rebuilt, while the breaker is open (at once,
        without touching the provider), for an empty query, and when the
        provider fails or takes longer than `query_timeout` (which opens the
        breaker). A query asked for both comes from the cache the second time.
        Secrets in the query are redacted before it is sent, and before it
        is a cache key.
        """
        text = redacted(text.strip())
        rebuilding = self.messages_rebuilding if messages else self.rebuilding
        if not text or text == "*" or rebuilding or not self.breaker.closed:
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
