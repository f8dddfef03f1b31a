"""The embedding queue, cache and circuit breaker against a local Ollama server."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from custom_components.memory.engine import MemoryStatus, SearchQuery, Signal
from custom_components.memory.engine.embedding.breaker import (
    BREAKER_BASE_DELAY,
    BreakerState,
)
from custom_components.memory.engine.embedding.jobs import (
    MAX_ATTEMPTS,
    RETRY_BASE,
    QueueStatus,
    count_missing,
    text_hash,
)
from custom_components.memory.engine.embedding.providers import (
    CannotConnectError,
    OllamaProvider,
)
from custom_components.memory.engine.embedding.queue import EmbeddingQueue
from custom_components.memory.engine.memory_store import MemoryStore
from custom_components.memory.engine.sql import read_one
from tests.engine.conftest import (
    PROVIDER_MODEL,
    FakeClock,
    StoreFactory,
    fresh_bool,
    make_queue,
    memory,
    run_until_idle,
)
from tests.provider_servers import FakeEmbeddingServer, fake_vector

MODEL = PROVIDER_MODEL


@pytest.fixture
async def store(store_factory: StoreFactory) -> MemoryStore:
    """Open a store that files vectors under the provider's model."""
    return await store_factory(model=MODEL)


async def _semantic(store: MemoryStore, queue: EmbeddingQueue, text: str) -> list[int]:
    vector = await queue.query_vector(text)
    hits = await store.search(SearchQuery(text=text, vector=vector, limit=5))
    return [hit.item.id for hit in hits]


async def _job(store: MemoryStore, memory_id: int) -> tuple[str, int, str | None]:
    row = await read_one(
        store.reader,
        "SELECT state, attempts, error FROM embedding_jobs WHERE memory_id = ? "
        "AND model = ?",
        (memory_id, MODEL),
    )
    assert row is not None
    return str(row[0]), int(row[1]), row[2]


async def test_rebuild_then_semantic_search(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Existing memories are embedded in batches; search stays keyword-only until done."""
    nuts = (await store.add(memory("Mia is allergic to nuts"))).item.id
    for i in range(40):
        await store.add(memory(f"filler memory {i}"))
    queue = make_queue(store, provider, clock)

    assert await queue.start() == 41
    assert queue.rebuilding
    assert await queue.status() == QueueStatus(model=MODEL, pending=41, rebuilding=True)
    assert await count_missing(store, MODEL) == 41
    # During the rebuild no query vector is made: keyword search answers.
    assert await queue.query_vector("peanut allergy") is None
    assert await _semantic(store, queue, "peanut allergy") == []

    assert await run_until_idle(queue) is None
    status = await queue.status()
    assert (status.ready, status.pending, status.rebuilding) == (41, 0, False)
    assert status.progress == 100.0
    assert embedding_server.texts == [32, 9]
    assert await count_missing(store, MODEL) == 0
    # "peanut allergy" shares no word with the memory, only meaning.
    assert (await _semantic(store, queue, "peanut allergy"))[0] == nuts
    hits = await store.search(
        SearchQuery(
            text="peanut allergy", vector=await queue.query_vector("peanut allergy")
        )
    )
    assert hits[0].matched == (Signal.SEMANTIC,)


async def test_new_memories_are_not_a_rebuild(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Memories added later are queued by `sync` and embedded; search stays semantic."""
    queue = make_queue(store, provider, clock)
    assert await queue.start() == 0
    assert not queue.rebuilding
    assert await queue.run_once() is None  # nothing to do, nothing written
    nuts = (await store.add(memory("Mia is allergic to nuts"))).item.id
    bins = (await store.add(memory("The bins go out on Thursday"))).item.id

    assert (await queue.status()).pending == 0  # not seen yet
    assert await run_until_idle(queue) is None
    assert (await queue.status()).ready == 2
    assert (await _semantic(store, queue, "peanut allergy"))[0] == nuts
    assert (await _semantic(store, queue, "rubbish collection"))[0] == bins
    assert await queue.sync() == 0


async def test_cache_makes_no_provider_call(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Re-adding, re-embedding and rebuilding unchanged text asks the provider nothing."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    first = (await store.add(memory("Mia is allergic to nuts"))).item.id
    # The same text in another scope, in the same batch: embedded once.
    await store.add(memory("Mia is allergic to nuts", scope="person.anna"))
    await run_until_idle(queue)
    assert embedding_server.embedded == 1

    # Re-adding after forgetting (archived, so its vector stays).
    await store.forget([first])
    again = (await store.add(memory("Mia is allergic to nuts"))).item.id
    assert again != first
    await run_until_idle(queue)
    assert embedding_server.embedded == 1
    assert (await store.get(again)) is not None

    # Re-embedding: a job back to pending (a crash between vector and state).
    async with store.transaction() as conn:
        await conn.execute("UPDATE embedding_jobs SET state = 'pending'")
    await run_until_idle(queue)
    assert embedding_server.embedded == 1
    assert (await queue.status()).ready == 3

    # A rebuild after a restart, on a reopened store.
    await store.close()
    await store.open()
    again_queue = make_queue(store, provider, clock)
    async with store.transaction() as conn:
        await conn.execute("DELETE FROM embedding_jobs")
    await again_queue.start()
    assert again_queue.rebuilding
    await run_until_idle(again_queue)
    assert embedding_server.embedded == 1
    assert not fresh_bool(again_queue.rebuilding)

    # The query side has its own (in-memory) cache.
    calls = embedding_server.calls["ollama.embed"]
    await again_queue.query_vector("nut allergy")
    await again_queue.query_vector("nut allergy")
    assert embedding_server.calls["ollama.embed"] == calls + 1
    assert await again_queue.query_vector("  ") is None
    assert await again_queue.query_vector("*") is None
    # It is bounded: the oldest query goes first.
    again_queue._query_cache_size = 2
    for text in ("first query", "second query", "third query"):
        await again_queue.query_vector(text)
    assert len(again_queue._query_cache) == 2


async def test_purge_removes_the_cached_vector(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A purged memory leaves no vector or text hash behind: re-adding embeds anew."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    item = (await store.add(memory("The safe code is 4711"))).item.id
    await run_until_idle(queue)
    assert embedding_server.embedded == 1

    await store.forget([item], purge=True)
    for table in ("embedding_jobs", "embeddings"):
        rows = await store.reader.execute_fetchall(f"SELECT count(*) FROM {table}")  # noqa: S608
        assert [tuple(row) for row in rows] == [(0,)]

    await store.add(memory("The safe code is 4711"))
    await run_until_idle(queue)
    assert embedding_server.embedded == 2


async def test_restart_resumes_pending_work(
    store_factory: StoreFactory,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Pending jobs are in the database: a new process finishes them."""
    store = await store_factory(model=MODEL)
    queue = make_queue(store, provider, clock, batch_size=2)
    await queue.start()
    for text in ("one memory", "two memory", "three memory", "four memory"):
        await store.add(memory(text))
    assert await queue.run_once() == 0  # one batch of two
    await store.close()

    reopened = await store_factory(model=MODEL)
    resumed = make_queue(reopened, provider, clock, batch_size=2)
    assert await resumed.start() == 0  # nothing new: the jobs were queued before
    assert (await resumed.status()).pending == 2
    await run_until_idle(resumed)
    assert (await resumed.status()).ready == 4
    assert embedding_server.texts == [2, 2]


async def test_breaker_opens_serves_keywords_and_closes(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Down: work waits, queries get no vector at once; back: all resumes."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    nuts = (await store.add(memory("Mia is allergic to nuts"))).item.id
    await run_until_idle(queue)
    changes: list[BreakerState] = []
    queue.breaker.add_listener(lambda: changes.append(queue.breaker.state))

    await embedding_server.stop()
    pending = (await store.add(memory("Peanuts are kept in the top cupboard"))).item.id
    delay = await queue.run_once()
    assert delay == BREAKER_BASE_DELAY
    assert queue.breaker.state is BreakerState.OPEN
    assert isinstance(queue.breaker.last_error, CannotConnectError)
    assert queue.breaker.down_since == clock.now
    assert await _job(store, pending) == ("pending", 0, None)  # not held against it

    # Queries: no vector, no request, no waiting; keyword search still finds.
    started = time.perf_counter()
    assert await queue.query_vector("peanut allergy") is None
    assert time.perf_counter() - started < 0.01
    hits = await store.search(SearchQuery(text="allergic", vector=None))
    assert [hit.item.id for hit in hits] == [nuts]

    # Not due yet: nothing is tried. Due: one probe (the batch), backing off.
    clock.advance(BREAKER_BASE_DELAY / 2)
    assert await queue.run_once() == BREAKER_BASE_DELAY / 2
    clock.advance(BREAKER_BASE_DELAY / 2)
    assert await queue.run_once() == 2 * BREAKER_BASE_DELAY
    assert queue.breaker.failures == 2

    await embedding_server.start()
    clock.advance(2 * BREAKER_BASE_DELAY)
    assert await run_until_idle(queue) is None
    assert fresh_bool(queue.breaker.closed)
    assert fresh_bool(queue.breaker.down_since is None)
    assert await _job(store, pending) == ("ready", 0, None)
    assert changes == [BreakerState.OPEN, BreakerState.OPEN, BreakerState.CLOSED]
    assert (await _semantic(store, queue, "peanut allergy"))[:2] == [pending, nuts] or (
        set((await _semantic(store, queue, "peanut allergy"))[:2]) == {pending, nuts}
    )


async def test_probe_without_pending_work(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A query that failed opens the breaker; with no work queued, a probe closes it."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    embedding_server.status = 503
    assert await queue.query_vector("anything") is None
    assert not queue.breaker.closed
    assert await queue.run_once() == BREAKER_BASE_DELAY

    clock.advance(BREAKER_BASE_DELAY)
    assert await queue.run_once() == 2 * BREAKER_BASE_DELAY  # probe fails
    embedding_server.status = None
    clock.advance(2 * BREAKER_BASE_DELAY)
    assert await queue.run_once() == 0  # probe succeeds
    assert fresh_bool(queue.breaker.closed)
    assert await queue.run_once() is None
    assert await queue.query_vector("anything") is not None


async def test_slow_query_opens_the_breaker(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A query embedding over the limit is abandoned; the next one does not wait."""
    queue = make_queue(store, provider, clock, query_timeout=0.2)
    await queue.start()
    embedding_server.delay = 2.0
    started = time.perf_counter()
    assert await queue.query_vector("slow question") is None
    assert time.perf_counter() - started < 1.0
    assert queue.breaker.last_error is not None
    assert queue.breaker.last_error.key == "timeout"
    started = time.perf_counter()
    assert await queue.query_vector("another question") is None
    assert time.perf_counter() - started < 0.01


async def test_refused_text_is_retried_alone_then_left_in_error(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A text the provider refuses backs off, goes alone, and ends in `error`."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    good = (await store.add(memory("The bins go out on Thursday"))).item.id
    bad = (await store.add(memory("REJECT this very long memory"))).item.id
    embedding_server.reject = "REJECT"

    assert await queue.run_once() == 0
    assert queue.breaker.closed  # the provider is fine
    assert await _job(store, bad) == (
        "pending",
        1,
        "ollama answered HTTP 400: input rejected",
    )
    assert await run_until_idle(queue) == RETRY_BASE
    clock.advance(RETRY_BASE)
    await run_until_idle(queue)  # each goes alone: the good one succeeds
    assert (await _job(store, good))[0] == "ready"
    assert (await _job(store, bad))[:2] == ("pending", 2)

    for _ in range(MAX_ATTEMPTS):
        delay = await run_until_idle(queue)
        if delay is None:
            break
        clock.advance(delay)
    state, attempts, error = await _job(store, bad)
    assert (state, attempts) == ("error", MAX_ATTEMPTS)
    assert error is not None
    assert await queue.status() == QueueStatus(model=MODEL, ready=1, failed=1)
    # Still found by keywords.
    hits = await store.search(SearchQuery(text="very long memory"))
    assert [hit.item.id for hit in hits] == [bad]


async def test_dimension_change_is_reported_not_stored(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A model that changes its dimension opens the breaker with a clear error."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    await store.add(memory("first memory"))
    await run_until_idle(queue)
    embedding_server.dimension = 48
    item = (await store.add(memory("second memory"))).item.id

    await queue.run_once()
    error = queue.breaker.last_error
    assert error is not None
    assert error.key == "dimension_changed"
    assert error.placeholders == {"expected": "32", "got": "48"}
    assert await _job(store, item) == ("pending", 0, None)

    # A query vector of the wrong length is never handed to search.
    queue.breaker.record_success()
    assert await queue.query_vector("second") is None
    assert not queue.breaker.closed


async def test_store_knows_the_dimension_first(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Without a measured dimension the store's learned one still guards it."""
    await store.add(memory("first memory"))
    queue = EmbeddingQueue(store, provider, MODEL, clock=clock)
    await queue.start()
    await run_until_idle(queue)
    assert queue.dimensions == 32

    # A queue that was told nothing, on a store whose model has 32 dimensions.
    embedding_server.dimension = 16
    fresh = EmbeddingQueue(store, provider, MODEL, clock=clock)
    async with store.transaction() as conn:
        await conn.execute("DELETE FROM embedding_jobs")
    await store.add(memory("second memory"))
    fresh._dim = None
    await fresh.start()
    fresh._dim = None  # as if it had never read it
    await fresh.run_once()
    assert fresh.breaker.last_error is not None
    assert fresh.breaker.last_error.key == "dimension_changed"


async def test_zero_vector_is_an_item_failure(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A zero vector cannot be searched: the item backs off, the provider is fine."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    item = (await store.add(memory("empty meaning"))).item.id
    embedding_server.answer = {"embeddings": [[0.0] * 32]}
    await queue.run_once()
    assert queue.breaker.closed
    state, attempts, _error = await _job(store, item)
    assert (state, attempts) == ("pending", 1)
    embedding_server.answer = None
    embedding_server.answer = {"embeddings": [[0.0] * 32]}
    assert await queue.query_vector("empty meaning") is None


async def test_purged_while_embedding(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A memory purged while its batch is with the provider is simply skipped."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    gone = (await store.add(memory("soon purged"))).item.id
    kept = (await store.add(memory("kept memory"))).item.id
    embedding_server.delay = 0.3
    work = asyncio.create_task(queue.run_once())
    await asyncio.sleep(0.1)
    await store.forget([gone], purge=True)
    await work
    assert await _job(store, kept) == ("ready", 0, None)
    assert (await queue.status()).total == 1

    # Everything purged while embedding: nothing stored, nothing fails.
    only = (await store.add(memory("also purged"))).item.id
    work = asyncio.create_task(queue.run_once())
    await asyncio.sleep(0.1)
    await store.forget([only], purge=True)
    await work
    assert (await queue.status()).total == 1


async def test_archived_memories_are_embedded_too(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """`status: any` searches use vectors as well, so every memory gets one."""
    item = (await store.add(memory("an old fact"))).item.id
    await store.forget([item])
    queue = make_queue(store, provider, clock)
    await queue.start()
    await run_until_idle(queue)
    assert (await store.get(item)).status is MemoryStatus.ARCHIVED  # type: ignore[union-attr]
    assert await _job(store, item) == ("ready", 0, None)
    await queue.close()


async def _hash_and_vector(
    store: MemoryStore, memory_id: int
) -> tuple[bytes, bytes, str]:
    row = await read_one(
        store.reader,
        "SELECT j.text_hash, e.vector, j.state FROM embedding_jobs j JOIN embeddings "
        "e ON e.memory_id = j.memory_id AND e.model = j.model WHERE j.memory_id = ? "
        "AND j.model = ?",
        (memory_id, MODEL),
    )
    assert row is not None
    return bytes(row[0]), bytes(row[1]), str(row[2])


async def test_secrets_never_reach_the_provider(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Memories and queries go out with "[redacted]" where their codes were.

    Redaction comes before the cache key: two codes in the same sentence are
    one text to embed, and one query.
    """
    queue = make_queue(store, provider, clock)
    await queue.start()
    first = (await store.add(memory("The garage door code is 7731"))).item.id
    await store.add(memory("The garage door code is 1234", scope="person.anna"))
    await store.add(memory("Mia is allergic to nuts"))
    await run_until_idle(queue)
    assert embedding_server.received == [
        "The garage door code is [redacted]",
        "Mia is allergic to nuts",
    ]
    digest, _vector, state = await _hash_and_vector(store, first)
    assert state == "ready"
    assert digest == text_hash("The garage door code is [redacted]")

    assert await queue.query_vector("is the garage code 7731?") is not None
    assert await queue.query_vector("is the garage code 0000?") is not None
    assert embedding_server.received[2:] == ["is the garage code [redacted]"]

    # Whoever calls a provider directly gets the same treatment.
    await provider.embed(["password: correct-horse-battery, then the lights"])
    assert embedding_server.received[-1] == "password: [redacted], then the lights"
    assert not any(
        secret in text
        for text in embedding_server.received
        for secret in ("7731", "1234", "0000", "correct-horse")
    )


async def test_vectors_made_before_redaction_stay_and_are_not_reused(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A database from before redaction keeps its vectors; none serves a new text.

    Its jobs' hashes are of the unredacted texts: nothing is re-embedded at
    start, and the same sentence added again is embedded redacted instead of
    getting the old vector of the sentence with its code.
    """
    said = "The safe code is 4711"
    old = (await store.add(memory(said))).item.id
    plain = (await store.add(memory("Mia is allergic to nuts"))).item.id
    # As an earlier version left them: the texts as said, and their hashes.
    old_vector = np.asarray(fake_vector(said, 32), dtype=np.float32)
    plain_vector = np.asarray(
        fake_vector("Mia is allergic to nuts", 32), dtype=np.float32
    )
    await store.set_vectors({old: old_vector, plain: plain_vector})
    async with store.transaction() as conn:
        await conn.executemany(
            "INSERT INTO embedding_jobs (memory_id, model, text_hash, state, "
            "updated_at) VALUES (?, ?, ?, 'ready', 0)",
            [
                (old, MODEL, text_hash(said)),
                (plain, MODEL, text_hash("Mia is allergic to nuts")),
            ],
        )
    before = await _hash_and_vector(store, old)

    queue = make_queue(store, provider, clock)
    assert await queue.start() == 0
    await run_until_idle(queue)
    assert embedding_server.embedded == 0  # nothing re-embedded
    assert await _hash_and_vector(store, old) == before

    again = (await store.add(memory(said, scope="person.anna"))).item.id
    await store.add(memory("Mia is allergic to nuts", scope="person.anna"))
    await run_until_idle(queue)
    # The code's sentence is embedded, redacted; the plain one comes from cache.
    assert embedding_server.received == ["The safe code is [redacted]"]
    digest, vector, _state = await _hash_and_vector(store, again)
    assert digest == text_hash("The safe code is [redacted]")
    assert vector != before[1]
    assert await _hash_and_vector(store, old) == before
