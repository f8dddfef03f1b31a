"""Two PostgresStores on one database, as two Home Assistants sharing it.

A write through one is readable through the other and tells the other's
listeners (through the `ChangeFeed`), erase listeners too, while each
store's own writes tell its listeners once, at once; the same fact added
through both at the same moment is stored once; vectors the first stores
after the second opened are used by the second's hybrid search. Also the
store's life cycle: a store not open refuses, a schema newer than the code
is refused, a server that cannot be used is an error that never shows the
URL's password.
"""

from __future__ import annotations

import asyncio
import logging

import asyncpg
import pytest

from custom_components.memory.engine import (
    DatabaseTooNewError,
    DatabaseUnavailableError,
    SearchQuery,
    Signal,
)
from custom_components.memory.engine.postgres import PostgresStore
from custom_components.memory.engine.search import MATCH_BUDGET
from custom_components.memory.engine.store import BrowseQuery
from tests.engine.conftest import FakeClock, ids, memory, near, unit, vector
from tests.engine.postgres.stores import Heard, PgStores

SECRET = "hunter2-secret"


async def test_a_write_through_one_reaches_the_other(stores: PgStores) -> None:
    """The other store reads it and its listeners hear it; no store hears itself twice."""
    first, second = await stores.open(), await stores.open()
    assert first.instance != second.instance
    heard_first, heard_second = Heard(), Heard()
    first.add_listener(heard_first)
    second.add_listener(heard_second)
    item = (await first.add(memory("The boiler is serviced in May."))).item
    assert heard_first.calls == 1
    await heard_second.reach(1)
    assert await second.get(item.id) == item
    assert ids(await second.search(SearchQuery(text="boiler"))) == [item.id]
    assert (await second.browse(BrowseQuery())).total == 1
    await second.forget([item.id], purge=True)
    await second.add(memory("The boiler was replaced."))
    assert heard_second.calls == 3
    await heard_first.reach(3)
    await asyncio.sleep(0.3)
    # Its own notice (sent before the other's two) was left out.
    assert heard_first.calls == 3
    assert await first.get(item.id) is None


async def test_an_erase_through_one_reaches_the_others_erase_listeners(
    stores: PgStores,
) -> None:
    """A purge and a move through the first: the second's erase listener hears both."""
    first, second = await stores.open(), await stores.open()
    erased: list[frozenset[str]] = []
    arrived = asyncio.Event()

    async def listener(scopes: frozenset[str]) -> None:
        erased.append(scopes)
        arrived.set()

    second.add_erase_listener(listener)
    kept, purged = (
        r.item
        for r in await first.add_many(
            [memory("Kept.", scope="alice"), memory("Purged.", scope="bob")]
        )
    )
    await first.forget([purged.id], purge=True)
    await asyncio.wait_for(arrived.wait(), 10)
    assert erased == [frozenset({"bob"})]
    arrived.clear()
    await first.update_details(kept.id, scope="carol")
    await asyncio.wait_for(arrived.wait(), 10)
    assert erased[1] == frozenset({"alice", "carol"})


async def test_the_same_fact_at_once_is_stored_once(stores: PgStores) -> None:
    """Two stores adding one fact concurrently get one row, one of them created."""
    first, second = await stores.open(), await stores.open()
    for n in range(5):
        fact = memory(f"Fact {n}: the spare key is under the mat.")
        one, other = await asyncio.gather(first.add(fact), second.add(fact))
        assert one.item == other.item
        assert sorted([one.created, other.created]) == [False, True]
    stats = await second.stats()
    assert stats.by_status == {"active": 5}


async def test_vectors_stored_later_by_one_serve_the_other(stores: PgStores) -> None:
    """The second store opened before any vector; its hybrid search finds them."""
    first, second = await stores.open(), await stores.open()
    words = ("Alpha", "Beta", "Gamma", "Delta", "Eta", "Iota", "Kappa", "Lambda")
    added = [
        r.item.id for r in await first.add_many([memory(f"{w} note.") for w in words])
    ]
    assert await second.cosine_scale(unit(vector(1))) is None
    await first.set_vectors({i: vector(n) for n, i in enumerate(added)})
    hits = await second.search(SearchQuery(text="note", vector=near(1)))
    assert ids(hits)[0] == added[1]
    assert Signal.SEMANTIC in hits[0].matched
    assert set(await second.stored_vectors(added)) == set(added)
    assert await second.cosine_scale(unit(vector(1))) is not None


async def test_a_store_not_open_refuses_and_closes_twice(
    postgres_database: str, clock: FakeClock
) -> None:
    """Calls before `open` raise the store's error; `close` is harmless twice."""
    store = PostgresStore(postgres_database, clock=clock)
    with pytest.raises(DatabaseUnavailableError, match="not open"):
        await store.get(1)
    assert store.match_budget == MATCH_BUDGET
    store.match_budget = 12
    await store.open()
    assert store.match_budget == 12
    await store.open()
    assert (await store.add(memory("Open now."))).created
    await store.close()
    await store.close()
    with pytest.raises(DatabaseUnavailableError):
        await store.add(memory("Closed again."))


@pytest.mark.usefixtures("socket_enabled")
async def test_an_unusable_server_never_shows_the_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Nothing listens on port 1: an error, and no password in it, its repr or logs."""
    url = f"postgresql://memory:{SECRET}@127.0.0.1:1/memories"
    store = PostgresStore(url)
    assert SECRET not in repr(store)
    with (
        caplog.at_level(logging.DEBUG),
        pytest.raises(DatabaseUnavailableError) as caught,
    ):
        await store.open()
    assert SECRET not in str(caught.value)
    assert SECRET not in str(caught.value.placeholders)
    assert SECRET not in caplog.text
    with pytest.raises(DatabaseUnavailableError, match="not open"):
        await store.stats()


async def test_a_newer_schema_is_refused(stores: PgStores) -> None:
    """A database a newer version migrated is left alone: the store's own error."""
    first = await stores.open()
    await first.close()
    connection = await asyncpg.connect(stores.url)
    try:
        await connection.execute("UPDATE memory_schema SET version = version + 1")
    finally:
        await connection.close()
    with pytest.raises(DatabaseTooNewError, match="newer than this code"):
        await stores.open()


async def test_an_erase_of_too_many_scopes_to_list_tells_every_scope(
    stores: PgStores,
) -> None:
    """A notice past PostgreSQL's bound names no scope: every scope with memories."""
    first, second = await stores.open(), await stores.open()
    erased: list[frozenset[str]] = []
    arrived = asyncio.Event()

    async def listener(scopes: frozenset[str]) -> None:
        erased.append(scopes)
        arrived.set()

    second.add_erase_listener(listener)
    scopes = [f"person.someone_with_a_rather_long_name_{n:03}" for n in range(200)]
    added = await first.add_many([memory("Gone.", scope=scope) for scope in scopes])
    await first.add(memory("Stays.", scope=scopes[0]))
    await first.forget([r.item.id for r in added], purge=True)
    await asyncio.wait_for(arrived.wait(), 10)
    assert erased == [frozenset({scopes[0]})]
