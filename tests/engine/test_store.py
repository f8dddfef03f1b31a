"""Tests of MemoryStore: writes, search, forgetting, persistence, failures.

Most tests run on both vector backends through the `store` fixture.
"""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import closing
from datetime import UTC, datetime
import logging
from pathlib import Path
import random
import sqlite3
import sys
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
import sqlite_vec

from custom_components.memory.engine import (
    HOUSEHOLD,
    MAX_CONTENT_CHARS,
    MAX_SEARCH_LIMIT,
    SCHEMA_VERSION,
    ContentTooLongError,
    DatabaseCorruptError,
    DatabaseTooNewError,
    DatabaseUnavailableError,
    EmptyContentError,
    InvalidInputError,
    InvalidLimitError,
    InvalidScopeError,
    InvalidTagError,
    InvalidVectorError,
    MemoryStatus,
    MemoryStore,
    MemoryType,
    NewMemory,
    Origin,
    SearchHit,
    SearchQuery,
    Signal,
    Source,
    UnknownMemoryError,
    VectorDimensionError,
    store as store_module,
)
from custom_components.memory.engine.errors import TooManyTagsError
from custom_components.memory.engine.fusion import CONTEXT_WEIGHT
from custom_components.memory.engine.models import MAX_TAGS, from_timestamp
from custom_components.memory.engine.text import fts_match_expression
from custom_components.memory.engine.vectors import as_unit_vector, vec0_codes

from .conftest import (
    DIM,
    MODEL,
    START,
    Backend,
    FakeClock,
    StoreFactory,
    memory,
    vector,
)

KEYWORD = (Signal.KEYWORD,)
SEMANTIC = (Signal.SEMANTIC,)
BOTH = (Signal.KEYWORD, Signal.SEMANTIC)


def ids(hits: list[SearchHit]) -> list[int]:
    """Return the ids of search hits, in order."""
    return [hit.item.id for hit in hits]


def contents(hits: list[SearchHit]) -> list[str]:
    """Return the contents of search hits, in order."""
    return [hit.item.content for hit in hits]


def sql(path: Path, statement: str, *args: Any) -> list[tuple[Any, ...]]:
    """Run one statement on a separate plain sqlite3 connection."""
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute(statement, args).fetchall()
        conn.commit()
    return [tuple(row) for row in rows]


def file_bytes(path: Path) -> bytes:
    """Read the database file and its write-ahead log, if any."""
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def near(
    seed: int | str, noise: float = 0.05, dim: int = DIM
) -> npt.NDArray[np.float32]:
    """Make a vector close to `vector(seed)`."""
    base = vector(seed, dim)
    return base + noise * float(np.linalg.norm(base)) * vector(f"noise-{seed}", dim)


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


# -- keyword search safety --------------------------------------------------------

FTS_MEMORIES = (
    "Not now, maybe later",
    "Meet near the old mill",
    "The content: fragile glass",
    "Salt and pepper",
    "Tea or coffee",
    "Star rating is five",
    "Caret sign on the keyboard",
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("NOT", ["Not now, maybe later"]),
        ("AND", ["Salt and pepper"]),
        ("OR", ["Tea or coffee"]),
        ("NEAR(", ["Meet near the old mill"]),
        ("NEAR(salt pepper, 2)", ["Meet near the old mill", "Salt and pepper"]),
        ("content:", ["The content: fragile glass"]),
        ("content:glass", ["The content: fragile glass"]),
        ('"glass', ["The content: fragile glass"]),
        ('fragile"', ["The content: fragile glass"]),
        ("star*", ["Star rating is five"]),
        ("*star", ["Star rating is five"]),
        ("-coffee", ["Tea or coffee"]),
        ("(mill", ["Meet near the old mill"]),
        ("mill)", ["Meet near the old mill"]),
        ("^caret", ["Caret sign on the keyboard"]),
        ("{tea}", ["Tea or coffee"]),
        ("salt AND NOT pepper", ["Salt and pepper"]),
        ("five OR", ["Star rating is five"]),
        ('"', []),
        ("-", []),
        (":", []),
        ("(", []),
        (")", []),
        ("^", []),
        ("{", []),
        ("?!", []),
        ("...", []),
        ("'", []),
        ("zzzunknown", []),
    ],
)
async def test_fts_syntax_is_searched_as_words(
    store: MemoryStore, query: str, expected: list[str]
) -> None:
    """FTS5 operators and punctuation never raise; words are found as words."""
    await store.add_many([memory(content) for content in FTS_MEMORIES])
    hits = await store.search(SearchQuery(text=query))
    assert sorted(contents(hits)) == expected
    assert all(hit.matched == KEYWORD for hit in hits)


async def test_long_query(store: MemoryStore) -> None:
    """A 10,000-character query of words and syntax is bounded and works."""
    await store.add_many([memory(content) for content in FTS_MEMORIES])
    rng = random.Random(4)
    noise = "".join(rng.choice('"*-:()^{}~+ AND OR NOT NEAR') for _ in range(9_000))
    query = "glass " + noise + " x" * 500
    assert len(query) >= 10_000
    hits = await store.search(SearchQuery(text=query))
    assert "The content: fragile glass" in contents(hits)
    assert contents(await store.search(SearchQuery(text="glass " * 2_000))) == [
        "The content: fragile glass"
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("cafe", ["Meet at the café", "The cafe opens at eight"]),
        ("CAFÉ", ["Meet at the café", "The cafe opens at eight"]),
        ("naïve", ["A naive plan"]),
        ("Straße", ["Die Straße ist gesperrt"]),
        ("gesperrt", ["Die Straße ist gesperrt"]),
    ],
)
async def test_diacritics_and_case(
    store: MemoryStore, query: str, expected: list[str]
) -> None:
    """Accents and case do not matter; a word as written is always found."""
    await store.add_many(
        [
            memory("Meet at the café"),
            memory("The cafe opens at eight"),
            memory("A naive plan"),
            memory("Die Straße ist gesperrt"),
        ]
    )
    hits = await store.search(SearchQuery(text=query))
    assert sorted(contents(hits)) == expected


async def test_tags_are_searchable(store: MemoryStore) -> None:
    """Tags are indexed with the content."""
    item = (await store.add(memory("Filter changed", tags=("hvac",)))).item
    hits = await store.search(SearchQuery(text="hvac"))
    assert ids(hits) == [item.id]


async def test_keyword_scores_rank_coverage(store: MemoryStore) -> None:
    """A memory with every query word outranks one with some; scores are 0..1."""
    full = (await store.add(memory("Anna walks the dog every morning"))).item
    part = (await store.add(memory("The dog sleeps"))).item
    hits = await store.search(SearchQuery(text="Anna dog morning"))
    assert ids(hits) == [full.id, part.id]
    assert hits[0].score == pytest.approx(1.0)
    assert 0.0 < hits[1].score < hits[0].score
    assert all(hit.matched == KEYWORD for hit in hits)


# -- filters ------------------------------------------------------------------------


async def test_scope_filter(store: MemoryStore) -> None:
    """Scopes limit results; an empty tuple means no scope, so no results."""
    house = (await store.add(memory("Lights off at night"))).item
    anna = (await store.add(memory("Anna likes night lights", scope="anna"))).item
    ben = (await store.add(memory("Ben sleeps with lights on", scope="ben"))).item
    query = SearchQuery(text="lights")
    assert sorted(ids(await store.search(query))) == [house.id, anna.id, ben.id]
    for scopes, expected in (
        (("anna",), [anna.id]),
        (("anna", HOUSEHOLD), [house.id, anna.id]),
        (("nobody",), []),
        ((), []),
    ):
        for text in ("lights", ""):
            hits = await store.search(SearchQuery(text=text, scopes=scopes))
            assert sorted(ids(hits)) == expected


async def test_type_filter(store: MemoryStore) -> None:
    """Types limit results."""
    fact = (await store.add(memory("Coffee machine descaled"))).item
    pref = (await store.add(memory("Coffee strong", type=MemoryType.PREFERENCE))).item
    event = (await store.add(memory("Coffee spilled", type=MemoryType.EVENT))).item
    for types, expected in (
        ((MemoryType.PREFERENCE,), [pref.id]),
        ((MemoryType.FACT, MemoryType.EVENT), [fact.id, event.id]),
        ((MemoryType.SUMMARY,), []),
        ((), [fact.id, pref.id, event.id]),
        (None, [fact.id, pref.id, event.id]),
    ):
        hits = await store.search(SearchQuery(text="coffee", types=types))
        assert sorted(ids(hits)) == expected
        recent = await store.search(SearchQuery(types=types))
        assert sorted(ids(recent)) == expected


async def test_tag_filter(store: MemoryStore) -> None:
    """Tags filter by any of them, normalised like stored tags."""
    kitchen = (await store.add(memory("Oven timer", tags=("kitchen",)))).item
    garden = (
        await store.add(memory("Water timer", tags=("garden", "Living Room")))
    ).item
    await store.add(memory("Egg timer"))
    assert ids(await store.search(SearchQuery(text="timer", tags=("Kitchen",)))) == [
        kitchen.id
    ]
    assert ids(
        await store.search(SearchQuery(text="timer", tags=("living room",)))
    ) == [garden.id]
    both = await store.search(SearchQuery(text="timer", tags=("kitchen", "garden")))
    assert sorted(ids(both)) == [kitchen.id, garden.id]
    assert await store.search(SearchQuery(text="timer", tags=("attic",))) == []
    with pytest.raises(InvalidTagError):
        await store.search(SearchQuery(text="timer", tags=("a/b",)))


async def test_status_filter(store: MemoryStore, db_path: Path) -> None:
    """Active by default; archived, superseded and any on request."""
    active = (await store.add(memory("Boiler serviced in May"))).item
    archived = (await store.add(memory("Boiler serviced in March"))).item
    superseded = (await store.add(memory("Boiler serviced in January"))).item
    await store.forget([archived.id])
    sql(
        db_path,
        "UPDATE memories SET status = 'superseded', superseded_by = ? WHERE id = ?",
        active.id,
        superseded.id,
    )
    for status, expected in (
        ("active", [active.id]),
        ("archived", [archived.id]),
        ("superseded", [superseded.id]),
        ("any", [active.id, archived.id, superseded.id]),
    ):
        hits = await store.search(SearchQuery(text="boiler", status=status))  # type: ignore[arg-type]
        assert sorted(ids(hits)) == expected
        recent = await store.search(SearchQuery(status=status))  # type: ignore[arg-type]
        assert sorted(ids(recent)) == expected
    item = await store.get(superseded.id)
    assert item is not None
    assert item.status is MemoryStatus.SUPERSEDED
    assert item.superseded_by == active.id


async def test_since_filter(store: MemoryStore, clock: FakeClock) -> None:
    """`since` keeps memories created at or after it."""
    old = (await store.add(memory("Old parcel note"))).item
    clock.advance(3600)
    new = (await store.add(memory("New parcel note"))).item
    cut = datetime.fromtimestamp(START + 3600, UTC)
    assert ids(await store.search(SearchQuery(text="parcel", since=cut))) == [new.id]
    assert ids(await store.search(SearchQuery(since=cut))) == [new.id]
    earlier = datetime.fromtimestamp(START, UTC)
    assert sorted(
        ids(await store.search(SearchQuery(text="parcel", since=earlier)))
    ) == [
        old.id,
        new.id,
    ]
    naive = datetime(2026, 1, 1, 1, 0, 0)  # noqa: DTZ001 - naive means UTC
    assert ids(await store.search(SearchQuery(since=naive))) == [new.id]


async def test_limit_bounds(store: MemoryStore) -> None:
    """Limits outside 1..50 raise; 50 is honoured for every search path."""
    await store.add_many(
        [memory(f"Plant number {i} needs water") for i in range(60)],
        vectors=[vector(i) for i in range(60)],
    )
    for limit in (0, -1, MAX_SEARCH_LIMIT + 1):
        with pytest.raises(InvalidLimitError) as info:
            await store.search(SearchQuery(text="water", limit=limit))
        assert info.value.key == "invalid_limit"
        assert info.value.placeholders == {
            "limit": str(limit),
            "max": str(MAX_SEARCH_LIMIT),
        }
    for query in (
        SearchQuery(text="water", limit=MAX_SEARCH_LIMIT),
        SearchQuery(limit=MAX_SEARCH_LIMIT),
        SearchQuery(vector=vector(3), limit=MAX_SEARCH_LIMIT, min_score=-1),
        SearchQuery(text="water", vector=vector(3), limit=MAX_SEARCH_LIMIT),
    ):
        assert len(await store.search(query)) == MAX_SEARCH_LIMIT
    assert len(await store.search(SearchQuery(text="water", limit=1))) == 1
    assert len(await store.search(SearchQuery(text="water"))) == 10


async def test_min_score(store: MemoryStore) -> None:
    """Hits scoring under `min_score` are dropped, the rest kept in order."""
    await store.add_many(
        [
            memory("Anna feeds the cat at noon"),
            memory("The cat sleeps"),
            memory("Noon bells"),
            memory("Anna reads"),
        ]
    )
    everything = await store.search(SearchQuery(text="Anna cat noon"))
    assert len(everything) == 4
    scores = [hit.score for hit in everything]
    assert scores == sorted(scores, reverse=True)
    threshold = (scores[0] + scores[-1]) / 2
    kept = await store.search(SearchQuery(text="Anna cat noon", min_score=threshold))
    assert ids(kept) == [hit.item.id for hit in everything if hit.score >= threshold]
    assert 0 < len(kept) < 4
    assert await store.search(SearchQuery(text="Anna cat noon", min_score=1.01)) == []


async def test_expiry(store: MemoryStore, clock: FakeClock) -> None:
    """Expired memories leave active searches at once; expire_due archives them."""
    calls: list[None] = []
    expires = datetime.fromtimestamp(START + 60, UTC)
    short = (
        await store.add(
            memory("Door code 4711 today", expires_at=expires), vector=vector(1)
        )
    ).item
    lasting = (await store.add(memory("Door code 1234 always"), vector=vector(2))).item
    store.add_listener(lambda: calls.append(None))
    assert sorted(ids(await store.search(SearchQuery(text="door")))) == [
        short.id,
        lasting.id,
    ]
    assert await store.expire_due() == []
    assert calls == []
    clock.advance(60)
    for query in (
        SearchQuery(text="door"),
        SearchQuery(),
        SearchQuery(vector=vector(1)),
        SearchQuery(text="door", vector=vector(1)),
    ):
        assert ids(await store.search(query)) == [lasting.id]
    any_status = await store.search(SearchQuery(text="door", status="any"))
    assert sorted(ids(any_status)) == [short.id, lasting.id]
    clock.advance(5)
    assert await store.expire_due() == [short.id]
    assert calls == [None]
    item = await store.get(short.id)
    assert item is not None
    assert item.status is MemoryStatus.ARCHIVED
    assert item.valid_to == expires
    assert item.updated_at == from_timestamp(START + 65)
    assert ids(await store.search(SearchQuery(text="door", status="archived"))) == [
        short.id
    ]
    assert await store.expire_due() == []
    assert calls == [None]


async def test_recent_listing(store: MemoryStore, clock: FakeClock) -> None:
    """Empty text or `*` lists the most recent first."""
    added = []
    for content in ("First note", "Second note", "Third note"):
        added.append((await store.add(memory(content))).item.id)
        clock.advance(10)
    for text in ("", "*", "   ", " * "):
        hits = await store.search(SearchQuery(text=text))
        assert ids(hits) == added[::-1]
        assert all(hit.score == 1.0 and hit.matched == () for hit in hits)
    assert ids(await store.search(SearchQuery(text="*", limit=2))) == added[:0:-1]


# -- hybrid search --------------------------------------------------------------------


async def test_semantic_only_and_both_signals(store: MemoryStore) -> None:
    """A memory with no shared word is found semantically; shared words add keyword."""
    nuts = (
        await store.add(memory("Anna is allergic to nuts"), vector=vector("nuts"))
    ).item
    garage = (
        await store.add(memory("The garage door code is 1234"), vector=vector("garage"))
    ).item
    hits = await store.search(SearchQuery(text="peanut reaction", vector=near("nuts")))
    assert hits[0].item.id == nuts.id
    assert hits[0].matched == SEMANTIC
    assert hits[0].score > 0.9
    assert all(hit.matched == SEMANTIC for hit in hits)

    hits = await store.search(SearchQuery(text="garage", vector=near("garage")))
    assert hits[0].item.id == garage.id
    assert hits[0].matched == BOTH
    assert hits[0].score == pytest.approx(1.0)
    assert [hit.matched for hit in hits[1:]] == [SEMANTIC]

    keyword_only = await store.search(SearchQuery(text="garage"))
    assert ids(keyword_only) == [garage.id]
    assert keyword_only[0].matched == KEYWORD

    # Unrelated memories score a cosine near or under zero: min_score 0
    # (the default) drops the negative ones.
    vector_only = await store.search(SearchQuery(vector=near("nuts"), min_score=-1))
    assert ids(vector_only) == [nuts.id, garage.id]
    assert all(hit.matched == SEMANTIC for hit in vector_only)
    assert vector_only[0].score == pytest.approx(
        float(np.dot(as_unit_vector(near("nuts")), as_unit_vector(vector("nuts")))),
        abs=1e-5,
    )


async def test_query_vector_dimension(store: MemoryStore) -> None:
    """A query of another dimension than the model's raises."""
    await store.add(memory("Something"), vector=vector(1))
    with pytest.raises(VectorDimensionError) as info:
        await store.search(SearchQuery(text="something", vector=vector(1, DIM + 1)))
    assert info.value.key == "vector_dimension"
    assert info.value.placeholders == {"expected": str(DIM), "got": str(DIM + 1)}


@pytest.mark.parametrize(
    "bad", [[0.0] * DIM, [float("nan")] * DIM, [1.0] * (DIM - 1) + [float("inf")]]
)
async def test_invalid_vectors(store: MemoryStore, bad: list[float]) -> None:
    """NaN, infinite and zero vectors are refused everywhere."""
    item = (await store.add(memory("Valid"), vector=vector(1))).item
    with pytest.raises(InvalidVectorError) as info:
        await store.add(memory("Invalid"), vector=bad)
    assert info.value.key == "invalid_vector"
    with pytest.raises(InvalidVectorError):
        await store.set_vectors({item.id: bad})
    with pytest.raises(InvalidVectorError):
        await store.search(
            SearchQuery(text="valid", vector=np.asarray(bad, dtype=np.float32))
        )
    stats = await store.stats()
    assert stats.active == 1
    assert stats.vectors_by_model == {MODEL: 1}
    assert ids(await store.search(SearchQuery(vector=vector(1)))) == [item.id]


async def test_vector_dimension_mismatch_stores_nothing(store: MemoryStore) -> None:
    """The first vector fixes the dimension; others raise and roll back."""
    first = (await store.add(memory("First"), vector=vector(1))).item
    with pytest.raises(VectorDimensionError) as info:
        await store.add(memory("Second"), vector=vector(2, DIM * 2))
    assert info.value.placeholders == {"expected": str(DIM), "got": str(DIM * 2)}
    with pytest.raises(VectorDimensionError):
        await store.set_vectors({first.id: vector(3, DIM - 1)})
    stats = await store.stats()
    assert stats.active == 1
    assert stats.vectors_by_model == {MODEL: 1}
    assert await store.search(SearchQuery(text="second")) == []
    hits = await store.search(SearchQuery(vector=vector(1)))
    assert ids(hits) == [first.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_mixed_dimensions_in_first_batch(store: MemoryStore) -> None:
    """A model's first batch must agree on a dimension."""
    with pytest.raises(VectorDimensionError):
        await store.add_many(
            [memory("One"), memory("Two")], vectors=[vector(1, 8), vector(2, 12)]
        )
    assert (await store.stats()).by_status == {}


async def test_add_many_partial_vectors(store: MemoryStore) -> None:
    """Memories without a vector are keyword-only until one is set."""
    with_vec, without = await store.add_many(
        [memory("Has a vector"), memory("Has none")], vectors=[vector(1), None]
    )
    assert (await store.stats()).vectors_by_model == {MODEL: 1}
    assert ids(await store.search(SearchQuery(vector=vector(2)))) == [with_vec.item.id]
    await store.set_vectors({without.item.id: vector(2)})
    await store.set_vectors({})
    hits = await store.search(SearchQuery(vector=vector(2)))
    assert ids(hits)[0] == without.item.id
    assert sorted(ids(hits)) == [with_vec.item.id, without.item.id]


async def test_twin_keeps_its_vector(store: MemoryStore) -> None:
    """Re-adding a twin with another vector does not replace the stored one."""
    first = (await store.add(memory("Same text"), vector=vector(1))).item
    again = await store.add(memory("same text"), vector=vector(2))
    assert not again.created
    hits = await store.search(SearchQuery(vector=vector(1)))
    assert ids(hits) == [first.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_set_vectors_replaces(store: MemoryStore) -> None:
    """set_vectors replaces an item's vector in table and index."""
    first = (await store.add(memory("Moves around"), vector=vector(1))).item
    other = (await store.add(memory("Stays"), vector=vector(2))).item
    await store.set_vectors({first.id: vector(3)})
    hits = await store.search(SearchQuery(vector=vector(3)))
    assert ids(hits) == [first.id, other.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert (await store.stats()).vectors_by_model == {MODEL: 2}
    old = await store.search(SearchQuery(vector=vector(1)))
    assert old[0].score < 0.9


async def test_set_vectors_unknown_id(store: MemoryStore) -> None:
    """Vectors for unknown ids raise and store nothing, not even the known ones."""
    item = (await store.add(memory("Known"))).item
    with pytest.raises(UnknownMemoryError) as info:
        await store.set_vectors({item.id: vector(1), item.id + 5: vector(2)})
    assert info.value.placeholders == {"ids": str(item.id + 5)}
    assert (await store.stats()).vectors_by_model == {}
    assert await store.search(SearchQuery(vector=vector(1))) == []


async def test_models_never_mix(open_store: StoreFactory) -> None:
    """Vectors of model "a" are never used by a store searching with model "b"."""
    store_a = await open_store(model="a")
    first = (await store_a.add(memory("Apple pie recipe"), vector=vector(1))).item
    second = (await store_a.add(memory("Pear cake"), vector=vector(2))).item
    await store_a.close()

    store_b = await open_store(model="b")
    assert store_b.model == "b"
    assert await store_b.search(SearchQuery(vector=vector(1))) == []
    hits = await store_b.search(SearchQuery(text="apple", vector=vector(1)))
    assert ids(hits) == [first.id]
    assert hits[0].matched == KEYWORD
    # Model b has its own dimension, learned from its first vector.
    await store_b.set_vectors({second.id: vector(5, 8)})
    hits = await store_b.search(SearchQuery(vector=vector(5, 8)))
    assert ids(hits) == [second.id]
    assert hits[0].matched == SEMANTIC
    with pytest.raises(VectorDimensionError):
        await store_b.search(SearchQuery(vector=vector(1)))
    stats = await store_b.stats()
    assert stats.vectors_by_model == {"a": 2, "b": 1}
    assert stats.active_model == "b"
    await store_b.close()

    store_a = await open_store(model="a")
    hits = await store_a.search(SearchQuery(vector=vector(1)))
    assert ids(hits) == [first.id, second.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


# -- both backends agree ----------------------------------------------------------------

WORDS = [
    "kitchen",
    "garden",
    "anna",
    "ben",
    "coffee",
    "tea",
    "door",
    "window",
    "light",
    "heating",
    "boiler",
    "car",
    "garage",
    "dog",
    "cat",
    "plant",
    "water",
    "music",
    "movie",
    "dinner",
    "lunch",
    "school",
    "work",
    "bike",
]
BIG_DIM = 64


def _big_dataset(count: int) -> tuple[list[NewMemory], list[npt.NDArray[np.float32]]]:
    rng = np.random.default_rng(2026)
    memories = []
    for i in range(count):
        words = rng.choice(WORDS, size=4, replace=False)
        memories.append(
            memory(
                f"Note {i}: {' '.join(words)}",
                scope=("household", "anna", "ben")[i % 3],
                type=(MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EVENT)[
                    i % 5 % 3
                ],
                tags=(str(words[0]),) if i % 4 == 0 else (),
            )
        )
    vectors = [rng.standard_normal(BIG_DIM).astype(np.float32) for _ in range(count)]
    return memories, vectors


def _big_queries(count: int) -> list[SearchQuery]:
    rng = np.random.default_rng(7)
    queries = []
    for i in range(count):
        words = " ".join(
            str(w) for w in rng.choice(WORDS, size=1 + i % 3, replace=False)
        )
        filters: dict[str, Any] = {}
        if i % 5 == 1:
            filters["scopes"] = ("anna",)
        if i % 5 == 2:
            filters["types"] = (MemoryType.EVENT,)
        if i % 5 == 3:
            filters["tags"] = (str(rng.choice(WORDS)),)
        queries.append(
            SearchQuery(
                text=words if i % 4 != 0 else "",
                vector=(
                    rng.standard_normal(BIG_DIM).astype(np.float32)
                    if i % 4 != 1
                    else None
                ),
                limit=int(rng.integers(1, MAX_SEARCH_LIMIT + 1)),
                **filters,
            )
        )
    return queries


async def test_backends_give_identical_results(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    """Both backends: same ids and scores for the same data and queries."""
    memories, vectors = _big_dataset(2_000)
    queries = _big_queries(50)
    results: dict[str, list[list[tuple[int, float, tuple[Signal, ...]]]]] = {}
    backends: tuple[Backend, ...] = ("numpy", "sqlite-vec")
    for backend in backends:
        store = await store_factory(tmp_path / f"{backend}.db", vector_backend=backend)
        assert store.vector_backend == backend
        added = await store.add_many(memories, vectors=vectors)
        assert all(result.created for result in added)
        results[backend] = [
            [(hit.item.id, hit.score, hit.matched) for hit in await store.search(query)]
            for query in queries
        ]
    semantic_queries = 0
    for query, numpy_hits, vec_hits in zip(
        queries, results["numpy"], results["sqlite-vec"], strict=True
    ):
        assert [hit[0] for hit in numpy_hits] == [hit[0] for hit in vec_hits]
        assert [hit[2] for hit in numpy_hits] == [hit[2] for hit in vec_hits]
        np.testing.assert_allclose(
            [hit[1] for hit in numpy_hits], [hit[1] for hit in vec_hits], atol=1e-5
        )
        if query.vector is not None:
            assert numpy_hits, query
            semantic_queries += 1
    assert semantic_queries >= 30


def _far_from(
    query: npt.NDArray[np.float32], rng: np.random.Generator
) -> npt.NDArray[np.float32]:
    """Make a vector with a small positive cosine to `query` (about 0.2)."""
    other = rng.standard_normal(len(query)).astype(np.float32)
    other -= float(other @ query) / float(query @ query) * query
    other *= float(np.linalg.norm(query)) / float(np.linalg.norm(other))
    return (other + 0.2 * query).astype(np.float32)


@pytest.mark.parametrize("filter_kind", ["scopes", "types", "tags"])
async def test_selective_filter_finds_far_items(
    store: MemoryStore, filter_kind: str
) -> None:
    """A filter matching a few far-away vectors still returns them (exact scan)."""
    rng = np.random.default_rng(11)
    query = rng.standard_normal(DIM).astype(np.float32)
    crowd = [
        query + 0.3 * rng.standard_normal(DIM).astype(np.float32) for _ in range(1_000)
    ]
    await store.add_many(
        [memory(f"Crowd member {i}") for i in range(1_000)], vectors=crowd
    )
    far = [_far_from(query, rng) for _ in range(3)]
    added = await store.add_many(
        [
            memory(
                f"Lonely item {i}",
                scope="guest",
                type=MemoryType.INSTRUCTION,
                tags=("rare",),
            )
            for i in range(3)
        ],
        vectors=far,
    )
    lonely = {result.item.id for result in added}
    unfiltered = await store.search(SearchQuery(vector=query, limit=MAX_SEARCH_LIMIT))
    assert not lonely & set(ids(unfiltered))
    options: dict[str, dict[str, Any]] = {
        "scopes": {"scopes": ("guest",)},
        "types": {"types": (MemoryType.INSTRUCTION,)},
        "tags": {"tags": ("rare",)},
    }
    filters = options[filter_kind]
    hits = await store.search(SearchQuery(vector=query, **filters))
    assert set(ids(hits)) == lonely
    assert all(hit.matched == SEMANTIC for hit in hits)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < score < 0.5 for score in scores)


async def test_exact_scan_is_bounded(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past EXACT_SCAN_MAX filtered items, only the index's candidates count."""
    rng = np.random.default_rng(12)
    query = rng.standard_normal(DIM).astype(np.float32)
    await store.add_many(
        [memory(f"Crowd member {i}") for i in range(300)],
        vectors=[
            query + 0.3 * rng.standard_normal(DIM).astype(np.float32)
            for _ in range(300)
        ],
    )
    await store.add_many(
        [memory(f"Lonely item {i}", scope="guest") for i in range(3)],
        vectors=[_far_from(query, rng) for _ in range(3)],
    )
    monkeypatch.setattr(store_module, "EXACT_SCAN_MAX", 2)
    assert await store.search(SearchQuery(vector=query, scopes=("guest",))) == []
    monkeypatch.setattr(store_module, "EXACT_SCAN_MAX", 3)
    assert len(await store.search(SearchQuery(vector=query, scopes=("guest",)))) == 3


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


# -- concurrency -----------------------------------------------------------------------


async def test_failed_keyword_query_cancels_the_vector_scan(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vector scan runs beside the keyword query; a keyword failure stops it."""
    await store.add(memory("Mia is allergic to nuts"), vector=vector(1))
    scans: list[asyncio.Task[Any]] = []
    original = MemoryStore._semantic

    async def slow_semantic(*args: Any, **kwargs: Any) -> Any:
        task = asyncio.current_task()
        assert task is not None
        scans.append(task)
        await asyncio.sleep(10)
        return await original(*args, **kwargs)

    async def broken_keyword(*_args: Any, **_kwargs: Any) -> Any:
        await asyncio.sleep(0)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(MemoryStore, "_semantic", slow_semantic)
    monkeypatch.setattr(MemoryStore, "_keyword", broken_keyword)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        await store.search(SearchQuery(text="nuts", vector=vector(1)))
    assert len(scans) == 1
    assert scans[0].cancelled()


async def test_concurrent_adds_and_searches(store: MemoryStore) -> None:
    """100 adds and 100 searches at once: all stored, nothing locked."""
    adds = [
        store.add(memory(f"Concurrent memory number {i}"), vector=vector(i))
        for i in range(100)
    ]
    searches = [
        store.search(
            SearchQuery(
                text="concurrent memory" if i % 2 else "",
                vector=vector(i) if i % 3 else None,
            )
        )
        for i in range(100)
    ]
    added, searched = await asyncio.gather(
        asyncio.gather(*adds), asyncio.gather(*searches)
    )
    assert all(result.created for result in added)
    assert len({result.item.id for result in added}) == 100
    assert len(searched) == 100
    assert all(isinstance(hits, list) for hits in searched)
    stats = await store.stats()
    assert stats.active == 100
    assert stats.vectors_by_model == {MODEL: 100}
    assert len(await store.search(SearchQuery(text="concurrent", limit=50))) == 50
    hits = await store.search(SearchQuery(vector=vector(42)))
    assert hits[0].item.content == "Concurrent memory number 42"


async def test_concurrent_mixed_writes(store: MemoryStore) -> None:
    """Adds, forgets, vector updates and searches interleave safely."""
    base = await store.add_many([memory(f"Base {i}") for i in range(20)])
    base_ids = [result.item.id for result in base]
    jobs: list[Any] = [store.add(memory(f"Extra {i}")) for i in range(20)]
    jobs += [store.forget([item_id]) for item_id in base_ids[:10]]
    jobs += [store.set_vectors({item_id: vector(item_id)}) for item_id in base_ids[10:]]
    jobs += [store.search(SearchQuery(text="base")) for _ in range(20)]
    jobs += [store.expire_due() for _ in range(5)]
    await asyncio.gather(*jobs)
    stats = await store.stats()
    assert stats.by_status == {"active": 30, "archived": 10}
    assert stats.vectors_by_model == {MODEL: 10}


# -- persistence ------------------------------------------------------------------------


async def test_reopen_keeps_everything(open_store: StoreFactory, db_path: Path) -> None:
    """Memories, vectors and the index survive close and reopen."""
    store = await open_store()
    added = await store.add_many(
        [memory(f"Persistent note {i}", tags=("keep",)) for i in range(300)],
        vectors=[vector(i) for i in range(300)],
    )
    await store.forget([added[0].item.id])
    queries = [
        SearchQuery(vector=vector(5)),
        SearchQuery(text="persistent note 17", vector=vector(17)),
        SearchQuery(text="keep", status="any", limit=50),
    ]
    before = [await store.search(query) for query in queries]
    stats_before = await store.stats()
    await store.close()
    await store.close()  # twice is fine
    with pytest.raises(DatabaseUnavailableError):
        await store.search(SearchQuery())
    assert Path(f"{db_path}-wal").exists() is False

    reopened = await open_store()
    after = [await reopened.search(query) for query in queries]
    assert after == before
    assert after[0][0].item.id == added[5].item.id
    assert after[0][0].score == pytest.approx(1.0, abs=1e-5)
    stats_after = await reopened.stats()
    assert stats_after.by_status == stats_before.by_status
    assert stats_after.vectors_by_model == {MODEL: 300}
    # The index is whole: each stored vector finds its own memory.
    for i in (1, 150, 299):
        hits = await reopened.search(SearchQuery(vector=vector(i), limit=1))
        assert ids(hits) == [added[i].item.id]


@pytest.mark.parametrize(
    ("first", "second"), [("numpy", "sqlite-vec"), ("sqlite-vec", "numpy")]
)
async def test_switch_backend_between_opens(
    store_factory: StoreFactory, first: Backend, second: Backend
) -> None:
    """The index is derived data: another backend rebuilds it from the table."""
    store = await store_factory(vector_backend=first)
    added = await store.add_many(
        [memory(f"Switch note {i}") for i in range(100)],
        vectors=[vector(i) for i in range(100)],
    )
    before = await store.search(SearchQuery(vector=vector(3), limit=20))
    await store.close()
    reopened = await store_factory(vector_backend=second)
    assert reopened.vector_backend == second
    after = await reopened.search(SearchQuery(vector=vector(3), limit=20))
    assert ids(after) == ids(before)
    assert after[0].item.id == added[3].item.id
    # Back to the first backend after changes made with the second.
    await reopened.set_vectors({added[0].item.id: vector(500)})
    await reopened.close()
    third = await store_factory(vector_backend=first)
    hits = await third.search(SearchQuery(vector=vector(500), limit=1))
    assert ids(hits) == [added[0].item.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_auto_backend(store_factory: StoreFactory) -> None:
    """`auto` uses sqlite-vec where it loads."""
    store = await store_factory(vector_backend="auto")
    assert store.vector_backend == "sqlite-vec"
    await store.add(memory("Auto"), vector=vector(1))
    assert (await store.stats()).vector_backend == "sqlite-vec"


async def test_auto_falls_back_without_sqlite_vec(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the sqlite_vec package, `auto` uses numpy; forcing it raises."""
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)
    store = await store_factory(vector_backend="auto")
    assert store.vector_backend == "numpy"
    item = (await store.add(memory("Fallback"), vector=vector(1))).item
    assert ids(await store.search(SearchQuery(vector=vector(1)))) == [item.id]
    await store.close()
    with pytest.raises(ImportError):
        await store_factory(vector_backend="sqlite-vec")


async def test_auto_falls_back_when_extension_fails(
    store_factory: StoreFactory,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    """An extension that does not load: `auto` warns and uses numpy."""
    monkeypatch.setattr(
        sqlite_vec, "loadable_path", lambda: str(tmp_path / "missing_vec0")
    )
    with caplog.at_level(logging.WARNING):
        store = await store_factory(vector_backend="auto")
    assert store.vector_backend == "numpy"
    assert "sqlite-vec did not load" in caplog.text
    item = (await store.add(memory("Fallback"), vector=vector(1))).item
    assert ids(await store.search(SearchQuery(vector=vector(1)))) == [item.id]
    await store.close()
    with pytest.raises(DatabaseUnavailableError) as info:
        await store_factory(vector_backend="sqlite-vec")
    assert info.value.key == "database_unavailable"


# -- conversation context ------------------------------------------------------------


def _turn(content: str, conversation: str) -> NewMemory:
    return memory(
        content, source=Source(origin=Origin.TOOL, conversation_id=conversation)
    )


async def test_context_lifts_neighbouring_turns(store: MemoryStore) -> None:
    """With `context`, the turn next to a hit (same conversation) comes along."""
    added = await store.add_many(
        [
            _turn("Anna asked which cake to bake for the party", "c1"),
            _turn("A lemon drizzle with berries", "c1"),
            _turn("Unrelated chatter about the weather", "c2"),
            memory("No conversation at all", source=Source(origin=Origin.ACTION)),
        ]
    )
    question, answer, _other, _plain = (result.item.id for result in added)
    plain = await store.search(SearchQuery(text="bake party"))
    assert ids(plain) == [question]
    hits = await store.search(SearchQuery(text="bake party", context=True))
    assert ids(hits) == [question, answer]
    assert hits[1].matched == KEYWORD  # borrowed from the turn that found it
    assert hits[1].score == pytest.approx(hits[0].score * CONTEXT_WEIGHT)
    # Context only lifts: the hit itself keeps its own score.
    assert hits[0].score == pytest.approx(plain[0].score)
    # Filters apply to neighbours too.
    scoped = await store.search(
        SearchQuery(text="bake party", context=True, types=(MemoryType.EVENT,))
    )
    assert scoped == []


async def test_context_with_vectors(store: MemoryStore) -> None:
    """Hybrid context: a neighbour without a vector still borrows a score."""
    added = await store.add_many(
        [
            _turn("Which cake should we bake", "c1"),
            _turn("Lemon drizzle", "c1"),
            _turn("Bake bread on Sunday", "c2"),
        ],
        vectors=[vector(1), None, vector(3)],
    )
    first, answer, other = (result.item.id for result in added)
    hits = await store.search(
        SearchQuery(text="bake cake", vector=near(1), context=True, min_score=-1)
    )
    assert ids(hits)[0] == first
    assert answer in ids(hits)
    by_id = {hit.item.id: hit for hit in hits}
    assert by_id[answer].matched == by_id[first].matched == BOTH
    assert by_id[answer].score == pytest.approx(by_id[first].score * CONTEXT_WEIGHT)
    assert other in by_id
    # Recent listing ignores context.
    recent = await store.search(SearchQuery(context=True))
    assert sorted(ids(recent)) == sorted([first, answer, other])


# -- transactions, pausing and rollbacks -----------------------------------------------


async def test_transaction(store: MemoryStore) -> None:
    """`transaction` commits as a whole and notifies, or rolls back."""
    item = (await store.add(memory("Counted"))).item
    calls: list[None] = []
    store.add_listener(lambda: calls.append(None))
    async with store.transaction() as conn:
        await conn.execute(
            "UPDATE memories SET recall_count = 7 WHERE id = ?", (item.id,)
        )
    assert calls == [None]
    async with store.reader.execute(
        "SELECT recall_count FROM memories WHERE id = ?", (item.id,)
    ) as cursor:
        assert tuple(await cursor.fetchone() or ()) == (7,)

    async def failing() -> None:
        async with store.transaction() as conn:
            await conn.execute(
                "UPDATE memories SET recall_count = 9 WHERE id = ?", (item.id,)
            )
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await failing()
    assert calls == [None]
    again = await store.get(item.id)
    assert again is not None
    assert again.recall_count == 7


async def test_pause_writes(store: MemoryStore, db_path: Path) -> None:
    """Paused: the WAL is folded in, writes wait, searches go on."""
    first = (await store.add(memory("Written before the pause"))).item
    await store.pause_writes()
    assert Path(f"{db_path}-wal").stat().st_size == 0
    assert b"Written before the pause" in db_path.read_bytes()
    pending = asyncio.create_task(store.add(memory("Written during the pause")))
    await asyncio.sleep(0.05)
    assert not pending.done()
    assert ids(await store.search(SearchQuery(text="written"))) == [first.id]
    store.resume_writes()
    assert (await pending).created
    store.resume_writes()  # harmless when not paused
    assert len(await store.search(SearchQuery(text="written"))) == 2
    await store.add(memory("Not blocked any more"))


async def test_forget_rolls_back_on_error(store: MemoryStore, db_path: Path) -> None:
    """A failure inside forget changes nothing; the store keeps working."""
    item = (await store.add(memory("Sticky note"), vector=vector(1))).item
    sql(
        db_path,
        "CREATE TRIGGER no_archive BEFORE UPDATE OF status ON memories "
        "BEGIN SELECT RAISE(ABORT, 'archive blocked'); END",
    )
    sql(
        db_path,
        "CREATE TRIGGER no_delete BEFORE DELETE ON memories "
        "BEGIN SELECT RAISE(ABORT, 'delete blocked'); END",
    )
    with pytest.raises(sqlite3.IntegrityError, match="archive blocked"):
        await store.forget([item.id])
    with pytest.raises(sqlite3.IntegrityError, match="delete blocked"):
        await store.forget([item.id], purge=True)
    assert await store.get(item.id) == item
    assert ids(await store.search(SearchQuery(text="sticky", vector=vector(1)))) == [
        item.id
    ]
    sql(db_path, "DROP TRIGGER no_archive")
    sql(db_path, "DROP TRIGGER no_delete")
    assert await store.forget([item.id], purge=True) == [item.id]
    assert await store.get(item.id) is None


async def test_search_hit_as_dict(store: MemoryStore) -> None:
    """The compact form names the signals and rounds the score."""
    item = (
        await store.add(memory("Compact form", tags=("fmt",)), vector=vector(1))
    ).item
    hit = (await store.search(SearchQuery(text="compact", vector=near(1))))[0]
    assert hit.as_dict() == {
        "id": item.id,
        "content": "Compact form",
        "type": "fact",
        "scope": HOUSEHOLD,
        "tags": ["fmt"],
        "created_at": item.created_at.isoformat(),
        "score": round(hit.score, 4),
        "matched": ["keyword", "semantic"],
    }


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


# -- opening: corrupt, too new, unavailable ------------------------------------------------


async def test_random_bytes_are_corrupt(
    open_store: StoreFactory, db_path: Path
) -> None:
    """A file of random bytes is refused and left untouched."""
    data = random.Random(1).randbytes(16_384)
    db_path.write_bytes(data)
    with pytest.raises(DatabaseCorruptError) as info:
        await open_store()
    assert info.value.key == "database_corrupt"
    assert info.value.placeholders == {"path": str(db_path)}
    assert db_path.read_bytes() == data


@pytest.mark.parametrize("keep", [0.5, 0.9])
async def test_truncated_database_is_corrupt(
    open_store: StoreFactory, db_path: Path, keep: float
) -> None:
    """A database cut short is refused and left untouched."""
    store = await open_store()
    await store.add_many(
        [memory(f"Row {i} " + "padding " * 50) for i in range(400)],
        vectors=[vector(i) for i in range(400)],
    )
    await store.close()
    data = db_path.read_bytes()
    assert len(data) > 100_000
    truncated = data[: int(len(data) * keep) // 4096 * 4096 + 100]
    db_path.write_bytes(truncated)
    with pytest.raises(DatabaseCorruptError):
        await open_store()
    assert db_path.read_bytes() == truncated


@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
async def test_database_too_new(
    open_store: StoreFactory, db_path: Path, journal_mode: str
) -> None:
    """A schema newer than this code knows is refused and left untouched."""
    with closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        conn.execute(f"PRAGMA journal_mode = {journal_mode}")
        conn.execute("CREATE TABLE future (x)")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    data = db_path.read_bytes()
    with pytest.raises(DatabaseTooNewError) as info:
        await open_store()
    assert info.value.key == "database_too_new"
    assert info.value.placeholders == {
        "path": str(db_path),
        "version": str(SCHEMA_VERSION + 1),
    }
    assert db_path.read_bytes() == data


async def test_parent_is_a_file(open_store: StoreFactory, tmp_path: Path) -> None:
    """A folder that cannot be created makes the database unavailable."""
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    with pytest.raises(DatabaseUnavailableError) as info:
        await open_store(blocker / "memory.db")
    assert info.value.key == "database_unavailable"
    assert info.value.placeholders == {"path": str(blocker / "memory.db")}
    assert blocker.read_text() == "not a folder"


async def test_path_is_a_folder(open_store: StoreFactory, tmp_path: Path) -> None:
    """A path SQLite cannot open makes the database unavailable, not corrupt."""
    folder = tmp_path / "memory.db"
    folder.mkdir()
    with pytest.raises(DatabaseUnavailableError):
        await open_store(folder)


async def test_creates_missing_folders(
    open_store: StoreFactory, tmp_path: Path
) -> None:
    """Missing parent folders are created."""
    path = tmp_path / "a" / "b" / "memory.db"
    store = await open_store(path)
    await store.add(memory("Nested"))
    assert path.exists()
    assert store.path == path


async def test_not_open(clock: FakeClock, tmp_path: Path) -> None:
    """Every call on a store that is not open raises DatabaseUnavailableError."""
    store = MemoryStore(tmp_path / "memory.db", model=MODEL, clock=clock)
    assert not (tmp_path / "memory.db").exists()
    for call in (
        store.add(memory("x")),
        store.search(SearchQuery()),
        store.forget([1]),
        store.stats(),
        store.expire_due(),
        store.get(1),
        store.set_vectors({1: vector(1)}),
        store.mark_recalled([1]),
    ):
        with pytest.raises(DatabaseUnavailableError):
            await call
    await store.close()


async def test_integrity_check_failure(open_store: StoreFactory, db_path: Path) -> None:
    """A file that opens but fails `quick_check` is corrupt and left untouched."""
    with closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (NULL)")
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = 'CREATE TABLE t (x NOT NULL)' "
            "WHERE name = 't'"
        )
    data = db_path.read_bytes()
    with pytest.raises(DatabaseCorruptError, match="integrity check"):
        await open_store()
    assert db_path.read_bytes() == data


def test_database_bytes_without_files(tmp_path: Path) -> None:
    """No file yet: zero bytes."""
    assert MemoryStore(tmp_path / "absent.db").database_bytes() == 0


# -- fast paths give the full ranking's results -------------------------------------

_REFERENCE_BM25 = "bm25(memories_fts, 1.0, 0.5)"


def _reference_keyword(
    path: Path, text: str, scopes: tuple[str, ...], limit: int = 50
) -> list[tuple[int, float]]:
    """bm25 of every match joined and filtered, as search ranked before."""
    expression = fts_match_expression(text)
    with closing(sqlite3.connect(path)) as conn:
        marks = ",".join("?" * len(scopes))
        sql = f"SELECT m.id, {_REFERENCE_BM25} AS rank FROM memories_fts "  # noqa: S608
        sql += (
            "JOIN memories m ON m.id = memories_fts.rowid "
            "WHERE memories_fts MATCH ? AND m.status = 'active' "
            f"AND m.scope IN ({marks}) ORDER BY rank, m.id LIMIT ?"
        )
        rows = conn.execute(sql, [expression, *scopes, limit]).fetchall()
    return [(int(row[0]), float(row[1])) for row in rows]


async def _apple_store(store_factory: StoreFactory) -> tuple[MemoryStore, list[int]]:
    """600 memories with "apple": 20 of them Anna's, long (low bm25)."""
    store = await store_factory()
    rng = random.Random(5)
    filler = ["garden", "kitchen", "table", "window", "morning", "evening", "orchard"]
    memories = [
        memory(f"apple note {i} " + " ".join(rng.choices(filler, k=rng.randint(1, 6))))
        for i in range(580)
    ]
    memories += [
        memory(
            f"apple note anna {i} " + " ".join(rng.choices(filler, k=30)),
            scope="person.anna",
        )
        for i in range(20)
    ]
    added = await store.add_many(memories)
    return store, [result.item.id for result in added[580:]]


async def test_keyword_pool_equals_full_ranking(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """FTS5's own top matches, filtered, equal ranking every match (both paths)."""
    store, anna = await _apple_store(store_factory)
    for scopes in ((HOUSEHOLD,), (HOUSEHOLD, "person.anna"), ("person.anna",)):
        where, params = store._filters(SearchQuery(text="apple", scopes=scopes))
        hits, cosines = await store._keyword(store.reader, "apple", (where, params), 10)
        reference = _reference_keyword(db_path, "apple", scopes)
        assert [hit[0] for hit in hits] == [item_id for item_id, _ in reference]
        assert [hit[1] for hit in hits] == pytest.approx(
            [bm25 for _, bm25 in reference]
        )
        assert cosines == {}
    # Anna's memories rank below the first 200 matches: the filtered ranking
    # falls back to every match and still finds them all.
    assert set(anna).isdisjoint(
        item_id
        for item_id, _ in _reference_keyword(
            db_path, "apple", (HOUSEHOLD, "person.anna"), 200
        )
    )
    found = await store.search(
        SearchQuery(text="apple", scopes=("person.anna",), limit=MAX_SEARCH_LIMIT)
    )
    assert sorted(ids(found)) == sorted(anna)


async def test_pool_bm25_equals_full_ranking(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """bm25 of the semantic pool alone equals its value in the full ranking."""
    store, anna = await _apple_store(store_factory)
    extra = await store.add(memory("pear without the fruit word"))
    reference = dict(_reference_keyword(db_path, "apple note", (HOUSEHOLD,), 1000))
    some = sorted(reference)[::37]
    hits = await store._keyword_of(store.reader, "apple note", [*some, extra.item.id])
    assert [hit[0] for hit in hits] == sorted(some, key=lambda i: (reference[i], i))
    assert [hit[1] for hit in hits] == [
        pytest.approx(reference[i])
        for i in sorted(some, key=lambda i: (reference[i], i))
    ]
    assert all(hit[2] == 1.0 for hit in hits)  # both words in each
    assert await store._keyword_of(store.reader, "?!", some) == []
    assert await store._keyword_of(store.reader, "apple note", []) == []
    assert anna  # person-scoped ones exist but were not asked for


async def test_keyword_hits_carry_their_exact_cosine(store: MemoryStore) -> None:
    """The keyword query brings each hit's stored vector: its exact cosine."""
    added = await store.add_many(
        [memory(f"Boiler service note {i}") for i in range(8)],
        vectors=[vector(i) if i % 2 else None for i in range(8)],
    )
    query = vector(99)
    where, params = store._filters(SearchQuery(text="boiler"))
    hits, cosines = await store._keyword(
        store.reader, "boiler", (where, params), 10, as_unit_vector(query)
    )
    assert len(hits) == 8
    expected = {
        result.item.id: float(as_unit_vector(vector(i)) @ as_unit_vector(query))
        for i, result in enumerate(added)
        if i % 2
    }
    assert cosines == pytest.approx(expected, abs=1e-6)


async def test_hybrid_scores_every_candidate_on_both_signals(
    store_factory: StoreFactory,
) -> None:
    """With full pools, keyword hits get cosines and pool members get bm25."""
    store = await store_factory()
    words = ["heating", "boiler", "radiator", "thermostat"]
    memories = [memory(f"{words[i % 4]} note number {i}") for i in range(120)]
    vectors = [vector(i) for i in range(120)]
    added = await store.add_many(memories, vectors=vectors)
    query = SearchQuery(text="heating", vector=vector(5), limit=MAX_SEARCH_LIMIT)
    hits = await store.search(query)
    by_id = {hit.item.id: hit for hit in hits}
    # Memory 5 (a "radiator" note) is nearest but not a keyword hit; memory 4
    # ("heating") is a keyword hit whatever its cosine.
    assert by_id[added[5].item.id].matched == SEMANTIC
    assert Signal.KEYWORD in by_id[added[4].item.id].matched
    keyword_hits = [hit for hit in hits if Signal.KEYWORD in hit.matched]
    assert {hit.item.content.split()[0] for hit in keyword_hits} == {"heating"}
    # Scores are the fused ones: the same search twice gives the same list.
    assert [(hit.item.id, hit.score) for hit in await store.search(query)] == [
        (hit.item.id, hit.score) for hit in hits
    ]


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


# -- auto backend at any size, sharded vec0 ---------------------------------------


async def test_auto_keeps_vec0_at_any_size(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """`auto` uses vec0 whenever it loads, however many vectors, as numpy ranks."""
    store = await store_factory(vector_backend="auto")
    assert store.vector_backend == "sqlite-vec"
    added = await store.add_many(
        [memory(f"Sized note {i}") for i in range(300)],
        vectors=[vector(i) for i in range(300)],
    )
    await store.close()
    large = await store_factory(vector_backend="auto")
    assert large.vector_backend == "sqlite-vec"
    assert (await large.stats()).vector_backend == "sqlite-vec"
    numpy_store = await store_factory(vector_backend="numpy")
    for seed in (3, 150, 299, "query"):
        query = SearchQuery(vector=vector(seed), limit=20)
        hits = await large.search(query)
        expected = await numpy_store.search(query)
        assert ids(hits) == ids(expected)
        assert [h.score for h in hits] == pytest.approx([h.score for h in expected])
    with closing(sqlite3.connect(db_path)) as conn:
        (sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = ?",
            (store_module._model_table(MODEL),),
        ).fetchone()
    assert "shard_of_2 integer partition key" in sql
    assert ids(await large.search(SearchQuery(vector=vector(7), limit=1))) == [
        added[7].item.id
    ]


async def test_vec0_searches_during_writes(store_factory: StoreFactory) -> None:
    """Searches over both shards run while vectors are added, replaced, forgotten."""
    store = await store_factory(vector_backend="sqlite-vec")
    assert len(store._shard_readers) == store_module.VEC0_SHARDS - 1
    first = await store.add_many(
        [memory(f"Steady note {i}") for i in range(60)],
        vectors=[vector(i) for i in range(60)],
    )
    done = asyncio.Event()
    added: list[int] = []

    async def write() -> None:
        for batch in range(10):
            results = await store.add_many(
                [memory(f"Busy note {batch} {i}") for i in range(10)],
                vectors=[vector(1000 + batch * 10 + i) for i in range(10)],
            )
            added.extend(result.item.id for result in results)
            await store.set_vectors({first[batch].item.id: vector(5000 + batch)})
            await store.forget([first[30 + batch].item.id], purge=True)
        done.set()

    async def search() -> int:
        rounds = 0
        while not done.is_set() or not rounds:
            hits = await store.search(SearchQuery(vector=vector(45), limit=5))
            # Memory 45 is never rewritten: it stays the best match throughout.
            assert ids(hits)[0] == first[45].item.id
            assert hits[0].score == pytest.approx(1.0, abs=1e-5)
            rounds += 1
        return rounds

    _, *rounds = await asyncio.gather(write(), search(), search())
    assert min(rounds) >= 1
    assert (await store.stats()).vectors_by_model[MODEL] == 60 + 100 - 10
    for position, item_id in enumerate(added):
        hits = await store.search(SearchQuery(vector=vector(1000 + position), limit=1))
        assert ids(hits) == [item_id]
    for batch in range(10):
        hits = await store.search(SearchQuery(vector=vector(5000 + batch), limit=1))
        assert ids(hits) == [first[batch].item.id]
    await store.close()
    assert store._shard_readers == []


@pytest.mark.parametrize(
    "layout",
    [
        f"embedding int8[{DIM}] distance_metric=cosine",  # per-row scales
        f"embedding int8[{DIM}]",  # L2, one table without shards
    ],
)
async def test_vec0_table_of_the_old_layout_is_rebuilt(
    store_factory: StoreFactory, db_path: Path, layout: str
) -> None:
    """A `vec0` table of an earlier layout is replaced on open, not trusted."""
    store = await store_factory(vector_backend="sqlite-vec")
    added = await store.add_many(
        [memory(f"Layout note {i}") for i in range(20)],
        vectors=[vector(i) for i in range(20)],
    )
    await store.close()
    table = store_module._model_table(MODEL)
    with closing(sqlite3.connect(db_path)) as conn:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"CREATE VIRTUAL TABLE {table} USING vec0({layout})")
        # As many rows as vectors, all pointing the wrong way.
        conn.executemany(
            f"INSERT INTO {table} (rowid, embedding) VALUES (?, vec_int8(?))",  # noqa: S608
            [(result.item.id, bytes([1] * DIM)) for result in added],
        )
        conn.commit()
    reopened = await store_factory(vector_backend="sqlite-vec")
    for i in (3, 17):
        hits = await reopened.search(SearchQuery(vector=vector(i), limit=1))
        assert ids(hits) == [added[i].item.id]
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_close_lets_a_write_in_flight_finish(open_store: StoreFactory) -> None:
    """Unloading while retention or digestion writes commits that write first."""
    store = await open_store()
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow_write() -> None:
        async with store.transaction() as conn:
            await conn.execute(
                "INSERT INTO memories (scope, type, content, content_key, "
                "created_at, updated_at, origin) "
                "VALUES ('household', 'fact', 'Late write', 'late write', 0, 0, 'tool')"
            )
            started.set()
            await release.wait()

    writer = asyncio.create_task(slow_write())
    await started.wait()
    closing = asyncio.create_task(store.close())
    await asyncio.sleep(0.05)
    assert not closing.done()  # waits for the transaction, not under it
    release.set()
    await writer  # committed, no "no active connection"
    await closing

    reopened = await open_store()
    hits = await reopened.search(SearchQuery(text="late write"))
    assert [hit.item.content for hit in hits] == ["Late write"]


async def test_close_gives_up_on_a_write_that_hangs(
    open_store: StoreFactory,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A write that never ends cannot keep Home Assistant from stopping."""
    monkeypatch.setattr(store_module, "CLOSE_WAIT", 0.05)
    store = await open_store()
    await store.add(memory("Kept before the hang"))
    started = asyncio.Event()

    async def hanging_write() -> None:
        async with store.transaction():
            started.set()
            await asyncio.Event().wait()

    writer = asyncio.create_task(hanging_write())
    await started.wait()
    await store.close()
    assert "Closing the memory database during a slow write" in caplog.text
    writer.cancel()
    with contextlib.suppress(asyncio.CancelledError, ValueError, sqlite3.Error):
        await writer

    reopened = await open_store()
    hits = await reopened.search(SearchQuery(text="kept"))
    assert [hit.item.content for hit in hits] == ["Kept before the hang"]
