"""Tests of importing: the preview, all-or-nothing writes, and the round trip."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    MemoryItem,
    MemoryStatus,
    MemoryStore,
    MemoryType,
    Origin,
    SearchQuery,
    Source,
)
from custom_components.memory.engine.embedding.jobs import count_missing
from custom_components.memory.engine.embedding.providers import OllamaProvider
from custom_components.memory.engine.exchange.export_json import (
    every_memory,
    render_json,
)
from custom_components.memory.engine.exchange.import_entries import (
    ImportEntry,
    ImportEntryError,
    ImportFile,
    ImportFormat,
)
from custom_components.memory.engine.exchange.import_formats import read_import
from custom_components.memory.engine.exchange.import_similar import near_duplicate_pairs
from custom_components.memory.engine.exchange.importing import (
    preview_import,
    run_import,
)
from tests.engine.conftest import (
    PROVIDER_MODEL,
    START,
    FakeClock,
    StoreFactory,
    make_queue,
    memory,
    run_until_idle,
    sql,
)

ANNA = "person.anna"
BEN = "person.ben"


def lines(*texts: str) -> ImportFile:
    """Return a file of plain lines."""
    return read_import("\n".join(texts).encode(), timezone=UTC)


async def test_preview_counts_and_writes_nothing(store: MemoryStore) -> None:
    """New, duplicates (store and file), near duplicates, secrets; no write."""
    await store.add(memory("Bins go out on Thursday evening"))
    near = await store.add(
        memory("Mia takes swimming lessons every Tuesday after school")
    )
    file = lines(
        "bins go out on thursday evening.",
        "Mia takes swimming lessons every Tuesday after school now",
        "The garage door code is 4512",
        "Leo likes pancakes",
        "Leo likes pancakes",
    )
    plan = await preview_import(store, file, {"": HOUSEHOLD}, now=START)
    assert plan.as_dict() == {
        "format": "lines",
        "total": 5,
        "new": 2,
        "duplicates": 2,
        "supersedes": 1,
        "history": 0,
        "secrets": 1,
        "by_scope": {HOUSEHOLD: 3},
        "owners": {"": HOUSEHOLD},
    }
    assert (await store.stats()).active == 2
    result = await run_import(
        store, file, {"": HOUSEHOLD}, source_name="import:chatgpt"
    )
    assert result.superseded == (near.item.id,)
    items = await store.get_many(list(result.ids))
    assert [items[i].content for i in result.ids] == [
        "Mia takes swimming lessons every Tuesday after school now",
        "The garage door code is 4512",
        "Leo likes pancakes",
    ]
    old = await store.get(near.item.id)
    assert old is not None
    assert old.status is MemoryStatus.SUPERSEDED
    assert old.superseded_by == result.ids[0]
    source = items[result.ids[1]].source
    assert (source.origin, source.agent_id) == (Origin.IMPORT, "import:chatgpt")
    # Keyword search finds them at once.
    hits = await store.search(SearchQuery(text="pancakes"))
    assert [hit.item.id for hit in hits] == [result.ids[2]]


async def test_owners_map_to_scopes(store: MemoryStore) -> None:
    """Each source owner goes to its scope; the same text in two scopes is two."""
    file = read_import(
        b'[{"memory": "Likes tea", "user_id": "alice"},'
        b' {"memory": "Likes tea", "user_id": "bob"}]',
        timezone=UTC,
    )
    scopes = {"alice": ANNA, "bob": BEN}
    plan = await preview_import(store, file, scopes)
    assert plan.by_scope == {ANNA: 1, BEN: 1}
    result = await run_import(store, file, scopes, source_name="mem0", user_id="u1")
    items = await store.get_many(list(result.ids))
    assert sorted(item.scope for item in items.values()) == [ANNA, BEN]
    assert {item.source.user_id for item in items.values()} == {"u1"}
    with pytest.raises(Exception, match="no scope"):
        await preview_import(store, file, {"alice": ANNA})


async def test_bad_entry_stores_nothing(store: MemoryStore, db_path: Path) -> None:
    """One entry too long: the error names it and no row is written."""
    file = lines("Fine one", "x" * 1_000_000, "Fine two")
    with pytest.raises(ImportEntryError) as err:
        await run_import(store, file, {"": HOUSEHOLD}, source_name="lines")
    assert err.value.placeholders["where"] == "line 2"
    assert sql(db_path, "SELECT count(*) FROM memories") == [(0,)]


async def test_failure_inside_the_transaction_rolls_back(
    store: MemoryStore, db_path: Path
) -> None:
    """A write that fails half-way (a tag row refused) leaves no row behind."""
    await store.add(memory("Kept before"))
    sql(
        db_path,
        "CREATE TRIGGER refuse AFTER INSERT ON memory_tags WHEN new.tag = 'boom' "
        "BEGIN SELECT RAISE(ABORT, 'refused'); END",
    )
    file = ImportFile(
        format=ImportFormat.LINES,
        entries=(
            ImportEntry(where="line 1", content="First"),
            ImportEntry(where="line 2", content="Second", tags=("boom",)),
        ),
    )
    with pytest.raises(Exception, match="refused"):
        await run_import(store, file, {"": HOUSEHOLD}, source_name="lines")
    assert sql(db_path, "SELECT content FROM memories") == [("Kept before",)]


async def test_times_expiry_and_history(store: MemoryStore) -> None:
    """Original times are kept; an expired entry arrives archived; history links."""
    text = (
        '{"format": "assist-memory", "version": 1, "memories": ['
        '{"id": 1, "content": "Lives in Lyon", "status": "superseded",'
        ' "superseded_by": 2, "created_at": "2024-01-01T00:00:00+00:00",'
        ' "valid_to": "2025-01-01T00:00:00+00:00"},'
        '{"id": 2, "content": "Lives in Paris", "created_at": "2025-01-01T00:00:00Z"},'
        '{"id": 3, "content": "Parcel due", "expires_at": "2025-06-01T00:00:00Z"},'
        '{"id": 4, "content": "lives in paris"}]}'
    )
    file = read_import(text.encode(), timezone=UTC)
    plan = await preview_import(store, file, {"": HOUSEHOLD}, now=START)
    assert (plan.new, plan.history, plan.duplicates) == (1, 2, 1)
    result = await run_import(
        store, file, {"": HOUSEHOLD}, source_name="assist_memory", now=START
    )
    old, new, parcel = (await store.get_many(list(result.ids))).values()
    assert old.status is MemoryStatus.SUPERSEDED
    assert old.superseded_by == new.id
    assert old.created_at == datetime(2024, 1, 1, tzinfo=UTC)
    assert old.valid_to == datetime(2025, 1, 1, tzinfo=UTC)
    assert new.created_at == new.valid_from == datetime(2025, 1, 1, tzinfo=UTC)
    assert parcel.status is MemoryStatus.ARCHIVED
    assert parcel.valid_to == datetime(2025, 6, 1, tzinfo=UTC)


async def test_history_of_a_duplicate_links_to_the_twin(store: MemoryStore) -> None:
    """History replaced by a memory the store already has points at that one."""
    twin = await store.add(memory("Lives in Paris"))
    text = (
        '{"format": "assist-memory", "memories": ['
        '{"id": "a", "content": "Lives in Lyon", "status": "superseded",'
        ' "superseded_by": "b"},'
        '{"id": "b", "content": "Lives in Paris"}]}'
    )
    result = await run_import(
        store,
        read_import(text.encode(), timezone=UTC),
        {"": HOUSEHOLD},
        source_name="x",
    )
    [history] = (await store.get_many(list(result.ids))).values()
    assert history.superseded_by == twin.item.id


async def test_round_trip(
    store_factory: StoreFactory, tmp_path: Path, clock: FakeClock
) -> None:
    """Export from one store with persons, tags, history, expiry; import; same."""
    first = await store_factory(tmp_path / "a.db")
    await first.add(memory("Bins go out on Thursday", tags=("bins", "chores")))
    clock.advance(60)
    moved = await first.add(memory("Anna lives in Lyon", scope=ANNA))
    clock.advance(60)
    await first.supersede(
        moved.item.id, memory("Anna lives in Paris", scope=ANNA, tags=("home",))
    )
    clock.advance(60)
    await first.add(
        memory(
            "Dentist on Friday",
            scope=BEN,
            type=MemoryType.EVENT,
            expires_at=datetime.fromtimestamp(START, UTC) + timedelta(days=30),
            language="de",
        )
    )
    gone = await first.add(memory("Old wifi password is hunter2"))
    await first.forget([gone.item.id])
    await first.mark_recalled([moved.item.id])
    items = await every_memory(first, None)
    text = render_json(items, exported_at=datetime.fromtimestamp(START, UTC))
    second = await store_factory(tmp_path / "b.db")
    await second.add(memory("Something of the new home"))
    file = read_import(text.encode(), timezone=UTC)
    identity = {owner: owner for owner in file.owners}
    result = await run_import(
        second, file, identity, source_name="assist_memory", now=clock()
    )
    copies = await second.get_many(list(result.ids))
    assert len(copies) == len(items)
    new_id = dict(zip((item.id for item in items), result.ids, strict=True))

    def comparable(item: MemoryItem, ids: dict[int, int]) -> MemoryItem:
        return replace(
            item,
            id=ids[item.id],
            superseded_by=None
            if item.superseded_by is None
            else ids[item.superseded_by],
            # Where it came from stays behind: those ids mean nothing here.
            source=Source(origin=Origin.IMPORT, agent_id="assist_memory"),
        )

    for item in items:
        assert copies[new_id[item.id]] == comparable(item, new_id)


def test_near_duplicate_pairs_match_all_pairs() -> None:
    """Prefix filtering finds what comparing every pair finds, per scope."""
    stored = [
        (1, HOUSEHOLD, "Mia takes swimming lessons every Tuesday after school", "en"),
        (2, HOUSEHOLD, "Leo plays football on Saturday mornings in the park", "en"),
        (3, ANNA, "Mia takes swimming lessons every Tuesday after school", "en"),
        (4, HOUSEHOLD, "The boiler is serviced every autumn by the engineer", "en"),
    ]
    entries = [
        (HOUSEHOLD, "Mia takes swimming lessons every Tuesday after school now", "en"),
        (HOUSEHOLD, "Leo plays football on Sunday mornings in the park", "en"),
        (BEN, "Mia takes swimming lessons every Tuesday after school", "en"),
        (HOUSEHOLD, "The boiler is serviced every autumn by the engineer again", "en"),
        (
            HOUSEHOLD,
            "Mia takes swimming lessons every Tuesday after school today",
            "en",
        ),
        (HOUSEHOLD, "...", "en"),
    ]
    # Sunday vs Saturday conflicts; Ben's scope has none; 1 is claimed once.
    assert near_duplicate_pairs(entries, stored) == {0: 1, 3: 4}


def test_near_duplicates_by_rare_words_among_many() -> None:
    """Many stored texts of common words: the one sharing rare words is found."""
    common = [
        (n, HOUSEHOLD, f"The kids walk the dog in the park every morning {n}", "en")
        for n in range(1, 1000)
    ]
    twin = (
        1000,
        HOUSEHOLD,
        "The kids walk the dog Biscuit in the park every morning",
        "en",
    )
    entry = (HOUSEHOLD, "The kids walk the dog Biscuit in the park each morning", "en")
    assert near_duplicate_pairs([entry], [*common, twin], threshold=0.7) == {0: 1000}


async def test_near_duplicates_in_each_memorys_language(store: MemoryStore) -> None:
    """An imported French entry repeats a stored French memory in French words.

    Analysed in English ("les", "sont", "est" as words) the pair shared 4 of
    7 words and both were kept; a German entry is analysed in German.
    """
    french = await store.add(memory("Les vélos sont dans le garage", language="fr"))
    german = await store.add(memory("Die Fahrräder sind in der Garage", language="de"))
    file = ImportFile(
        format=ImportFormat.ASSIST_MEMORY,
        entries=(
            ImportEntry(where="1", content="Le vélo est dans le garage", language="fr"),
            ImportEntry(
                where="2", content="Das Fahrrad ist in der Garage", language="de-AT"
            ),
        ),
    )
    result = await run_import(store, file, {"": HOUSEHOLD}, source_name="test")
    assert set(result.superseded) == {french.item.id, german.item.id}
    assert result.plan.supersedes == 2


async def test_imported_memories_are_embedded_in_the_background(
    store_factory: StoreFactory,
    provider: OllamaProvider,
    clock: FakeClock,
) -> None:
    """The embedding queue picks imported rows up after the import, history too."""
    store = await store_factory(model=PROVIDER_MODEL)
    queue = make_queue(store, provider, clock)
    await queue.start()
    file = read_import(
        b'[{"memory": "Mia is allergic to nuts"}, {"memory": "Bins on Thursday"},'
        b' {"memory": "Lived in Lyon", "state": "archived"}]',
        timezone=UTC,
    )
    result = await run_import(store, file, {"": HOUSEHOLD}, source_name="mem0")
    assert await count_missing(store, PROVIDER_MODEL) == 3
    assert await run_until_idle(queue) is None
    assert await count_missing(store, PROVIDER_MODEL) == 0
    vector = await queue.query_vector("peanut allergy")
    hits = await store.search(SearchQuery(text="peanut allergy", vector=vector))
    assert hits[0].item.id == result.ids[0]
