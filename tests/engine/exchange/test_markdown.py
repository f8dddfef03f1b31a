"""Tests of the Markdown mirror: escaping, rendering, and the reads behind it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    ExportNotErasedError,
    MemoryItem,
    MemoryStore,
    MemoryType,
    MessageRole,
    NewMessage,
)
from custom_components.memory.engine.exchange.export_files import (
    folder_name,
    remove_export,
    write_export,
    write_private,
    written_exports,
)
from custom_components.memory.engine.exchange.markdown import (
    active_memories,
    changed_since,
    conversations_with_messages,
    escape_markdown,
    group_by_day,
    memory_scopes,
    render_day,
    render_memories,
)
from tests.engine.conftest import FakeClock, StoreFactory, memory

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


# -- erasing: the store tells the mirror what went ------------------------


async def test_purge_tells_erase_listeners(store: MemoryStore) -> None:
    """A purge awaits the listeners with the scopes erased, once committed."""
    told: list[tuple[frozenset[str], list[int]]] = []

    async def listener(scopes: frozenset[str]) -> None:
        # Committed: a read from the mirror's side no longer finds them.
        kept = await active_memories(store, None, now=datetime.now(UTC))
        told.append((scopes, [item.id for item in kept]))

    remove = store.add_erase_listener(listener)
    house = (await store.add(memory("The garage door code is 7731"))).item.id
    anna = (await store.add(memory("Anna's PIN is 0552", scope=ANNA))).item.id
    kept = (await store.add(memory("Bins go out on Thursday"))).item.id
    await store.forget([house])
    assert told == []  # archived, not erased

    await store.forget([house, anna], purge=True)
    assert told == [(frozenset({HOUSEHOLD, ANNA}), [kept])]
    remove()
    await store.forget([kept], purge=True)
    assert len(told) == 1


async def test_message_erasures_tell_erase_listeners(store: MemoryStore) -> None:
    """Purging messages and retention tell the scopes of the messages erased."""
    told: list[frozenset[str]] = []

    async def listener(scopes: frozenset[str]) -> None:
        told.append(scopes)

    store.add_erase_listener(listener)
    log = ConversationLog(store)
    start = datetime(2026, 3, 14, 9, tzinfo=UTC)
    [key] = await log.save(
        [
            (
                None,
                ConversationInfo(conversation_id="c1", started_at=start, scope=ANNA),
                [
                    NewMessage(
                        role=MessageRole.USER,
                        content=f"message {i}",
                        created_at=start + timedelta(minutes=i),
                        scope=(ANNA, BEN, HOUSEHOLD)[i],
                    )
                    for i in range(3)
                ],
            )
        ]
    )
    ids = [message.id for message in await log.messages(key)]
    assert await log.purge([ids[1], 123_456]) == [ids[1]]
    assert told == [frozenset({BEN})]
    assert await log.purge([123_456]) == []
    assert await log.purge_before(start) == 0
    assert len(told) == 1  # nothing erased, nothing told
    assert await log.purge_before(start + timedelta(hours=1)) == 2
    assert told[1] == frozenset({ANNA, HOUSEHOLD})


async def test_erase_listener_failure_reaches_the_caller(store: MemoryStore) -> None:
    """A copy a listener could not erase is the caller's error; the purge stands."""

    async def listener(scopes: frozenset[str]) -> None:
        raise ExportNotErasedError("copies left", folder="/x", error="denied")

    store.add_erase_listener(listener)
    item = (await store.add(memory("The garage door code is 7731"))).item.id
    with pytest.raises(ExportNotErasedError) as err:
        await store.forget([item], purge=True)
    assert err.value.key == "export_not_erased"
    assert await store.get(item) is None


# -- the files -------------------------------------------------------------


def test_written_exports_reads_folder_names_back(tmp_path: Path) -> None:
    """Every audience's folder is found with whose it is; nothing else is."""
    base = tmp_path / "export"
    assert written_exports(base) == []
    audiences: list[tuple[str, ...]] = [(), (ANNA,), (ANNA, BEN)]
    for persons in audiences:
        write_export(base / folder_name(persons), "# Memory\n", {})
    assert folder_name(()) == HOUSEHOLD
    assert folder_name((ANNA, BEN)) == "person.anna+person.ben"
    # Not audiences: a person folder never exported, other names, files.
    (base / "person.carl").mkdir()
    (base / "notes").mkdir()
    (base / "notes" / "MEMORY.md").write_text("mine")
    (base / "person.dora").write_text("a file")
    assert written_exports(base) == [
        ((), base / HOUSEHOLD),
        ((ANNA,), base / ANNA),
        ((ANNA, BEN), base / "person.anna+person.ben"),
    ]
    write_export(base, "# Memory\n", {})
    assert written_exports(base)[0] == (None, base)


def test_write_private_leaves_nothing_half_written(tmp_path: Path) -> None:
    """A write that fails part-way leaves the old file and no temporary copy."""
    path = tmp_path / "MEMORY.md"
    write_private(path, "old text\n")
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    # A lone surrogate cannot be encoded: the write fails after it started.
    with pytest.raises(UnicodeEncodeError):
        write_private(path, "The garage door code is 7731 \ud800")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]
    assert path.read_text() == "old text\n"


def test_write_and_remove_export(tmp_path: Path) -> None:
    """Days gone and temporary files go; the user's own files stay."""
    folder = tmp_path / ANNA
    days = {"2026-03-10.md": "ten\n", "2026-03-11.md": "eleven\n"}
    written = write_export(folder, "memories\n", days)
    conversations = folder / "conversations"
    assert written == [
        folder / "MEMORY.md",
        conversations / "2026-03-10.md",
        conversations / "2026-03-11.md",
    ]
    for name in ("2026-03-09.md.tmp", "tmpab_cd123", "notes.md"):
        (conversations / name).write_text("old")
    (conversations / "2026-03-01.md").mkdir()  # not ours to remove
    assert write_export(folder, "memories\n", {"2026-03-11.md": "eleven\n"}) == [
        folder / "MEMORY.md",
        conversations / "2026-03-11.md",
    ]
    assert sorted(p.name for p in conversations.iterdir()) == [
        "2026-03-01.md",
        "2026-03-11.md",
        "notes.md",
    ]
    remove_export(folder)
    assert sorted(p.name for p in conversations.iterdir()) == [
        "2026-03-01.md",
        "notes.md",
    ]
    assert not (folder / "MEMORY.md").exists()
    (conversations / "notes.md").unlink()
    (conversations / "2026-03-01.md").rmdir()
    remove_export(folder)
    assert not folder.exists()
    remove_export(folder)  # nothing there: nothing to do
