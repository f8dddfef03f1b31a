"""The embedding queue on either backend: the same scenarios on SQLite and PostgreSQL.

`backend` is a real `MemoryStore` or a real `PostgresStore` on a fresh
database, and the provider a real Ollama-speaking server
(`tests/provider_servers.py`). Each scenario runs once on each: memories
added are embedded and their vectors searched, a refusing provider's jobs
back off and a provider that is down opens the breaker, a reworded memory
is embedded again, a vector made from a secret the detector of its day
missed is made again from the redacted text. On PostgreSQL two queues of two instances draining one
database at once embed each job exactly once, work a crashed instance
claimed is done by another once the lease lapses, and a memory reworded
while its batch is with the provider is embedded again for its new text.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import asyncpg
import numpy as np
import pytest

from custom_components.memory.engine import MemoryStore, SearchQuery, Signal
from custom_components.memory.engine.embedding import (
    PROCESS_INSTANCE,
    EmbeddingQueue,
    QueueStatus,
    SqliteJobs,
)
from custom_components.memory.engine.embedding.breaker import (
    BREAKER_BASE_DELAY,
    BreakerState,
)
from custom_components.memory.engine.embedding.jobs import (
    MEMORIES,
    RETRY_BASE,
    RETRY_FACTOR,
    text_hash,
)
from custom_components.memory.engine.embedding.providers import (
    CannotConnectError,
    OllamaProvider,
)
from custom_components.memory.engine.embedding.secret_recheck import recheck
from custom_components.memory.engine.postgres import PostgresJobs, PostgresStore
from custom_components.memory.engine.postgres.jobs import LEASE_SECONDS
from custom_components.memory.engine.privacy import redacted
from tests.engine.conftest import (
    PROVIDER_MODEL,
    FakeClock,
    StoreFactory,
    fresh_bool,
    memory,
    run_until_idle,
)
from tests.engine.postgres.stores import PgStores, Store
from tests.provider_servers import FakeEmbeddingServer, fake_vector

MODEL = PROVIDER_MODEL
DIM = 32

type Job = tuple[str, int, str | None, float]


@pytest.fixture
async def pg_stores(
    backend_url: str | None, clock: FakeClock
) -> AsyncIterator[PgStores | None]:
    """Open PostgresStores on the test's database (None on SQLite); closed after."""
    if backend_url is None:
        yield None
        return
    stores = PgStores(backend_url, clock)
    try:
        yield stores
    finally:
        await stores.close_all()


@pytest.fixture
async def backend(pg_stores: PgStores | None, store_factory: StoreFactory) -> Store:
    """Open a store of each backend in turn, filing vectors under the provider's model."""
    if pg_stores is None:
        return await store_factory(model=MODEL)
    return await pg_stores.open(model=MODEL)


def _queue(
    store: Store, provider: OllamaProvider, clock: FakeClock, **kwargs: Any
) -> EmbeddingQueue:
    return EmbeddingQueue(store, provider, MODEL, clock=clock, dimensions=DIM, **kwargs)


async def _job(store: Store, url: str | None, memory_id: int) -> Job:
    """Read one memory's job: state, attempts, error, when it is due."""
    sql = (
        "SELECT state, attempts, error, next_attempt_at FROM embedding_jobs "
        "WHERE memory_id = {} AND model = {}"
    )
    if isinstance(store, MemoryStore):
        rows = await store.reader.execute_fetchall(
            sql.format("?", "?"), (memory_id, MODEL)
        )
        row: Any = next(iter(rows))
    else:
        assert url is not None
        connection = await asyncpg.connect(url)
        try:
            row = await connection.fetchrow(sql.format("$1", "$2"), memory_id, MODEL)
        finally:
            await connection.close()
    assert row is not None
    return str(row[0]), int(row[1]), row[2], float(row[3])


async def _execute(store: Store, url: str | None, sql: str, *args: Any) -> None:
    """Run one write on either backend (`{}` marks each argument)."""
    if isinstance(store, MemoryStore):
        async with store.transaction() as conn:
            await conn.execute(sql.format(*("?" for _ in args)), args)
        return
    assert url is not None
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(
            sql.format(*(f"${i}" for i in range(1, len(args) + 1))), *args
        )
    finally:
        await connection.close()


def _unit(text: str) -> np.ndarray[Any, np.dtype[np.float32]]:
    values = np.asarray(fake_vector(text, DIM), dtype=np.float32)
    return (values / np.linalg.norm(values)).astype(np.float32)


async def test_the_queue_uses_the_backends_job_tables(
    backend: Store, provider: OllamaProvider, clock: FakeClock
) -> None:
    """SQLite's queue keeps SQLite's jobs; PostgreSQL's claims in its instance's name."""
    queue = _queue(backend, provider, clock)
    assert queue.instance == PROCESS_INSTANCE
    if isinstance(backend, PostgresStore):
        assert isinstance(queue._jobs, PostgresJobs)
        named = _queue(backend, provider, clock, instance="ha-2")._jobs
        assert isinstance(named, PostgresJobs)
        assert named.instance == "ha-2"
    else:
        assert isinstance(queue._jobs, SqliteJobs)


async def test_memories_are_embedded_and_searched(
    backend: Store,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A rebuild, then new memories: their vectors land and hybrid search uses them."""
    nuts = (await backend.add(memory("Mia is allergic to nuts"))).item.id
    queue = _queue(backend, provider, clock)
    assert await queue.start() == 1
    assert queue.rebuilding
    assert await queue.query_vector("peanut allergy") is None  # keywords meanwhile
    assert await run_until_idle(queue) is None
    assert not fresh_bool(queue.rebuilding)

    bins = (await backend.add(memory("The bins go out on Thursday"))).item.id
    assert (await queue.status()).pending == 0  # not seen yet
    assert await run_until_idle(queue) is None
    assert await queue.status() == QueueStatus(model=MODEL, ready=2)
    assert sorted(embedding_server.received) == [
        "Mia is allergic to nuts",
        "The bins go out on Thursday",
    ]
    stored = await backend.stored_vectors([nuts, bins])
    np.testing.assert_allclose(
        stored[nuts], _unit("Mia is allergic to nuts"), atol=1e-6
    )
    np.testing.assert_allclose(
        stored[bins], _unit("The bins go out on Thursday"), atol=1e-6
    )

    # "peanut allergy" shares no word with the memory, only meaning.
    vector = await queue.query_vector("peanut allergy")
    assert vector is not None
    hits = await backend.search(SearchQuery(text="peanut allergy", vector=vector))
    assert hits[0].item.id == nuts
    assert hits[0].matched == (Signal.SEMANTIC,)
    vector = await queue.query_vector("rubbish collection Thursday")
    hits = await backend.search(
        SearchQuery(text="rubbish collection Thursday", vector=vector)
    )
    assert hits[0].item.id == bins
    assert set(hits[0].matched) == {Signal.KEYWORD, Signal.SEMANTIC}

    # The same text again (another scope) comes from the cache, not the provider.
    asked = embedding_server.embedded
    await backend.add(memory("Mia is allergic to nuts", scope="person.anna"))
    assert await run_until_idle(queue) is None
    assert embedding_server.embedded == asked
    assert (await queue.status()).ready == 3


async def test_a_failing_provider_backs_off_and_opens_the_breaker(
    backend: Store,
    backend_url: str | None,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A refused text waits with backoff; a provider that is down opens the breaker."""
    queue = _queue(backend, provider, clock)
    await queue.start()
    good = (await backend.add(memory("The bins go out on Thursday"))).item.id
    bad = (await backend.add(memory("REJECT this very long memory"))).item.id
    embedding_server.reject = "REJECT"

    assert await queue.run_once() == 0
    assert queue.breaker.closed  # the provider is fine, the text is not
    assert await _job(backend, backend_url, bad) == (
        "pending",
        1,
        "ollama answered HTTP 400: input rejected",
        clock.now + RETRY_BASE,
    )
    # The batch was refused: each of its jobs now goes alone, the good one
    # succeeds; the refused one backs off longer.
    assert (await _job(backend, backend_url, good))[:2] == ("pending", 1)
    assert await run_until_idle(queue) == RETRY_BASE
    clock.advance(RETRY_BASE)
    assert await run_until_idle(queue) == RETRY_BASE * RETRY_FACTOR
    assert (await _job(backend, backend_url, good))[:2] == ("ready", 0)
    assert (await _job(backend, backend_url, bad))[:2] == ("pending", 2)
    assert (await queue.status()).pending == 1

    embedding_server.reject = None
    await embedding_server.stop()
    later = (await backend.add(memory("Peanuts are kept in the top cupboard"))).item.id
    assert await queue.run_once() == BREAKER_BASE_DELAY
    assert queue.breaker.state is BreakerState.OPEN
    assert isinstance(queue.breaker.last_error, CannotConnectError)
    # Not held against the text: still pending, never tried.
    assert (await _job(backend, backend_url, later))[:3] == ("pending", 0, None)
    assert await queue.query_vector("peanut allergy") is None

    await embedding_server.start()
    clock.advance(RETRY_BASE * RETRY_FACTOR)
    assert await run_until_idle(queue) is None
    assert fresh_bool(queue.breaker.closed)
    assert await queue.status() == QueueStatus(model=MODEL, ready=3)
    assert (await _job(backend, backend_url, later))[:3] == ("ready", 0, None)


async def test_a_reworded_memory_is_embedded_again(
    backend: Store,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Rewording puts the job back to pending; the new text's vector replaces the old."""
    queue = _queue(backend, provider, clock)
    await queue.start()
    item = (await backend.add(memory("Mia is allergic to nuts"))).item.id
    await run_until_idle(queue)

    await backend.update_content(item, content="Mia plays the violin on Sundays")
    assert (await queue.status()).pending == 1
    assert await run_until_idle(queue) is None
    assert embedding_server.received == [
        "Mia is allergic to nuts",
        "Mia plays the violin on Sundays",
    ]
    assert await queue.status() == QueueStatus(model=MODEL, ready=1)
    stored = await backend.stored_vectors([item])
    np.testing.assert_allclose(
        stored[item], _unit("Mia plays the violin on Sundays"), atol=1e-6
    )


async def test_a_vector_made_from_a_secret_is_made_again_redacted(
    backend: Store,
    backend_url: str | None,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """The recheck puts back the job of a text sent whole; the worker sends it redacted."""
    garage_text = "Der Garagencode ist 4512"
    queue = _queue(backend, provider, clock)
    await queue.start()
    garage = (await backend.add(memory(garage_text))).item.id
    nuts = (await backend.add(memory("Mia is allergic to nuts"))).item.id
    assert await run_until_idle(queue) is None
    # A pass over rows embedded now finds nothing stale (SQLite's new store
    # recorded its detector at creation; PostgreSQL's reads its rows once).
    while await recheck(backend):
        pass
    assert (await _job(backend, backend_url, garage))[0] == "ready"
    # As the detector of its day left it: embedded whole, nothing checked yet.
    await backend.set_vectors({garage: fake_vector(garage_text, DIM)})
    await _execute(
        backend,
        backend_url,
        "UPDATE embedding_jobs SET text_hash = {} WHERE memory_id = {}",
        text_hash(garage_text),
        garage,
    )
    await _execute(backend, backend_url, "DELETE FROM store_settings")
    ready = await _job(backend, backend_url, nuts)

    assert await recheck(backend, limit=1) == 1  # the garage
    assert await recheck(backend, limit=1) == 1  # the nuts
    assert await recheck(backend, limit=1) == 0  # done, and recorded
    assert await recheck(backend) == 0
    assert (await _job(backend, backend_url, garage))[:2] == ("pending", 0)
    assert await _job(backend, backend_url, nuts) == ready

    embedding_server.received.clear()
    assert await run_until_idle(queue) is None
    assert embedding_server.received == [redacted(garage_text)]
    assert (await _job(backend, backend_url, garage))[0] == "ready"
    stored = await backend.stored_vectors([garage])
    np.testing.assert_allclose(stored[garage], _unit(redacted(garage_text)), atol=1e-6)


@pytest.mark.parametrize("backend_url", ["postgres"], indirect=True)
async def test_two_queues_on_one_database_embed_each_job_once(
    pg_stores: PgStores,
    provider: OllamaProvider,
    session: aiohttp.ClientSession,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Two Home Assistants' queues drain one database at once: no text is sent twice."""
    one = await pg_stores.open(model=MODEL)
    two = await pg_stores.open(model=MODEL)
    second_server = FakeEmbeddingServer()
    await second_server.start()
    try:
        texts = [f"memory number {i} about the garden" for i in range(12)]
        for text in texts[:6]:
            await one.add(memory(text))
        first = _queue(one, provider, clock, batch_size=3, instance="ha-one")
        other_provider = OllamaProvider(
            session, model="embed-small", url=second_server.url
        )
        second = _queue(two, other_provider, clock, batch_size=3, instance="ha-two")
        assert await first.start() == 6
        assert await second.start() == 0  # the same jobs, queued once
        for text in texts[6:]:
            await two.add(memory(text))
        embedding_server.delay = second_server.delay = 0.1

        await asyncio.gather(run_until_idle(first), run_until_idle(second))
        await asyncio.gather(run_until_idle(first), run_until_idle(second))

        sent = Counter(embedding_server.received + second_server.received)
        assert sent == Counter(texts)  # each text once, over both providers
        assert embedding_server.received
        assert second_server.received
        for queue in (first, second):
            assert await queue.status() == QueueStatus(model=MODEL, ready=12)
            assert await queue.run_once() is None
        found = await one.search(SearchQuery(text="garden", limit=20))
        assert len(await two.stored_vectors([hit.item.id for hit in found])) == 12
    finally:
        await second_server.stop()


@pytest.mark.parametrize("backend_url", ["postgres"], indirect=True)
async def test_a_crashed_instances_claims_lapse_to_another(
    pg_stores: PgStores,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Work an instance claimed and never finished waits for its lease, then is done."""
    crashed = await pg_stores.open(model=MODEL)
    alive = await pg_stores.open(model=MODEL)
    item = (await crashed.add(memory("Mia is allergic to nuts"))).item.id
    gone = _queue(crashed, provider, clock, instance="ha-gone")
    await gone.start()
    # It claimed the batch, then its process died before embedding it.
    jobs = crashed.embedding_jobs("ha-gone")
    assert [
        job.item_id
        for job in await jobs.due_jobs(MEMORIES, MODEL, batch_size=8, now=clock.now)
    ] == [item]

    queue = _queue(alive, provider, clock, instance="ha-alive")
    await queue.start()
    assert await run_until_idle(queue) == LEASE_SECONDS  # until the claim lapses
    assert embedding_server.received == []
    clock.advance(LEASE_SECONDS)
    assert await run_until_idle(queue) is None
    assert embedding_server.received == ["Mia is allergic to nuts"]
    assert await queue.status() == QueueStatus(model=MODEL, ready=1)


@pytest.mark.parametrize("backend_url", ["postgres"], indirect=True)
async def test_a_memory_reworded_while_embedding_is_embedded_again(
    backend: Store,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """The reword drops the claim: the old text's batch marks nothing; the new text follows."""
    queue = _queue(backend, provider, clock)
    await queue.start()
    item = (await backend.add(memory("Mia is allergic to nuts"))).item.id
    embedding_server.delay = 0.3
    work = asyncio.create_task(queue.run_once())
    async with asyncio.timeout(10):  # until the old text is with the provider
        while not embedding_server.calls["ollama.embed"]:  # noqa: ASYNC110 - a server
            await asyncio.sleep(0.01)
    await backend.update_content(item, content="Mia plays the violin on Sundays")
    await work
    assert (await queue.status()).pending == 1  # not marked ready for the old text

    embedding_server.delay = 0.0
    assert await run_until_idle(queue) is None
    assert embedding_server.received == [
        "Mia is allergic to nuts",
        "Mia plays the violin on Sundays",
    ]
    stored = await backend.stored_vectors([item])
    np.testing.assert_allclose(
        stored[item], _unit("Mia plays the violin on Sundays"), atol=1e-6
    )
