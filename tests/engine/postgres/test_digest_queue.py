"""The digestion queue on PostgreSQL: SQLite's results, and claims across instances.

The same calls run on the engine's `DigestQueue` over a real `MemoryStore`
and on `PostgresDigestQueue`, over the same conversation rows; every result
and the conversations' digestion columns must match. Then two instances
(two pools) taking due conversations at once get disjoint ones, and a
crashed instance's claim is taken over once its lease lapses.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from custom_components.memory.engine import MemoryStore
from custom_components.memory.engine.digestion import DigestQueue, SkipReason
from custom_components.memory.engine.postgres.digest_queue import (
    LEASE_SECONDS,
    PostgresDigestQueue,
)
from tests.engine.conftest import StoreFactory
from tests.engine.postgres.queue_tables import add_conversation, add_message

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
ANNA = "person.anna"
BEN = "person.ben"
_DIGEST_COLUMNS = (
    "SELECT id, digest_state, digest_attempts, digest_next_at, digest_error, "
    "digested_at FROM conversations ORDER BY id"
)


def at(minutes: float) -> datetime:
    """Return the time `minutes` after T0."""
    return T0 + timedelta(minutes=minutes)


def ts(minutes: float) -> float:
    """Return `at(minutes)` in seconds since the epoch."""
    return at(minutes).timestamp()


@pytest.fixture
async def tables(postgres_pool: Any) -> Any:
    """Return the pool of a migrated database (conversation tables included)."""
    return postgres_pool


@pytest.fixture
async def second_pool(tables: Any, postgres_database: str) -> AsyncIterator[Any]:
    """Yield another instance's pool on the same database."""
    pool = await asyncpg.create_pool(postgres_database, min_size=1, max_size=4)
    try:
        yield pool
    finally:
        await pool.close()


class Pair:
    """SQLite's queue and PostgreSQL's, called alike and compared."""

    def __init__(self, store: MemoryStore, pool: Any) -> None:
        """Hold both queues and their databases."""
        self.store = store
        self.pool = pool
        self.lite = DigestQueue(store)
        self.pg = PostgresDigestQueue(pool, instance="a")

    async def same(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call `name` on both; assert equal results and digestion columns."""
        mine = await getattr(self.lite, name)(*args, **kwargs)
        theirs = await getattr(self.pg, name)(*args, **kwargs)
        assert theirs == mine, name
        lite_rows = await self.store.reader.execute_fetchall(_DIGEST_COLUMNS)
        pg_rows = await self.pool.fetch(_DIGEST_COLUMNS)
        assert [tuple(row) for row in pg_rows] == [tuple(row) for row in lite_rows]
        return mine


async def test_the_same_calls_give_the_same_answers(
    store_factory: StoreFactory, tables: Any
) -> None:
    """Due, waiting, speakers, language, counts and every mark: as SQLite's."""
    store = await store_factory()
    pool = tables
    both = Pair(store, pool)
    first = await add_conversation(
        store, pool, "c1", scope=ANNA, started=ts(0), updated=ts(1), ended=ts(2)
    )
    for role, text, scope, language in (
        ("user", "Ich heiße Anna und wohne in Graz", ANNA, "de-AT"),
        ("assistant", "Schön, dich kennenzulernen", ANNA, ""),
        ("user", "My sister lives in Berlin", BEN, "en-GB"),
        ("user", "Sie heißt Lena", ANNA, "de-DE"),
    ):
        await add_message(
            store,
            pool,
            first,
            role,
            text,
            scope=scope,
            created=ts(1),
            language=language,
        )
    second = await add_conversation(
        store, pool, "c2", scope=BEN, started=ts(0), updated=ts(5), ended=None
    )
    await add_message(store, pool, second, "user", "hi", scope=BEN, created=ts(5))
    third = await add_conversation(
        store, pool, "c3", scope=ANNA, started=ts(3), updated=ts(30), ended=None
    )
    again = await add_conversation(
        store, pool, "c1", scope=ANNA, started=ts(4), updated=ts(6), ended=ts(7)
    )
    await add_message(
        store, pool, again, "user", "Tea, please", scope=ANNA, created=ts(6)
    )

    assert [row.id for row in await both.same("due", at(60), idle_before=None)] == [
        first,
        again,
    ]
    due = await both.same("due", at(60), idle_before=at(10), limit=20)
    assert [row.id for row in due] == [first, second, again]
    assert len(await both.same("due", at(60), idle_before=at(10), limit=2)) == 2
    assert len(await both.same("waiting")) == 4
    await both.same("waiting", limit=2)
    ids = [first, second, third, again, 99]
    assert await both.same("still_waiting", ids) == {first, second, third, again}
    await both.same("still_waiting", [])
    assert await both.same("speakers", [*ids, first]) == {
        first: (ANNA, BEN),
        second: (BEN,),
        again: (ANNA,),
    }
    assert await both.same("language", first) == "de"
    assert await both.same("language", third) == ""
    await both.same("count_by_state")
    await both.same("get", first)
    assert await both.same("get", 99) is None
    assert [row.id for row in await both.same("find", "c1")] == [again, first]
    assert await both.same("find", "nothing") == []

    for attempt in range(3):
        await both.same(
            "mark_failed", first, error="ai_task_failed", now=at(60 + attempt)
        )
    await both.same("mark_failed", 99, error="gone", now=at(60))
    assert [row.id for row in await both.same("due", at(61), idle_before=at(10))] == [
        second,
        again,
    ]
    await both.same("defer", second, at(120), error="rate_limited")
    await both.same("mark_skipped", third, when=at(31), reason=SkipReason.TOO_SHORT)
    await both.same("mark_skipped", third, when=at(31))
    await both.same("mark_done", again, when=at(7))
    assert await both.same("count_waiting") == 2
    assert await both.same("count_by_state") == {"pending": 2, "skipped": 1, "done": 1}
    # Said more after its digestion: waiting again, for the new messages.
    await add_message(store, pool, again, "user", "And milk", scope=ANNA, created=ts(8))
    await add_message(
        store, pool, third, "user", "Skipped stays", scope=ANNA, created=ts(40)
    )
    assert await both.same("count_waiting") == 3
    assert [row.id for row in await both.same("due", at(200), idle_before=at(100))] == [
        first,
        second,
        again,
    ]
    await both.same("waiting")
    await both.same("get", again)


async def _ended(pool: Any, count: int) -> None:
    await pool.executemany(
        "INSERT INTO conversations (conversation_id, scope, started_at, updated_at, "
        "ended_at) VALUES ($1, 'household', $2, $2, $2)",
        [(f"c{n}", ts(n)) for n in range(count)],
    )


async def test_two_instances_digest_disjoint_conversations(
    tables: Any, second_pool: Any
) -> None:
    """Two pools taking due conversations at once never get the same one."""
    await _ended(tables, 60)
    seen: dict[str, list[int]] = {"a": [], "b": []}

    async def worker(pool: Any, name: str) -> None:
        queue = PostgresDigestQueue(pool, instance=name)
        while due := await queue.due(at(999), idle_before=None, limit=4):
            seen[name].extend(row.id for row in due)
            await asyncio.sleep(0)
            for row in due:
                await queue.mark_done(row.id, when=at(999))

    await asyncio.gather(worker(tables, "a"), worker(second_pool, "b"))
    a, b = set(seen["a"]), set(seen["b"])
    assert len(seen["a"]) == len(a)
    assert len(seen["b"]) == len(b)
    assert not a & b
    assert a | b == set(range(1, 61))
    assert await tables.fetchval("SELECT count(*) FROM digest_claims") == 0
    # Ten claims racing in one go: each conversation at most once.
    await tables.execute("UPDATE conversations SET digest_state = 'pending'")
    batches = await asyncio.gather(
        *(
            PostgresDigestQueue((tables, second_pool)[n % 2], instance=f"i{n}").due(
                at(999), idle_before=None, limit=5
            )
            for n in range(10)
        )
    )
    # A claim that loses a race returns less (never a conversation twice).
    ids = [row.id for batch in batches for row in batch]
    assert len(ids) == len(set(ids))
    assert 5 <= len(ids) <= 50


async def test_a_claim_lost_to_a_race_is_made_up(tables: Any, second_pool: Any) -> None:
    """A row another instance claims under `due`'s feet is replaced by the next one.

    The other instance's claim is inserted but not committed when `due`
    starts: `due`'s snapshot sees no claim on conversation 1, picks it, and
    its claim waits for the other transaction; once that commits, the claim
    is refused. The next statement sees it and claims conversation 2.
    """
    await _ended(tables, 2)
    other = await second_pool.acquire()
    try:
        transaction = other.transaction()
        await transaction.start()
        await other.execute(
            "INSERT INTO digest_claims (conversation, claimed_by, claimed_until) "
            "VALUES (1, 'other', $1)",
            ts(999) + LEASE_SECONDS,
        )
        queue = PostgresDigestQueue(tables, instance="a")
        due = asyncio.create_task(queue.due(at(999), idle_before=None, limit=1))
        # Until `due` waits on the other transaction's claim.
        waiting = 0
        for _ in range(500):
            waiting = await second_pool.fetchval(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if waiting:
                break
            await asyncio.sleep(0.01)
        assert waiting == 1
        await transaction.commit()
        assert [row.id for row in await due] == [2]
    finally:
        await second_pool.release(other)


async def test_a_crashed_instance_claim_lapses(tables: Any, second_pool: Any) -> None:
    """A claim nobody finishes holds for its lease, then another instance takes it."""
    await _ended(tables, 3)
    crashed = PostgresDigestQueue(tables, instance="crashed")
    other = PostgresDigestQueue(second_pool, instance="b")
    held = await crashed.due(at(10), idle_before=None, limit=2)
    assert [row.id for row in held] == [1, 2]
    # Its own claims are due to it again, as SQLite would answer.
    assert await crashed.due(at(10), idle_before=None, limit=2) == held
    assert [row.id for row in await other.due(at(10), idle_before=None)] == [3]
    lease = timedelta(seconds=LEASE_SECONDS)
    almost = at(10) + lease - timedelta(seconds=1)
    assert [row.id for row in await other.due(almost, idle_before=None)] == [3]
    # Lapsed: taken over.
    taken = await other.due(at(11) + lease, idle_before=None)
    assert [row.id for row in taken] == [1, 2, 3]
    assert await crashed.due(at(12) + lease, idle_before=None) == []
    # Still waiting for every reader meanwhile: claims are not states.
    assert await crashed.count_waiting() == 3
    # An instance starting again drops its claims at once.
    assert await other.release_claims() == 3
    assert len(await crashed.due(at(12) + lease, idle_before=None)) == 3
    # Deleting a conversation takes its claim along (the link's cascade).
    await tables.execute("DELETE FROM conversations WHERE id = 1")
    assert await tables.fetchval("SELECT count(*) FROM digest_claims") == 2
