"""PostgresMemories on a real PostgreSQL server: de-duplication, reads, forgetting.

The same rules as the SQLite store: one active memory per text and scope
(also when two transactions add it at once), an expired twin archived
first, the same `MemoryItem` as SQLite's for the same memory, a purge that
leaves no row, tag or posting, an archive that leaves search.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from custom_components.memory.engine import (
    MemoryStore,
    MemoryType,
    NewMemory,
    Origin,
    Source,
    UnknownMemoryError,
)
from custom_components.memory.engine.postgres import (
    SCHEMA_VERSION,
    PostgresKeywords,
    PostgresMemories,
    migrate,
    schema_version,
)
from tests.engine.conftest import START
from tests.postgres_server import START_TIMEOUT

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT),
]

SOURCE = Source(
    origin=Origin.TOOL,
    conversation_id="conv-1",
    agent_id="conversation.agent",
    device_id="device-1",
    user_id="user-1",
)


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


async def _count(pool: Any, sql: str, *args: Any) -> int:
    async with pool.acquire() as connection:
        return int(await connection.fetchval(sql, *args))


async def test_twins_in_a_scope_are_one_memory(
    pg_memories: PostgresMemories, postgres_pool: Any
) -> None:
    """Cased and spaced differently, the same text is one row; another scope is not."""
    first = await pg_memories.add(
        NewMemory(content="Mia swims on Tuesdays", source=SOURCE)
    )
    again = await pg_memories.add(
        NewMemory(content="  mia   SWIMS on tuesdays ", source=SOURCE, tags=("x",))
    )
    other = await pg_memories.add(
        NewMemory(content="Mia swims on Tuesdays", source=SOURCE, scope="user-2")
    )
    assert (first.created, again.created, other.created) == (True, False, True)
    assert again.item == first.item
    assert other.item.id != first.item.id
    assert await _count(postgres_pool, "SELECT count(*) FROM memories") == 2


async def test_a_batch_that_repeats_a_text_keeps_its_first_copy(
    pg_memories: PostgresMemories,
) -> None:
    """As SQLite's add_many: row by row, the first copy stored, the second its twin."""
    results = await pg_memories.add_many(
        [
            NewMemory(content="The bins go out on Monday", source=SOURCE, tags=("a",)),
            NewMemory(content="Leo plays chess", source=SOURCE),
            NewMemory(content="the bins go out on monday", source=SOURCE),
        ]
    )
    assert [r.created for r in results] == [True, True, False]
    assert results[2].item == results[0].item
    assert results[0].item.tags == ("a",)


async def test_an_expired_twin_is_archived_and_the_new_one_stored(
    pg_memories: PostgresMemories,
) -> None:
    """A twin past its expiry no longer counts: archived (valid_to its expiry) first."""
    old = await pg_memories.add(
        NewMemory(
            content="Guests stay till Sunday", source=SOURCE, expires_at=_at(START + 10)
        ),
        now=START,
    )
    new = await pg_memories.add(
        NewMemory(content="Guests stay till Sunday", source=SOURCE), now=START + 20
    )
    assert new.created
    assert new.item.id != old.item.id
    archived = await pg_memories.get(old.item.id)
    assert archived is not None
    assert archived.status == "archived"
    assert archived.valid_to == _at(START + 10)
    assert archived.updated_at == _at(START + 20)


async def _waiting_on_a_lock(url: str) -> None:
    """Return once some backend of the database waits for a lock."""
    connection = await asyncpg.connect(url)
    try:
        for _ in range(500):
            if await connection.fetchval(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ):
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the second writer never waited")
    finally:
        await connection.close()


async def test_two_transactions_adding_one_fact_store_it_once(
    postgres_database: str, postgres_pool: Any
) -> None:
    """The second INSERT waits for the first transaction, then returns its row."""
    fact = NewMemory(content="The wifi password is on the fridge", source=SOURCE)
    first = PostgresMemories(postgres_pool, clock=lambda: START)
    connection = await asyncpg.connect(postgres_database)
    other_pool = await asyncpg.create_pool(postgres_database, min_size=1, max_size=2)
    try:
        second = PostgresMemories(other_pool, clock=lambda: START + 1)
        held = connection.transaction()
        await held.start()
        # The first writer's row, in a transaction still open.
        single = _OnePool(connection)
        mine = await PostgresMemories(single, clock=lambda: START).add(fact)
        racing = asyncio.create_task(second.add(fact))
        await _waiting_on_a_lock(postgres_database)
        await held.commit()
        theirs = await racing
        assert mine.created
        assert not theirs.created
        assert theirs.item == mine.item
        # And both at once through two pools, many facts: each stored once.
        facts = [
            NewMemory(content=f"Fact number {n}", source=SOURCE) for n in range(50)
        ]
        left, right = await asyncio.gather(
            first.add_many(facts), second.add_many(facts)
        )
        assert [r.item for r in left] == [r.item for r in right]
        assert sorted(r.created for r in left + right).count(True) == 50
    finally:
        await other_pool.close()
        await connection.close()
    assert (
        await _count(
            postgres_pool, "SELECT count(*) FROM memories WHERE status = 'active'"
        )
        == 51
    )


class _OnePool:
    """A pool of one connection already in a transaction (asyncpg nests a savepoint)."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def acquire(self) -> _OnePool:
        return self

    async def __aenter__(self) -> Any:
        return self._connection

    async def __aexit__(self, *_exc: object) -> None:
        return None


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    """Yield a SQLite store on the tests' fixed clock."""
    store = MemoryStore(tmp_path / "memory.db", clock=lambda: START)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def test_get_many_equals_the_sqlite_store(
    sqlite_store: MemoryStore, pg_memories: PostgresMemories
) -> None:
    """Every field of the same memories, read back, as SQLite's store gives them."""
    memories = [
        NewMemory(
            content="Leo's birthday is on 3 May",
            source=SOURCE,
            type=MemoryType.PROFILE,
            scope="user-1",
            tags=("Birthday", "family"),
            expires_at=_at(START + 3600),
            valid_from=_at(START - 60),
            topic="birthday",
            confidence=0.75,
            message_id=42,
            language="en-GB",
        ),
        NewMemory(
            content="Die Müllabfuhr kommt dienstags",
            source=Source(origin=Origin.DIGESTION),
            type=MemoryType.SUMMARY,
            language="de",
        ),
        NewMemory(content="No language of its own", source=SOURCE),
    ]
    sqlite_ids = [r.item.id for r in await sqlite_store.add_many(memories)]
    pg_ids = [r.item.id for r in await pg_memories.add_many(memories, now=START)]
    theirs = await sqlite_store.get_many(sqlite_ids)
    mine = await pg_memories.get_many([*pg_ids, 10**6, -1, 2**70])
    assert len(mine) == len(memories)
    for sqlite_id, pg_id in zip(sqlite_ids, pg_ids, strict=True):
        assert replace(mine[pg_id], id=0) == replace(theirs[sqlite_id], id=0)


async def test_purge_removes_the_row_and_its_postings_archive_hides_it(
    pg_memories: PostgresMemories, pg_keywords: PostgresKeywords, postgres_pool: Any
) -> None:
    """Archived: kept, out of search, still in the index's counts; purged: gone."""
    kept, archived, purged = [
        r.item
        for r in await pg_memories.add_many(
            [
                NewMemory(content="Mia swims on Tuesdays", source=SOURCE),
                NewMemory(
                    content="Mia swims in the lake", source=SOURCE, tags=("lake",)
                ),
                NewMemory(content="Mia swims with Leo", source=SOURCE, tags=("leo",)),
            ]
        )
    ]
    assert [h.id for h in await pg_keywords.search(["swim"])] == [
        kept.id,
        archived.id,
        purged.id,
    ]
    assert await pg_memories.forget([archived.id]) == [archived.id]
    assert await pg_memories.forget([purged.id], purge=True) == [purged.id]
    assert [h.id for h in await pg_keywords.search(["swim", "lake", "leo"])] == [
        kept.id
    ]
    archived_hits = await pg_keywords.search(["lake"], statuses=("archived",))
    assert [h.id for h in archived_hits] == [archived.id]
    assert await pg_memories.get_many([purged.id]) == {}
    for table in ("memory_terms", "memory_tags"):
        assert not await _count(
            postgres_pool,
            f"SELECT count(*) FROM {table} WHERE memory_id = $1",  # noqa: S608
            purged.id,
        )
    tokens = await _count(postgres_pool, "SELECT sum(term_count) FROM memories")
    async with postgres_pool.acquire() as connection:
        rows, total = await connection.fetchrow(
            "SELECT sum(rows), sum(tokens) FROM memory_term_totals"
        )
    assert (rows, total) == (2, tokens)
    with pytest.raises(UnknownMemoryError):
        await pg_memories.forget([kept.id, purged.id])
    assert (await pg_memories.get(kept.id)) == kept


async def test_two_instances_migrating_at_once_apply_each_step_once(
    postgres_database: str,
) -> None:
    """The advisory lock: one migrates, the other waits and finds it done."""
    connections = [await asyncpg.connect(postgres_database) for _ in range(2)]
    try:
        found = await asyncio.gather(*(migrate(c) for c in connections))
        assert sorted(found) == [0, SCHEMA_VERSION]
        assert await schema_version(connections[0]) == SCHEMA_VERSION
        assert await migrate(connections[1]) == SCHEMA_VERSION
    finally:
        for connection in connections:
            await connection.close()
