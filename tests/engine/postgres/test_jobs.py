"""The embedding job queue on PostgreSQL: SQLite's states and results, and claims.

The same calls run on the engine's own functions (`engine/embedding/jobs.py`)
over a real `MemoryStore` and on `engine/postgres/jobs.py`; after each,
both job and rebuild tables hold the same rows. Then what only PostgreSQL
has: two instances (two pools) claiming at once get disjoint jobs, a
reworded memory's job goes back to pending (the trigger) and loses its
claim, and a crashed instance's claim is taken over once its lease lapses.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from custom_components.memory.engine import MemoryStore
from custom_components.memory.engine.embedding import jobs as lite
from custom_components.memory.engine.embedding.jobs import (
    MAX_ATTEMPTS,
    MEMORIES,
    MESSAGES,
    Job,
    JobTables,
)
from custom_components.memory.engine.embedding.providers import ProviderError
from custom_components.memory.engine.postgres import (
    PostgresCuration,
    PostgresMemories,
    jobs as pg,
)
from tests.engine.conftest import MODEL, START, FakeClock, StoreFactory, memory
from tests.engine.postgres.queue_tables import add_conversation, add_message

_JOB_COLUMNS = (
    "{key}, model, text_hash, state, attempts, next_attempt_at, error, updated_at"
)


@pytest.fixture
async def tables(postgres_pool: Any) -> Any:
    """Return the pool of a migrated database (conversation tables included)."""
    return postgres_pool


async def _rows(store: MemoryStore, pool: Any, kind: JobTables) -> None:
    """Assert both backends hold the same jobs and rebuilds of this kind."""
    columns = _JOB_COLUMNS.format(key=kind.key)
    jobs = f"SELECT {columns} FROM {kind.jobs} ORDER BY model, {kind.key}"  # noqa: S608
    rebuilds = f"SELECT model, total, started_at FROM {kind.rebuilds} ORDER BY model"  # noqa: S608
    for sql in (jobs, rebuilds):
        mine = [tuple(row) for row in await store.reader.execute_fetchall(sql)]
        theirs = [tuple(row) for row in await pool.fetch(sql)]
        assert theirs == mine, sql


async def _same(store: MemoryStore, pool: Any) -> None:
    for kind in lite.KINDS:
        await _rows(store, pool, kind)


async def _enqueue(
    store: MemoryStore, pool: Any, kind: JobTables, clock: FakeClock
) -> tuple[int, int]:
    async with store.transaction() as conn:
        mine = await lite.enqueue(conn, kind, MODEL, after=0, clock=clock)
    async with pool.acquire() as conn, conn.transaction():
        theirs = await pg.enqueue(conn, kind, MODEL, after=0, clock=clock)
    assert theirs == mine
    return mine


async def _due(
    store: MemoryStore, pool: Any, kind: JobTables, now: float, batch: int = 3
) -> list[Job]:
    mine = await lite.due_jobs(store.reader, kind, MODEL, batch_size=batch, now=now)
    theirs = await pg.due_jobs(
        pool, kind, MODEL, batch_size=batch, now=now, instance="a"
    )
    assert theirs == mine
    return mine


async def _statuses(store: MemoryStore, pool: Any) -> None:
    """Assert both count the same jobs, rebuilding or not."""
    for rebuilding in (False, True):
        mine = await lite.queue_status(
            store.reader, MODEL, rebuilding=rebuilding, messages_rebuilding=True
        )
        theirs = await pg.queue_status(
            pool, MODEL, rebuilding=rebuilding, messages_rebuilding=True
        )
        assert theirs == mine
        assert mine.total == 4
        assert mine.rebuilding is rebuilding


async def _purge_message(store: MemoryStore, pool: Any, message: int) -> None:
    """Purge a message on both: its job goes along (the link's cascade)."""
    sql = "DELETE FROM conversation_messages WHERE id = {}"
    async with store.transaction() as conn:
        await conn.execute(sql.format("?"), (message,))
    await pool.execute(sql.format("$1"), message)
    await _same(store, pool)


async def test_the_same_calls_leave_the_same_states(
    store_factory: StoreFactory, tables: Any, clock: FakeClock
) -> None:
    """Enqueue, rebuild, claim, ready, back-off to error, status: as SQLite's."""
    store = await store_factory()
    pool = tables
    memories = PostgresMemories(pool, clock=clock)
    for text in ("Anna likes tea", "Ben's PIN is 4512", "The car is blue", "x" * 30):
        assert (await memories.add(memory(text))).item.id == (
            await store.add(memory(text))
        ).item.id
    row = await add_conversation(
        store, pool, "c1", scope="household", started=START, updated=START, ended=None
    )
    for role, text in (
        ("user", "What should I cook tonight for Anna?"),
        ("assistant", "  OK.  "),
        ("tool_result", "a long entity dump of the kitchen"),
        ("assistant", "How about a curry with lots of ginger?"),
    ):
        await add_message(
            store, pool, row, role, text, scope="household", created=START
        )
    for kind in lite.KINDS:
        async with store.transaction() as conn:
            assert not await lite.has_jobs(conn, kind, MODEL)
        assert not await pg.has_jobs(pool, kind, MODEL)
    assert await _enqueue(store, pool, MEMORIES, clock) == (4, 4)
    assert await _enqueue(store, pool, MESSAGES, clock) == (2, 4)
    assert await pg.newest_ids(pool) == await lite.newest_ids(store.reader)
    for kind, total in ((MEMORIES, 4), (MESSAGES, 2)):
        async with store.transaction() as conn:
            await lite.start_rebuild(conn, kind, MODEL, total, clock())
            await lite.start_rebuild(conn, kind, MODEL, 99, clock())
            assert await lite.is_rebuilding(conn, kind, MODEL)
        await pg.start_rebuild(pool, kind, MODEL, total, clock())
        await pg.start_rebuild(pool, kind, MODEL, 99, clock())
        assert await pg.is_rebuilding(pool, kind, MODEL)
    await _same(store, pool)

    now = clock.advance(1)
    first = await _due(store, pool, MEMORIES, now)
    assert [job.item_id for job in first] == [1, 2, 3]
    assert "4512" not in first[1].content  # redacted before it is sent
    ready = {job.item_id: job.text_hash for job in first[:2]}
    async with store.transaction() as conn:
        await lite.mark_ready(conn, MEMORIES, MODEL, ready, now)
    assert await pg.mark_ready(pool, MEMORIES, MODEL, ready, now, instance="a") == [
        1,
        2,
    ]
    await _same(store, pool)

    error = ProviderError("the provider refused the text")
    for attempt in range(MAX_ATTEMPTS):
        now = clock.advance(10_000)
        due = await _due(store, pool, MEMORIES, now)
        if attempt == 0:
            assert [job.item_id for job in due] == [3, 4]  # fresh ones, a batch
        else:
            assert len(due) == 1  # a job that failed before goes alone
        async with store.transaction() as conn:
            await lite.record_failure(conn, MEMORIES, MODEL, due, error, now)
        await pg.record_failure(pool, MEMORIES, MODEL, due, error, now, instance="a")
        await _same(store, pool)
        assert await pg.next_due(pool, MODEL, instance="a") == await lite.next_due(
            store.reader, MODEL
        )

    messages = await _due(store, pool, MESSAGES, clock())
    assert [job.item_id for job in messages] == [1, 4]
    async with store.transaction() as conn:
        await lite.mark_ready(conn, MESSAGES, MODEL, {1: messages[0].text_hash}, now)
    await pg.mark_ready(pool, MESSAGES, MODEL, {1: messages[0].text_hash}, now)
    await _same(store, pool)

    for kinds in ([MEMORIES, MESSAGES], [MESSAGES]):
        async with store.transaction() as conn:
            mine = await lite.finish_rebuilds(conn, kinds, MODEL)
        assert await pg.finish_rebuilds(pool, kinds, MODEL) == mine
        await _same(store, pool)
    await _statuses(store, pool)
    await _purge_message(store, pool, 1)
    for model in (MODEL, "other"):
        assert await pg.next_due(pool, model, instance="a") == await lite.next_due(
            store.reader, model
        )


@pytest.fixture
async def second_pool(tables: Any, postgres_database: str) -> AsyncIterator[Any]:
    """Yield another instance's pool on the same (migrated) database."""
    pool = await asyncpg.create_pool(postgres_database, min_size=1, max_size=4)
    try:
        yield pool
    finally:
        await pool.close()


async def _fill(pool: Any, count: int) -> None:
    memories = PostgresMemories(pool, clock=lambda: START)
    await memories.add_many(
        [memory(f"fact number {n} of the house") for n in range(count)]
    )
    await pg.enqueue(pool, MEMORIES, MODEL, after=0, clock=lambda: START)


async def test_two_instances_claim_disjoint_jobs(tables: Any, second_pool: Any) -> None:
    """Two pools claiming batches at once never get the same job; all get done."""
    await _fill(tables, 120)
    seen: dict[str, list[int]] = {"a": [], "b": []}

    async def worker(pool: Any, name: str) -> None:
        while jobs := await pg.due_jobs(
            pool, MEMORIES, MODEL, batch_size=7, now=START, instance=name
        ):
            ids = [job.item_id for job in jobs]
            seen[name].extend(ids)
            await asyncio.sleep(0)
            hashes = {job.item_id: job.text_hash for job in jobs}
            assert await pg.mark_ready(
                pool, MEMORIES, MODEL, hashes, START, instance=name
            ) == sorted(ids)

    await asyncio.gather(
        *(worker(tables, "a") for _ in range(1)), worker(second_pool, "b")
    )
    a, b = set(seen["a"]), set(seen["b"])
    assert len(seen["a"]) == len(a)
    assert len(seen["b"]) == len(b)
    assert not a & b
    assert a | b == set(range(1, 121))
    status = await pg.queue_status(
        tables, MODEL, rebuilding=False, messages_rebuilding=False
    )
    assert (status.pending, status.ready) == (0, 120)


async def test_one_claim_statement_racing_many(tables: Any, second_pool: Any) -> None:
    """Twenty claims at once from two pools and ten names: no job twice."""
    await _fill(tables, 100)
    batches = await asyncio.gather(
        *(
            pg.due_jobs(
                (tables, second_pool)[n % 2],
                MEMORIES,
                MODEL,
                batch_size=5,
                now=START,
                instance=f"i{n % 10}",
            )
            for n in range(10)
        )
    )
    ids = [job.item_id for batch in batches for job in batch]
    assert len(ids) == len(set(ids)) == 50


async def test_a_reworded_memory_goes_back_to_pending(
    tables: Any, second_pool: Any, clock: FakeClock
) -> None:
    """The trigger: ready or claimed, a reworded memory's job is pending again."""
    pool = tables
    memories = PostgresMemories(pool, clock=clock)
    curation = PostgresCuration(pool, clock=clock)
    first = (await memories.add(memory("Anna likes green tea"))).item
    second = (await memories.add(memory("Ben likes coffee"))).item
    await pg.enqueue(pool, MEMORIES, MODEL, after=0, clock=clock)
    jobs = await pg.due_jobs(
        pool, MEMORIES, MODEL, batch_size=5, now=clock(), instance="a"
    )
    hashes = {job.item_id: job.text_hash for job in jobs}
    await pg.mark_ready(pool, MEMORIES, MODEL, {first.id: hashes[first.id]}, clock())
    error = ProviderError("refused")
    failed = [job for job in jobs if job.item_id == second.id]
    await pg.record_failure(pool, MEMORIES, MODEL, failed, error, clock())
    # The second one is claimed again (it failed, now due) by "a"...
    now = clock.advance(60)
    again = await pg.due_jobs(
        pool, MEMORIES, MODEL, batch_size=5, now=now, instance="a"
    )
    assert [job.item_id for job in again] == [second.id]
    # ...and both are reworded meanwhile.
    await curation.update_content(first.id, content="Anna likes black tea")
    await curation.update_content(second.id, content="Ben likes strong coffee")
    rows = await pool.fetch(
        "SELECT memory_id, state, attempts, next_attempt_at, error, updated_at, "
        "claimed_by, claimed_until FROM embedding_jobs ORDER BY memory_id"
    )
    assert [tuple(row) for row in rows] == [
        (first.id, "pending", 0, 0.0, None, clock(), None, None),
        (second.id, "pending", 0, 0.0, None, clock(), None, None),
    ]
    # "a" finishing the old text marks nothing; "b" gets the new text at once.
    assert (
        await pg.mark_ready(
            pool, MEMORIES, MODEL, {second.id: again[0].text_hash}, now, instance="a"
        )
        == []
    )
    fresh = await pg.due_jobs(
        second_pool, MEMORIES, MODEL, batch_size=5, now=now, instance="b"
    )
    assert [job.content for job in fresh] == [
        "Anna likes black tea",
        "Ben likes strong coffee",
    ]
    # Details that keep the words keep the job as it is.
    await pool.execute("UPDATE memories SET topic = 'drinks' WHERE id = $1", first.id)
    assert (
        await pool.fetchval(
            "SELECT claimed_by FROM embedding_jobs WHERE memory_id = $1", first.id
        )
        == "b"
    )


async def test_a_crashed_instance_claim_lapses(tables: Any, second_pool: Any) -> None:
    """A claim nobody finishes holds for its lease, then another instance takes it."""
    await _fill(tables, 4)
    lease = pg.LEASE_SECONDS
    held = await pg.due_jobs(
        tables, MEMORIES, MODEL, batch_size=3, now=START, instance="crashed"
    )
    assert [job.item_id for job in held] == [1, 2, 3]
    # Held: the other instance gets the rest only, and waits for the lease.
    other = await pg.due_jobs(
        second_pool, MEMORIES, MODEL, batch_size=3, now=START + 1, instance="b"
    )
    assert [job.item_id for job in other] == [4]
    await pg.mark_ready(
        second_pool, MEMORIES, MODEL, {4: other[0].text_hash}, START + 1, instance="b"
    )
    assert (
        await pg.due_jobs(
            second_pool,
            MEMORIES,
            MODEL,
            batch_size=3,
            now=START + lease - 1,
            instance="b",
        )
        == []
    )
    assert await pg.next_due(second_pool, MODEL, instance="b") == START + lease
    assert await pg.next_due(tables, MODEL, instance="crashed") == 0.0
    # Lapsed: taken over, and the late instance's results are refused.
    taken = await pg.due_jobs(
        second_pool, MEMORIES, MODEL, batch_size=3, now=START + lease, instance="b"
    )
    assert taken == held
    hashes = {job.item_id: job.text_hash for job in held}
    assert (
        await pg.mark_ready(
            tables, MEMORIES, MODEL, hashes, START + lease, instance="crashed"
        )
        == []
    )
    # An instance starting again drops its claims at once.
    assert await pg.release_claims(second_pool, "b") == 3
    again = await pg.due_jobs(
        tables, MEMORIES, MODEL, batch_size=3, now=START + lease + 1, instance="c"
    )
    assert again == held
