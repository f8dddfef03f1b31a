"""What the integration builds on a store, on both backends: the log, the queue, "Earlier".

`conversation_log` and `digest_queue` give each backend's own; the same
scenarios then run on SQLite and PostgreSQL: a conversation saved, listed,
paged, searched by words, ended and erased (the store's erase listeners
told); the digestion queue's states; the recall's "Earlier" reads through
the store; and no person's conversations listed or found for another. On
PostgreSQL two stores on one database never both get one conversation
from the digestion queue.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    MemoryStore,
    MessageQuery,
    MessageRole,
    NewMemory,
    NewMessage,
    Origin,
    Source,
)
from custom_components.memory.engine.conversations import (
    ConversationLog,
    ConversationQuery,
)
from custom_components.memory.engine.digestion import (
    DigestQueue,
    DigestState,
    SkipReason,
)
from custom_components.memory.engine.models import MemoryType
from custom_components.memory.engine.postgres import (
    PostgresConversationLog,
    PostgresDigestQueue,
    PostgresStore,
    digest_queue,
)
from custom_components.memory.engine.recall.earlier import earlier_talks
from tests.engine.conftest import FakeClock, StoreFactory
from tests.engine.postgres.services import (
    ANNA,
    BEN,
    HALL,
    KITCHEN,
    Side,
    now_of,
    side_of,
    talk,
)
from tests.engine.postgres.stores import PgStores

USER = MessageRole.USER
ASSISTANT = MessageRole.ASSISTANT


@pytest.fixture
async def backend(
    backend_url: str | None, store_factory: StoreFactory, clock: FakeClock
) -> AsyncIterator[Side]:
    """Yield a keyword-only store of each backend in turn, with its log and queue."""
    if backend_url is None:
        yield await side_of(await store_factory(model=None), is_postgres=False)
        return
    stores = PgStores(backend_url, clock)
    try:
        yield await side_of(await stores.open(model=None), is_postgres=True)
    finally:
        await stores.close_all()


async def test_each_backend_gets_its_own_log_and_queue(backend: Side) -> None:
    """A MemoryStore the SQLite log and queue; a PostgresStore the PostgreSQL ones."""
    if backend.is_postgres:
        assert isinstance(backend.store, PostgresStore)
        assert isinstance(backend.log, PostgresConversationLog)
        assert isinstance(backend.queue, PostgresDigestQueue)
        assert backend.log.instance == backend.store.sender
        assert backend.queue.instance == backend.store.instance
    else:
        assert isinstance(backend.store, MemoryStore)
        assert isinstance(backend.log, ConversationLog)
        assert isinstance(backend.queue, DigestQueue)


async def test_a_conversation_saved_listed_paged_searched_ended_erased(
    backend: Side, clock: FakeClock
) -> None:
    """The log's life on either backend, through the log its store gives."""
    log, now = backend.log, now_of(clock)
    rows = [
        await talk(
            log,
            f"c{n}",
            now - timedelta(minutes=30 - n),
            [(USER, text), (ASSISTANT, "Noted.")],
            scope=ANNA,
        )
        for n, text in enumerate(
            ["I planted tomatoes today", "Water the basil", "Buy more soil"]
        )
    ]
    assert backend.changes.calls >= 3  # each save told the store's listeners
    listed = await log.conversations(scopes=(ANNA,))
    assert [c.id for c in listed] == rows[::-1]
    assert [c.messages for c in listed] == [2, 2, 2]
    first = await log.page(ConversationQuery(scopes=(ANNA,), limit=2))
    assert first.total == 3
    assert [e.id for e in first.items] == rows[:0:-1]
    assert first.cursor is not None
    rest = await log.page(
        ConversationQuery(scopes=(ANNA,), limit=2, cursor=first.cursor)
    )
    assert [e.id for e in rest.items] == [rows[0]]
    assert rest.cursor is None
    hits = await log.search(MessageQuery(text="tomatoes", scopes=(ANNA,)))
    assert [hit.message.content for hit in hits] == ["I planted tomatoes today"]
    assert hits[0].message.conversation == rows[0]
    assert 0.0 < hits[0].score <= 1.0
    calls = backend.changes.calls
    assert await log.close_open() == 3
    assert backend.changes.calls > calls
    assert len(await log.conversations(ended=True)) == 3
    assert await log.conversations(ended=False) == []
    messages = await log.messages(rows[0])
    erased = await log.erase(rows[0], None)
    assert erased == sorted(message.id for message in messages)
    assert [c.id for c in await log.conversations()] == rows[:0:-1]
    assert await log.search(MessageQuery(text="tomatoes")) == []
    assert backend.heard == [frozenset({ANNA})]


async def test_one_persons_conversations_never_reach_another(
    backend: Side, clock: FakeClock
) -> None:
    """Anna's words are not listed, paged, searched or read as Ben's, on either."""
    log, now = backend.log, now_of(clock)
    anna = await talk(
        log,
        "a",
        now - timedelta(minutes=9),
        [(USER, "My secret garden plan")],
        scope=ANNA,
    )
    ben = await talk(
        log,
        "b",
        now - timedelta(minutes=5),
        [(USER, "The garden gate squeaks")],
        scope=BEN,
    )
    # Ben carries on Anna's conversation: his message is his, hers stays hers.
    info = ConversationInfo(conversation_id="a", started_at=now, scope=ANNA)
    said = NewMessage(
        role=USER, content="garden shears please", created_at=now, scope=BEN
    )
    assert await log.save([(anna, info, [said])]) == [anna]
    assert [c.id for c in await log.conversations(scopes=(BEN,))] == [anna, ben]
    assert all(c.scope == BEN for c in await log.conversations(scopes=(BEN,)))
    found = await log.search(MessageQuery(text="garden", scopes=(BEN,)))
    assert sorted(hit.message.content for hit in found) == [
        "The garden gate squeaks",
        "garden shears please",
    ]
    assert all(hit.message.scope == BEN for hit in found)
    page = await log.page(ConversationQuery(scopes=(BEN,)))
    assert {entry.id for entry in page.items} == {anna, ben}
    assert all(entry.scope == BEN for entry in page.items)
    assert await log.entry(ben, (ANNA,)) is None
    assert await log.search(MessageQuery(text="squeaks", scopes=(ANNA,))) == []
    assert await log.search(MessageQuery(text="secret", scopes=(BEN,))) == []


async def test_the_digest_queue_states(backend: Side, clock: FakeClock) -> None:
    """Due, failed and backed off, deferred, done, skipped: alike on either."""
    log, queue, now = backend.log, backend.queue, now_of(clock)
    first = await talk(
        log,
        "q1",
        now - timedelta(hours=2),
        [(USER, "Remind me of the dentist")],
        ended=True,
    )
    second = await talk(
        log, "q2", now - timedelta(hours=1), [(USER, "Lights off")], ended=True
    )
    still = await talk(log, "q3", now - timedelta(minutes=1), [(USER, "Hello")])
    assert [p.id for p in await queue.due(now, idle_before=None)] == [first, second]
    idle = now - timedelta(minutes=10)
    assert [p.id for p in await queue.due(now, idle_before=idle)] == [first, second]
    assert await queue.count_waiting() == 3
    calls = backend.changes.calls
    retry = await queue.mark_failed(first, error="timeout", now=now)
    assert backend.changes.calls > calls
    assert retry > now
    failed = await queue.get(first)
    assert failed is not None
    assert (failed.state, failed.attempts, failed.error) == (
        DigestState.PENDING,
        1,
        "timeout",
    )
    assert [p.id for p in await queue.due(now, idle_before=None)] == [second]
    assert [p.id for p in await queue.due(retry, idle_before=None)] == [first, second]
    until = now + timedelta(hours=1)
    calls = backend.changes.calls
    await queue.defer(second, until, error="rate limited")
    assert backend.changes.calls > calls
    assert [p.id for p in await queue.due(now, idle_before=None)] == []
    deferred = await queue.get(second)
    assert deferred is not None
    assert deferred.attempts == 0
    assert deferred.next_at == until
    calls = backend.changes.calls
    await queue.mark_done(first, when=now)
    await queue.mark_skipped(second, when=now, reason=SkipReason.DEVICE_COMMANDS)
    assert backend.changes.calls >= calls + 2
    assert [p.id for p in await queue.due(until, idle_before=until)] == [still]
    assert await queue.still_waiting([first, second, still]) == {still}
    assert await queue.count_by_state() == {"done": 1, "pending": 1, "skipped": 1}
    skipped = await queue.get(second)
    assert skipped is not None
    assert (skipped.state, skipped.error) == (
        DigestState.SKIPPED,
        str(SkipReason.DEVICE_COMMANDS),
    )
    assert [p.id for p in await queue.find("q1")] == [first]


async def summary(backend: Side, conversation_id: str, text: str, scope: str) -> int:
    """Store digestion's summary of a conversation; its id."""
    added = await backend.store.add(
        NewMemory(
            content=text,
            type=MemoryType.SUMMARY,
            scope=scope,
            source=Source(origin=Origin.DIGESTION, conversation_id=conversation_id),
        )
    )
    return added.item.id


async def test_earlier_talks_read_through_either_store(
    backend: Side, clock: FakeClock
) -> None:
    """The speaker's own talks, a summary standing in, the satellite's household ones."""
    log, now = backend.log, now_of(clock)
    await talk(
        log,
        "a1",
        now - timedelta(minutes=40),
        [(USER, "Heat the guest room"), (ASSISTANT, "Heating."), (USER, "Thanks", BEN)],
        scope=ANNA,
    )
    await talk(
        log, "a2", now - timedelta(minutes=20), [(USER, "Call grandma")], scope=ANNA
    )
    await talk(
        log, "b1", now - timedelta(minutes=10), [(USER, "Ben's plan")], scope=BEN
    )
    await talk(
        log, "k1", now - timedelta(minutes=8), [(USER, "Dishes")], device_id=KITCHEN
    )
    await talk(
        log, "h1", now - timedelta(minutes=6), [(USER, "Garage")], device_id=HALL
    )
    await talk(log, "now", now - timedelta(minutes=1), [(USER, "Hi")], scope=ANNA)
    summary_id = await summary(backend, "a2", "Anna wants to call grandma", ANNA)
    await summary(backend, "a1", "Ben's summary of a1", BEN)

    async def talks(scope: str, device_id: str | None = None) -> list[tuple[str, str]]:
        found = await earlier_talks(
            backend.store,
            scope=scope,
            device_id=device_id,
            user_id=None,
            since=now - timedelta(hours=1),
            exclude="now",
            redact=False,
        )
        return [(talk.conversation_id, talk.text) for talk in found]

    assert await talks(ANNA) == [
        ("a2", "Anna wants to call grandma"),
        ("a1", "user: Heat the guest room; assistant: Heating."),
    ]
    found = await earlier_talks(
        backend.store,
        scope=ANNA,
        device_id=None,
        user_id=None,
        since=now - timedelta(hours=1),
        exclude=None,
        limit=2,
        redact=False,
    )
    assert [(t.conversation_id, t.summary_id) for t in found] == [
        ("now", None),
        ("a2", summary_id),
    ]
    assert found[0].at == now - timedelta(minutes=1)
    assert await talks(HOUSEHOLD, KITCHEN) == [("k1", "user: Dishes")]
    assert await talks(HOUSEHOLD) == []
    assert await talks(BEN) == [("b1", "user: Ben's plan")]


async def test_two_stores_never_both_get_one_conversation(
    postgres_database: str, clock: FakeClock
) -> None:
    """Two PostgresStores on one database: each due conversation goes to one queue."""
    stores = PgStores(postgres_database, clock)
    try:
        one, two = await stores.open(model=None), await stores.open(model=None)
        assert one.instance != two.instance
        log = (await side_of(one, is_postgres=True)).log
        now = now_of(clock)
        rows = [
            await talk(
                log, f"p{n}", now - timedelta(minutes=60 - n), [(USER, "x")], ended=True
            )
            for n in range(12)
        ]
        queues = [digest_queue(one), digest_queue(two)]
        ids: list[list[int]] = [[], []]
        for _ in range(5):
            got = await asyncio.gather(
                *(queue.due(now, idle_before=None, limit=8) for queue in queues)
            )
            ids = [[p.id for p in pending] for pending in got]
            # Never one conversation to both, and, asked at the same moment,
            # every due one to one of them: a queue that picked rows the
            # other claimed meanwhile asks again for what is left.
            assert not set(ids[0]) & set(ids[1])
            assert sorted(ids[0] + ids[1]) == rows
            # Oldest first, as SQLite's queue returns them.
            assert all(ids_ == sorted(ids_) for ids_ in ids)
        # Asked one after the other, they share every due conversation.
        ids = [
            [p.id for p in await queue.due(now, idle_before=None, limit=12)]
            for queue in queues
        ]
        assert not set(ids[0]) & set(ids[1])
        assert sorted(ids[0] + ids[1]) == rows
        # A queue's own claims stay its own until it marks them.
        first = ids[0][0]
        await queues[0].mark_done(first, when=now)
        again = await queues[1].due(now, idle_before=None, limit=12)
        assert first not in {p.id for p in again}
        assert set(ids[0]) - {first} <= set(rows) - {p.id for p in again}
    finally:
        await stores.close_all()
