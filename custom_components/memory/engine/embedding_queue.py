"""Embedding in the background, and a circuit breaker that keeps recall fast.

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
the provider redacts whatever it is given once more). A ready job's
`text_hash` is the hash of exactly the text its vector was made from, written
when the vector is: so a cache hit never hands out the vector of an
unredacted text, and a vector made before redaction existed (or before the
detector learnt a pattern) stays where it is, reused only for the very same
text. The hash written when a job is queued is provisional (the unredacted
text's, cheap to compute for a whole rebuild) and read by nothing.

Conversation messages go through the same machinery with tables of their own
(`message_embedding_jobs`, `message_embeddings`): user and assistant messages
of at least `MIN_EMBEDDED_CHARS` characters are embedded, tool results and
one-word replies are not (keyword search finds them). Memories come first:
a batch of messages is taken only when no memory is due, so a memory added
now waits for one batch at most, never for a backlog of old messages. The
text-hash cache spans both (a message that repeats a memory costs nothing).

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

from .conversations import EMBEDDED_MAX_CHARS, EMBEDDED_MESSAGES_SQL, embedding_text
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
from .secrets import redacted
from .sql import placeholders
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
# Redaction reads this much of a text, more than is ever embedded (memories
# have at most 2,000 characters), so a cut never parts a value from its label.
_REDACTION_WINDOW: Final = 2 * EMBEDDED_MAX_CHARS


def text_hash(text: str) -> bytes:
    """Hash a text as the cache keys it (with the model)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def _same(text: str) -> str:
    return text


@dataclass(frozen=True, slots=True)
class _Kind:
    """Where one kind of text keeps its jobs: SQL identifiers, never values."""

    name: str
    items: str  # the table of texts
    jobs: str
    key: str  # the jobs' (and vectors') column naming the text's row
    vectors: str
    rebuilds: str
    where: str  # which rows of `items` (alias m) are embedded at all
    text: Callable[[str], str]  # what of a row's content is embedded


MEMORIES: Final = _Kind(
    name="memories",
    items="memories",
    jobs="embedding_jobs",
    key="memory_id",
    vectors="embeddings",
    rebuilds="embedding_rebuilds",
    where="1",
    text=_same,
)
MESSAGES: Final = _Kind(
    name="messages",
    items="conversation_messages",
    jobs="message_embedding_jobs",
    key="message_id",
    vectors="message_embeddings",
    rebuilds="message_embedding_rebuilds",
    where=EMBEDDED_MESSAGES_SQL,
    text=embedding_text,
)
_KINDS: Final = (MEMORIES, MESSAGES)


def sent_text(kind: _Kind, content: str) -> str:
    """Return what is sent to the provider for a row: its text, secrets redacted.

    Redacted before it is cut to what is embedded.
    """
    return kind.text(redacted(content[:_REDACTION_WINDOW]))


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
    """Counts of one model's jobs (never any content).

    `pending`, `ready`, `failed` and `rebuilding` are about memories; the
    `messages_` fields about the log. `progress` (the progress sensor's state)
    covers both: message search stays keyword-only until its rebuild is done.
    """

    model: str
    pending: int = 0
    ready: int = 0
    failed: int = 0
    rebuilding: bool = False
    messages_pending: int = 0
    messages_ready: int = 0
    messages_failed: int = 0
    messages_rebuilding: bool = False

    @property
    def total(self) -> int:
        """Memories with a job for this model."""
        return self.pending + self.ready + self.failed

    @property
    def messages_total(self) -> int:
        """Messages with a job for this model."""
        return self.messages_pending + self.messages_ready + self.messages_failed

    @property
    def progress(self) -> float:
        """Share of all jobs, memories and messages, done (ready or given up).

        In percent; 100 when there is nothing to embed.
        """
        total = self.total + self.messages_total
        if not total:
            return 100.0
        done = self.ready + self.failed + self.messages_ready + self.messages_failed
        return round(100.0 * done / total, 1)


@dataclass(frozen=True, slots=True)
class _Job:
    item_id: int
    content: str
    text_hash: bytes
    attempts: int


async def count_missing(
    store: MemoryStore, model: str, *, messages: bool = False
) -> int:
    """Memories (or embedded messages) with no vector of `model` yet.

    What switching to `model` costs; messages that are never embedded (tool
    results, one-word replies) do not count.
    """
    kind = MESSAGES if messages else MEMORIES
    async with store.reader.execute(
        f"SELECT count(*) FROM {kind.items} m WHERE {kind.where} AND NOT EXISTS "  # noqa: S608
        f"(SELECT 1 FROM {kind.vectors} e WHERE e.model = ? AND e.{kind.key} = m.id)",
        (model,),
    ) as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


class EmbeddingQueue:
    """Embeds the memories and messages of one store with one provider and model.

    Drive it with `start()` once, then `run_once()` whenever woken (a memory
    or message was added) or when the delay it returned has passed;
    `query_vector()` serves searches.
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
        self._dim = dimensions
        self._clock = clock
        self._watermarks = dict.fromkeys(_KINDS, 0)
        self._rebuilding = dict.fromkeys(_KINDS, False)
        self._query_cache: OrderedDict[bytes, Vector] = OrderedDict()
        self._query_cache_size = QUERY_CACHE_SIZE

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
        async with self.store.reader.execute(
            "SELECT dim FROM embedding_models WHERE model = ?", (self.model,)
        ) as cursor:
            row = await cursor.fetchone()
        if row is not None:
            self._dim = int(row[0])
        total = 0
        async with self.store.transaction() as conn:
            for kind in _KINDS:
                async with conn.execute(
                    f"SELECT EXISTS (SELECT 1 FROM {kind.jobs} WHERE model = ?)",  # noqa: S608
                    (self.model,),
                ) as cursor:
                    row = await cursor.fetchone()
                known = bool(row and row[0])
                added = await self._enqueue(conn, kind, after=0)
                if added and not known:
                    await conn.execute(
                        f"INSERT OR IGNORE INTO {kind.rebuilds} (model, total, "  # noqa: S608
                        "started_at) VALUES (?, ?, ?)",
                        (self.model, added, self._clock()),
                    )
                async with conn.execute(
                    f"SELECT EXISTS (SELECT 1 FROM {kind.rebuilds} WHERE model = ?)",  # noqa: S608
                    (self.model,),
                ) as cursor:
                    row = await cursor.fetchone()
                self._rebuilding[kind] = bool(row and row[0])
                total += added
        return total

    async def _enqueue(
        self, conn: aiosqlite.Connection, kind: _Kind, *, after: int
    ) -> int:
        """Queue texts with an id above `after` that have no job yet."""
        added = 0
        last = after
        while True:
            async with conn.execute(
                f"SELECT m.id, m.content FROM {kind.items} m WHERE m.id > ? "  # noqa: S608
                f"AND {kind.where} AND NOT EXISTS (SELECT 1 FROM {kind.jobs} j "
                f"WHERE j.model = ? AND j.{kind.key} = m.id) ORDER BY m.id LIMIT ?",
                (last, self.model, _ENQUEUE_CHUNK),
            ) as cursor:
                rows = list(await cursor.fetchall())
            if not rows:
                break
            now = self._clock()
            await conn.executemany(
                f"INSERT OR IGNORE INTO {kind.jobs} ({kind.key}, model, "  # noqa: S608
                "text_hash, state, updated_at) VALUES (?, ?, ?, 'pending', ?)",
                [
                    (row[0], self.model, text_hash(kind.text(row[1])), now)
                    for row in rows
                ],
            )
            added += len(rows)
            last = int(rows[-1][0])
        async with conn.execute(
            f"SELECT coalesce(max(id), 0) FROM {kind.items}"  # noqa: S608
        ) as cursor:
            row = await cursor.fetchone()
        newest = int(row[0]) if row else 0
        self._watermarks[kind] = max(self._watermarks[kind], last, newest)
        return added

    async def sync(self) -> int:
        """Queue memories and messages added since the last look (cheap if none)."""
        async with self.store.reader.execute(
            "SELECT (SELECT coalesce(max(id), 0) FROM memories), "
            "(SELECT coalesce(max(id), 0) FROM conversation_messages)"
        ) as cursor:
            row = await cursor.fetchone()
        assert row is not None  # noqa: S101 - a SELECT of two values
        newer = [
            kind
            for kind, newest in zip(_KINDS, row, strict=True)
            if int(newest) > self._watermarks[kind]
        ]
        if not newer:
            return 0
        async with self.store.transaction() as conn:
            return sum(
                [
                    await self._enqueue(conn, kind, after=self._watermarks[kind])
                    for kind in newer
                ]
            )

    # -- the worker -----------------------------------------------------------

    async def run_once(self) -> float | None:
        """Do one batch of work: memories first, then messages.

        Returns seconds until more work is due: 0 to call again at once, None
        when nothing is pending (wait until a memory or message is added).
        """
        await self.sync()
        if not self.breaker.closed and not self.breaker.probe_due:
            return self.breaker.seconds_to_probe()
        for kind in _KINDS:
            if jobs := await self._due_jobs(kind):
                await self._process(kind, jobs)
                await self._finish_rebuilds()
                break
        else:
            if not self.breaker.closed:
                await self._probe()
            else:
                await self._finish_rebuilds()
                return await self._next_due()
        return 0.0 if self.breaker.closed else self.breaker.seconds_to_probe()

    async def _due_jobs(self, kind: _Kind) -> list[_Job]:
        """Fresh jobs in a batch; a job that failed before goes alone."""
        base = (
            f"SELECT j.{kind.key}, m.content, j.attempts "  # noqa: S608
            f"FROM {kind.jobs} j JOIN {kind.items} m ON m.id = j.{kind.key} "
            "WHERE j.model = ? AND j.state = 'pending' "
        )
        reader = self.store.reader
        async with reader.execute(
            base + f"AND j.attempts = 0 ORDER BY j.{kind.key} LIMIT ?",
            (self.model, self.batch_size),
        ) as cursor:
            rows = list(await cursor.fetchall())
        if not rows:
            async with reader.execute(
                base + "AND j.attempts > 0 AND j.next_attempt_at <= ? "
                f"ORDER BY j.next_attempt_at, j.{kind.key} LIMIT 1",
                (self.model, self._clock()),
            ) as cursor:
                rows = list(await cursor.fetchall())
        jobs = []
        for row in rows:
            text = sent_text(kind, str(row[1]))
            jobs.append(_Job(int(row[0]), text, text_hash(text), int(row[2])))
        return jobs

    async def _next_due(self) -> float | None:
        async with self.store.reader.execute(
            "SELECT min(due) FROM (SELECT min(next_attempt_at) AS due FROM "
            "embedding_jobs WHERE model = ? AND state = 'pending' UNION ALL "
            "SELECT min(next_attempt_at) FROM message_embedding_jobs "
            "WHERE model = ? AND state = 'pending')",
            (self.model, self.model),
        ) as cursor:
            row = await cursor.fetchone()
        if row is None or row[0] is None:
            return None
        return max(float(row[0]) - self._clock(), 0.0)

    async def _cached(self, hashes: Sequence[bytes]) -> dict[bytes, Vector]:
        """Vectors this model already made for the same texts, of either kind."""
        marks = placeholders(len(hashes))
        sql = " UNION ALL ".join(
            f"SELECT j.text_hash, e.vector FROM {kind.jobs} j "  # noqa: S608
            f"JOIN {kind.vectors} e ON e.model = j.model AND e.{kind.key} = "
            f"j.{kind.key} WHERE j.model = ? AND j.text_hash IN ({marks})"
            for kind in _KINDS
        )
        args = [arg for _kind in _KINDS for arg in (self.model, *hashes)]
        async with self.store.reader.execute(sql, args) as cursor:
            rows = await cursor.fetchall()
        return {bytes(row[0]): np.frombuffer(row[1], dtype=np.float32) for row in rows}

    async def _process(self, kind: _Kind, jobs: list[_Job]) -> None:
        vectors = await self._cached(sorted({job.text_hash for job in jobs}))
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
            # With the hash of the text the vector was made from (see above).
            hashes = {job.item_id: job.text_hash for job in jobs}
            now = self._clock()
            async with self.store.transaction() as conn:
                await conn.executemany(
                    f"UPDATE {kind.jobs} SET state = 'ready', attempts = 0, "  # noqa: S608
                    f"error = NULL, text_hash = ?, updated_at = ? WHERE model = ? "
                    f"AND {kind.key} = ?",
                    [(hashes[i], now, self.model, i) for i in stored],
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
            self.breaker.record_failure(
                DimensionChangedError(str(err), **err.placeholders)
            )
            return []
        return list(vectors)

    async def _store_message_vectors(self, vectors: dict[int, Vector]) -> list[int]:
        """Write unit vectors of messages that still exist; returns their ids.

        The conversation log's index reads them from the table (by id) on its
        next semantic search.
        """
        dims = {len(vector) for vector in vectors.values()}
        alive: list[int] = []
        async with self.store.transaction() as conn:
            async with conn.execute(
                "SELECT dim FROM embedding_models WHERE model = ?", (self.model,)
            ) as cursor:
                row = await cursor.fetchone()
            expected = int(row[0]) if row is not None else min(dims)
            if dims != {expected}:
                error = DimensionChangedError(
                    f"{self.model} made {expected}-dimensional vectors, now "
                    f"{sorted(dims)}",
                    expected=str(expected),
                    got=",".join(str(dim) for dim in sorted(dims)),
                )
            else:
                error = None
                if row is None:
                    await conn.execute(
                        "INSERT INTO embedding_models (model, dim, created_at) "
                        "VALUES (?, ?, ?)",
                        (self.model, expected, self._clock()),
                    )
                ids = sorted(vectors)
                async with conn.execute(
                    "SELECT id FROM conversation_messages "  # noqa: S608
                    f"WHERE id IN ({placeholders(len(ids))})",
                    ids,
                ) as cursor:
                    alive = [int(found[0]) for found in await cursor.fetchall()]
                await conn.executemany(
                    "INSERT OR REPLACE INTO message_embeddings (message_id, model, "
                    "vector) VALUES (?, ?, ?)",
                    [
                        (
                            item_id,
                            self.model,
                            (vectors[item_id] / np.linalg.norm(vectors[item_id]))
                            .astype(np.float32)
                            .tobytes(),
                        )
                        for item_id in alive
                    ],
                )
        if error is not None:
            self.breaker.record_failure(error)
            return []
        return alive

    async def _record_failure(
        self, kind: _Kind, jobs: list[_Job], error: ProviderError
    ) -> None:
        """Back off these jobs; after `MAX_ATTEMPTS` leave them in `error`."""
        now = self._clock()
        message = str(error)[:_ERROR_CHARS]
        async with self.store.transaction() as conn:
            for job in jobs:
                attempts = job.attempts + 1
                state = JOB_ERROR if attempts >= MAX_ATTEMPTS else JOB_PENDING
                delay = RETRY_BASE * RETRY_FACTOR ** (attempts - 1)
                await conn.execute(
                    f"UPDATE {kind.jobs} SET state = ?, attempts = ?, "  # noqa: S608
                    "next_attempt_at = ?, error = ?, updated_at = ? "
                    f"WHERE model = ? AND {kind.key} = ?",
                    (
                        state,
                        attempts,
                        now + delay,
                        message,
                        now,
                        self.model,
                        job.item_id,
                    ),
                )
        _LOGGER.debug("Embedding of %s %s failed (%s)", len(jobs), kind.name, error.key)

    async def _probe(self) -> None:
        try:
            matrix = await self.provider.embed([PROBE_TEXT], query=True)
            self._check_dimensions(matrix.shape[1])
        except ProviderError as err:
            self.breaker.record_failure(err)
        else:
            self.breaker.record_success()

    async def _finish_rebuilds(self) -> None:
        kinds = [kind for kind in _KINDS if self._rebuilding[kind]]
        if not kinds:
            return
        async with self.store.transaction() as conn:
            for kind in kinds:
                await conn.execute(
                    f"DELETE FROM {kind.rebuilds} WHERE model = ? AND NOT EXISTS "  # noqa: S608
                    f"(SELECT 1 FROM {kind.jobs} WHERE model = ? AND state = 'pending')",
                    (self.model, self.model),
                )
                async with conn.execute(
                    f"SELECT EXISTS (SELECT 1 FROM {kind.rebuilds} WHERE model = ?)",  # noqa: S608
                    (self.model,),
                ) as cursor:
                    row = await cursor.fetchone()
                self._rebuilding[kind] = bool(row and row[0])

    async def status(self) -> QueueStatus:
        """Count this model's jobs by state, memories and messages apart."""
        async with self.store.reader.execute(
            "SELECT 'memories', state, count(*) FROM embedding_jobs WHERE model = ? "
            "GROUP BY state UNION ALL SELECT 'messages', state, count(*) FROM "
            "message_embedding_jobs WHERE model = ? GROUP BY state",
            (self.model, self.model),
        ) as cursor:
            counts = {
                (str(row[0]), str(row[1])): int(row[2])
                for row in await cursor.fetchall()
            }
        return QueueStatus(
            model=self.model,
            pending=counts.get(("memories", JOB_PENDING), 0),
            ready=counts.get(("memories", JOB_READY), 0),
            failed=counts.get(("memories", JOB_ERROR), 0),
            rebuilding=self.rebuilding,
            messages_pending=counts.get(("messages", JOB_PENDING), 0),
            messages_ready=counts.get(("messages", JOB_READY), 0),
            messages_failed=counts.get(("messages", JOB_ERROR), 0),
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
