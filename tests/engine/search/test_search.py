"""Tests of memory search: keyword safety, filters, conversation context.

Most tests run on both vector backends through the `store` fixture.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
import random

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    MAX_SEARCH_LIMIT,
    InvalidLimitError,
    InvalidTagError,
    MemoryStatus,
    MemoryStore,
    MemoryType,
    NewMemory,
    Origin,
    SearchQuery,
    Source,
)
from custom_components.memory.engine.models import from_timestamp
from custom_components.memory.engine.search.fusion import CONTEXT_WEIGHT
from tests.engine.conftest import (
    BOTH,
    KEYWORD,
    START,
    FakeClock,
    contents,
    ids,
    memory,
    near,
    sql,
    vector,
)

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
        # English function words: never indexed, never searched.
        ("NOT", []),
        ("AND", []),
        ("OR", []),
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
