"""PostgresStore behaves as MemoryStore: the same assertions, run on each backend.

`backend` is a real `MemoryStore` (SQLite) or a real `PostgresStore` on a
fresh PostgreSQL database, on the same fake clock; every test below runs
once on each and asserts what the integration relies on: de-duplication,
reads, forgetting and purging, superseding and its history, rewording and
details, restoring, expiry, one person's memories kept from another,
search, browsing, counts, and listeners told of every write.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import numpy as np
import pytest

from custom_components.memory.engine import (
    InvalidInputError,
    MemoryStatus,
    MemoryType,
    SearchQuery,
    UnknownMemoryError,
)
from custom_components.memory.engine.errors import (
    MemorySupersededError,
    MemoryTwinError,
)
from custom_components.memory.engine.postgres import PostgresStore
from custom_components.memory.engine.store import BrowseQuery
from tests.engine.conftest import (
    MODEL,
    FakeClock,
    StoreFactory,
    ids,
    memory,
    near,
    unit,
    vector,
)
from tests.engine.postgres.stores import Heard, PgStores, Store

DAY = 86_400.0


@pytest.fixture
async def backend(
    backend_url: str | None, store_factory: StoreFactory, clock: FakeClock
) -> AsyncIterator[Store]:
    """Yield an open store of each backend in turn, on the test's clock."""
    if backend_url is None:
        yield await store_factory()
        return
    stores = PgStores(backend_url, clock)
    try:
        yield await stores.open()
    finally:
        await stores.close_all()


async def test_the_facade_is_what_the_fixture_yields(
    backend: Store, request: pytest.FixtureRequest
) -> None:
    """The postgres run really drives a PostgresStore, with the store's settings."""
    is_pg = request.node.callspec.params["backend_url"] == "postgres"
    assert isinstance(backend, PostgresStore) is is_pg
    assert backend.model == MODEL
    assert backend.language == "en"


async def test_add_returns_the_active_twin(backend: Store) -> None:
    """The same text in a scope is stored once; another scope gets its own."""
    first = await backend.add(memory("Mia is allergic to peanuts.", tags=("health",)))
    again = await backend.add(memory("  mia is ALLERGIC to peanuts. "))
    elsewhere = await backend.add(memory("Mia is allergic to peanuts.", scope="bob"))
    assert first.created and not again.created and elsewhere.created
    assert again.item == first.item
    assert elsewhere.item.id != first.item.id
    assert first.item.tags == ("health",)
    assert first.item.language == "en"
    assert await backend.get(first.item.id) == first.item
    assert await backend.get(10**9) is None


async def test_add_many_keeps_the_first_copy_and_reads_back(backend: Store) -> None:
    """A batch repeating a text keeps its first copy; get_many reads them all."""
    results = await backend.add_many(
        [memory("Tea at five."), memory("The cat is Tom."), memory("tea at five.")]
    )
    assert [r.created for r in results] == [True, True, False]
    assert results[2].item == results[0].item
    found = await backend.get_many([r.item.id for r in results] + [10**9])
    assert set(found) == {results[0].item.id, results[1].item.id}
    assert found[results[1].item.id].content == "The cat is Tom."
    with pytest.raises(InvalidInputError, match="one vector per memory"):
        await backend.add_many([memory("x")], vectors=[])


async def test_forget_archives_and_purge_erases(backend: Store) -> None:
    """Archived memories stay readable; purged ones and their vectors are gone."""
    kept, purged = (
        r.item for r in await backend.add_many([memory("One."), memory("Two.")])
    )
    await backend.set_vectors({kept.id: vector(1), purged.id: vector(2)})
    assert await backend.forget([kept.id, kept.id]) == [kept.id]
    archived = await backend.get(kept.id)
    assert archived is not None
    assert archived.status is MemoryStatus.ARCHIVED
    assert await backend.forget([purged.id], purge=True) == [purged.id]
    assert await backend.get(purged.id) is None
    assert set(await backend.stored_vectors([kept.id, purged.id])) == {kept.id}
    with pytest.raises(UnknownMemoryError, match=f"no memory with id {purged.id}$"):
        await backend.forget([kept.id, purged.id])
    # A new copy of the archived text is a new memory.
    assert (await backend.add(memory("One."))).created


async def test_supersede_links_the_chain_and_history_reads_it(backend: Store) -> None:
    """Each correction supersedes the last; history reads both ways."""
    first = (await backend.add(memory("Bob lives in Ulm."))).item
    second, old = await backend.supersede(first.id, memory("Bob lives in Bonn."))
    third, _old = await backend.supersede(second.id, memory("Bob lives in Kiel."))
    assert old.status is MemoryStatus.SUPERSEDED
    assert old.superseded_by == second.id
    current = await backend.get(second.id)
    assert current is not None
    assert current.superseded_by == third.id
    before, after = await backend.history(current)
    assert [i.id for i in before] == [first.id]
    assert [i.id for i in after] == [third.id]
    before, after = await backend.history(third)
    assert [i.id for i in before] == [first.id, second.id]
    assert after == []
    with pytest.raises(InvalidInputError, match="is not active"):
        await backend.supersede(first.id, memory("Bob lives in Rome."))


async def test_update_content_and_details(backend: Store) -> None:
    """Rewording follows the text (and drops its vectors); details move it."""
    item, other = (
        r.item
        for r in await backend.add_many([memory("Mia likes jazz."), memory("Rock.")])
    )
    await backend.set_vectors({item.id: vector(1)})
    reworded = await backend.update_content(
        item.id, content="Mia loves jazz.", topic="music", confidence=0.9
    )
    assert (reworded.content, reworded.topic, reworded.confidence) == (
        "Mia loves jazz.",
        "music",
        0.9,
    )
    assert await backend.stored_vectors([item.id]) == {}
    assert await backend.find_active(item.scope, "mia loves jazz.") == reworded
    assert await backend.find_active(item.scope, "Mia likes jazz.") is None
    assert [i.id for i in await backend.active_by_topic(item.scope, "music")] == [
        item.id
    ]
    with pytest.raises(InvalidInputError, match=f"memory {item.id} already has"):
        await backend.update_content(other.id, content="mia loves jazz.")
    when = datetime(2027, 1, 1, tzinfo=UTC)
    moved = await backend.update_details(
        item.id, kind=MemoryType.PREFERENCE, tags=("Music",), expires_at=when
    )
    assert (moved.type, moved.tags, moved.expires_at) == (
        MemoryType.PREFERENCE,
        ("music",),
        when,
    )
    moved = await backend.update_details(item.id, scope="alice")
    assert moved.scope == "alice"
    await backend.add(memory("Rock.", scope="alice"))
    with pytest.raises(MemoryTwinError):
        await backend.update_details(other.id, scope="alice")


async def test_restore_and_expire_due(backend: Store, clock: FakeClock) -> None:
    """Archived memories come back; superseded ones refuse; expiry archives."""
    soon = datetime.fromtimestamp(clock.now + DAY, tz=UTC)
    item, later, fixed = (
        r.item
        for r in await backend.add_many(
            [
                memory("Keys in the drawer."),
                memory("Bin day.", expires_at=soon),
                memory("Old fact."),
            ]
        )
    )
    await backend.forget([item.id])
    assert await backend.restore([item.id, item.id]) == [item.id]
    restored = await backend.get(item.id)
    assert restored is not None
    assert restored.status is MemoryStatus.ACTIVE
    await backend.supersede(fixed.id, memory("New fact."))
    with pytest.raises(MemorySupersededError):
        await backend.restore([fixed.id])
    assert await backend.expire_due() == []
    clock.advance(2 * DAY)
    assert await backend.expire_due() == [later.id]
    expired = await backend.get(later.id)
    assert expired is not None
    assert expired.status is MemoryStatus.ARCHIVED
    assert await backend.expire_due() == []


async def test_one_persons_memories_never_reach_another(backend: Store) -> None:
    """Search, browse and lookups within alice's scope never return bob's copy."""
    text = "The door code is 4711."
    alice, bob = (
        r.item
        for r in await backend.add_many(
            [memory(text, scope="alice"), memory(text, scope="bob")]
        )
    )
    await backend.set_vectors({alice.id: vector(7), bob.id: vector(7)})
    for query in (
        SearchQuery(text="door code", scopes=("alice",)),
        SearchQuery(text="door code", vector=vector(7), scopes=("alice",)),
        SearchQuery(text="", scopes=("alice",)),
    ):
        assert ids(await backend.search(query)) == [alice.id]
    page = await backend.browse(BrowseQuery(scopes=("alice",)))
    assert [i.id for i in page.items] == [alice.id]
    assert page.total == 1
    found = await backend.find_active("bob", text)
    assert found is not None
    assert found.id == bob.id
    assert await backend.search(SearchQuery(text="door", scopes=())) == []


async def test_search_keyword_and_hybrid(backend: Store) -> None:
    """Keywords find the words; a vector finds the meaning; both fuse."""
    texts = ["Mia is allergic to peanuts.", "Tom plays the piano.", "Peanut soup."]
    added = [r.item.id for r in await backend.add_many([memory(t) for t in texts])]
    await backend.set_vectors({i: vector(n) for n, i in enumerate(added)})
    keyword = await backend.search(SearchQuery(text="peanuts"))
    assert set(ids(keyword)) == {added[0], added[2]}
    semantic = await backend.search(SearchQuery(text="", vector=near(1)))
    assert ids(semantic)[0] == added[1]
    hybrid = await backend.search(SearchQuery(text="peanuts", vector=near(2)))
    assert ids(hybrid)[0] == added[2]
    assert len(hybrid[0].matched) == 2
    stored = await backend.stored_vectors(added)
    assert np.allclose(stored[added[1]], unit(vector(1)))


async def test_browse_pages_with_a_cursor(backend: Store, clock: FakeClock) -> None:
    """Pages newest first, a cursor that survives a new memory, filters and errors."""
    added = []
    for n in range(5):
        added.append((await backend.add(memory(f"Fact number {n}."))).item.id)
        clock.advance(60)
    first = await backend.browse(BrowseQuery(limit=2))
    assert [i.id for i in first.items] == [added[4], added[3]]
    assert first.total == 5
    assert first.cursor is not None
    await backend.add(memory("A newer fact."))
    second = await backend.browse(BrowseQuery(limit=2, cursor=first.cursor))
    assert [i.id for i in second.items] == [added[2], added[1]]
    third = await backend.browse(BrowseQuery(limit=2, cursor=second.cursor))
    assert [i.id for i in third.items] == [added[0]]
    assert third.cursor is None
    await backend.mark_recalled([added[1], added[1]])
    await backend.mark_recalled([added[1], added[2]])
    recalled = await backend.browse(BrowseQuery(order="recalled", limit=2))
    assert [i.id for i in recalled.items] == [added[1], added[2]]
    await backend.forget([added[0]])
    archived = await backend.browse(BrowseQuery(status="archived"))
    assert [i.id for i in archived.items] == [added[0]]
    with pytest.raises(InvalidInputError, match="not a page cursor"):
        await backend.browse(BrowseQuery(cursor="garbage"))


async def test_stats_count_by_status_type_scope_and_model(backend: Store) -> None:
    """The sensors' counts follow every write."""
    results = await backend.add_many(
        [memory("A."), memory("B.", type=MemoryType.EVENT), memory("C.", scope="bob")]
    )
    await backend.forget([results[0].item.id])
    await backend.set_vectors({results[1].item.id: vector(1)})
    stats = await backend.stats()
    assert stats.by_status == {"active": 2, "archived": 1}
    assert stats.active_by_type == {"event": 1, "fact": 1}
    assert stats.active_by_scope == {"household": 1, "bob": 1}
    assert stats.vectors_by_model == {MODEL: 1}
    assert stats.active_model == MODEL
    assert stats.database_bytes > 0
    # A purged memory's vector goes from the counts; a model with none left.
    await backend.forget([results[1].item.id], purge=True)
    assert (await backend.stats()).vectors_by_model == {}


async def test_listeners_hear_every_write(backend: Store, clock: FakeClock) -> None:
    """Each write tells the listeners once, at once; a recall does not."""
    heard = Heard()
    remove = backend.add_listener(heard)
    soon = datetime.fromtimestamp(clock.now + 10, tz=UTC)
    item = (await backend.add(memory("Lamp on.", expires_at=soon))).item
    assert heard.calls == 1
    await backend.mark_recalled([item.id])
    assert heard.calls == 1
    await backend.update_content(item.id, content="Lamp off.")
    await backend.update_details(item.id, tags=("home",))
    await backend.set_vectors({item.id: vector(3)})
    new, _old = await backend.supersede(item.id, memory("Lamp dimmed."))
    assert heard.calls == 5
    clock.advance(60)
    await backend.forget([new.id])
    await backend.restore([new.id])
    assert heard.calls == 7
    await backend.update_details(new.id, expires_at=soon)
    assert await backend.expire_due() == [new.id]
    assert heard.calls == 9
    remove()
    await backend.forget([new.id], purge=True)
    assert heard.calls == 9


async def test_erase_listeners_hear_purges_and_moves(backend: Store) -> None:
    """A purge and a move to another owner name the scopes that lost text."""
    erased: list[frozenset[str]] = []

    async def listener(scopes: frozenset[str]) -> None:
        erased.append(scopes)

    remove = backend.add_erase_listener(listener)
    one, two, three = (
        r.item
        for r in await backend.add_many(
            [memory("A.", scope="alice"), memory("B.", scope="bob"), memory("C.")]
        )
    )
    await backend.forget([one.id])
    await backend.update_details(three.id, tags=("x",))
    assert erased == []
    await backend.forget([one.id, two.id], purge=True)
    await backend.update_details(three.id, scope="carol")
    assert erased == [frozenset({"alice", "bob"}), frozenset({"household", "carol"})]
    remove()
    await backend.forget([three.id], purge=True)
    assert len(erased) == 2


async def test_set_vectors_checks_every_id_first(backend: Store) -> None:
    """An unknown id stores nothing and is named; nothing to store is no error."""
    item = (await backend.add(memory("A."))).item
    await backend.set_vectors({})
    with pytest.raises(UnknownMemoryError, match=f"no memory with id {10**6}$"):
        await backend.set_vectors({item.id: vector(1), 10**6: vector(2)})
    assert await backend.stored_vectors([item.id]) == {}
    assert await backend.stored_vectors([]) == {}


async def test_a_store_without_a_model_refuses_vectors(
    backend_url: str | None, store_factory: StoreFactory, clock: FakeClock
) -> None:
    """No embedding model: vectors are refused before any write, searches are keywords."""
    stores = None if backend_url is None else PgStores(backend_url, clock)
    try:
        store = (
            await store_factory(model=None)
            if stores is None
            else await stores.open(model=None)
        )
        with pytest.raises(InvalidInputError, match="no embedding model"):
            await store.add(memory("Blue door."), vector=vector(1))
        assert await store.get_many([1, 2]) == {}
        item = (await store.add(memory("Blue door."))).item
        with pytest.raises(InvalidInputError, match="no embedding model"):
            await store.set_vectors({item.id: vector(1)})
        hits = await store.search(SearchQuery(text="door", vector=vector(1)))
        assert ids(hits) == [item.id]
        assert await store.stored_vectors([item.id]) == {}
    finally:
        if stores is not None:
            await stores.close_all()
