"""Adds run on the writer's thread in one hand-off: all or nothing, as before.

`MemoryTable.add_many` analyses, writes, commits and reads back a memory
in one trip to aiosqlite's thread (`transactions.on_writer`); with vectors
the same trip writes their rows and codes, commits and puts the codes in the
numpy index. These tests hold it to what the
statement-by-statement version guaranteed: what it returns is what is
stored, a failing statement or a bad vector leaves nothing behind and no
listener hears of it, a cancelled add is stored whole or not at all, and
the writer goes on working afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from pathlib import Path
import sqlite3

import aiosqlite
import pytest

from custom_components.memory.engine import (
    MemoryStore,
    MemoryType,
    Origin,
    SearchQuery,
    Source,
    VectorDimensionError,
)
from tests.engine.conftest import (
    DIM,
    MODEL,
    START,
    StoreFactory,
    ids,
    memory,
    sql,
    vector,
)


async def test_returned_items_are_the_stored_rows(store: MemoryStore) -> None:
    """Items built from the INSERT's RETURNING equal what `get` reads back."""
    await store.add(memory("Already here"))
    added = await store.add_many(
        [
            memory("Plain"),
            memory("Tagged", tags=("Kitchen", "bins")),
            memory(
                "Detailed",
                scope="person.anna",
                valid_from=datetime.fromtimestamp(START - 100, UTC),
                expires_at=datetime.fromtimestamp(START + 100, UTC),
                topic="home city",
                confidence=1,
                language="de-DE",
            ),
            memory(
                "A summary",
                type=MemoryType.SUMMARY,
                source=Source(origin=Origin.DIGESTION, conversation_id="c1"),
            ),
            memory("already here."),
        ],
        vectors=[vector(1), None, vector(3), None, vector(5)],
    )
    assert [result.created for result in added] == [True, True, True, True, False]
    for result in added:
        assert await store.get(result.item.id) == result.item
    single = await store.add(memory("One more", tags=("x",)), vector=vector(6))
    assert await store.get(single.item.id) == single.item
    twin = await store.add(memory("one more"))
    assert twin.item == single.item
    assert not twin.created


async def test_failing_statement_stores_nothing(
    store: MemoryStore, db_path: Path
) -> None:
    """A statement failing inside the hand-off rolls the whole add back."""
    calls: list[None] = []
    store.add_listener(lambda: calls.append(None))
    sql(
        db_path,
        "CREATE TRIGGER no_tags BEFORE INSERT ON memory_tags "
        "BEGIN SELECT RAISE(ABORT, 'tags blocked'); END",
    )
    with pytest.raises(sqlite3.IntegrityError, match="tags blocked"):
        await store.add(memory("Tagged", tags=("a",)))
    with pytest.raises(sqlite3.IntegrityError, match="tags blocked"):
        await store.add_many(
            [memory("Untagged"), memory("Tagged", tags=("a",))],
            vectors=[vector(1), vector(2)],
        )
    stats = await store.stats()
    assert stats.by_status == {}
    assert stats.vectors_by_model == {}
    assert calls == []
    sql(db_path, "DROP TRIGGER no_tags")
    added = await store.add(memory("Tagged", tags=("a",)), vector=vector(2))
    assert added.created
    assert calls == [None]
    hits = await store.search(SearchQuery(text="tagged", vector=vector(2)))
    assert ids(hits) == [added.item.id]


async def test_vector_of_another_dimension_stores_nothing(store: MemoryStore) -> None:
    """The vectors' rows fail after the memories' inserts: all is rolled back."""
    first = await store.add(memory("First"), vector=vector(1))
    with pytest.raises(VectorDimensionError):
        await store.add_many(
            [memory("Second"), memory("Third")],
            vectors=[vector(2), vector(3, dim=DIM + 1)],
        )
    stats = await store.stats()
    assert stats.active == 1
    assert stats.vectors_by_model == {MODEL: 1}
    again = await store.add(memory("Second"), vector=vector(2))
    assert again.created
    assert again.item.id != first.item.id


@pytest.mark.parametrize("with_vector", [False, True])
async def test_cancelled_add_is_whole_or_absent(
    store: MemoryStore, *, with_vector: bool
) -> None:
    """Cancelled at any point, an add is stored with its vector or not at all."""
    for turns in range(8):
        task = asyncio.create_task(
            store.add(
                memory(f"Cancelled {turns}"),
                vector=vector(turns) if with_vector else None,
            )
        )
        for _ in range(turns):
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        after = await store.add(memory(f"After {turns}"), vector=vector(100 + turns))
        assert after.created
    stats = await store.stats()
    # Every stored memory has its vector: none was committed without it.
    vectors = stats.vectors_by_model.get(MODEL, 0)
    assert vectors == (stats.active if with_vector else 8)


async def test_adds_after_a_checkpoint(store: MemoryStore) -> None:
    """A purge checkpoints the log on the writer; adds still commit after it."""
    gone = await store.add(memory("Gone soon"), vector=vector(1))
    await store.forget([gone.item.id], purge=True)
    assert (await store.add(memory("Next"))).created
    await store.forget([(await store.add(memory("Also gone"))).item.id], purge=True)
    assert (await store.add(memory("With vector"), vector=vector(2))).created
    assert (await store.stats()).active == 2


async def test_an_add_with_a_vector_is_one_hand_off(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory, vector, codes, COMMIT and the numpy index: one trip, no thread.

    Before, the vector's rows took three more trips to the writer, the
    COMMIT a fourth, and the index a worker thread of its own.
    """
    store = await store_factory()
    await store.add(memory("Already indexed"), vector=vector(1))
    trips: list[str] = []
    execute = aiosqlite.Connection._execute  # what on_writer uses

    async def counted(self: aiosqlite.Connection, fn: object, *args: object) -> object:
        trips.append("writer" if self is store.database.connections()[0] else "reader")
        return await execute(self, fn, *args)  # type: ignore[no-untyped-call]

    threads: list[object] = []
    to_thread = asyncio.to_thread

    async def counted_thread(fn: object, *args: object, **kwargs: object) -> object:
        threads.append(fn)
        return await to_thread(fn, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
    monkeypatch.setattr(asyncio, "to_thread", counted_thread)
    added = await store.add(memory("Fresh with a vector"), vector=vector(2))
    assert trips == ["writer"]
    assert threads == []
    monkeypatch.undo()

    # The index already serves it, and the next open reads the same codes.
    hits = await store.search(SearchQuery(text="", vector=vector(2), limit=1))
    assert ids(hits) == [added.item.id]
    assert (await store.stats()).vectors_by_model == {MODEL: 2}
