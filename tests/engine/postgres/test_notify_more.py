"""Vectors, embedding jobs and digestion told across instances on one database.

Two `PostgresStore`s share a database, as two Home Assistants: vectors one
stores, the jobs its embedding queue marks ready and the digestion states
its digestion queue changes call the other's listeners (through its
`ChangeFeed`), while the writer's own listeners are told at most once (its
own notice is left out). The new kinds decode; a kind a newer version may
send still decodes to None.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
import json

from custom_components.memory.engine.embedding import MEMORIES
from custom_components.memory.engine.postgres import PostgresStore
from custom_components.memory.engine.postgres.notify import (
    Change,
    ChangeFeed,
    ChangeKind,
    decode,
    encode,
)
from custom_components.memory.engine.postgres.store_services import digest_queue
from tests.engine.conftest import MODEL, FakeClock, memory, vector
from tests.engine.postgres.stores import Heard, PgStores

# Long enough for a notice on a loaded test machine, short for a missing one.
WAIT = 5.0


async def _listened(
    stores: PgStores,
) -> tuple[PostgresStore, PostgresStore, Heard, Heard]:
    """Open two stores, each with a counting listener."""
    first, second = await stores.open(), await stores.open()
    heard_first, heard_second = Heard(), Heard()
    first.add_listener(heard_first)
    second.add_listener(heard_second)
    return first, second, heard_first, heard_second


async def _not_told_again(writer: Heard, other: PostgresStore, calls: int) -> None:
    """Have `other` write once: the writer hears it, then exactly `calls` in all.

    Notices arrive in commit order, so once the writer heard the other's
    write, its own earlier notices would have been delivered too.
    """
    await other.add(memory(f"A later note from {other.instance}."))
    await writer.reach(calls, WAIT)
    await asyncio.sleep(0.3)
    assert writer.calls == calls


async def test_vectors_set_through_one_tell_the_other(stores: PgStores) -> None:
    """Both the first vectors (the table made) and later ones reach the other."""
    first, second, heard_first, heard_second = await _listened(stores)
    items = [
        r.item.id
        for r in await first.add_many([memory("Alpha note."), memory("Beta note.")])
    ]
    await heard_second.reach(1, WAIT)
    await first.set_vectors({items[0]: vector(1)})
    assert heard_first.calls == 2
    await heard_second.reach(2, WAIT)
    # The second, which opened before any vector, stores one: the first hears.
    await second.set_vectors({items[1]: vector(2)})
    assert heard_second.calls == 3
    await heard_first.reach(3, WAIT)
    await _not_told_again(heard_first, second, 4)
    await _not_told_again(heard_second, first, 5)


async def test_embedding_jobs_marked_ready_tell_the_other(
    stores: PgStores, clock: FakeClock
) -> None:
    """The queue's `mark_ready` (claimed under another name) reaches the other only."""
    first, _second, heard_first, heard_second = await _listened(stores)
    await first.add(memory("Mia is allergic to nuts."))
    await heard_second.reach(1, WAIT)
    jobs = first.embedding_jobs("ha-queue")
    await jobs.enqueue((MEMORIES,), MODEL, after={MEMORIES: 0}, clock=clock)
    due = await jobs.due_jobs(MEMORIES, MODEL, batch_size=8, now=clock.now)
    assert len(due) == 1
    await jobs.mark_ready(
        MEMORIES, MODEL, {job.item_id: job.text_hash for job in due}, clock.now
    )
    await heard_second.reach(2, WAIT)
    # Marking nothing (no claim held any more) tells nobody.
    await jobs.mark_ready(
        MEMORIES, MODEL, {job.item_id: job.text_hash for job in due}, clock.now
    )
    # The writer's listener heard its own add only, and the other's write.
    assert heard_first.calls == 1
    await _not_told_again(heard_first, _second, 2)
    await asyncio.sleep(0.3)
    assert heard_second.calls == 3


async def _conversation(store: PostgresStore, scope: str) -> int:
    """Add an ended conversation row directly; return its id."""
    return int(
        await store.pool.fetchval(
            "INSERT INTO conversations (conversation_id, scope, started_at, "
            "updated_at, ended_at) VALUES ($1, $2, 1, 2, 3) RETURNING id",
            f"conv-{scope}",
            scope,
        )
    )


async def test_digestion_changes_through_one_tell_the_other(
    stores: PgStores,
) -> None:
    """`mark_done`, `defer`, `mark_skipped` and `mark_failed` each reach the other."""
    first, second, heard_first, heard_second = await _listened(stores)
    row = await _conversation(first, "person.anna")
    queue = digest_queue(first)
    when = datetime(2026, 3, 1, 8, tzinfo=UTC)
    await queue.mark_done(row, when=when)
    assert heard_first.calls == 1
    await heard_second.reach(1, WAIT)
    await queue.defer(row, when, error="rate_limited")
    assert heard_first.calls == 2
    await heard_second.reach(2, WAIT)
    await queue.mark_skipped(row, when=when)
    await heard_second.reach(3, WAIT)
    await queue.mark_failed(row, error="timeout", now=when)
    await heard_second.reach(4, WAIT)
    assert heard_first.calls == 4
    await _not_told_again(heard_first, second, 5)


async def test_a_digestion_notice_names_its_row_and_scope(
    stores: PgStores, postgres_database: str
) -> None:
    """Another instance's feed hears the kind, the writer, the row's scope and id."""
    first = await stores.open()
    changes: list[Change] = []
    arrived = asyncio.Event()

    def listener(change: Change) -> None:
        changes.append(change)
        arrived.set()

    feed = ChangeFeed(postgres_database, instance="other", ignore_own=True)
    feed.add_listener(listener)
    await feed.start()
    try:
        row = await _conversation(first, "person.ben")
        await digest_queue(first).defer(
            row, datetime(2026, 3, 1, 8, tzinfo=UTC), error="rate_limited"
        )
        await asyncio.wait_for(arrived.wait(), WAIT)
    finally:
        await feed.stop()
    assert changes == [
        Change(
            kind=ChangeKind.DIGESTION_CHANGED,
            instance=first.sender,
            scopes=frozenset({"person.ben"}),
            ids=(row,),
        )
    ]


def test_the_new_kinds_decode_and_an_unknown_one_does_not() -> None:
    """What `encode` writes of the new kinds reads back; a newer kind is None."""
    for kind in (
        ChangeKind.VECTORS_SET,
        ChangeKind.EMBEDDINGS_READY,
        ChangeKind.DIGESTION_CHANGED,
    ):
        change = Change(kind=kind, instance="a", scopes=frozenset(), ids=(1, 2))
        assert decode(encode(change)) == change
    newer = json.loads(encode(Change(kind=ChangeKind.VECTORS_SET, instance="a")))
    newer["kind"] = "something_newer"
    assert decode(json.dumps(newer)) is None
