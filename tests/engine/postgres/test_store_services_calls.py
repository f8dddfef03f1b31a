"""Every other call the integration makes of the log and queue, on both backends.

What `test_store_services.py` leaves out: a memory's source and what a
conversation gave (`source_of`, `produced`, the panel's `count`, `entry`
and `get_messages`), `messages_of` for the day files, retention and purges
(`purge_before`, `purge`, the store's erase listeners told), and the
queue's `speakers`, `language` and `waiting`: the same answers from the
log and queue `conversation_log` and `digest_queue` give either store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from custom_components.memory.engine import (
    ConversationInfo,
    MessageQuery,
    MessageRole,
    NewMemory,
    NewMessage,
    Origin,
    Source,
)
from custom_components.memory.engine.conversations import ConversationQuery
from tests.engine.conftest import FakeClock, StoreFactory
from tests.engine.postgres.services import ANNA, BEN, Side, now_of, side_of, talk
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


async def test_sources_gifts_counts_and_languages(
    backend: Side, clock: FakeClock
) -> None:
    """Where a memory came from, what a conversation gave, who spoke, in what language."""
    log, queue, now = backend.log, backend.queue, now_of(clock)
    start = now - timedelta(minutes=30)
    row = await talk(
        log, "c1", start, [(USER, "Ich mag Tee"), (ASSISTANT, "Gut.")], scope=ANNA
    )
    info = ConversationInfo(conversation_id="c1", started_at=start, scope=ANNA)
    later = start + timedelta(minutes=1)
    said = [
        NewMessage(
            role=USER, content="Ich auch", created_at=later, scope=BEN, language="de"
        ),
        NewMessage(
            role=USER,
            content="Wirklich",
            created_at=later + timedelta(seconds=1),
            scope=ANNA,
            language="de-AT",
        ),
    ]
    assert await log.save([(row, info, said)]) == [row]
    other = await talk(log, "c2", now - timedelta(minutes=5), [(USER, "Hi")], scope=BEN)
    messages = await log.messages(row)
    assert [m.scope for m in messages] == [ANNA, ANNA, BEN, ANNA]
    added = await backend.store.add(
        NewMemory(
            content="Anna mag Tee",
            scope=ANNA,
            message_id=messages[0].id,
            source=Source(origin=Origin.DIGESTION, conversation_id="c1"),
        )
    )
    item = added.item
    assert await log.source_of(item) == (row, messages[0].id)
    assert await log.produced([row, other], (ANNA,)) == {row: [item.id]}
    assert await log.produced([row, other], (BEN,)) == {}
    assert await log.count(ConversationQuery(scopes=(BEN,))) == 2
    assert await log.count(ConversationQuery(scopes=(ANNA,))) == 1
    entry = await log.entry(row, (BEN,))
    assert entry is not None
    assert (entry.scope, entry.first_message) == (BEN, messages[2].id)
    assert await log.entry(other, (ANNA,)) is None
    got = await log.get_messages([messages[1].id, messages[3].id, 10**9])
    assert sorted(got) == [messages[1].id, messages[3].id]
    assert got[messages[3].id].content == "Wirklich"
    of = await log.messages_of([row, other])
    assert [len(of[row]), len(of[other])] == [4, 1]
    assert await queue.speakers([row, other]) == {row: (ANNA, BEN), other: (BEN,)}
    assert await queue.language(row) == "de"
    assert await queue.language(other) == ""
    assert [p.id for p in await queue.waiting()] == [row, other]


async def test_purges_and_retention_tell_the_store(
    backend: Side, clock: FakeClock
) -> None:
    """Purged messages and retention go on either, and the erase listeners hear the scopes."""
    log, now = backend.log, now_of(clock)
    old = await talk(
        log,
        "old",
        now - timedelta(days=40),
        [(USER, "Old words")],
        scope=BEN,
        ended=True,
    )
    row = await talk(
        log,
        "new",
        now - timedelta(minutes=5),
        [(USER, "One"), (USER, "Two")],
        scope=ANNA,
    )
    messages = await log.messages(row)
    calls = backend.changes.calls
    assert await log.purge([messages[0].id, 10**9]) == [messages[0].id]
    assert backend.changes.calls > calls
    assert [m.content for m in await log.messages(row)] == ["Two"]
    assert backend.heard == [frozenset({ANNA})]
    assert await log.purge([]) == []
    assert await log.purge_before(now - timedelta(days=30)) == 1
    assert [c.id for c in await log.conversations()] == [row]
    assert old not in await log.messages_of([old])
    assert backend.heard == [frozenset({ANNA}), frozenset({BEN})]
    assert await log.purge_before(now - timedelta(days=30)) == 0
    assert len(backend.heard) == 2


async def test_a_search_by_words_scores_alike_on_both(
    postgres_database: str, store_factory: StoreFactory, clock: FakeClock
) -> None:
    """Keyword hits: the same messages, order and scores from SQLite and PostgreSQL."""
    stores = PgStores(postgres_database, clock)
    try:
        sides = [
            await side_of(await store_factory(model=None), is_postgres=False),
            await side_of(await stores.open(model=None), is_postgres=True),
        ]
        now = now_of(clock)
        said = [
            "The garden gate squeaks again",
            "Water the garden and the roses",
            "Roses need water every morning in summer",
            "Order new garden gloves",
            "Gardening books for the library",
        ]
        german = [
            "Das Gartentor quietscht",
            "Wir brauchen Gartenhandschuhe",
            "Der Geburtstagskuchen ist fertig",
            "Kuchen backen",
        ]
        queries = (
            MessageQuery(text="garden roses"),
            MessageQuery(text="water", scopes=(ANNA,)),
            MessageQuery(text="garden", min_score=0.9, limit=2),
            MessageQuery(text="gardens", scopes=(BEN,), language="en"),
            # Compounds: a word's parts, a head matched as a prefix.
            MessageQuery(text="Garten", language="de"),
            MessageQuery(text="Kuchen", language="de-DE"),
            MessageQuery(text="Geburtstag", language="de"),
        )
        found = []
        for side in sides:
            for n, text in enumerate(said):
                scope = ANNA if n % 2 else BEN
                at = now - timedelta(minutes=n)
                await talk(side.log, f"s{n}", at, [(USER, text)], scope=scope)
            for n, text in enumerate(german):
                at = now - timedelta(minutes=10 + n)
                await talk(side.log, f"d{n}", at, [(USER, text)], language="de")
            found.append(
                [
                    [
                        (hit.message.content, round(hit.score, 9))
                        for hit in await side.log.search(query)
                    ]
                    for query in queries
                ]
            )
        assert found[0] == found[1]
        assert found[0][0][0][0] == "Water the garden and the roses"
        assert all(found[0])
        assert [content for content, _score in found[0][4]] == [
            "Das Gartentor quietscht",
            "Wir brauchen Gartenhandschuhe",
        ]
        assert [content for content, _score in found[0][6]] == [
            "Der Geburtstagskuchen ist fertig"
        ]
    finally:
        await stores.close_all()
