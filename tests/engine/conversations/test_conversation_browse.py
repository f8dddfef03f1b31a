"""Tests of the panel's conversation pages: states, scopes, what each gave, sources."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    MemoryStore,
    MessageRole,
    NewMessage,
    Origin,
    Source,
)
from custom_components.memory.engine.conversations.browse import ConversationQuery
from custom_components.memory.engine.digestion.queue import DigestQueue, SkipReason
from custom_components.memory.engine.errors import PageCursorError
from tests.engine.conftest import FakeClock, StoreFactory, memory

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
ANNA = "person.anna"
BEN = "person.ben"


def at(minutes: float) -> datetime:
    """Return the time `minutes` after T0."""
    return T0 + timedelta(minutes=minutes)


def said(
    content: str,
    minutes: float,
    scope: str = HOUSEHOLD,
    role: MessageRole = MessageRole.USER,
) -> NewMessage:
    """Make a message said `minutes` after T0."""
    return NewMessage(role=role, content=content, created_at=at(minutes), scope=scope)


@pytest.fixture
async def store(store_factory: StoreFactory) -> MemoryStore:
    """Open a keyword-only store."""
    return await store_factory(model=None)


@pytest.fixture
def log(store: MemoryStore) -> ConversationLog:
    """Make the conversation log on the test's store."""
    return ConversationLog(store)


async def talk(
    log: ConversationLog,
    conversation_id: str,
    minutes: float,
    *messages: tuple[str, str],
) -> int:
    """Save a conversation started `minutes` after T0: (scope, text) user turns with replies."""
    batch: list[NewMessage] = []
    for step, (scope, text) in enumerate(messages):
        batch.append(said(text, minutes + step, scope))
        batch.append(said("OK.", minutes + step + 0.1, scope, MessageRole.ASSISTANT))
    [row] = await log.save(
        [
            (
                None,
                ConversationInfo(
                    conversation_id=conversation_id,
                    started_at=at(minutes),
                    scope=messages[0][0],
                ),
                batch,
            )
        ]
    )
    return row


async def test_pages_newest_first_with_states(
    log: ConversationLog, store: MemoryStore
) -> None:
    """Each conversation says where digestion is; pages go newest first and stay put."""
    queue = DigestQueue(store)
    waiting = await talk(log, "c-1", 0, (HOUSEHOLD, "The bins go out on Thursday"))
    done = await talk(log, "c-2", 10, (HOUSEHOLD, "Grandma visits in May"))
    skipped = await talk(log, "c-3", 20, (HOUSEHOLD, "Turn on the light"))
    failed = await talk(log, "c-4", 30, (HOUSEHOLD, "We are going to Rome"))
    await queue.mark_done(done, when=at(11))
    await queue.mark_skipped(skipped, when=at(21), reason=SkipReason.DEVICE_COMMANDS)
    await queue.mark_failed(failed, error="timeout", now=at(31))

    first = await log.page(ConversationQuery(limit=2))
    assert [entry.id for entry in first.items] == [failed, skipped]
    assert first.total == 4
    assert first.cursor is not None
    # A conversation started meanwhile does not shift the next page.
    await talk(log, "c-5", 40, (HOUSEHOLD, "A new one"))
    second = await log.page(ConversationQuery(limit=2, cursor=first.cursor))
    assert [entry.id for entry in second.items] == [done, waiting]
    assert second.cursor is None

    entries = {entry.id: entry for entry in (*first.items, *second.items)}
    assert entries[waiting].status == "waiting"
    assert entries[done].status == "done"
    assert entries[skipped].status == "skipped"
    assert entries[skipped].reason == "device_commands"
    assert entries[failed].status == "failed"
    assert entries[failed].reason == "timeout"
    assert entries[failed].attempts == 1
    retry = entries[failed].retry_at
    assert retry is not None
    assert retry > at(31)
    assert entries[waiting].messages == 2
    assert entries[waiting].first_message is not None

    only = await log.page(ConversationQuery(statuses=("skipped", "failed")))
    assert {entry.id for entry in only.items} == {skipped, failed}
    assert only.total == 2
    dated = await log.page(ConversationQuery(since=at(10), until=at(30)))
    assert [entry.id for entry in dated.items] == [skipped, done]


async def test_new_messages_after_digestion_wait_again(
    log: ConversationLog, store: MemoryStore
) -> None:
    """A digested conversation that went on waits again."""
    row = await talk(log, "c-1", 0, (HOUSEHOLD, "The bins go out on Thursday"))
    await DigestQueue(store).mark_done(row, when=at(1))
    assert (await log.entry(row, None)).status == "done"  # type: ignore[union-attr]
    conversation = ConversationInfo(conversation_id="c-1", started_at=at(0))
    await log.save([(row, conversation, [said("And the paper on Friday", 5)])])
    assert (await log.entry(row, None)).status == "waiting"  # type: ignore[union-attr]


async def test_scopes_decide_what_is_listed_and_counted(log: ConversationLog) -> None:
    """Another person's conversation, and their part of a shared one, stay out."""
    mine = await talk(log, "c-anna", 0, (ANNA, "My shoes are size 39"))
    theirs = await talk(log, "c-ben", 10, (BEN, "Plan a surprise party"))
    shared = await talk(
        log, "c-both", 20, (BEN, "Ben's secret plan"), (ANNA, "Anna's reply")
    )
    scopes = (HOUSEHOLD, ANNA)
    page = await log.page(ConversationQuery(scopes=scopes))
    assert [entry.id for entry in page.items] == [shared, mine]
    assert page.total == 2
    both = page.items[0]
    # Shown as Anna's, with her two messages only, her words as the preview.
    assert both.scope == ANNA
    assert both.messages == 2
    assert both.first_message is not None
    assert both.first_message > min(
        m.id for m in await log.messages(shared) if m.scope == BEN
    )
    assert await log.entry(theirs, scopes) is None
    assert (await log.page(ConversationQuery(scopes=()))).items == []


async def test_what_a_conversation_gave_and_where_a_memory_came_from(
    log: ConversationLog, store: MemoryStore, clock: FakeClock
) -> None:
    """Digested memories point at their message; a tool's at what was said before it."""
    # The memories are added half a minute into the conversation.
    clock.advance(at(0.5).timestamp() - clock())
    row = await talk(
        log,
        "c-1",
        0,
        (HOUSEHOLD, "The bins go out on Thursday"),
        (ANNA, "I am allergic to nuts"),
    )
    messages = await log.messages(row)
    cited = messages[2]  # Anna's turn
    digested = await store.add(
        memory(
            "Anna is allergic to nuts",
            scope=ANNA,
            message_id=cited.id,
            source=Source(origin=Origin.DIGESTION, conversation_id="c-1"),
        )
    )
    tooled = await store.add(
        memory(
            "The bins go out on Thursday",
            source=Source(origin=Origin.TOOL, conversation_id="c-1"),
        )
    )
    unrelated = await store.add(memory("Something from an action"))
    gave = await log.produced([row], None)
    assert gave == {row: sorted([digested.item.id, tooled.item.id])}
    # Within the household's reach only the household's memory counts.
    assert await log.produced([row], (HOUSEHOLD,)) == {row: [tooled.item.id]}
    assert await log.source_of(digested.item) == (row, cited.id)
    # Said before the tool added it: the first user turn.
    assert await log.source_of(tooled.item) == (row, messages[0].id)
    assert await log.source_of(unrelated.item) is None


async def test_erase_removes_only_reachable_messages(log: ConversationLog) -> None:
    """Erasing within a reach keeps another person's part; erasing all drops the row."""
    row = await talk(log, "c-both", 0, (BEN, "Ben's plan"), (ANNA, "Anna's reply"))
    erased = await log.erase(row, (HOUSEHOLD, ANNA))
    assert len(erased) == 2
    left = await log.messages(row)
    assert {message.scope for message in left} == {BEN}
    assert await log.entry(row, None) is not None
    await log.erase(row, None)
    assert await log.entry(row, None) is None
    assert (await log.page(ConversationQuery())).total == 0


async def test_a_bad_cursor_is_refused(log: ConversationLog) -> None:
    """A cursor the page did not write is refused, not run."""
    with pytest.raises(PageCursorError):
        await log.page(ConversationQuery(cursor="not-a-cursor"))
