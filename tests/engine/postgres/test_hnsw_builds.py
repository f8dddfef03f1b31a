"""HNSW builds in the background, against a real PostgreSQL 18 with pgvector.

A store opened over a model at its threshold returns from `open` at once
and builds the index afterwards (the table held by another session's lock
shows that nothing in `open` or `add` waits for the build); searches agree
before and after. Two stores building at once make one valid index; a
store closed mid-build cancels the build on the server, and the INVALID
index that leaves is dropped and built again by the next open; a failing
build is a WARNING without the URL, never an error of the caller, and the
next open tries again. The threshold is lowered (`StoreVectors.
hnsw_threshold`) so a few hundred rows cross it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import logging

import asyncpg
import numpy as np
import pytest

from custom_components.memory.engine import SearchQuery
from custom_components.memory.engine.embedding.job_store import job_store
from custom_components.memory.engine.postgres import (
    PgMessageVectors,
    PgVectorIndex,
    PostgresStore,
    conversation_log,
    register_vector,
)
from custom_components.memory.engine.postgres.hnsw_builds import (
    building,
    index_state,
    wait_builds,
)
from custom_components.memory.engine.postgres.message_vectors import (
    index_name as message_index_name,
)
from custom_components.memory.engine.postgres.store_vectors import StoreVectors
from custom_components.memory.engine.postgres.vectors import index_name
from tests.engine.conftest import DIM, MODEL, FakeClock, memory, vector
from tests.engine.postgres.stores import PgStores
from tests.engine.postgres.test_message_vectors import said, save
from tests.postgres_server import START_TIMEOUT

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT),
]

ROWS = 240
THRESHOLD = 200
INDEX = index_name(MODEL)
# Longer than any open or add here takes, far shorter than a build held back.
QUICK = 5.0


@pytest.fixture
async def stores(
    postgres_database: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[PgStores]:
    """Open PostgresStores with a threshold of THRESHOLD rows; all closed after."""
    monkeypatch.setattr(StoreVectors, "hnsw_threshold", THRESHOLD)
    opened = PgStores(postgres_database, clock)
    try:
        yield opened
    finally:
        await opened.close_all()


@pytest.fixture
async def other(postgres_database: str) -> AsyncIterator[asyncpg.Connection]:
    """Another session on the database: a user of the table, or a blocker."""
    connection = await asyncpg.connect(postgres_database)
    await register_vector(connection)
    try:
        yield connection
    finally:
        await connection.close()


async def fill(store: PostgresStore, count: int, first: int = 0) -> None:
    """Add `count` memories with vectors, numbered from `first`."""
    numbers = range(first, first + count)
    await store.add_many(
        [memory(f"Note {n}: the shelf number {n} holds box {n}.") for n in numbers],
        vectors=[vector(n) for n in numbers],
    )


async def state(connection: asyncpg.Connection, name: str = INDEX) -> bool | None:
    """Return the index's state: valid, INVALID (False) or absent (None)."""
    return await index_state(connection, name)


async def until(
    connection: asyncpg.Connection, wanted: bool | None, name: str = INDEX
) -> None:
    """Wait until the index reaches the wanted state."""
    async with asyncio.timeout(QUICK * 4):
        while await state(connection, name) is not wanted:  # noqa: ASYNC110
            await asyncio.sleep(0.05)


async def top10(store: PostgresStore) -> list[list[int]]:
    """Return the top-10 ids of 20 queries, as the store's index finds them."""
    index = PgVectorIndex(store.pool, MODEL, DIM)
    return [
        [item_id for item_id, _ in await index.knn(vector(n), 10)]
        for n in range(0, ROWS, ROWS // 20)
    ]


async def test_open_returns_at_once_and_the_build_follows(
    stores: PgStores, other: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over the threshold without an index, `open` does not build; the task does."""
    monkeypatch.setattr(StoreVectors, "hnsw_threshold", ROWS * 10)
    first = await stores.open()
    await fill(first, ROWS)
    await first.close()
    before = None
    monkeypatch.setattr(StoreVectors, "hnsw_threshold", THRESHOLD)
    # A session holding the table so that no index can be made on it: an
    # open that built in line would wait for it.
    async with other.transaction():
        await other.execute("LOCK TABLE memory_vectors IN SHARE UPDATE EXCLUSIVE MODE")
        async with asyncio.timeout(QUICK):
            store = await stores.open()
            before = await top10(store)  # searches answer meanwhile, exactly
        assert building(store.pool, INDEX)
        assert await state(other) is None
    await wait_builds(store.pool)
    assert await state(other) is True
    after = await top10(store)
    hits = sum(len(set(a) & set(b)) for a, b in zip(before, after, strict=True))
    assert hits / (10 * len(before)) >= 0.95
    assert [row[0] for row in before] == [row[0] for row in after]
    assert await PgVectorIndex(store.pool, MODEL, DIM).index_bytes() > 0
    found = await store.search(SearchQuery(text="shelf", vector=vector(7), limit=3))
    assert found[0].item.content.startswith("Note 7:")


async def test_crossing_the_threshold_through_add_builds_after(
    stores: PgStores, other: asyncpg.Connection
) -> None:
    """`add` returns while the build waits; the index then appears, valid."""
    store = await stores.open()
    await fill(store, THRESHOLD - 10)
    assert not building(store.pool, INDEX)
    async with other.transaction():
        await other.execute("LOCK TABLE memory_vectors IN SHARE UPDATE EXCLUSIVE MODE")
        async with asyncio.timeout(QUICK):
            await fill(store, ROWS - THRESHOLD + 10, first=THRESHOLD - 10)
        assert building(store.pool, INDEX)
        assert await state(other) is None
    await wait_builds(store.pool)
    assert await state(other) is True
    await fill(store, 5, first=ROWS)  # no second build: the index is there
    assert not building(store.pool, INDEX)


async def test_two_stores_building_at_once_make_one_index(
    stores: PgStores, other: asyncpg.Connection, caplog: pytest.LogCaptureFixture
) -> None:
    """Both start a build; one takes the lock and builds, the other sees it appear."""
    first, second = await stores.open(), await stores.open()
    await fill(first, THRESHOLD - 1)
    async with other.transaction():
        await other.execute("LOCK TABLE memory_vectors IN SHARE UPDATE EXCLUSIVE MODE")
        await fill(first, 1, first=THRESHOLD - 1)
        await fill(second, 1, first=THRESHOLD)
        assert building(first.pool, INDEX)
        assert building(second.pool, INDEX)
        await asyncio.sleep(0.2)
    await asyncio.gather(wait_builds(first.pool), wait_builds(second.pool))
    assert await state(other) is True
    count = await other.fetchval(
        "SELECT count(*) FROM pg_indexes WHERE tablename = 'memory_vectors'"
        " AND indexname LIKE 'memory_vectors_hnsw_%'"
    )
    assert count == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert await PgVectorIndex(second.pool, MODEL, DIM).has_hnsw()


async def test_a_close_mid_build_leaves_an_invalid_index_the_next_open_rebuilds(
    stores: PgStores, other: asyncpg.Connection, caplog: pytest.LogCaptureFixture
) -> None:
    """Closing cancels the build on the server; the INVALID leftover is rebuilt."""
    store = await stores.open()
    await fill(store, THRESHOLD - 1)
    async with other.transaction():
        # An unfinished write: the build makes its (INVALID) index, then
        # waits for the writers of the table to finish.
        await other.execute("UPDATE memory_vectors SET embedding = embedding")
        await fill(store, 1, first=THRESHOLD - 1)
        await until(other, False)
        pool = store.pool
        async with asyncio.timeout(QUICK):
            await store.close()
    assert not building(pool, INDEX)
    # The server's build was cancelled: the index stays INVALID, unlocked.
    await asyncio.sleep(0.2)
    assert await state(other) is False
    pending = await other.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX%'"
        " AND state = 'active'"
    )
    assert pending == 0
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    again = await stores.open()
    await wait_builds(again.pool)
    assert await state(other) is True


async def test_a_failing_build_warns_and_the_next_open_tries_again(
    stores: PgStores,
    other: asyncpg.Connection,
    caplog: pytest.LogCaptureFixture,
    postgres_database: str,
) -> None:
    """A build cancelled by the server is a WARNING; the store works on; reopen builds."""
    store = await stores.open()
    await fill(store, THRESHOLD - 1)
    async with other.transaction():
        await other.execute("LOCK TABLE memory_vectors IN SHARE UPDATE EXCLUSIVE MODE")
        await fill(store, 1, first=THRESHOLD - 1)
        async with asyncio.timeout(QUICK * 4):
            # pg_stat_activity is read once a transaction: cleared each time.
            while not await other.fetchval(
                "SELECT pg_cancel_backend(pid) FROM pg_stat_activity"
                " WHERE query LIKE 'CREATE INDEX%' AND wait_event_type = 'Lock'"
            ):
                await other.execute("SELECT pg_stat_clear_snapshot()")
                await asyncio.sleep(0.05)
    await wait_builds(store.pool)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    text = warnings[0].getMessage()
    assert INDEX in text and "QueryCanceledError" in text
    assert postgres_database not in caplog.text
    # The store works on, exactly, and does not try again on this pool.
    await fill(store, 5, first=THRESHOLD)
    assert not building(store.pool, INDEX)
    found = await store.search(SearchQuery(text="shelf", vector=vector(3), limit=1))
    assert found[0].item.content.startswith("Note 3:")
    assert await state(other) is not True
    await store.close()
    again = await stores.open()
    await wait_builds(again.pool)
    assert await state(other) is True


async def test_message_vectors_build_in_the_background(
    stores: PgStores, other: asyncpg.Connection
) -> None:
    """Message vectors: `maybe_build` starts the build; an open rebuilds a leftover."""
    store = await stores.open()
    name = message_index_name(MODEL)
    ids = await save(conversation_log(store), [said(f"m {n}") for n in range(ROWS)])
    matrix = np.random.default_rng(5).standard_normal((ROWS, DIM)).astype(np.float32)
    await job_store(store, "ha-test").store_message_vectors(
        MODEL, {item_id: matrix[n] for n, item_id in enumerate(ids)}, 0.0
    )
    assert not building(store.pool, name)  # the queue's threshold: 20000
    vectors = PgMessageVectors(store.pool, MODEL, threshold=THRESHOLD)
    async with other.transaction():
        await other.execute("LOCK TABLE message_vectors IN SHARE UPDATE EXCLUSIVE MODE")
        async with asyncio.timeout(QUICK):
            assert await vectors.maybe_build()
        assert building(store.pool, name)
        assert await state(other, name) is None
    await wait_builds(store.pool)
    assert await state(other, name) is True
    assert not await vectors.maybe_build()  # valid: nothing to do
    await store.close()
    # A build cut short by a close leaves an INVALID index; the next open
    # drops it and builds again.
    await other.execute(f"DROP INDEX {name}")
    async with other.transaction():
        await other.execute("UPDATE message_vectors SET embedding = embedding")
        second = await stores.open()
        await until(other, False, name)
        async with asyncio.timeout(QUICK):
            await second.close()
    assert await state(other, name) is False
    third = await stores.open()
    await wait_builds(third.pool)
    assert await state(other, name) is True


async def test_an_explicit_build_waits_its_turn_and_a_leftover_below_the_threshold_goes(
    stores: PgStores, other: asyncpg.Connection
) -> None:
    """`build_hnsw` waits while another holds the lock; an INVALID index is dropped.

    A model no longer at its threshold gets no new index in its place.
    """
    store = await stores.open()
    await fill(store, THRESHOLD - 1)
    index = PgVectorIndex(store.pool, MODEL, DIM, threshold=THRESHOLD)
    async with other.transaction():
        await other.execute("LOCK TABLE memory_vectors IN SHARE UPDATE EXCLUSIVE MODE")
        await fill(store, 1, first=THRESHOLD - 1)  # the store's build waits
        explicit = asyncio.create_task(index.build_hnsw())
        await asyncio.sleep(0.3)
        assert not explicit.done()  # the store's build holds the lock
    async with asyncio.timeout(QUICK * 4):
        await explicit
    assert await index.has_hnsw()
    await index.drop_hnsw()
    async with other.transaction():
        await other.execute("LOCK TABLE memory_vectors IN SHARE UPDATE EXCLUSIVE MODE")
        await index.create()
        assert building(store.pool, INDEX)
        await index.close()  # cancels its build (not yet begun on the table)
        assert not building(store.pool, INDEX)
    assert await state(other) is None
    async with other.transaction():
        await other.execute("UPDATE memory_vectors SET embedding = embedding")
        await index.create()
        await until(other, False)
        await index.close()
    assert await state(other) is False
    high = PgVectorIndex(store.pool, MODEL, DIM, threshold=THRESHOLD * 10)
    await high.create()  # the INVALID leftover: dropped, and none built
    await wait_builds(store.pool)
    assert await state(other) is None
