"""Tests of the shared SQL helpers' one-hand-off reads: `read_one` and `read_pages`.

`read_pages` is what the streaming loads (vector codes, vectors, the message
index) read with: each page is its own statement, run to its end, so a
write committed between two pages is seen by the next page and by any
other read of the connection made meanwhile. A cursor read with `fetchmany`
kept its statement, and with it the reader's snapshot, open between pages:
both would miss that write.
"""

from __future__ import annotations

import pytest

from custom_components.memory.engine.sql import read_one, read_pages
from tests.engine.conftest import StoreFactory, memory

_IDS_PAGE = (
    "SELECT id, content FROM memories WHERE status = ? AND id > ? ORDER BY id LIMIT ?"
)


async def test_read_one_returns_the_row_or_none(store_factory: StoreFactory) -> None:
    """The first row of the statement, None when it gives none."""
    store = await store_factory()
    added = await store.add(memory("The spare key is under the mat"))
    found = await read_one(
        store.reader, "SELECT id, content FROM memories WHERE id = ?", (added.item.id,)
    )
    assert found is not None
    assert tuple(found) == (added.item.id, "The spare key is under the mat")
    assert (
        await read_one(store.reader, "SELECT id FROM memories WHERE id = ?", (-1,))
        is None
    )
    count = await read_one(store.reader, "SELECT count(*) FROM memories")
    assert count is not None
    assert count[0] == 1


async def test_read_pages_pages_by_the_key(store_factory: StoreFactory) -> None:
    """Every row once, in key order, in pages of `size`; parameters bound first."""
    store = await store_factory()
    added = [(await store.add(memory(f"Fact number {n}"))).item.id for n in range(5)]
    pages = [
        [int(row[0]) for row in page]
        async for page in read_pages(store.reader, _IDS_PAGE, ("active",), size=2)
    ]
    assert pages == [added[0:2], added[2:4], added[4:5]]
    # Starting after a key; a full last page ends with an empty read, no page.
    after = [
        [int(row[0]) for row in page]
        async for page in read_pages(
            store.reader, _IDS_PAGE, ("active",), key=added[0], size=2
        )
    ]
    assert after == [added[1:3], added[3:5]]
    nothing = [
        page async for page in read_pages(store.reader, _IDS_PAGE, ("archived",))
    ]
    assert nothing == []


async def test_a_write_between_pages_is_seen(store_factory: StoreFactory) -> None:
    """A memory added between two pages: `get` finds it, the next page has it.

    A cursor read with `fetchmany` held the reader's snapshot between pages,
    so the `get` (queued on the same reader) returned None and the loop
    never saw the new row.
    """
    store = await store_factory()
    first = [(await store.add(memory(f"Fact number {n}"))).item.id for n in range(4)]
    seen: list[int] = []
    new_id = 0
    async for page in read_pages(store.reader, _IDS_PAGE, ("active",), size=2):
        seen.extend(int(row[0]) for row in page)
        if not new_id:
            new_id = (await store.add(memory("The boiler was serviced today"))).item.id
            got = await store.get(new_id)
            assert got is not None
            assert got.content == "The boiler was serviced today"
    assert seen == [*first, new_id]


@pytest.mark.parametrize("size", [1, 3])
async def test_read_pages_any_page_size(store_factory: StoreFactory, size: int) -> None:
    """The same rows whatever the page size."""
    store = await store_factory()
    added = [(await store.add(memory(f"Fact number {n}"))).item.id for n in range(4)]
    rows = [
        int(row[0])
        async for page in read_pages(store.reader, _IDS_PAGE, ("active",), size=size)
        for row in page
    ]
    assert rows == added
