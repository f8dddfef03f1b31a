"""Curation on PostgreSQL gives what the SQLite store gives, call for call.

Every test drives `Both`: the same calls on a SQLite `MemoryStore` and on
`PostgresMemories` + `PostgresCuration` + `PostgresReads` on one fake
clock; each result, each error (type, message, placeholders) and, after
each call, every row, tag, term and count must be the same. Then what
SQLite never meets: instances superseding one memory at once.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    EmptyContentError,
    InvalidInputError,
    MemoryStatus,
    MemoryType,
    NewMemory,
    Origin,
    Source,
    UnknownMemoryError,
)
from custom_components.memory.engine.errors import (
    MemorySupersededError,
    MemoryTwinError,
)
from custom_components.memory.engine.postgres import (
    PostgresCuration,
    PostgresMemories,
    PostgresReads,
)
from tests.engine.conftest import START, FakeClock, memory
from tests.engine.postgres.parity import Both
from tests.postgres_server import START_TIMEOUT

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT),
]


async def test_supersede_as_sqlite(both: Both, clock: FakeClock) -> None:
    """Superseded with a link and valid_to; `also`; a twin is the replacement."""
    portland = await both.add(memory("Anna lives in Portland", tags=("home",)))
    clock.advance(60)
    seattle, old = await both.supersede(portland.id, memory("Anna lives in Seattle"))
    assert old.status is MemoryStatus.SUPERSEDED
    assert old.superseded_by == seattle.id
    clock.advance(60)
    # Two at once, into one.
    car = await both.add(memory("The car is blue"))
    paint = await both.add(memory("The car has blue paint"))
    red, _old = await both.supersede(car.id, memory("The car is red"), also=[paint.id])
    assert (await both.get(paint.id)).superseded_by == red.id
    # The new text is an active memory already: that one replaces.
    bins = await both.add(memory("Bins go out on Monday"))
    tuesday = await both.add(memory("Bins go out on Tuesday"))
    new, _old = await both.supersede(bins.id, memory("bins go out on TUESDAY"))
    assert new.id == tuesday.id
    # The new text is the old memory's own: nothing changes.
    same, untouched = await both.supersede(tuesday.id, memory("Bins go out on Tuesday"))
    assert same.id == untouched.id == tuesday.id
    assert untouched.status is MemoryStatus.ACTIVE
    # A correction keeps the old one's language when it has none of its own.
    german = await both.add(memory("Der Hund heißt Rex", language="de"))
    renamed, _old = await both.supersede(german.id, memory("Der Hund heißt Max"))
    assert renamed.language == "de"
    # An expired old memory is archived as a twin first, then superseded.
    brief = await both.add(
        memory("Guests stay", expires_at=datetime.fromtimestamp(clock() + 5, UTC))
    )
    clock.advance(10)
    await both.supersede(brief.id, memory("Guests stay"))


async def test_supersede_refuses_as_sqlite(both: Both) -> None:
    """Unknown ids, a memory no longer active, another scope: the same errors."""
    item = await both.add(memory("Leo plays chess"))
    other = await both.add(memory("Leo plays chess", scope="person.leo"))
    with pytest.raises(UnknownMemoryError):
        await both.supersede(item.id, memory("Leo plays go"), also=[998, 999])
    with pytest.raises(InvalidInputError, match="scope"):
        await both.supersede(other.id, memory("Leo plays go"))
    with pytest.raises(InvalidInputError, match="scope"):
        await both.supersede(item.id, memory("Leo plays go"), also=[other.id])
    with pytest.raises(EmptyContentError):
        await both.supersede(item.id, memory("   "))
    await both.supersede(item.id, memory("Leo plays go"))
    # Already superseded, then archived: refused, nothing added.
    with pytest.raises(InvalidInputError, match="not active"):
        await both.supersede(item.id, memory("Leo plays draughts"))
    await both.forget([other.id])
    with pytest.raises(InvalidInputError, match="not active"):
        await both.supersede(other.id, memory("Leo plays draughts", scope="person.leo"))


async def test_history_as_sqlite(both: Both) -> None:
    """Portland -> Seattle -> Denver: the same chain each way from each link."""
    portland = await both.add(memory("Anna lives in Portland"))
    seattle, _old = await both.supersede(portland.id, memory("Anna lives in Seattle"))
    denver, _old = await both.supersede(seattle.id, memory("Anna lives in Denver"))
    before, after = await both.history(seattle.id)
    assert ([i.id for i in before], [i.id for i in after]) == (
        [portland.id],
        [denver.id],
    )
    before, after = await both.history(portland.id)
    assert (before, [i.id for i in after]) == ([], [seattle.id, denver.id])
    before, after = await both.history(denver.id)
    assert ([i.id for i in before], after) == ([portland.id, seattle.id], [])


async def test_update_content_as_sqlite(both: Both, clock: FakeClock) -> None:
    """Reworded in place with confidence and topic; twins and the inactive refuse."""
    item = await both.add(memory("The heat pump is in the cellar", tags=("heating",)))
    clock.advance(30)
    moved = await both.update_content(
        item.id, content="The heat pump is in the garage", confidence=0.8, topic="hp"
    )
    assert (moved.content, moved.confidence, moved.topic) == (
        "The heat pump is in the garage",
        0.8,
        "hp",
    )
    again = await both.update_content(item.id, content="The heat pump is in the garage")
    assert (again.confidence, again.topic) == (0.8, "hp")
    other = await both.add(memory("The boiler is in the cellar"))
    with pytest.raises(InvalidInputError, match="already has this text"):
        await both.update_content(other.id, content="the heat pump is in the GARAGE")
    with pytest.raises(UnknownMemoryError):
        await both.update_content(999, content="Anything")
    with pytest.raises(EmptyContentError):
        await both.update_content(other.id, content=" ")
    await both.forget([other.id])
    with pytest.raises(InvalidInputError, match="not active"):
        await both.update_content(other.id, content="The boiler is gone")
    # A summary's words may be a fact's; a fact still refuses its twin's.
    talk = Source(origin=Origin.DIGESTION, conversation_id="talk-1")
    summary = await both.add(
        memory("Mia asked about the bins.", type=MemoryType.SUMMARY, source=talk)
    )
    fact = await both.add(memory("Anna asked about the bins."))
    await both.update_content(summary.id, content="Anna asked about the bins.")
    mia = await both.add(memory("Mia asked about the bins."))
    with pytest.raises(InvalidInputError):
        await both.update_content(mia.id, content="Anna asked about the bins.")
    assert fact.status is MemoryStatus.ACTIVE


async def test_update_details_as_sqlite(both: Both, clock: FakeClock) -> None:
    """Type, tags, expiry and owner change in place; twins and the inactive refuse."""
    item = await both.add(memory("Leo's football boots are in the garage"))
    moved = await both.update_details(
        item.id, kind=MemoryType.PREFERENCE, tags=("Kids", "sport"), scope="person.anna"
    )
    assert (moved.type, moved.scope, moved.tags) == (
        MemoryType.PREFERENCE,
        "person.anna",
        ("kids", "sport"),
    )
    clock.advance(5)
    same = await both.update_details(item.id)
    assert same.tags == ("kids", "sport")
    soon = datetime.fromtimestamp(START + 3600, UTC)
    timed = await both.update_details(item.id, expires_at=soon, tags=())
    assert (timed.expires_at, timed.tags) == (soon, ())
    kept = await both.update_details(item.id, tags=("sport",))
    assert kept.expires_at == soon
    cleared = await both.update_details(item.id, expires_at=None)
    assert cleared.expires_at is None
    await both.add(memory("Leo's football boots are in the garage"))
    with pytest.raises(MemoryTwinError):
        await both.update_details(item.id, scope=HOUSEHOLD)
    with pytest.raises(UnknownMemoryError):
        await both.update_details(999)
    with pytest.raises(InvalidInputError):
        await both.update_details(item.id, tags=("x" * 41,))
    await both.forget([item.id])
    with pytest.raises(InvalidInputError, match="not active"):
        await both.update_details(item.id, tags=())


async def test_restore_as_sqlite(both: Both, clock: FakeClock) -> None:
    """Forgotten or expired, then restored: active again; twins and doubles refuse."""
    start = datetime.fromtimestamp(clock(), UTC)
    kept = await both.add(memory("The spare key is under the pot"))
    brief = await both.add(
        memory("Guests until Sunday", expires_at=start + timedelta(hours=1))
    )
    later = await both.add(
        memory("Guests until Friday", expires_at=start + timedelta(days=9))
    )
    await both.forget([kept.id, later.id])
    clock.advance(7200)
    assert await both.expire_due() == [brief.id]
    assert await both.restore([brief.id, kept.id, later.id]) == sorted(
        [kept.id, brief.id, later.id]
    )
    assert (await both.get(brief.id)).expires_at is None
    assert (await both.get(later.id)).expires_at == start + timedelta(days=9)
    assert await both.restore([kept.id]) == [kept.id]
    with pytest.raises(UnknownMemoryError):
        await both.restore([kept.id, 998, 999])
    assert await both.restore([]) == []
    await both.forget([kept.id])
    again = await both.add(memory("The spare key is under the pot"))
    with pytest.raises(MemoryTwinError, match="already has this text"):
        await both.restore([kept.id])
    await both.forget([again.id])
    with pytest.raises(MemoryTwinError):
        await both.restore([kept.id, again.id])
    _new, old = await both.supersede(brief.id, memory("Guests until Monday"))
    with pytest.raises(MemorySupersededError):
        await both.restore([old.id, kept.id])


async def test_expire_and_recall_as_sqlite(both: Both, clock: FakeClock) -> None:
    """Due memories archived soonest first with valid_to their expiry; recalls counted."""
    at = datetime.fromtimestamp(START, UTC)
    late = await both.add(memory("Late", expires_at=at + timedelta(minutes=20)))
    soon = await both.add(memory("Soon", expires_at=at + timedelta(minutes=10)))
    never = await both.add(memory("Never"))
    assert await both.expire_due() == []
    clock.advance(3600)
    assert sorted(await both.expire_due()) == sorted([soon.id, late.id])
    assert await both.expire_due() == []
    assert (await both.get(soon.id)).valid_to == at + timedelta(minutes=10)
    await both.mark_recalled([never.id, never.id, 999])
    clock.advance(30)
    await both.mark_recalled([never.id])
    await both.mark_recalled([])
    recalled = await both.get(never.id)
    assert recalled.recall_count == 2


async def test_lookups_as_sqlite(both: Both) -> None:
    """find_active and active_by_topic read what SQLite's do."""
    first = await both.add(memory("Mia likes tea", topic="drinks"))
    second = await both.add(memory("Mia likes coffee", topic="drinks"))
    await both.add(memory("Leo likes milk", topic="drinks", scope="person.leo"))
    pg = PostgresReads(both.pool)
    lite_found = await both.store.find_active(HOUSEHOLD, "  MIA likes tea ")
    pg_found = await pg.find_active(HOUSEHOLD, "  MIA likes tea ")
    assert lite_found is not None
    assert pg_found is not None
    assert both.same(lite_found, pg_found).id == first.id
    assert await pg.find_active(HOUSEHOLD, "Mia likes juice") is None
    topic = await both.store.active_by_topic(HOUSEHOLD, "drinks")
    assert [i.id for i in topic] == [second.id, first.id]
    both.same_list(topic, await pg.active_by_topic(HOUSEHOLD, "drinks"))
    assert await pg.active_by_topic(HOUSEHOLD, "") == []


# -- instances at once -----------------------------------------------------------


async def _waiting_on_a_lock(url: str) -> None:
    """Return once some backend of the database waits for a lock."""
    connection = await asyncpg.connect(url)
    try:
        for _ in range(500):
            if await connection.fetchval(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ):
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the second writer never waited")
    finally:
        await connection.close()


class _OnePool:
    """A pool of one connection already in a transaction (asyncpg nests a savepoint)."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def acquire(self) -> _OnePool:
        return self

    async def __aenter__(self) -> Any:
        return self._connection

    async def __aexit__(self, *_exc: object) -> None:
        return None


async def test_two_instances_superseding_one_memory(
    both: Both, postgres_database: str
) -> None:
    """The second waits on the first's row lock, then finds it superseded: refused."""
    old = (await both.memories.add(memory("The router is in the hall"))).item
    connection = await asyncpg.connect(postgres_database)
    other = await asyncpg.create_pool(postgres_database, min_size=1, max_size=2)
    try:
        held = connection.transaction()
        await held.start()
        first = PostgresCuration(_OnePool(connection), clock=lambda: START)
        new, _old = await first.supersede(old.id, memory("The router is in the attic"))
        second = PostgresCuration(other, clock=lambda: START + 1)
        racing = asyncio.create_task(
            second.supersede(old.id, memory("The router is in the cellar"))
        )
        await _waiting_on_a_lock(postgres_database)
        await held.commit()
        with pytest.raises(InvalidInputError, match=f"memory {old.id} is not active"):
            await racing
    finally:
        await other.close()
        await connection.close()
    stored = await both.memories.get(old.id)
    assert stored is not None
    assert stored.superseded_by == new.id
    async with both.pool.acquire() as check:
        assert await check.fetchval("SELECT count(*) FROM memories") == 2


async def test_many_instances_racing_exactly_one_wins(
    both: Both, postgres_database: str
) -> None:
    """Eight pools supersede one memory at once: one succeeds, seven refuse."""
    old = (await both.memories.add(memory("The spare tyre is flat"))).item
    pools = [
        await asyncpg.create_pool(postgres_database, min_size=1, max_size=1)
        for _ in range(8)
    ]
    try:
        results = await asyncio.gather(
            *(
                PostgresCuration(pool, clock=lambda: START).supersede(
                    old.id, memory(f"The spare tyre was fixed on day {n}")
                )
                for n, pool in enumerate(pools)
            ),
            return_exceptions=True,
        )
    finally:
        for pool in pools:
            await pool.close()
    won = [r for r in results if isinstance(r, tuple)]
    lost = [r for r in results if isinstance(r, InvalidInputError)]
    assert (len(won), len(lost)) == (1, 7)
    async with both.pool.acquire() as check:
        statuses = await check.fetch(
            "SELECT status, count(*) FROM memories GROUP BY status ORDER BY status"
        )
    assert [tuple(r) for r in statuses] == [("active", 1), ("superseded", 1)]


async def test_twin_made_meanwhile_is_the_same_error(
    both: Both, postgres_database: str
) -> None:
    """A rewording to a text another instance is making active: the same twin error."""
    item = (await both.memories.add(memory("The cat is called Tom"))).item
    connection = await asyncpg.connect(postgres_database)
    try:
        held = connection.transaction()
        await held.start()
        # Another instance adds the new words, not yet committed: the check
        # misses them, the UPDATE waits on the unique index, then violates it.
        twin = NewMemory(content="The cat is called Felix", source=item.source)
        added = await PostgresMemories(_OnePool(connection)).add(twin)
        racing = asyncio.create_task(
            both.curation.update_content(item.id, content="The cat is called Felix")
        )
        await _waiting_on_a_lock(postgres_database)
        await held.commit()
        with pytest.raises(InvalidInputError, match=f"memory {added.item.id}"):
            await racing
    finally:
        await connection.close()
