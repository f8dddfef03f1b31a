"""The exports on PostgreSQL: the same files as on SQLite, and back into SQLite.

A Home Assistant backup cannot hold a PostgreSQL database (issue #26), so
the lossless `memories.json` must come out of a `PostgresStore` as it does
out of a `MemoryStore`. The same memories (several scopes and persons,
superseded, archived, expiring and expired ones, tags, topics, confidence,
recalls, non-ASCII text and Markdown in it) and the same conversations are
written to both backends on one clock: `memories.json`, `MEMORY.md` and the
day files come out byte for byte the same; a person's export never holds
another person's text on either backend; and a PostgreSQL export imports
into a fresh SQLite store with every field kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    MemoryItem,
    MemoryStatus,
    MemoryType,
    MessageRole,
    NewMessage,
    Origin,
    Source,
)
from custom_components.memory.engine.exchange import (
    active_memories,
    changed_since,
    conversations_with_messages,
    every_memory,
    group_by_day,
    memory_scopes,
    read_import,
    render_day,
    render_json,
    render_memories,
    run_import,
)
from custom_components.memory.engine.postgres import PostgresConversationLog
from tests.engine.conftest import START, FakeClock, StoreFactory, memory
from tests.engine.postgres.stores import PgStores, Store

ANNA = "person.anna"
BEN = "person.ben"
BERLIN = ZoneInfo("Europe/Berlin")
DAY = timedelta(days=1)
# When the exports below are written: a week after the clock's start.
EXPORTED = datetime.fromtimestamp(START, UTC) + 7 * DAY
# Who reads what: everything, the household, Anna (with the household), Ben.
AUDIENCES: tuple[tuple[str, ...] | None, ...] = (
    None,
    (HOUSEHOLD,),
    (HOUSEHOLD, ANNA),
    (HOUSEHOLD, BEN),
)
# Text only Anna's and only Ben's memories and messages hold.
ANNA_TEXTS = ("Lyon", "Zürich", "Mandeln", "anna-secret")
BEN_TEXTS = ("Zahnarzt", "jazz", "Probeabo", "ben-secret")


def label(scope: str) -> str:
    """Name scopes the way the integration does: household, or a person's name."""
    return scope if scope == HOUSEHOLD else scope.partition(".")[2].title()


@dataclass(slots=True)
class Backend:
    """An open store of one backend and the conversation log beside it."""

    store: Store
    log: ConversationLog | PostgresConversationLog
    is_postgres: bool


class Backends:
    """Open a SQLite or a PostgreSQL store (and its log) on the test's clock."""

    def __init__(self, store_factory: StoreFactory, clock: FakeClock) -> None:
        """Hold how SQLite stores open and the clock both backends read."""
        self._store_factory = store_factory
        self._clock = clock
        self._pg: PgStores | None = None
        self._pools: list[Any] = []

    async def sqlite(self) -> Backend:
        """Open a SQLite store and its conversation log."""
        store = await self._store_factory(model=None)
        return Backend(store, ConversationLog(store), is_postgres=False)

    async def postgres(self, url: str) -> Backend:
        """Open a PostgresStore and a conversation log on its database."""
        self._pg = self._pg or PgStores(url, self._clock)
        store = await self._pg.open(model=None)
        pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
        self._pools.append(pool)
        return Backend(store, PostgresConversationLog(pool), is_postgres=True)

    async def close(self) -> None:
        """Close every PostgreSQL store and pool opened here."""
        for pool in self._pools:
            await pool.close()
        if self._pg is not None:
            await self._pg.close_all()


@pytest.fixture
async def backends(
    store_factory: StoreFactory, clock: FakeClock
) -> AsyncIterator[Backends]:
    """Yield a `Backends` whose PostgreSQL stores are closed after the test.

    A test names `postgres_database` before it, so the stores close before
    their database is dropped.
    """
    opened = Backends(store_factory, clock)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def backend(backend_url: str | None, backends: Backends) -> Backend:
    """Open a store (and its log) of each backend in turn."""
    if backend_url is None:
        return await backends.sqlite()
    return await backends.postgres(backend_url)


async def fill(backend: Backend, clock: FakeClock) -> None:
    """Write the same memories and conversations, at the same times, to a backend."""
    clock.now = START
    store = backend.store
    start = datetime.fromtimestamp(START, UTC)
    await store.add(memory("Bins go out on Thursday", tags=("bins", "chores")))
    clock.advance(60)
    lyon = (await store.add(memory("Anna lives in Lyon", scope=ANNA))).item
    clock.advance(60)
    zurich, _old = await store.supersede(
        lyon.id,
        memory(
            "Anna wohnt jetzt in Zürich – Café «Grüße» 🏠",
            scope=ANNA,
            tags=("home", "städte"),
            language="de",
        ),
    )
    clock.advance(60)
    await store.add(
        memory(
            "Anna mag keine Mandeln *wirklich* <b>nicht</b>",
            scope=ANNA,
            type=MemoryType.PREFERENCE,
            topic="essen",
            confidence=0.8,
            language="de",
        )
    )
    await store.add(
        memory(
            "Zahnarzt am Freitag",
            scope=BEN,
            type=MemoryType.EVENT,
            expires_at=start + 30 * DAY,
            language="de",
        )
    )
    # Expired by the export, not yet archived: in memories.json, not MEMORY.md.
    await store.add(memory("Probeabo endet heute", scope=BEN, expires_at=start + DAY))
    jazz = (
        await store.add(memory("Ben likes jazz", scope=BEN, type=MemoryType.PREFERENCE))
    ).item
    clock.advance(3600.5)
    await store.update_content(jazz.id, content="Ben loves jazz", topic="music")
    gone = (await store.add(memory("Old wifi password is hunter2"))).item
    await store.forget([gone.id])
    await store.mark_recalled([zurich.id, jazz.id])
    await store.add(memory("Always answer in English", type=MemoryType.INSTRUCTION))
    late = datetime(2026, 1, 3, 22, 50, tzinfo=UTC)  # 23:50 in Berlin

    def said(text: str, minutes: float, scope: str, **kw: Any) -> NewMessage:
        return NewMessage(
            role=kw.pop("role", MessageRole.USER),
            content=text,
            created_at=late + timedelta(minutes=minutes),
            scope=scope,
            **kw,
        )

    await backend.log.save(
        [
            (
                None,
                ConversationInfo(
                    conversation_id="c1",
                    started_at=late,
                    scope=ANNA,
                    agent_id="conversation.ollama",
                ),
                [
                    said("Merk dir: anna-secret <b>Tee</b> #1", 0, ANNA),
                    said("", 1, ANNA, role=MessageRole.ASSISTANT, data='{"x": 1}'),
                    said(
                        "ü" * 400,
                        2,
                        ANNA,
                        role=MessageRole.TOOL_RESULT,
                        tool_name="memory__add",
                    ),
                    said("Gute Nacht", 15, ANNA, role=MessageRole.ASSISTANT),
                ],
            ),
            (
                None,
                ConversationInfo(conversation_id="c2", started_at=late, scope=BEN),
                [said("ben-secret: the key is under the mat", 12, BEN)],
            ),
            (
                None,
                ConversationInfo(conversation_id="c3", started_at=late),
                [
                    said("Lights off", 3, HOUSEHOLD),
                    said("ben-secret too", 4, BEN),
                ],
            ),
        ]
    )


async def exports(backend: Backend) -> dict[str, str]:
    """Write every audience's files and the reads behind them, as text."""
    store = backend.store
    files: dict[str, str] = {"scopes": repr(await memory_scopes(store))}
    for audience in AUDIENCES:
        name = "all" if audience is None else "+".join(audience)
        every = await every_memory(store, audience)
        files[f"{name}/memories.json"] = render_json(every, exported_at=EXPORTED)
        active = await active_memories(store, audience, now=EXPORTED)
        files[f"{name}/MEMORY.md"] = render_memories(
            active, label=label, exported_at=EXPORTED, timezone=BERLIN
        )
        found = await conversations_with_messages(backend.log, audience)
        for day in group_by_day(found, BERLIN):
            files[f"{name}/{day.file_name}"] = render_day(
                day, label=label, timezone=BERLIN
            )
    since = datetime.fromtimestamp(START + 1000, UTC)
    kinds = (MemoryType.FACT, MemoryType.PREFERENCE)
    for scope in (HOUSEHOLD, ANNA, BEN):
        counts = [
            await changed_since(store, scope, when, types=kinds)
            for when in (None, since)
        ]
        files[f"changed/{scope}"] = repr(counts)
    profiles = await active_memories(
        store, None, types=(MemoryType.INSTRUCTION,), now=EXPORTED
    )
    files["instructions"] = repr([item.content for item in profiles])
    return files


async def test_both_backends_write_the_same_files(
    postgres_database: str, backends: Backends, clock: FakeClock
) -> None:
    """memories.json, MEMORY.md, the day files and the profile's reads: the same."""
    lite, pg = await backends.sqlite(), await backends.postgres(postgres_database)
    await fill(lite, clock)
    await fill(pg, clock)
    written = await exports(lite)
    assert await exports(pg) == written
    # Not the same by being empty: each kind of memory made it out.
    every = await every_memory(pg.store, None)
    assert {item.status for item in every} == set(MemoryStatus)
    assert "Zürich – Café «Grüße» 🏠" in written["all/memories.json"]
    assert '"recall_count": 1' in written["all/memories.json"]
    assert '"topic": "essen", "confidence": 0.8' in written["all/memories.json"]
    memory_md = written["all/MEMORY.md"]
    assert "Zahnarzt am Freitag" in memory_md
    assert "until 2026-01-31" in memory_md
    assert "Probeabo" not in memory_md  # expired at the export
    assert "Probeabo" in written["all/memories.json"]
    assert "Lyon" not in memory_md  # superseded
    assert "hunter2" not in memory_md  # archived
    assert r"\*wirklich\* &lt;b&gt;nicht&lt;/b&gt;" in memory_md
    assert sorted(name for name in written if name.endswith("-04.md")) == [
        f"{name}/2026-01-04.md"
        for name in ("all", f"{HOUSEHOLD}+{ANNA}", f"{HOUSEHOLD}+{BEN}")
    ]
    assert written["scopes"] == repr([HOUSEHOLD, ANNA, BEN])
    assert [written[f"changed/{scope}"] for scope in (HOUSEHOLD, ANNA, BEN)] == [
        "[2, 1]",
        "[3, 0]",
        "[2, 1]",
    ]
    assert written["instructions"] == "['Always answer in English']"


async def test_a_persons_export_holds_no_other_persons_text(
    backend: Backend, clock: FakeClock
) -> None:
    """Anna's files hold none of Ben's text and Ben's none of Anna's, on each backend."""
    await fill(backend, clock)
    written = await exports(backend)
    for name, text in written.items():
        persons = name.partition("/")[0]
        if not persons.startswith(HOUSEHOLD):
            continue  # everything's export, or a read of no text
        if ANNA not in persons:
            assert not [word for word in ANNA_TEXTS if word in text], name
        if BEN not in persons:
            assert not [word for word in BEN_TEXTS if word in text], name
    assert "Zürich" in written[f"{HOUSEHOLD}+{ANNA}/memories.json"]
    assert "anna-secret" in written[f"{HOUSEHOLD}+{ANNA}/2026-01-03.md"]
    assert "Zahnarzt" in written[f"{HOUSEHOLD}+{BEN}/MEMORY.md"]
    assert "ben-secret" in written[f"{HOUSEHOLD}+{BEN}/2026-01-04.md"]
    ben = await every_memory(backend.store, (BEN,))
    assert {item.scope for item in ben} == {BEN}
    assert await every_memory(backend.store, ()) == []
    assert await active_memories(backend.store, (), now=EXPORTED) == []
    assert await active_memories(backend.store, None, types=(), now=EXPORTED) == []
    assert await changed_since(backend.store, ANNA, None, types=()) == 0


async def test_a_postgres_export_imports_into_sqlite_with_every_field(
    postgres_database: str,
    backends: Backends,
    clock: FakeClock,
    store_factory: StoreFactory,
    tmp_path: Path,
) -> None:
    """memories.json from PostgreSQL, imported into a fresh SQLite store: the same."""
    pg = await backends.postgres(postgres_database)
    await fill(pg, clock)
    items = await every_memory(pg.store, None)
    text = render_json(items, exported_at=EXPORTED)
    fresh = await store_factory(tmp_path / "fresh.db", model=None)
    file = read_import(text.encode(), timezone=UTC)
    identity = {owner: owner for owner in file.owners}
    result = await run_import(
        fresh, file, identity, source_name="assist_memory", now=clock()
    )
    assert len(result.ids) == len(items) == 9
    new_id = dict(zip((item.id for item in items), result.ids, strict=True))

    def comparable(item: MemoryItem) -> MemoryItem:
        linked = item.superseded_by
        return replace(
            item,
            id=new_id[item.id],
            superseded_by=None if linked is None else new_id[linked],
            # Where it came from stays behind: those ids mean nothing here.
            source=Source(origin=Origin.IMPORT, agent_id="assist_memory"),
        )

    copies = await fresh.get_many(list(result.ids))
    assert [copies[new_id[item.id]] for item in items] == [
        comparable(item) for item in items
    ]
    # And the copy exports what PostgreSQL did, but for ids and origins.
    again = render_json(await every_memory(fresh, None), exported_at=EXPORTED)
    assert again == render_json(map(comparable, items), exported_at=EXPORTED)
