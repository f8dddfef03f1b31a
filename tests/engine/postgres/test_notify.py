"""Change notices across instances: what each write sends, what a `ChangeFeed` hears.

Two "instances" are two pools with their own writers and feeds on one
database: a write on A is heard by B with its kind, scopes and ids, never
its content; A can leave its own notices out; a rolled back write sends
nothing; a feed whose backend is terminated reconnects, says so
(`RESYNC`) and hears later writes again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
import json
from typing import Any

import asyncpg
import pytest

from custom_components.memory.engine import InvalidInputError
from custom_components.memory.engine.postgres import (
    CHANNEL,
    Change,
    ChangeFeed,
    ChangeKind,
    PostgresCuration,
    PostgresMemories,
)
from custom_components.memory.engine.postgres.notify import MAX_PAYLOAD, decode, encode
from tests.engine.conftest import START, memory
from tests.postgres_server import START_TIMEOUT

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT),
]

# How long a notice may take to arrive.
WAIT = 10.0


@dataclass
class Instance:
    """One Home Assistant's view of the shared database."""

    name: str
    pool: Any
    memories: PostgresMemories
    curation: PostgresCuration
    feed: ChangeFeed
    heard: asyncio.Queue[Change] = field(default_factory=asyncio.Queue)

    async def next(self) -> Change:
        """Wait for the next change this instance hears."""
        return await asyncio.wait_for(self.heard.get(), WAIT)


@pytest.fixture
async def instances(
    postgres_database: str, postgres_pool: Any
) -> AsyncIterator[tuple[Instance, Instance]]:
    """Yield instances A and B, each with its pool and feed (own notices ignored)."""
    made: list[Instance] = []
    try:
        for name in ("a", "b"):
            pool = await asyncpg.create_pool(postgres_database, min_size=1, max_size=2)
            feed = ChangeFeed(
                postgres_database,
                instance=name,
                ignore_own=True,
                min_delay=0.05,
                max_delay=0.2,
            )
            instance = Instance(
                name,
                pool,
                PostgresMemories(pool, clock=lambda: START, instance=name),
                PostgresCuration(pool, clock=lambda: START, instance=name),
                feed,
            )
            feed.add_listener(instance.heard.put_nowait)
            await feed.start()
            made.append(instance)
        yield made[0], made[1]
    finally:
        for instance in made:
            await instance.feed.stop()
            await instance.pool.close()


@pytest.fixture
async def payloads(postgres_database: str) -> AsyncIterator[asyncio.Queue[str]]:
    """Yield the raw payloads sent on the channel, as any listener sees them."""
    queue: asyncio.Queue[str] = asyncio.Queue()
    connection = await asyncpg.connect(postgres_database)
    await connection.add_listener(
        CHANNEL, lambda _c, _p, _ch, payload: queue.put_nowait(payload)
    )
    try:
        yield queue
    finally:
        await connection.close()


def test_a_payload_reads_back_and_stays_under_the_bound() -> None:
    """Encoded and decoded the same; too many ids or scopes become None."""
    change = Change(
        ChangeKind.PURGED,
        instance="a",
        scopes=frozenset({"x"}),
        ids=(1, 2),
        erased=True,
    )
    assert decode(encode(change)) == change
    many = Change(
        ChangeKind.ADDED, instance="a", scopes=frozenset({"x"}), ids=tuple(range(5000))
    )
    assert len(encode(many).encode()) < MAX_PAYLOAD
    assert decode(encode(many)) == Change(
        ChangeKind.ADDED, instance="a", scopes=frozenset({"x"}), ids=None
    )
    wide = Change(
        ChangeKind.EXPIRED,
        scopes=frozenset(f"person.{n:090d}" for n in range(200)),
        ids=(1,),
    )
    assert decode(encode(wide)) == Change(ChangeKind.EXPIRED, scopes=None, ids=None)
    assert decode("not json") is None
    assert decode(json.dumps({"kind": "nonsense"})) is None


async def test_a_write_on_a_is_heard_by_b(
    instances: tuple[Instance, Instance], payloads: asyncio.Queue[str]
) -> None:
    """Kind, scopes and ids reach B; A does not hear itself; no content is sent."""
    a, b = instances
    secret = "The alarm code is 4711"
    added = await a.memories.add_many(
        [memory(secret), memory("Leo plays chess", scope="person.leo")]
    )
    change = await b.next()
    assert change == Change(
        ChangeKind.ADDED,
        instance="a",
        scopes=frozenset({"household", "person.leo"}),
        ids=tuple(sorted(r.item.id for r in added)),
    )
    raw = await asyncio.wait_for(payloads.get(), WAIT)
    assert "4711" not in raw
    assert "alarm" not in raw
    assert "chess" not in raw
    # A twin creates nothing: no notice.
    await a.memories.add(memory(secret))
    new, old = await b.curation.supersede(added[0].item.id, memory("The code is new"))
    change = await a.next()
    assert (change.kind, change.instance, change.ids) == (
        ChangeKind.SUPERSEDED,
        "b",
        tuple(sorted([new.id, old.id])),
    )
    assert a.heard.empty()
    assert b.heard.empty()
    raw = await asyncio.wait_for(payloads.get(), WAIT)
    assert json.loads(raw)["kind"] == "superseded"
    assert "code" not in raw


async def test_every_curation_write_is_heard(
    instances: tuple[Instance, Instance],
) -> None:
    """Reword, details (a move erases), restore, expire: each one notice on B."""
    a, b = instances
    item = (await a.memories.add(memory("Mia swims"))).item
    assert (await b.next()).kind is ChangeKind.ADDED
    await a.curation.update_content(item.id, content="Mia swims on Fridays")
    change = await b.next()
    assert (change.kind, change.ids, change.erased) == (
        ChangeKind.UPDATED,
        (item.id,),
        False,
    )
    await a.curation.update_details(item.id, scope="person.mia")
    change = await b.next()
    assert (change.kind, change.scopes, change.erased) == (
        ChangeKind.UPDATED,
        frozenset({"household", "person.mia"}),
        True,
    )
    await a.memories.forget([item.id])
    assert (await b.next()).kind is ChangeKind.ARCHIVED
    await a.curation.restore([item.id])
    change = await b.next()
    assert (change.kind, change.scopes) == (
        ChangeKind.RESTORED,
        frozenset({"person.mia"}),
    )
    await a.curation.update_details(item.id, expires_at=None)
    await b.next()
    async with a.pool.acquire() as connection:
        await connection.execute(
            "UPDATE memories SET expires_at = $1 WHERE id = $2", START - 1, item.id
        )
    assert await a.curation.expire_due() == [item.id]
    change = await b.next()
    assert (change.kind, change.ids) == (ChangeKind.EXPIRED, (item.id,))
    # Recording a recall tells no one, as in SQLite.
    await a.curation.mark_recalled([item.id])
    await a.memories.add(memory("A marker"))
    assert (await b.next()).kind is ChangeKind.ADDED


async def test_a_purge_notifies_with_its_scopes(
    instances: tuple[Instance, Instance],
) -> None:
    """A purge: kind purged, the scopes that lost text, erased; the ids."""
    a, b = instances
    kept = await a.memories.add(memory("Anna likes tea", scope="person.anna"))
    gone = await a.memories.add(memory("Leo likes milk", scope="person.leo"))
    await b.next()
    await b.next()
    await a.memories.forget([kept.item.id, gone.item.id], purge=True)
    assert await b.next() == Change(
        ChangeKind.PURGED,
        instance="a",
        scopes=frozenset({"person.anna", "person.leo"}),
        ids=tuple(sorted([kept.item.id, gone.item.id])),
        erased=True,
    )


async def test_a_refused_write_sends_nothing(
    instances: tuple[Instance, Instance],
) -> None:
    """The notice goes with the transaction: a rolled back one sends none."""
    a, b = instances
    item = (await a.memories.add(memory("Leo plays chess"))).item
    await b.next()
    await a.curation.supersede(item.id, memory("Leo plays go"))
    await b.next()
    with pytest.raises(InvalidInputError):
        await a.curation.supersede(item.id, memory("Leo plays draughts"))
    await a.memories.add(memory("A marker"))
    change = await b.next()
    assert change.kind is ChangeKind.ADDED


async def test_own_notices_heard_unless_ignored(
    postgres_database: str, postgres_pool: Any
) -> None:
    """A feed that does not ignore its own instance hears its writes too."""
    heard: asyncio.Queue[Change] = asyncio.Queue()
    feed = ChangeFeed(postgres_database, instance="a")
    feed.add_listener(heard.put_nowait)
    remove_failing = feed.add_listener(_fail)
    await feed.start()
    try:
        await PostgresMemories(postgres_pool, instance="a").add(memory("Mine"))
        change = await asyncio.wait_for(heard.get(), WAIT)
        assert change.instance == "a"
        remove_failing()
    finally:
        await feed.stop()
    assert not feed.connected


def _fail(_change: Change) -> None:
    raise RuntimeError("a listener that fails")


async def test_the_feed_reconnects_after_its_backend_is_terminated(
    instances: tuple[Instance, Instance], postgres_database: str
) -> None:
    """Terminated: B reconnects by itself, says RESYNC, and hears A's next write."""
    a, b = instances
    pid = b.feed.server_pid
    assert pid is not None
    admin = await asyncpg.connect(postgres_database)
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()
    assert await b.next() == Change(ChangeKind.RESYNC)
    assert b.feed.connected
    assert b.feed.server_pid not in (None, pid)
    assert b.feed.reconnects == 1
    added = await a.memories.add(memory("Heard after the reconnect"))
    change = await b.next()
    assert (change.kind, change.ids) == (ChangeKind.ADDED, (added.item.id,))


async def test_a_silent_drop_is_found_by_the_ping(
    postgres_database: str, postgres_pool: Any
) -> None:
    """A connection that died unnoticed (no termination listener) fails its ping."""
    heard: asyncio.Queue[Change] = asyncio.Queue()
    feed = ChangeFeed(postgres_database, ping_every=0.1, min_delay=0.05)
    feed.add_listener(heard.put_nowait)
    await feed.start()
    try:
        connection = feed._connection
        connection.remove_termination_listener(feed._terminated)
        pid = feed.server_pid
        async with postgres_pool.acquire() as admin:
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
        assert await asyncio.wait_for(heard.get(), WAIT) == Change(ChangeKind.RESYNC)
        await PostgresMemories(postgres_pool).add(memory("Heard again"))
        assert (await asyncio.wait_for(heard.get(), WAIT)).kind is ChangeKind.ADDED
    finally:
        await feed.stop()
