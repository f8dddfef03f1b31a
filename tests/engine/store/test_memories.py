"""Tests of the `memories` table: add, validate, forget, purge, listeners, stats.

Most tests run on both vector backends through the `store` fixture.
"""

from __future__ import annotations

from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
import sqlite3

import pytest
import sqlite_vec

from custom_components.memory.engine import (
    HOUSEHOLD,
    MAX_CONTENT_CHARS,
    MAX_SEARCH_LIMIT,
    SCHEMA_VERSION,
    ContentTooLongError,
    EmptyContentError,
    InvalidInputError,
    InvalidScopeError,
    InvalidTagError,
    InvalidVectorError,
    MemoryStatus,
    MemoryStore,
    MemoryType,
    NewMemory,
    Origin,
    SearchQuery,
    Source,
    UnknownMemoryError,
)
from custom_components.memory.engine.errors import TooManyTagsError
from custom_components.memory.engine.models import MAX_TAGS, from_timestamp
from custom_components.memory.engine.vectors.index import as_unit_vector, vec0_codes
from tests.engine.conftest import (
    DIM,
    KEYWORD,
    MODEL,
    START,
    Backend,
    FakeClock,
    StoreFactory,
    contents,
    file_bytes,
    ids,
    memory,
    sql,
    vector,
)

# -- add and get ----------------------------------------------------------------


async def test_add_get_round_trip(store: MemoryStore, clock: FakeClock) -> None:
    """Every field written comes back from `get` and from the add result."""
    expires = datetime(2026, 6, 1, 12, tzinfo=UTC)
    valid_from = datetime(2025, 12, 24, 18, 30, tzinfo=UTC)
    source = Source(
        origin=Origin.ACTION,
        conversation_id="01JCONV",
        agent_id="conversation.claude",
        device_id="satellite-kitchen",
        user_id="user-anna",
    )
    result = await store.add(
        NewMemory(
            content="  Anna prefers oat milk in her coffee  ",
            source=source,
            type=MemoryType.PREFERENCE,
            scope="person.anna",
            tags=("Food", "morning routine", "food"),
            expires_at=expires,
            valid_from=valid_from,
        )
    )
    assert result.created
    item = await store.get(result.item.id)
    assert item == result.item
    assert item is not None
    assert item.id >= 1
    assert item.scope == "person.anna"
    assert item.type is MemoryType.PREFERENCE
    assert item.content == "Anna prefers oat milk in her coffee"
    assert item.tags == ("food", "morning_routine")
    assert item.status is MemoryStatus.ACTIVE
    assert item.superseded_by is None
    assert item.valid_from == valid_from
    assert item.valid_to is None
    assert item.expires_at == expires
    assert item.created_at == from_timestamp(START)
    assert item.updated_at == from_timestamp(START)
    assert item.last_recalled_at is None
    assert item.recall_count == 0
    assert item.source == source
    as_dict = item.as_dict()
    assert as_dict["type"] == "preference"
    assert as_dict["tags"] == ["food", "morning_routine"]
    assert as_dict["expires_at"] == expires.isoformat()
    assert as_dict["source"] == {
        "origin": "action",
        "conversation_id": "01JCONV",
        "agent_id": "conversation.claude",
        "device_id": "satellite-kitchen",
        "user_id": "user-anna",
    }
    assert await store.get(item.id + 1000) is None


async def test_add_defaults(store: MemoryStore, clock: FakeClock) -> None:
    """Household scope, fact type, no tags, valid from now; naive times are UTC."""
    item = (
        await store.add(
            NewMemory(
                content="The bins go out on Tuesday",
                source=Source(origin=Origin.TOOL),
                expires_at=datetime(2026, 3, 1, 8),  # noqa: DTZ001 - naive on purpose
            )
        )
    ).item
    assert item.scope == HOUSEHOLD
    assert item.type is MemoryType.FACT
    assert item.tags == ()
    assert item.valid_from == from_timestamp(START)
    assert item.expires_at == datetime(2026, 3, 1, 8, tzinfo=UTC)
    assert item.source == Source(origin=Origin.TOOL)


async def test_add_same_content_returns_twin(
    store: MemoryStore, clock: FakeClock
) -> None:
    """Re-adding the same normalised text in a scope returns the first item."""
    first = await store.add(memory("Anna is allergic to nuts"))
    clock.advance(60)
    again = await store.add(memory("  anna is allergic to NUTS. "))
    assert first.created
    assert not again.created
    assert again.item.id == first.item.id
    assert again.item.content == "Anna is allergic to nuts"
    assert again.item.created_at == first.item.created_at
    other_scope = await store.add(
        memory("Anna is allergic to nuts", scope="person.anna")
    )
    assert other_scope.created
    assert other_scope.item.id != first.item.id
    stats = await store.stats()
    assert stats.active == 2


async def test_add_many_deduplicates_within_batch(store: MemoryStore) -> None:
    """Twins inside one batch resolve to the first."""
    results = await store.add_many(
        [memory("Dinner at seven"), memory("dinner at SEVEN!"), memory("Lunch at one")]
    )
    assert [result.created for result in results] == [True, False, True]
    assert results[0].item.id == results[1].item.id
    assert (await store.stats()).active == 2


async def test_archived_twin_does_not_block(store: MemoryStore) -> None:
    """Only an active twin de-duplicates; an archived one allows a new item."""
    first = await store.add(memory("The wifi password is on the fridge"))
    await store.forget([first.item.id])
    second = await store.add(memory("the wifi password is on the fridge"))
    assert second.created
    assert second.item.id != first.item.id
    assert second.item.status is MemoryStatus.ACTIVE
    old = await store.get(first.item.id)
    assert old is not None
    assert old.status is MemoryStatus.ARCHIVED
    # And the new one de-duplicates from now on.
    third = await store.add(memory("The wifi password is on the fridge."))
    assert not third.created
    assert third.item.id == second.item.id


async def test_expired_twin_does_not_block(
    store: MemoryStore, clock: FakeClock
) -> None:
    """An expired (not yet archived) twin must not swallow a new memory."""
    expires = datetime.fromtimestamp(START + 60, UTC)
    first = await store.add(memory("Guests arrive on Friday", expires_at=expires))
    clock.advance(120)
    second = await store.add(memory("Guests arrive on Friday"))
    assert second.created
    assert second.item.id != first.item.id
    hits = await store.search(SearchQuery(text="guests"))
    assert ids(hits) == [second.item.id]
    old = await store.get(first.item.id)
    assert old is not None
    assert old.status is MemoryStatus.ARCHIVED
    assert old.valid_to == expires
    # expire_due has nothing left to do, and the new memory survives it.
    assert await store.expire_due() == []
    assert ids(await store.search(SearchQuery(text="guests"))) == [second.item.id]


async def test_mark_recalled(store: MemoryStore, clock: FakeClock) -> None:
    """Recall is counted per memory with the time of the last one."""
    first = (await store.add(memory("Recall me"))).item
    second = (await store.add(memory("Not me"))).item
    clock.advance(30)
    await store.mark_recalled([first.id, first.id])
    clock.advance(30)
    await store.mark_recalled([first.id])
    await store.mark_recalled([])
    recalled = await store.get(first.id)
    untouched = await store.get(second.id)
    assert recalled is not None
    assert untouched is not None
    assert recalled.recall_count == 2
    assert recalled.last_recalled_at == from_timestamp(START + 60)
    assert untouched.recall_count == 0
    assert untouched.last_recalled_at is None


# -- validation -------------------------------------------------------------------


async def test_content_limit(store: MemoryStore) -> None:
    """2,000 characters are fine, one more is refused; padding does not count."""
    exact = "x" * (MAX_CONTENT_CHARS - 5) + " end."
    assert len(exact) == MAX_CONTENT_CHARS
    result = await store.add(memory(f"   {exact}\n"))
    assert result.item.content == exact
    with pytest.raises(ContentTooLongError) as info:
        await store.add(memory("y" * (MAX_CONTENT_CHARS + 1)))
    assert info.value.key == "content_too_long"
    assert info.value.placeholders == {
        "length": str(MAX_CONTENT_CHARS + 1),
        "limit": str(MAX_CONTENT_CHARS),
    }
    assert isinstance(info.value, InvalidInputError)
    assert (await store.stats()).active == 1


async def test_huge_content_stores_nothing(store: MemoryStore) -> None:
    """A 1 MB memory raises and leaves no trace."""
    with pytest.raises(ContentTooLongError) as info:
        await store.add(memory("megabyte " * 116_509))
    assert int(info.value.placeholders["length"]) > 1_000_000
    assert "megabyte" not in str(info.value)
    stats = await store.stats()
    assert stats.by_status == {}
    assert await store.search(SearchQuery(text="megabyte")) == []


@pytest.mark.parametrize("content", ["", "   ", "\n\t  \r\n"])
async def test_empty_content(store: MemoryStore, content: str) -> None:
    """Empty or whitespace content is refused."""
    with pytest.raises(EmptyContentError) as info:
        await store.add(memory(content))
    assert info.value.key == "empty_content"
    assert (await store.stats()).by_status == {}


@pytest.mark.parametrize(
    "tags",
    [
        ("",),
        ("   ",),
        ("a/b",),
        ("#hash",),
        ("x" * 41,),
    ],
)
async def test_invalid_tags(store: MemoryStore, tags: tuple[str, ...]) -> None:
    """Unstorable tags are refused."""
    with pytest.raises(InvalidTagError) as info:
        await store.add(memory("Tagged memory", tags=tags))
    assert info.value.key == "invalid_tag"
    assert "tag" in info.value.placeholders
    assert (await store.stats()).by_status == {}


async def test_too_many_tags(store: MemoryStore) -> None:
    """Too many tags: the error says how many, and the limit, not a tag."""
    tags = tuple(f"tag{i}" for i in range(MAX_TAGS + 5))
    with pytest.raises(TooManyTagsError) as info:
        await store.add(memory("Tagged memory", tags=(*tags, "TAG0")))
    assert info.value.key == "too_many_tags"
    assert info.value.placeholders == {
        "count": str(MAX_TAGS + 5),
        "limit": str(MAX_TAGS),
    }
    assert (await store.stats()).by_status == {}


@pytest.mark.parametrize(
    "content",
    [
        "\x00",
        "\u200b\ufeff",
        "\u00a0\u3000\u2028",
        "\u2066\u00ad\u180e",
        "\u3164\u2800",
    ],
)
async def test_invisible_content(store: MemoryStore, content: str) -> None:
    """Content with no visible character is not a memory."""
    with pytest.raises(EmptyContentError):
        await store.add(memory(content))
    assert (await store.stats()).by_status == {}


async def test_control_characters_dropped(store: MemoryStore) -> None:
    """NUL and other controls never reach the database; tabs and line breaks do."""
    item = (await store.add(memory("\x00Bins\x00 go\x1b out\r\n\ton Thursday"))).item
    assert item.content == "Bins go out\n\ton Thursday"
    assert ids(await store.search(SearchQuery(text="bins"))) == [item.id]


async def test_line_breaking_controls_keep_words_apart(store: MemoryStore) -> None:
    """A control that breaks a line becomes a line break, not nothing.

    Dropping it would join "SYSTEM:" and "obey" into one word, and the words
    on either side would no longer be found apart.
    """
    item = (await store.add(memory("Boiler\x85service\x0bdue\x1emonday\rnow"))).item
    assert item.content == "Boiler\nservice\ndue\nmonday\nnow"
    assert ids(await store.search(SearchQuery(text="service"))) == [item.id]


async def test_ids_beyond_sqlite(store: MemoryStore) -> None:
    """Ids no row can have are unknown, never an OverflowError from SQLite."""
    item = (await store.add(memory("Keep me"))).item
    huge = [2**63, 2**64, -(2**63) - 1]
    assert await store.get_many([item.id, *huge]) == {item.id: item}
    assert await store.get(2**63) is None
    for purge in (False, True):
        with pytest.raises(UnknownMemoryError) as info:
            await store.forget([item.id, 2**63], purge=purge)
        assert info.value.placeholders == {"ids": str(2**63)}
    assert await store.get(item.id) == item


async def test_tag_limits_accepted(store: MemoryStore) -> None:
    """Twenty tags of forty characters are fine; duplicates count once."""
    tags = tuple(f"{i:02d}" + "t" * 38 for i in range(MAX_TAGS))
    result = await store.add(memory("Many tags", tags=(*tags, tags[0].upper())))
    assert result.item.tags == tags


@pytest.mark.parametrize("scope", ["", "   ", "s" * 101])
async def test_invalid_scope(store: MemoryStore, scope: str) -> None:
    """Empty and overlong scopes are refused."""
    with pytest.raises(InvalidScopeError) as info:
        await store.add(memory("Scoped", scope=scope))
    assert info.value.key == "invalid_scope"
    assert len(info.value.placeholders["scope"]) <= 100
    assert (await store.stats()).by_status == {}


async def test_add_many_is_all_or_nothing(store: MemoryStore) -> None:
    """One bad item in a batch: nothing is written."""
    calls: list[None] = []
    store.add_listener(lambda: calls.append(None))
    batch = [memory("Good one"), memory("Good two"), memory("Bad", tags=("a/b",))]
    with pytest.raises(InvalidTagError):
        await store.add_many(batch)
    with pytest.raises(InvalidVectorError):
        await store.add_many(
            [memory("Good one"), memory("Good two")],
            vectors=[vector(1), [float("nan")] * DIM],
        )
    with pytest.raises(InvalidInputError):
        await store.add_many([memory("Good one")], vectors=[vector(1), vector(2)])
    stats = await store.stats()
    assert stats.by_status == {}
    assert stats.vectors_by_model == {}
    assert calls == []
    assert await store.search(SearchQuery(text="good")) == []


async def test_vectors_need_a_model(store_factory: StoreFactory) -> None:
    """A store without an embedding model refuses vectors."""
    store = await store_factory(model=None)
    assert store.model is None
    with pytest.raises(InvalidInputError):
        await store.add(memory("With vector"), vector=vector(1))
    item = (await store.add(memory("Without vector"))).item
    with pytest.raises(InvalidInputError):
        await store.set_vectors({item.id: vector(1)})
    # A query vector is ignored: keyword search still works.
    hits = await store.search(SearchQuery(text="vector", vector=vector(1)))
    assert ids(hits) == [item.id]
    assert hits[0].matched == KEYWORD
    assert (await store.stats()).active == 1


# -- forget ----------------------------------------------------------------------------


async def test_forget_archives(store: MemoryStore, clock: FakeClock) -> None:
    """By default forgetting archives: still readable, gone from active search."""
    item = (await store.add(memory("Old phone number 555"), vector=vector(1))).item
    keep = (await store.add(memory("New phone number 777"), vector=vector(2))).item
    clock.advance(100)
    assert await store.forget([item.id, item.id]) == [item.id]
    archived = await store.get(item.id)
    assert archived is not None
    assert archived.status is MemoryStatus.ARCHIVED
    assert archived.valid_to == from_timestamp(START + 100)
    assert archived.updated_at == from_timestamp(START + 100)
    assert archived.content == item.content
    for query in (
        SearchQuery(text="phone"),
        SearchQuery(),
        SearchQuery(vector=vector(1)),
    ):
        assert ids(await store.search(query)) == [keep.id]
    assert sorted(ids(await store.search(SearchQuery(text="phone", status="any")))) == [
        item.id,
        keep.id,
    ]
    assert ids(
        await store.search(SearchQuery(vector=vector(1), status="archived"))
    ) == [item.id]
    stats = await store.stats()
    assert stats.by_status == {"active": 1, "archived": 1}
    assert stats.archived == 1
    assert stats.vectors_by_model == {MODEL: 2}
    # Forgetting again keeps the first archive time.
    clock.advance(100)
    await store.forget([item.id])
    again = await store.get(item.id)
    assert again is not None
    assert again.valid_to == from_timestamp(START + 100)
    assert await store.forget([]) == []


async def test_forget_unknown_changes_nothing(store: MemoryStore) -> None:
    """An unknown id raises before anything is archived or purged."""
    item = (await store.add(memory("Keep me"), vector=vector(1))).item
    calls: list[None] = []
    store.add_listener(lambda: calls.append(None))
    for purge in (False, True):
        with pytest.raises(UnknownMemoryError) as info:
            await store.forget([item.id, item.id + 1, item.id + 2], purge=purge)
        assert info.value.key == "unknown_memory"
        assert info.value.placeholders == {"ids": f"{item.id + 1}, {item.id + 2}"}
    still = await store.get(item.id)
    assert still == item
    assert ids(await store.search(SearchQuery(text="keep"))) == [item.id]
    assert (await store.stats()).vectors_by_model == {MODEL: 1}
    assert calls == []


async def test_forget_many(store: MemoryStore) -> None:
    """More ids than one SQL chunk are checked and archived together."""
    added = await store.add_many([memory(f"Bulk note {i}") for i in range(600)])
    all_ids = [result.item.id for result in added]
    assert len(await store.get_many(all_ids)) == 600
    with pytest.raises(UnknownMemoryError):
        await store.forget([*all_ids, 10_000])
    assert (await store.stats()).active == 600
    assert await store.forget(all_ids) == sorted(all_ids)
    assert (await store.stats()).by_status == {"archived": 600}


def _vacuum(path: Path, backend: Backend) -> None:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        if backend == "sqlite-vec":
            conn.enable_load_extension(True)
            conn.load_extension(sqlite_vec.loadable_path())
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


async def test_purge_erases_every_copy(
    store: MemoryStore, db_path: Path, backend: Backend
) -> None:
    """Purged text, tags and vectors are gone from the database files."""
    marker, tag_marker = "zqxjvlmarker", "purgetagqz"
    secret_vector = vector("secret")
    secret_unit = as_unit_vector(secret_vector)
    secret_codes = vec0_codes(secret_unit.reshape(1, -1))[0].tobytes()
    others = await store.add_many(
        [memory(f"Everyday note {i} about the garden") for i in range(50)],
        vectors=[vector(i) for i in range(50)],
    )
    secret = (
        await store.add(
            memory(f"The safe combination {marker} is private", tags=(tag_marker,)),
            vector=secret_vector,
        )
    ).item
    before = file_bytes(db_path)
    assert marker.encode() in before
    assert tag_marker.encode() in before
    assert secret_unit.tobytes() in before
    if backend == "sqlite-vec":
        assert secret_codes in before

    calls: list[None] = []
    store.add_listener(lambda: calls.append(None))
    assert await store.forget([secret.id], purge=True) == [secret.id]
    assert calls == [None]
    assert await store.get(secret.id) is None
    assert sql(
        db_path, "SELECT count(*) FROM memory_tags WHERE memory_id = ?", secret.id
    ) == [(0,)]
    assert sql(
        db_path, "SELECT count(*) FROM embeddings WHERE memory_id = ?", secret.id
    ) == [(0,)]
    assert (
        sql(
            db_path, "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", marker
        )
        == []
    )
    assert await store.search(SearchQuery(text=marker, status="any")) == []
    semantic = await store.search(
        SearchQuery(vector=secret_vector, status="any", limit=MAX_SEARCH_LIMIT)
    )
    assert secret.id not in ids(semantic)
    stats = await store.stats()
    assert stats.by_status == {"active": 50}
    assert stats.vectors_by_model == {MODEL: 50}

    for step in ("after purge", "after vacuum"):
        if step == "after vacuum":
            _vacuum(db_path, backend)
        data = file_bytes(db_path)
        assert marker.encode() not in data, step
        assert tag_marker.encode() not in data, step
        assert secret_unit.tobytes() not in data, step
        if backend == "sqlite-vec":
            assert secret_codes not in data, step
        # The others are intact and searchable both ways.
        hits = await store.search(SearchQuery(text="garden", limit=MAX_SEARCH_LIMIT))
        assert len(hits) == 50
        hits = await store.search(SearchQuery(vector=vector(7)))
        assert hits[0].item.id == others[7].item.id
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_purge_archived_and_active_together(store: MemoryStore) -> None:
    """Purge removes archived items too; the index shrinks with the table."""
    first = (await store.add(memory("Purge one"), vector=vector(1))).item
    second = (await store.add(memory("Purge two"), vector=vector(2))).item
    third = (await store.add(memory("Keep three"), vector=vector(3))).item
    await store.forget([first.id])
    assert await store.forget([second.id, first.id], purge=True) == [
        first.id,
        second.id,
    ]
    assert await store.get_many([first.id, second.id, third.id]) == {third.id: third}
    assert ids(await store.search(SearchQuery(vector=vector(1), status="any"))) == [
        third.id
    ]
    assert (await store.stats()).vectors_by_model == {MODEL: 1}
    # The index still takes new vectors after a purge.
    fourth = (await store.add(memory("Four"), vector=vector(4))).item
    assert ids(await store.search(SearchQuery(vector=vector(4))))[0] == fourth.id


# -- batched add_many ----------------------------------------------------------------


async def test_add_many_batch_equals_one_by_one(
    store_factory: StoreFactory, tmp_path: Path, clock: FakeClock
) -> None:
    """Chunks of multi-row INSERTs give what single adds give, in order."""

    def batch() -> list[NewMemory]:
        items = [
            memory(f"Batch memory {i}", tags=("batch", f"t{i % 3}") if i % 4 else ())
            for i in range(1100)
        ]
        items[17] = memory("Twin of an existing one")
        items[900] = memory("twin of an EXISTING one.", scope="person.anna")
        items[901] = memory("Expired twin")
        return items

    results: list[list[tuple[int, bool, str, tuple[str, ...], str]]] = []
    for name, one_by_one in (("batch", False), ("single", True)):
        store = await store_factory(tmp_path / f"{name}.db")
        await store.add(memory("Twin of an existing one"))
        await store.add(memory("Twin of an existing one", scope="person.anna"))
        await store.add(memory("Expired twin", expires_at=from_timestamp(clock() + 5)))
        clock.advance(10)
        if one_by_one:
            added = [await store.add(item) for item in batch()]
        else:
            added = await store.add_many(batch())
        results.append(
            [
                (r.item.id, r.created, r.item.content, r.item.tags, r.item.scope)
                for r in added
            ]
        )
        found = await store.search(SearchQuery(text="memory 1042", limit=1))
        assert contents(found) == ["Batch memory 1042"]
        tagged = await store.search(SearchQuery(text="", tags=("t2",), limit=50))
        assert len(tagged) == 50
        clock.advance(-10)
    assert results[0] == results[1]
    created = [entry[1] for entry in results[0]]
    assert created.count(False) == 2
    assert not created[17] and not created[900] and created[901]


async def test_add_many_twins_in_one_batch(store: MemoryStore) -> None:
    """A text repeated within one batch is stored once; the first is kept."""
    added = await store.add_many(
        [memory("Same thing", tags=("a",)), memory("same thing."), memory("Other")],
        vectors=[vector(1), vector(2), vector(3)],
    )
    assert [result.created for result in added] == [True, False, True]
    assert added[0].item.id == added[1].item.id
    assert added[1].item.tags == ("a",)
    hits = await store.search(SearchQuery(vector=vector(1), limit=1))
    assert ids(hits) == [added[0].item.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


# -- listeners and stats -----------------------------------------------------------------


async def test_listeners(store: MemoryStore, clock: FakeClock) -> None:
    """Listeners run after every committed change, until removed."""
    calls: list[str] = []
    remove = store.add_listener(lambda: calls.append("first"))
    store.add_listener(lambda: calls.append("second"))
    item = (
        await store.add(
            memory("Listen", expires_at=datetime.fromtimestamp(START + 1, UTC))
        )
    ).item
    assert calls == ["first", "second"]
    await store.set_vectors({item.id: vector(1)})
    assert len(calls) == 4
    clock.advance(10)
    await store.expire_due()
    assert len(calls) == 6
    remove()
    other = (await store.add(memory("Other"))).item
    assert calls[-1] == "second"
    assert len(calls) == 7
    await store.forget([other.id])
    await store.forget([other.id], purge=True)
    assert calls[-2:] == ["second", "second"]
    with pytest.raises(EmptyContentError):
        await store.add(memory(" "))
    assert len(calls) == 9


async def test_stats(store: MemoryStore, backend: Backend, db_path: Path) -> None:
    """Counts by status, type and scope, vectors per model, size, backend."""
    empty = await store.stats()
    assert empty.schema_version == SCHEMA_VERSION
    assert empty.vector_backend == backend
    assert empty.active_model == MODEL
    assert empty.by_status == {}
    assert empty.active == 0
    assert empty.archived == 0
    assert empty.database_bytes > 0
    await store.add_many(
        [
            memory("One", type=MemoryType.PREFERENCE, scope="anna"),
            memory("Two", type=MemoryType.PREFERENCE),
            memory("Three", type=MemoryType.EVENT, scope="anna"),
            memory("Four"),
            memory("Five", scope="ben"),
        ],
        vectors=[vector(1), vector(2), None, None, vector(5)],
    )
    four = (await store.search(SearchQuery(text="four")))[0].item.id
    five = (await store.search(SearchQuery(text="five")))[0].item.id
    await store.forget([four])
    await store.forget([five], purge=True)
    stats = await store.stats()
    assert stats.by_status == {"active": 3, "archived": 1}
    assert stats.active == 3
    assert stats.archived == 1
    assert stats.active_by_type == {"preference": 2, "event": 1}
    assert stats.active_by_scope == {"anna": 2, HOUSEHOLD: 1}
    assert stats.vectors_by_model == {MODEL: 2}
    wal = Path(f"{db_path}-wal")
    assert stats.database_bytes == db_path.stat().st_size + (
        wal.stat().st_size if wal.exists() else 0
    )
    assert store.database_bytes() == stats.database_bytes


async def test_summaries_stay_their_own_memories(store: MemoryStore) -> None:
    """A summary never merges with a fact of its words, nor another talk's summary.

    Digesting the same conversation again still finds its summary.
    """

    def summary(text: str, conversation: str) -> NewMemory:
        return memory(
            text,
            type=MemoryType.SUMMARY,
            source=Source(origin=Origin.DIGESTION, conversation_id=conversation),
        )

    fact = await store.add(memory("Anna asked about the bins."))
    first = await store.add(summary("Anna asked about the bins.", "talk-1"))
    assert first.created
    assert first.item.id != fact.item.id
    assert first.item.type == MemoryType.SUMMARY
    other = await store.add(summary("Anna asked about the bins.", "talk-2"))
    assert other.created
    again = await store.add(summary("Anna asked about the bins.", "talk-1"))
    assert (again.created, again.item.id) == (False, first.item.id)
    # A fact added after the summary is its own memory too.
    later = await store.add(memory("Mia asked about the bins."))
    said = await store.add(summary("Mia asked about the bins.", "talk-3"))
    assert said.created
    assert said.item.id != later.item.id
    # Rewording a summary to a fact's words is no clash either.
    await store.update_content(other.item.id, content="Mia asked about the bins.")
    # A fact still refuses its twin's words.
    with pytest.raises(InvalidInputError):
        await store.update_content(fact.item.id, content="Mia asked about the bins.")


async def test_restore_brings_archived_memories_back(
    store: MemoryStore, clock: FakeClock
) -> None:
    """Forgotten, then restored: active again, a past expiry cleared; twins refuse."""
    start = datetime.fromtimestamp(clock(), UTC)
    kept = await store.add(memory("The spare key is under the pot"))
    brief = await store.add(
        memory("Guests until Sunday", expires_at=start + timedelta(hours=1))
    )
    await store.forget([kept.item.id])
    clock.advance(7200)
    assert await store.expire_due() == [brief.item.id]
    assert await store.restore([kept.item.id, brief.item.id]) == sorted(
        [kept.item.id, brief.item.id]
    )
    items = await store.get_many([kept.item.id, brief.item.id])
    assert {item.status for item in items.values()} == {MemoryStatus.ACTIVE}
    assert items[brief.item.id].expires_at is None
    assert items[kept.item.id].valid_to is None
    # Restoring an active one changes nothing; an unknown id changes nothing.
    assert await store.restore([kept.item.id]) == [kept.item.id]
    with pytest.raises(UnknownMemoryError):
        await store.restore([kept.item.id, 999])
    assert await store.restore([]) == []
    # The same words were said again meanwhile: the old copy stays archived.
    await store.forget([kept.item.id])
    again = await store.add(memory("The spare key is under the pot"))
    with pytest.raises(InvalidInputError, match=str(again.item.id)):
        await store.restore([kept.item.id])
    # Two archived copies of one text: only one may come back.
    await store.forget([again.item.id])
    with pytest.raises(InvalidInputError):
        await store.restore([kept.item.id, again.item.id])
    # A superseded memory has its replacement.
    new, old = await store.supersede(brief.item.id, memory("Guests until Monday"))
    with pytest.raises(InvalidInputError, match="superseded"):
        await store.restore([old.id])
    assert new.status is MemoryStatus.ACTIVE


async def test_update_details_in_place(store: MemoryStore) -> None:
    """Type, tags, expiry and owner change in place; twins and the inactive refuse."""
    item = (await store.add(memory("Leo's football boots are in the garage"))).item
    moved = await store.update_details(
        item.id, kind=MemoryType.PREFERENCE, tags=("Kids", "sport"), scope="person.anna"
    )
    assert (moved.id, moved.type, moved.scope) == (
        item.id,
        MemoryType.PREFERENCE,
        "person.anna",
    )
    assert moved.tags == ("kids", "sport")
    # The tags are searched with the text.
    found = await store.search(SearchQuery(text="sport"))
    assert [hit.item.id for hit in found] == [item.id]
    # Nothing given: nothing but the time changes.
    same = await store.update_details(item.id)
    assert (same.type, same.tags, same.scope) == (moved.type, moved.tags, moved.scope)
    # The household already has these words: moving back there refuses.
    await store.add(memory("Leo's football boots are in the garage"))
    with pytest.raises(InvalidInputError):
        await store.update_details(item.id, scope=HOUSEHOLD)
    with pytest.raises(UnknownMemoryError):
        await store.update_details(999)
    await store.forget([item.id])
    with pytest.raises(InvalidInputError):
        await store.update_details(item.id, tags=())
