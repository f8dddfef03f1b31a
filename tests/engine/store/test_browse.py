"""Browsing memories page by page: filters, orders, cursors, totals, history."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
import json

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    InvalidInputError,
    InvalidLimitError,
    MemoryStore,
    MemoryType,
    Origin,
    Source,
)
from custom_components.memory.engine.store.browse import BrowseQuery
from tests.engine.conftest import FakeClock, StoreFactory, memory

ANNA = "person.anna"


@pytest.fixture
async def store(store_factory: StoreFactory) -> MemoryStore:
    """Open a keyword-only store."""
    return await store_factory(model=None)


async def test_pages_cover_every_memory_once_newest_first(
    store: MemoryStore, clock: FakeClock
) -> None:
    """Pages follow each other by cursor; a memory added meanwhile shifts nothing."""
    ids = []
    for n in range(25):
        clock.advance(1)
        ids.append((await store.add(memory(f"Note number {n}"))).item.id)
    seen: list[int] = []
    page = await store.browse(BrowseQuery(limit=10))
    assert page.total == 25
    seen += [item.id for item in page.items]
    await store.add(memory("Added while paging"))
    while page.cursor is not None:
        page = await store.browse(BrowseQuery(limit=10, cursor=page.cursor))
        seen += [item.id for item in page.items]
    assert seen == ids[::-1]


async def test_filters(store: MemoryStore, clock: FakeClock) -> None:
    """Scope, type, status, expiring, tags, origin and dates each narrow the list."""
    start = datetime.fromtimestamp(clock(), UTC)
    fact = (await store.add(memory("A household fact", tags=("home",)))).item.id
    clock.advance(3600)
    mine = (
        await store.add(
            memory(
                "Anna's own preference",
                type=MemoryType.PREFERENCE,
                scope=ANNA,
                source=Source(origin=Origin.DIGESTION),
            )
        )
    ).item.id
    soon = (
        await store.add(memory("Expires soon", expires_at=start + timedelta(days=2)))
    ).item.id
    gone = (await store.add(memory("Forgotten one"))).item.id
    await store.forget([gone])

    async def ids(**fields: object) -> list[int]:
        page = await store.browse(BrowseQuery(**fields))  # type: ignore[arg-type]
        return sorted(item.id for item in page.items)

    assert await ids() == sorted([fact, mine, soon])
    assert await ids(scopes=(HOUSEHOLD,)) == sorted([fact, soon])
    assert await ids(scopes=()) == []
    assert await ids(types=(MemoryType.PREFERENCE,)) == [mine]
    assert await ids(status="archived") == [gone]
    assert await ids(status="expiring") == [soon]
    assert await ids(status="any") == sorted([fact, mine, soon, gone])
    assert await ids(tags=("Home",)) == [fact]
    assert await ids(origins=(Origin.DIGESTION,)) == [mine]
    assert await ids(since=start + timedelta(minutes=30)) == sorted([mine, soon])
    assert await ids(until=start + timedelta(minutes=30)) == [fact]


async def test_most_recalled_first(store: MemoryStore) -> None:
    """Recalled twice comes before once, then never; pages keep that order."""
    a, b, c = [
        (await store.add(memory(text))).item.id for text in ("First", "Second", "Third")
    ]
    await store.mark_recalled([b, c])
    await store.mark_recalled([b])
    first = await store.browse(BrowseQuery(order="recalled", limit=2))
    assert [item.id for item in first.items] == [b, c]
    rest = await store.browse(
        BrowseQuery(order="recalled", limit=2, cursor=first.cursor)
    )
    assert [item.id for item in rest.items] == [a]
    assert rest.cursor is None


@pytest.mark.parametrize(
    "cursor",
    [
        "not base64 !!",
        base64.urlsafe_b64encode(b"[1, 2, 3]").decode(),
        base64.urlsafe_b64encode(json.dumps(["x", 1]).encode()).decode(),
        base64.urlsafe_b64encode(json.dumps([1.0, 2**64]).encode()).decode(),
        base64.urlsafe_b64encode(json.dumps([True, 1]).encode()).decode(),
        base64.urlsafe_b64encode(json.dumps([1.0, 1.5]).encode()).decode(),
        base64.urlsafe_b64encode(b"[NaN, 1]").decode(),
    ],
)
async def test_a_foreign_cursor_is_refused(store: MemoryStore, cursor: str) -> None:
    """Only a cursor a page gave is read; anything else is bad input, not a crash."""
    with pytest.raises(InvalidInputError):
        await store.browse(BrowseQuery(cursor=cursor))


async def test_limits_are_checked(store: MemoryStore) -> None:
    """A page holds 1 to 50 memories."""
    with pytest.raises(InvalidLimitError):
        await store.browse(BrowseQuery(limit=0))


async def test_history_follows_the_chain(store: MemoryStore) -> None:
    """Portland -> Seattle -> Denver: each sees what it replaced and what replaced it."""
    portland = (await store.add(memory("Anna lives in Portland"))).item
    seattle, _old = await store.supersede(portland.id, memory("Anna lives in Seattle"))
    denver, _old = await store.supersede(seattle.id, memory("Anna lives in Denver"))
    middle = (await store.get_many([seattle.id]))[seattle.id]
    before, after = await store.history(middle)
    assert [item.id for item in before] == [portland.id]
    assert [item.id for item in after] == [denver.id]
    first = (await store.get_many([portland.id]))[portland.id]
    before, after = await store.history(first)
    assert before == []
    assert [item.id for item in after] == [seattle.id, denver.id]
    last = (await store.get_many([denver.id]))[denver.id]
    before, after = await store.history(last)
    assert [item.id for item in before] == [portland.id, seattle.id]
    assert after == []
