"""Tests of the conversation log: saving, search, privacy by scope, erasing."""

from __future__ import annotations

from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
import sqlite3

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    SCHEMA_VERSION,
    ConversationInfo,
    ConversationLog,
    InvalidInputError,
    InvalidLimitError,
    InvalidScopeError,
    MemoryStore,
    MessageQuery,
    MessageRole,
    NewMessage,
)
from custom_components.memory.engine.conversations.records import (
    MAX_MESSAGE_CHARS,
    TRUNCATED_MARK,
)
from custom_components.memory.engine.search.keywords import MATCH_BUDGET
from tests.engine.conftest import StoreFactory

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
ANNA = "person.anna"
BEN = "person.ben"


def at(minutes: float) -> datetime:
    """Return the time `minutes` after T0."""
    return T0 + timedelta(minutes=minutes)


def info(conversation_id: str = "conv-1", **kwargs: object) -> ConversationInfo:
    """Make a conversation started at T0, in the household unless told otherwise."""
    kwargs.setdefault("started_at", T0)
    return ConversationInfo(conversation_id=conversation_id, **kwargs)  # type: ignore[arg-type]


def message(
    content: str,
    role: MessageRole = MessageRole.USER,
    minutes: float = 0,
    **kwargs: object,
) -> NewMessage:
    """Make a message said `minutes` after T0."""
    return NewMessage(role=role, content=content, created_at=at(minutes), **kwargs)  # type: ignore[arg-type]


def file_bytes(path: Path) -> bytes:
    """Read the database file and its write-ahead log, if any."""
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def sql(path: Path, statement: str, *args: object) -> list[tuple[object, ...]]:
    """Run one statement on a separate plain sqlite3 connection."""
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute(statement, args).fetchall()
    return [tuple(row) for row in rows]


@pytest.fixture
async def store(store_factory: StoreFactory) -> MemoryStore:
    """Open a keyword-only store (vectors: test_message_vectors.py)."""
    return await store_factory(model=None)


@pytest.fixture
def log(store: MemoryStore) -> ConversationLog:
    """Make the conversation log on the test's store."""
    return ConversationLog(store)


async def test_migration_creates_tables(store: MemoryStore, db_path: Path) -> None:
    """The log's tables come from the last migration, with the FTS tokenizer."""
    assert SCHEMA_VERSION >= 2
    tables = {row[0] for row in sql(db_path, "SELECT name FROM sqlite_master")}
    assert {"conversations", "conversation_messages", "conversation_messages_fts"} <= (
        tables
    )
    ddl = sql(
        db_path,
        "SELECT sql FROM sqlite_master WHERE name = 'conversation_messages_fts'",
    )
    assert "remove_diacritics 2" in str(ddl[0][0])


async def test_save_and_read_back(log: ConversationLog, store: MemoryStore) -> None:
    """A conversation and its messages come back as saved, in order."""
    changes: list[None] = []
    store.add_listener(lambda: changes.append(None))
    conversation = info(
        scope=ANNA, agent_id="conversation.test", user_id="u-anna", device_id="d-1"
    )
    [key] = await log.save(
        [
            (
                None,
                conversation,
                [
                    message("Turn on the café lights", scope=ANNA, user_id="u-anna"),
                    message(
                        "",
                        MessageRole.ASSISTANT,
                        0.1,
                        scope=ANNA,
                        data='[{"tool_name": "HassTurnOn"}]',
                        agent_id="conversation.test",
                    ),
                    message(
                        "",
                        MessageRole.TOOL_RESULT,
                        0.2,
                        scope=ANNA,
                        data='{"success": true}',
                        tool_name="HassTurnOn",
                        tool_call_id="call-1",
                    ),
                    message("Done.", MessageRole.ASSISTANT, 0.3, scope=ANNA),
                ],
            )
        ]
    )
    assert changes == [None]

    messages = await log.messages(key)
    assert [m.role for m in messages] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL_RESULT,
        MessageRole.ASSISTANT,
    ]
    first = messages[0]
    assert first.conversation == key
    assert first.conversation_id == "conv-1"
    assert first.content == "Turn on the café lights"
    assert first.scope == ANNA
    assert first.user_id == "u-anna"
    assert first.created_at == T0
    assert messages[2].tool_name == "HassTurnOn"
    assert messages[2].tool_call_id == "call-1"
    assert messages[2].as_dict()["data"] == '{"success": true}'
    assert "tool_name" not in first.as_dict()
    assert "data" not in first.as_dict()
    assert first.as_dict()["created_at"] == T0.isoformat()

    [stored] = await log.conversations()
    assert stored.id == key
    assert stored.scope == ANNA
    assert stored.agent_id == "conversation.test"
    assert stored.device_id == "d-1"
    assert stored.started_at == T0
    assert stored.updated_at == at(0.3)
    assert stored.ended_at is None
    assert stored.messages == 4

    # More messages and the end, on the same row.
    assert await log.save(
        [
            (
                key,
                info(scope=ANNA, ended_at=at(10)),
                [message("Thanks", minutes=1, scope=ANNA)],
            )
        ]
    ) == [key]
    [stored] = await log.conversations()
    assert stored.messages == 5
    assert stored.ended_at == at(10)
    assert stored.updated_at == at(10)
    assert await log.conversations(ended=False) == []
    assert [c.id for c in await log.conversations(ended=True)] == [key]
    assert await log.conversations(scopes=(BEN,)) == []
    assert await log.conversations(scopes=()) == []
    assert await log.conversations(since=at(11)) == []
    assert len(await log.conversations(scopes=(ANNA,), since=at(5))) == 1


async def test_reused_conversation_id_is_a_new_row(log: ConversationLog) -> None:
    """Home Assistant may reuse an id after a session ended: a new row."""
    [first] = await log.save([(None, info(ended_at=at(5)), [message("one")])])
    [second] = await log.save(
        [(None, info(started_at=at(60)), [message("two", minutes=60)])]
    )
    assert second != first
    assert [c.id for c in await log.conversations()] == [second, first]


async def test_save_to_erased_row_starts_again(log: ConversationLog) -> None:
    """A row erased meanwhile (retention) is started anew, not lost."""
    [key] = await log.save([(None, info(), [message("old words")])])
    assert await log.purge_before(at(1)) == 1
    assert await log.conversations() == []
    [again] = await log.save([(key, info(), [message("new words", minutes=2)])])
    assert again != key
    assert [m.content for m in await log.messages(again)] == ["new words"]
    # Only an end to record, and the row is gone: nothing is written.
    assert await log.purge_before(at(5)) == 1
    assert await log.save([(again, info(ended_at=at(6)), [])]) == [again]
    assert await log.conversations() == []


async def test_validation(log: ConversationLog) -> None:
    """Bad scopes or ids are refused before anything is written."""
    with pytest.raises(InvalidScopeError):
        await log.save([(None, info(scope=" "), [])])
    with pytest.raises(InvalidScopeError):
        await log.save([(None, info(), [message("hi", scope="")])])
    with pytest.raises(InvalidInputError):
        await log.save([(None, info(conversation_id=""), [])])
    assert await log.conversations() == []
    with pytest.raises(InvalidLimitError):
        await log.search(MessageQuery(text="x", limit=0))


async def test_long_text_is_cut(log: ConversationLog) -> None:
    """A huge tool result is cut with a marker instead of bloating the file."""
    [key] = await log.save(
        [
            (
                None,
                info(),
                [
                    message(
                        "",
                        MessageRole.TOOL_RESULT,
                        data="x" * (MAX_MESSAGE_CHARS * 2),
                        tool_name="GetLiveContext",
                    )
                ],
            )
        ]
    )
    [stored] = await log.messages(key)
    assert len(stored.data) == MAX_MESSAGE_CHARS
    assert stored.data.endswith(TRUNCATED_MARK)


async def _two_people(log: ConversationLog) -> None:
    await log.save(
        [
            (
                None,
                info("anna-1", scope=ANNA),
                [
                    message("My dentist appointment is on Friday", scope=ANNA),
                    message(
                        "I noted your dentist appointment.",
                        MessageRole.ASSISTANT,
                        0.5,
                        scope=ANNA,
                    ),
                ],
            ),
            (
                None,
                info("ben-1", scope=BEN),
                [message("Ben's dentist is Dr. Müller", minutes=1, scope=BEN)],
            ),
            (
                None,
                info("house-1"),
                [message("The dentist called about the kids", minutes=2)],
            ),
        ]
    )


async def test_search_by_scope(log: ConversationLog) -> None:
    """A search sees only the scopes it is given: one person never sees another's."""
    await _two_people(log)

    everyone = await log.search(MessageQuery(text="dentist"))
    assert len(everyone) == 4
    assert all(0 < hit.score <= 1 for hit in everyone)
    assert [hit.score for hit in everyone] == sorted(
        (hit.score for hit in everyone), reverse=True
    )

    anna = await log.search(MessageQuery(text="dentist", scopes=(HOUSEHOLD, ANNA)))
    assert {hit.message.scope for hit in anna} == {HOUSEHOLD, ANNA}
    assert len(anna) == 3
    ben = await log.search(MessageQuery(text="dentist", scopes=(HOUSEHOLD, BEN)))
    assert {hit.message.conversation_id for hit in ben} == {"ben-1", "house-1"}
    assert await log.search(MessageQuery(text="dentist", scopes=())) == []

    # Accent folding like the memories' index; punctuation is plain text.
    assert [
        h.message.conversation_id for h in await log.search(MessageQuery(text="MULLER"))
    ] == ["ben-1"]
    assert await log.search(MessageQuery(text='"dentist" OR NEAR(')) != []
    assert await log.search(MessageQuery(text="?!")) == []

    # Since, limit and minimum score.
    recent = await log.search(MessageQuery(text="dentist", since=at(1)))
    assert {hit.message.conversation_id for hit in recent} == {"ben-1", "house-1"}
    assert len(await log.search(MessageQuery(text="dentist", limit=2))) == 2
    strict = await log.search(MessageQuery(text="dentist friday", min_score=0.8))
    assert [hit.message.content for hit in strict] == [
        "My dentist appointment is on Friday"
    ]
    assert strict[0].as_dict()["score"] == round(strict[0].score, 4)


async def test_empty_query_lists_newest(log: ConversationLog) -> None:
    """An empty query or `*` lists the newest messages in reach."""
    await _two_people(log)
    newest = await log.search(MessageQuery(text="*", limit=2))
    assert [hit.message.conversation_id for hit in newest] == ["house-1", "ben-1"]
    assert all(hit.score == 1.0 for hit in newest)
    mine = await log.search(MessageQuery(scopes=(ANNA,)))
    assert [hit.message.role for hit in mine] == [
        MessageRole.ASSISTANT,
        MessageRole.USER,
    ]


async def test_tool_data_is_searchable(log: ConversationLog) -> None:
    """Tool calls and results are found too, so forgetting can reach them."""
    await log.save(
        [
            (
                None,
                info(),
                [
                    message(
                        "",
                        MessageRole.TOOL_RESULT,
                        data='{"memories": [{"id": 3, "text": "wifi is zebra42"}]}',
                        tool_name="memory__search",
                    )
                ],
            )
        ]
    )
    [hit] = await log.search(MessageQuery(text="zebra42"))
    assert hit.message.tool_name == "memory__search"


async def test_purge_erases_every_copy(
    log: ConversationLog, store: MemoryStore, db_path: Path
) -> None:
    """Purged messages are gone from the table, the index, and the files."""
    marker = "qzxvmarkerword"
    [key] = await log.save(
        [
            (
                None,
                info(),
                [
                    message(f"The alarm code is {marker}"),
                    message(
                        "",
                        MessageRole.TOOL_RESULT,
                        data=f'{{"echo": "{marker}"}}',
                        tool_name="x",
                    ),
                    *(
                        message(f"Everyday chat {i} about the garden")
                        for i in range(30)
                    ),
                ],
            )
        ]
    )
    assert marker.encode() in file_bytes(db_path)
    hits = await log.search(MessageQuery(text=marker))
    secret_ids = [hit.message.id for hit in hits]
    assert len(secret_ids) == 2

    assert await log.purge([*secret_ids, 99_999, secret_ids[0]]) == sorted(secret_ids)
    assert await log.search(MessageQuery(text=marker)) == []
    assert await log.get_messages(secret_ids) == {}
    assert marker.encode() not in file_bytes(db_path)
    assert len(await log.messages(key)) == 30
    assert len(await log.search(MessageQuery(text="garden", limit=50))) == 30
    # Nothing to do, nothing written.
    assert await log.purge([]) == []
    assert await log.purge([123_456]) == []


async def test_retention(log: ConversationLog, db_path: Path) -> None:
    """Messages older than the cutoff go, and conversations left empty too."""
    marker = "oldsecretqz"
    [old, mixed] = await log.save(
        [
            (None, info("old", ended_at=at(1)), [message(f"old {marker}")]),
            (
                None,
                info("mixed"),
                [message(f"early {marker}"), message("late words", minutes=120)],
            ),
        ]
    )
    assert await log.purge_before(at(60)) == 2
    assert [c.conversation_id for c in await log.conversations()] == ["mixed"]
    assert [m.content for m in await log.messages(mixed)] == ["late words"]
    assert await log.messages(old) == []
    assert marker.encode() not in file_bytes(db_path)
    # Nothing older left: nothing written.
    assert await log.purge_before(at(60)) == 0


async def test_close_open_and_reopen(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """Messages survive a reopen; sessions left open end at their last update."""
    first = await store_factory(model=None)
    log = ConversationLog(first)
    [key] = await log.save(
        [(None, info(), [message("hello"), message("hi", MessageRole.ASSISTANT, 3)])]
    )
    await first.close()

    second = await store_factory(model=None)
    log = ConversationLog(second)
    assert [m.content for m in await log.messages(key)] == ["hello", "hi"]
    assert await log.close_open() == 1
    [stored] = await log.conversations()
    assert stored.ended_at == at(3)
    assert await log.close_open() == 0


async def test_a_shared_conversation_keeps_each_speaker(log: ConversationLog) -> None:
    """Ben continuing Anna's conversation neither takes it over nor sees her part."""
    [key] = await log.save(
        [
            (
                None,
                info(scope=ANNA, user_id="u-anna", device_id="d-anna"),
                [
                    message("My salary is going up", scope=ANNA, user_id="u-anna"),
                    message("Nice.", MessageRole.ASSISTANT, 0.1, scope=ANNA),
                ],
            )
        ]
    )
    await log.save(
        [
            (
                key,
                info(scope=BEN, user_id="u-ben", device_id="d-ben"),
                [message("Is the door locked?", minutes=1, scope=BEN)],
            )
        ]
    )
    # The row stays with who started it.
    [row] = await log.conversations()
    assert (row.scope, row.user_id, row.device_id) == (ANNA, "u-anna", "d-anna")
    assert row.messages == 3
    # Each audience finds it, as its own speaker.
    [annas] = await log.conversations(scopes=(HOUSEHOLD, ANNA))
    assert (annas.id, annas.scope, annas.user_id) == (key, ANNA, "u-anna")
    [bens] = await log.conversations(scopes=(HOUSEHOLD, BEN))
    assert (bens.id, bens.scope) == (key, BEN)
    assert await log.conversations(scopes=(HOUSEHOLD,)) == []


async def test_a_word_in_very_many_messages_searches_the_newest(
    log: ConversationLog,
) -> None:
    """Past the match budget, the rarest term's newest messages are matched."""
    count = MATCH_BUDGET + 100
    await log.save(
        [
            (
                None,
                info("many"),
                [message(f"boiler note {i}", minutes=i) for i in range(count)],
            )
        ]
    )
    hits = await log.search(MessageQuery(text="boiler", limit=50))
    assert len(hits) == 50
    numbers = [int(hit.message.content.rsplit(" ", 1)[1]) for hit in hits]
    assert min(numbers) >= count - MATCH_BUDGET
