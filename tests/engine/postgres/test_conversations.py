"""The conversation log on PostgreSQL answers as the SQLite log does, call for call.

A household of several persons talks in every household language: user
turns (the household memories of each language), assistant replies (the
questions), tool results whose `data` holds JSON of the same texts. Saved,
continued by another person, closed, erased by scope, purged and aged out
on both backends (`LogBoth`), after each write the same messages, rows and
keyword index; the panel's pages (walked by cursor), counts, entries and
listings equal for every scope set; the keyword search of each question
(the SQLite engine's MATCH terms over `conversation_messages_fts_vocab`)
ranks the same messages with FTS5's bm25 within 1e-9; and a person's
messages never reach another person's pages, counts or hits.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
import json
import math
from pathlib import Path
import re
from typing import Any

import aiosqlite
import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    MemoryStore,
    NewMemory,
    Origin,
    Source,
)
from custom_components.memory.engine.conversations import (
    ConversationInfo,
    ConversationLog,
    ConversationQuery,
    MessageQuery,
    MessageRole,
    NewMessage,
)
from custom_components.memory.engine.errors import InvalidInputError
from custom_components.memory.engine.postgres import (
    CHANNEL,
    PostgresConversationLog,
    PostgresMemories,
    data_tokens,
)
from custom_components.memory.engine.search import keyword_query
from tests.engine.conftest import SOURCE, START, FakeClock, StoreFactory, sql
from tests.engine.postgres.log_parity import LogBoth
from tests.postgres_server import START_TIMEOUT
from tests.test_household_data import MINIMUM, memories, questions

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT * 4),
]

ALICE = "person.alice"
BOB = "person.bob"
PEOPLE = (ALICE, BOB, HOUSEHOLD)
SCOPE_SETS: tuple[tuple[str, ...] | None, ...] = (
    None,
    (),
    (ALICE,),
    (BOB,),
    (HOUSEHOLD,),
    (ALICE, HOUSEHOLD),
    (BOB, HOUSEHOLD),
)
_QUOTED = re.compile(r'"((?:[^"]|"")*)"(\*?)')


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(START + seconds, UTC)


def _match_terms(expression: str) -> tuple[list[str], set[str]]:
    """Return the terms of a MATCH expression the engine built, and its prefixes."""
    terms: list[str] = []
    prefixes: set[str] = set()
    for quoted, star in _QUOTED.findall(expression):
        term = quoted.replace('""', '"')
        terms.append(term)
        if star:
            prefixes.add(term)
    return terms, prefixes


@pytest.fixture
async def log_both(
    store_factory: StoreFactory, db_path: Path, postgres_pool: Any
) -> LogBoth:
    """Return a SQLite log and a PostgreSQL log of the same default language."""
    store: MemoryStore = await store_factory()
    return LogBoth(
        ConversationLog(store),
        db_path,
        postgres_pool,
        PostgresConversationLog(postgres_pool, language=store.language),
    )


def _conversation(
    lang: str, number: int, speaker: str, texts: list[str], answers: list[str]
) -> tuple[ConversationInfo, list[NewMessage]]:
    """One conversation of `speaker` in `lang`: turns, replies, a tool's result."""
    base = number * 600.0
    info = ConversationInfo(
        conversation_id=f"{lang}-{number % 3}",  # ids reused, as HA may
        started_at=_at(base),
        scope=speaker,
        user_id=None if speaker == HOUSEHOLD else speaker,
        agent_id="conversation.agent",
    )
    messages: list[NewMessage] = []
    for at, (text, answer) in enumerate(zip(texts, answers, strict=False)):
        tag = lang if at % 2 else f"{lang}-XX"
        messages += [
            NewMessage(
                role=MessageRole.USER,
                content=text,
                created_at=_at(base + 10 * at),
                scope=speaker,
                user_id=info.user_id,
                language=tag if at % 3 else "",
            ),
            NewMessage(
                role=MessageRole.ASSISTANT,
                content=answer,
                created_at=_at(base + 10 * at + 1),
                scope=speaker,
                language=tag,
            ),
            NewMessage(
                role=MessageRole.TOOL_RESULT,
                content="",
                data=json.dumps({"result": text, "Note": answer}, ensure_ascii=False),
                tool_name="HassGetState",
                tool_call_id=f"call_{number}_{at}",
                created_at=_at(base + 10 * at + 2),
                scope=speaker,
                language=tag,
            ),
        ]
    return info, messages


async def _save_household(both: LogBoth) -> list[int]:
    """Save every language's conversations on both; return SQLite's row ids."""
    batch = []
    number = 0
    for lang in sorted(MINIMUM):
        texts = list(memories(lang).values())
        asked = [q["question"] for q in questions(lang).values()]
        for part in range(3):
            speaker = PEOPLE[(number + part) % 3]
            batch.append(
                (
                    None,
                    *_conversation(
                        lang, number, speaker, texts[part::3], asked[part::3]
                    ),
                )
            )
            number += 1
    lite, pg = await both.call(
        lambda: both.lite.save(batch), lambda: both.pg.save(batch)
    )
    for a, b in zip(lite, pg, strict=True):
        both.rows[a] = b
    await both.check_tables()
    return lite


async def _compare_pages(both: LogBoth, query: ConversationQuery) -> None:
    """Walk every page of a query on both (each with its own cursors); compare."""
    pg_query = query
    while True:
        lite, pg = await both.call(
            partial(both.lite.page, query), partial(both.pg.page, pg_query)
        )
        both.same_page(lite, pg)
        if lite.cursor is None:
            break
        query = replace(query, cursor=lite.cursor)
        pg_query = replace(pg_query, cursor=pg.cursor)
    lite_count, pg_count = await both.call(
        partial(both.lite.count, query), partial(both.pg.count, query)
    )
    assert lite_count == pg_count == lite.total


async def _compare_reads(both: LogBoth) -> None:
    """Every read, for every scope set: equal, and within the scopes asked for."""
    rows = [row.id for row in await both.lite.conversations(limit=1000)]
    for scopes in SCOPE_SETS:
        for statuses in ((), ("waiting",), ("done", "failed")):
            for since, until in ((None, None), (_at(3000), _at(20_000))):
                await _compare_pages(
                    both,
                    ConversationQuery(
                        scopes=scopes,
                        statuses=statuses,
                        since=since,
                        until=until,
                        limit=7,
                    ),
                )
        lite_list, pg_list = await both.call(
            partial(both.lite.conversations, scopes=scopes, limit=1000),
            partial(both.pg.conversations, scopes=scopes, limit=1000),
        )
        assert len(lite_list) == len(pg_list)
        for a, b in zip(lite_list, pg_list, strict=True):
            both.same_conversation(a, b)
            assert scopes is None or b.scope in scopes
        for row_id in rows[:: max(1, len(rows) // 9)]:
            lite_entry, pg_entry = await both.call(
                partial(both.lite.entry, row_id, scopes),
                partial(both.pg.entry, both.row(row_id), scopes),
            )
            assert (lite_entry is None) == (pg_entry is None)
            if lite_entry is not None and pg_entry is not None:
                both.same_conversation(lite_entry, pg_entry)
                assert scopes is None or pg_entry.scope in scopes
        query = MessageQuery(scopes=scopes, limit=50)
        lite_recent, pg_recent = await both.call(
            partial(both.lite.search, query), partial(both.pg.search, query)
        )
        assert len(lite_recent) == len(pg_recent)
        for hit, pg_hit in zip(lite_recent, pg_recent, strict=True):
            both.same_message(hit.message, pg_hit.message)
            assert hit.score == pg_hit.score
            assert scopes is None or pg_hit.message.scope in scopes


async def _compare_search(both: LogBoth) -> tuple[int, int]:
    """Rank every question on both, for several scope sets; return (queries, hits)."""
    checked = compared = 0
    async with aiosqlite.connect(both.path) as conn:
        (total,) = next(
            iter(
                await conn.execute_fetchall(
                    "SELECT count(*) FROM conversation_messages"
                )
            )
        )
        for lang in sorted(MINIMUM):
            for question in list(questions(lang).values())[::2]:
                for text in (question["question"], question["paraphrase"]):
                    query = await keyword_query(
                        conn,
                        text,
                        [lang, "en"],
                        vocab="conversation_messages_fts_vocab",
                        total=int(total),
                    )
                    if query is None:
                        continue
                    terms, prefixes = _match_terms(query.expression)
                    for scopes in ((ALICE,), (BOB, HOUSEHOLD), None):
                        among = (
                            ""
                            if scopes is None
                            else f" AND m.scope IN ({','.join('?' * len(scopes))})"
                        )
                        expected = await conn.execute_fetchall(
                            "SELECT f.rowid, bm25(conversation_messages_fts, 1.0, 0.3) "  # noqa: S608
                            "FROM conversation_messages_fts f JOIN conversation_messages m "
                            "ON m.id = f.rowid WHERE conversation_messages_fts MATCH ?"
                            f"{among} ORDER BY 2, 1",
                            (query.expression, *(scopes or ())),
                        )
                        hits = await both.pg.keywords.keywords(
                            terms, prefixes=prefixes, scopes=scopes
                        )
                        assert [h.id for h in hits] == [
                            both.msg(r[0]) for r in expected
                        ]
                        for hit, row in zip(hits, expected, strict=True):
                            assert math.isclose(hit.bm25, row[1], rel_tol=1e-9), (
                                lang,
                                text,
                            )
                        if scopes is not None:
                            found = await both.pg.get_messages([h.id for h in hits])
                            assert {m.scope for m in found.values()} <= set(scopes)
                        compared += len(hits)
                    checked += 1
    return checked, compared


async def test_the_log_answers_as_sqlite_through_saves_erases_and_searches(
    log_both: LogBoth,
) -> None:
    """Saves, continuations, closes, erases, purges, retention: equal on both."""
    both = log_both
    rows = await _save_household(both)
    # Bob continues Alice's first conversation; a save of an unknown row
    # starts it anew; an empty save of one changes nothing.
    alice_row = next(
        c.id for c in await both.lite.conversations(scopes=(ALICE,), limit=1000)
    )
    info, _ = _conversation("en", 1000, BOB, [], [])
    later = [
        NewMessage(
            role=MessageRole.USER,
            content="Bob says the garage door code changed to blue.",
            created_at=_at(700_000),
            scope=BOB,
            user_id=BOB,
        )
    ]
    batch: list[Any] = [
        (alice_row, info, later),
        (999_999, info, later),
        (999_998, info, []),
    ]
    lite, pg = await both.call(
        lambda: both.lite.save(batch),
        lambda: both.pg.save([(both.row(k), i, m) for k, i, m in batch]),
    )
    for a, b in zip(lite, pg, strict=True):
        both.rows.setdefault(a, b)
    assert pg == [both.row(r) for r in lite]
    await both.check_tables()
    # Refused saves: nothing written on either.
    bad = ConversationInfo(conversation_id="", started_at=_at(0))
    with pytest.raises(InvalidInputError):
        await both.call(
            lambda: both.lite.save([(None, bad, [])]),
            lambda: both.pg.save([(None, bad, [])]),
        )
    with pytest.raises(Exception, match="scope"):
        await both.call(
            lambda: both.lite.save([(None, info, [replace_scope(later[0])])]),
            lambda: both.pg.save([(None, info, [replace_scope(later[0])])]),
        )
    await both.check_tables()
    closed = await both.call(both.lite.close_open, both.pg.close_open)
    assert closed[0] == closed[1] > 0
    await _compare_reads(both)
    checked, compared = await _compare_search(both)
    assert checked > 150, checked
    assert compared > 1000, compared
    # Bob's part of Alice's conversation goes; Alice's stays.
    lite_erased, pg_erased = await both.call(
        lambda: both.lite.erase(alice_row, (BOB,)),
        lambda: both.pg.erase(both.row(alice_row), (BOB,)),
    )
    assert pg_erased == [both.msg(i) for i in lite_erased] and lite_erased
    await both.check_tables()
    # A whole conversation, then a few messages (unknown ids ignored).
    lite_erased, pg_erased = await both.call(
        lambda: both.lite.erase(rows[4], None),
        lambda: both.pg.erase(both.row(rows[4]), None),
    )
    assert pg_erased == [both.msg(i) for i in lite_erased]
    assert await both.pg.entry(both.row(rows[4]), None) is None
    some = [int(r[0]) for r in sql(both.path, "SELECT id FROM conversation_messages")][
        ::11
    ]
    lite_purged, pg_purged = await both.call(
        lambda: both.lite.purge([*some, 10**9]),
        lambda: both.pg.purge([*(both.msg(i) for i in some), 10**9]),
    )
    assert pg_purged == [both.msg(i) for i in lite_purged]
    await both.check_tables()
    cutoff = _at(9_000)
    aged = await both.call(
        lambda: both.lite.purge_before(cutoff), lambda: both.pg.purge_before(cutoff)
    )
    assert aged[0] == aged[1] > 0
    await both.check_tables()
    await _compare_reads(both)
    checked, compared = await _compare_search(both)
    assert compared > 500, compared


def replace_scope(message: NewMessage) -> NewMessage:
    """Return the message with an empty scope (refused)."""
    return NewMessage(
        role=message.role,
        content=message.content,
        created_at=message.created_at,
        scope=" ",
    )


def test_data_tokens_read_as_unicode61() -> None:
    """Case, accents, punctuation and `_` as unicode61 reads them."""
    assert (
        data_tokens('{"State": "Küche_Licht ON", "n": 3.5}')
        == "state kuche licht on n 3 5"
    )
    assert data_tokens("HELLO-world") == "hello world"


async def test_every_log_write_sends_its_notice_without_content(
    postgres_pool: Any,
) -> None:
    """Saves, closes, purges, erases, retention: a notice each, kinds and ids, no text."""
    log = PostgresConversationLog(postgres_pool, instance="a")
    heard: list[dict[str, Any]] = []
    async with postgres_pool.acquire() as listener:

        def hear(*notice: Any) -> None:
            heard.append(json.loads(notice[3]))

        await listener.add_listener(CHANNEL, hear)
        info, messages = _conversation(
            "de", 1, ALICE, ["Geheimnis Nummer eins"], ["Ja"]
        )
        (row,) = await log.save([(None, info, messages)])
        assert await log.close_open() == 1
        assert await log.close_open() == 0  # nothing changed: no notice
        ids = [m.id for m in await log.messages(row)]
        await log.purge(ids[:1])
        await log.erase(row, None)
        await log.purge_before(_at(10**6))
        await listener.execute("SELECT 1")  # a round trip: notices delivered
        await listener.remove_listener(CHANNEL, hear)
    kinds = [(n["kind"], n["ids"], n["scopes"], n["erased"]) for n in heard]
    assert kinds == [
        ("messages_added", [row], [ALICE], False),
        ("conversations_ended", [row], [ALICE], False),
        ("messages_purged", ids[:1], [ALICE], True),
        ("messages_purged", ids[1:], [ALICE], True),
    ]
    assert all("Geheimnis" not in json.dumps(n) for n in heard)
    assert await log.conversations() == []


async def test_produced_and_source_of_as_sqlite(
    store_factory: StoreFactory, postgres_pool: Any, clock: FakeClock
) -> None:
    """Memories a conversation gave (cited or a tool's), by scope; where one came from."""
    store = await store_factory()
    lite = ConversationLog(store)
    pg = PostgresConversationLog(postgres_pool, language=store.language)
    pg_memories = PostgresMemories(postgres_pool, clock=clock)
    texts = list(memories("en").values())[:4]
    batch: list[Any] = [
        (None, *_conversation("en", 0, ALICE, texts[:2], texts[2:4])),
        (None, *_conversation("en", 3, BOB, texts[2:], texts[:2])),
    ]
    rows = await lite.save(batch)
    assert await pg.save(batch) == rows  # nothing failed: ids alike
    clock.now = START + 2000
    cited = (await lite.messages(rows[0]))[0].id
    added = []
    for memory in (
        NewMemory(
            content="Alice likes tea", source=SOURCE, scope=ALICE, message_id=cited
        ),
        NewMemory(
            content="Bob parks outside",
            source=Source(origin=Origin.TOOL, conversation_id="en-0"),
            scope=BOB,
        ),
        NewMemory(content="Household fact", source=SOURCE, scope=HOUSEHOLD),
    ):
        item = (await store.add(memory)).item
        assert (await pg_memories.add(memory)).item.id == item.id
        added.append(item)
    for scopes in (None, (ALICE,), (BOB,), (HOUSEHOLD,), ()):
        assert await pg.produced(rows, scopes) == await lite.produced(rows, scopes)
    assert await pg.produced(rows, None) != {}
    for item in added:
        assert await pg.source_of(item) == await lite.source_of(item)
