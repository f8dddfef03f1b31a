"""Tests of the Markdown mirror: escaping, rendering, and the reads behind it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    MemoryItem,
    MemoryStore,
    MemoryType,
    MessageRole,
    NewMessage,
)
from custom_components.memory.engine.export import (
    active_memories,
    changed_since,
    conversations_with_messages,
    escape_markdown,
    group_by_day,
    memory_scopes,
    render_day,
    render_memories,
)

from .conftest import FakeClock, StoreFactory, memory

ANNA = "person.anna"
BEN = "person.ben"
BERLIN = ZoneInfo("Europe/Berlin")


def label(scope: str) -> str:
    """Name scopes the way the integration does: household, or a person's name."""
    return scope if scope == HOUSEHOLD else scope.partition(".")[2].title()


@pytest.fixture
async def store(store_factory: StoreFactory) -> MemoryStore:
    """Open a keyword-only store: the mirror never reads vectors."""
    return await store_factory(model=None)


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("Mia is allergic to nuts.", "Mia is allergic to nuts."),
        ("# Owned\nNew heading", "\\# Owned New heading"),
        ("[click](http://evil.example)", "\\[click\\](http://evil.example)"),
        ("![img](x.png)", "\\!\\[img\\](x.png)"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        (
            "**bold** _it_ `code` ~~s~~",
            "\\*\\*bold\\*\\* \\_it\\_ \\`code\\` \\~\\~s\\~\\~",
        ),
        ("- a list item", "\\- a list item"),
        ("1. first", "1\\. first"),
        ("=== setext", "\\=== setext"),
        ("a | b", "a \\| b"),
        ("Tom & Jerry \\ back", "Tom &amp; Jerry \\\\ back"),
        ("line\u2028two\u202eRTL", "line two RTL"),
    ],
)
def test_escape_markdown(text: str, escaped: str) -> None:
    """Stored text renders as itself: no heading, link, image, HTML or list."""
    assert escape_markdown(text) == escaped


async def test_render_memories(store: MemoryStore, clock: FakeClock) -> None:
    """MEMORY.md groups by scope (household first) and type, oldest first."""
    await store.add(memory("Bins go out on Thursday"))
    clock.advance(60)
    await store.add(memory("Anna likes tea", type=MemoryType.PREFERENCE, scope=ANNA))
    await store.add(memory("Family of four", type=MemoryType.PROFILE))
    await store.add(
        memory(
            "# Fake heading\n## another",
            tags=("kids",),
            expires_at=datetime(2026, 2, 1, tzinfo=UTC),
        )
    )
    clock.advance(86_400)
    await store.add(memory("Always answer briefly", type=MemoryType.INSTRUCTION))
    now = datetime.fromtimestamp(clock.now, UTC)
    items = await active_memories(store, None, now=now)
    text = render_memories(items, label=label, exported_at=now, timezone=BERLIN)

    assert text == (
        "# Memory\n"
        "\n"
        "Active memories exported 2026-01-02 01:01: 5.\n"
        "\n"
        "## household\n"
        "\n"
        "### Profile\n"
        "\n"
        "- Family of four (\\#3, 2026-01-01)\n"
        "\n"
        "### Instructions\n"
        "\n"
        "- Always answer briefly (\\#5, 2026-01-02)\n"
        "\n"
        "### Facts\n"
        "\n"
        "- Bins go out on Thursday (\\#1, 2026-01-01)\n"
        "- \\# Fake heading \\#\\# another (\\#4, 2026-01-01; tags: kids; "
        "until 2026-02-01)\n"
        "\n"
        "## Anna\n"
        "\n"
        "### Preferences\n"
        "\n"
        "- Anna likes tea (\\#2, 2026-01-01)\n"
    )
    # No line of stored text starts a heading of its own.
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == [
        "# Memory",
        "## household",
        "### Profile",
        "### Instructions",
        "### Facts",
        "## Anna",
        "### Preferences",
    ]


async def test_active_memories_filters(store: MemoryStore, clock: FakeClock) -> None:
    """Only active, unexpired memories of the scopes and types asked for."""
    kept = (await store.add(memory("Household fact"))).item
    anna = (await store.add(memory("Anna fact", scope=ANNA))).item
    ben = (await store.add(memory("Ben fact", scope=BEN))).item
    gone = (await store.add(memory("Forgotten fact"))).item
    await store.forget([gone.id])
    soon = datetime.fromtimestamp(clock.now + 60, UTC)
    expiring = (await store.add(memory("Expiring", expires_at=soon))).item
    summary = (await store.add(memory("A summary", type=MemoryType.SUMMARY))).item
    now = datetime.fromtimestamp(clock.now, UTC)

    def ids(items: list[MemoryItem]) -> list[int]:
        return [item.id for item in items]

    everything = await active_memories(store, None, now=now)
    assert ids(everything) == [kept.id, anna.id, ben.id, expiring.id, summary.id]
    mine = await active_memories(store, (HOUSEHOLD, ANNA), now=now)
    assert ids(mine) == [kept.id, anna.id, expiring.id, summary.id]
    facts = await active_memories(
        store, (HOUSEHOLD,), types=(MemoryType.FACT,), now=now
    )
    assert ids(facts) == [kept.id, expiring.id]
    later = now + timedelta(minutes=5)
    assert expiring.id not in ids(await active_memories(store, None, now=later))
    assert await active_memories(store, (), now=now) == []
    assert await active_memories(store, None, types=(), now=now) == []
    assert await memory_scopes(store) == [HOUSEHOLD, ANNA, BEN]


async def test_changed_since(store: MemoryStore, clock: FakeClock) -> None:
    """Additions and forgettings after a time count; other scopes and types do not."""
    first = (await store.add(memory("One", scope=ANNA))).item
    await store.add(memory("Summary", scope=ANNA, type=MemoryType.SUMMARY))
    await store.add(memory("Household"))
    types = (MemoryType.FACT,)
    assert await changed_since(store, ANNA, None, types=types) == 1
    mark = datetime.fromtimestamp(clock.now, UTC)
    assert await changed_since(store, ANNA, mark, types=types) == 0
    clock.advance(10)
    await store.add(memory("Two", scope=ANNA))
    await store.forget([first.id])
    assert await changed_since(store, ANNA, mark, types=types) == 2
    assert await changed_since(store, BEN, None, types=types) == 0


async def test_conversations_by_day(store: MemoryStore) -> None:
    """Messages split into local days; other scopes stay out; escaping holds."""
    log = ConversationLog(store)
    late = datetime(2026, 3, 14, 22, 50, tzinfo=UTC)  # 23:50 in Berlin

    def said(
        text: str, minutes: float, role: MessageRole = MessageRole.USER, **kw: object
    ) -> NewMessage:
        return NewMessage(
            role=role,
            content=text,
            created_at=late + timedelta(minutes=minutes),
            **kw,  # type: ignore[arg-type]
        )

    await log.save(
        [
            (
                None,
                ConversationInfo(
                    conversation_id="c1",
                    started_at=late,
                    scope=ANNA,
                    agent_id="conversation.ollama",
                    user_id="anna-user",
                ),
                [
                    said("Remind me: <b>tea</b> #1", 0, scope=ANNA),
                    said("", 1, MessageRole.ASSISTANT, scope=ANNA, data='{"x": 1}'),
                    said(
                        "x" * 400,
                        2,
                        MessageRole.TOOL_RESULT,
                        scope=ANNA,
                        tool_name="memory__add",
                    ),
                    said("Good night", 15, MessageRole.ASSISTANT, scope=ANNA),
                ],
            ),
            (
                None,
                ConversationInfo(conversation_id="c2", started_at=late, scope=BEN),
                [said("Ben's secret plans", 5, scope=BEN)],
            ),
        ]
    )
    found = await conversations_with_messages(log, (HOUSEHOLD, ANNA))
    assert [conv.conversation_id for conv, _ in found] == ["c1"]
    days = group_by_day(found, BERLIN)
    assert [day.file_name for day in days] == ["2026-03-14.md", "2026-03-15.md"]
    first = render_day(days[0], label=label, timezone=BERLIN)
    assert first.startswith(
        "# Conversations on 2026-03-14\n\n## 23:50, Anna, agent conversation.ollama\n\n"
        "- 23:50:00 **User**: Remind me: &lt;b&gt;tea&lt;/b&gt; \\#1\n"
        '- 23:51:00 **Assistant**: \\[tool call\\] {"x": 1}\n'
        "- 23:52:00 **Tool result (memory\\_\\_add)**: "
    )
    assert first.endswith("…\n")
    assert len(first.splitlines()[-1]) < 360
    second = render_day(days[1], label=label, timezone=BERLIN)
    assert second == (
        "# Conversations on 2026-03-15\n\n## 00:05, Anna, agent conversation.ollama\n\n"
        "- 00:05:00 **Assistant**: Good night\n"
    )
    everyone = await conversations_with_messages(log, None)
    assert {conv.conversation_id for conv, _ in everyone} == {"c1", "c2"}
    assert "Ben's secret plans" not in first + second


async def test_interleaved_conversations_over_days(store: MemoryStore) -> None:
    """Messages read in one go land in their own conversation, day and order.

    Two conversations talk at once and go on the next day (their message ids
    interleave, as appends do), a third starts in between: every day file
    orders conversations by their first message, and messages by time.
    """
    log = ConversationLog(store)
    morning = datetime(2026, 3, 14, 8, 0, tzinfo=UTC)  # 09:00 in Berlin

    def said(text: str, minutes: float, **kw: object) -> NewMessage:
        return NewMessage(
            role=MessageRole.USER,
            content=text,
            created_at=morning + timedelta(minutes=minutes),
            **kw,  # type: ignore[arg-type]
        )

    kitchen = ConversationInfo(conversation_id="kitchen", started_at=morning)
    hall = ConversationInfo(
        conversation_id="hall",
        started_at=morning + timedelta(minutes=1),
        agent_id="conversation.ollama",
    )
    first, second = await log.save(
        [
            (None, kitchen, [said("k1 lights on", 0), said("k2 coffee", 2)]),
            (None, hall, [said("h1 heating up", 1), said("h2 door locked", 3)]),
        ]
    )
    next_day = 24 * 60
    await log.save(
        [
            (first, kitchen, [said("k3 breakfast", next_day + 60)]),
            (second, hall, [said("h3 mail", next_day + 30)]),
            (
                None,
                ConversationInfo(
                    conversation_id="bedroom",
                    started_at=morning + timedelta(minutes=next_day + 45),
                ),
                [said("b1 blinds up", next_day + 45)],
            ),
            (second, hall, [said("h4 secret", next_day + 31, scope=BEN)]),
        ]
    )

    found = await conversations_with_messages(log, (HOUSEHOLD,))
    # The same as reading each conversation alone (newest first), less BEN's.
    alone = [
        (conv, [m for m in await log.messages(conv.id) if m.scope == HOUSEHOLD])
        for conv in await log.conversations(limit=10)
    ]
    assert found == alone
    assert [conv.conversation_id for conv, _ in found] == ["kitchen", "bedroom", "hall"]

    saturday, sunday = (
        render_day(day, label=label, timezone=BERLIN)
        for day in group_by_day(found, BERLIN)
    )
    assert saturday == (
        "# Conversations on 2026-03-14\n\n"
        "## 09:00, household\n\n"
        "- 09:00:00 **User**: k1 lights on\n"
        "- 09:02:00 **User**: k2 coffee\n\n"
        "## 09:01, household, agent conversation.ollama\n\n"
        "- 09:01:00 **User**: h1 heating up\n"
        "- 09:03:00 **User**: h2 door locked\n"
    )
    assert sunday == (
        "# Conversations on 2026-03-15\n\n"
        "## 09:30, household, agent conversation.ollama\n\n"
        "- 09:30:00 **User**: h3 mail\n\n"
        "## 09:45, household\n\n"
        "- 09:45:00 **User**: b1 blinds up\n\n"
        "## 10:00, household\n\n"
        "- 10:00:00 **User**: k3 breakfast\n"
    )


async def test_messages_of_many_conversations(store: MemoryStore) -> None:
    """More conversations than one query's chunk: each gets exactly its own."""
    log = ConversationLog(store)
    start = datetime(2026, 3, 14, 8, 0, tzinfo=UTC)
    keys = await log.save(
        [
            (
                None,
                ConversationInfo(conversation_id=f"c{i}", started_at=start),
                [
                    NewMessage(
                        role=MessageRole.USER,
                        content=f"message {i}.{n}",
                        created_at=start + timedelta(seconds=i),
                    )
                    for n in range(i % 3)
                ],
            )
            for i in range(1100)
        ]
    )
    found = await log.messages_of([*keys, *keys[:5]])
    # A conversation without messages is absent; the others hold theirs.
    assert len(found) == len([i for i in range(1100) if i % 3])
    for i, key in enumerate(keys):
        assert [m.content for m in found.get(key, [])] == [
            f"message {i}.{n}" for n in range(i % 3)
        ]
    assert await log.messages_of([]) == {}
