"""The cosine scale's stamp: counts the triggers keep, read in O(1), right across instances.

Each model's vectors and changes are kept in `memory_vector_changes` by
triggers on `memory_vectors` (`vector_changes`). A store's cosine scale
follows what another store on the same database adds, replaces and purges
(each scale equal, to 1e-9, to one drawn afresh from the stored vectors in
id order); concurrent writers through two stores leave the counts equal
to the table's; a hybrid search reads the stamp and never counts the
vectors, and draws its sample again only after a write; a database of
schema version 4 with vectors gets its counts at the migration, and a
vector table made again is counted afresh.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
import math
import re
from typing import Any

import asyncpg
import numpy as np
import pytest

from custom_components.memory.engine import SearchQuery
from custom_components.memory.engine.models import Vector
from custom_components.memory.engine.postgres import (
    PgVectorIndex,
    PostgresMemories,
    PostgresSearch,
    PostgresStore,
    create_vector_table,
    migrate,
    register_vector,
    schema_version,
)
from custom_components.memory.engine.postgres.schema import MIGRATIONS, SCHEMA_VERSION
from custom_components.memory.engine.postgres.vector_changes import (
    COMPACT_AFTER,
    STAMP,
    TRACK_CHANGES,
)
from custom_components.memory.engine.postgres.vectors import LINK_TO_MEMORIES
from custom_components.memory.engine.vectors import CosineScale, as_unit_vector
from tests.engine.conftest import DIM, MODEL, FakeClock, memory, unit, vector
from tests.engine.postgres.stores import PgStores

OTHER = "other-model"
_COUNTS = "SELECT model, count(*) FROM memory_vectors GROUP BY model ORDER BY model"
_KEPT = (
    "SELECT model, sum(rows), sum(changes) FROM memory_vector_changes"
    " GROUP BY model HAVING sum(rows) <> 0 ORDER BY model"
)

# A count (or highest id) over the vectors: what the stamp was before.
_AGGREGATE = re.compile(r"^SELECT (count|max)\(.*\bFROM memory_vectors\b")


def expected_scale(vectors: dict[int, Vector], query: Vector) -> tuple[float, float]:
    """Give the scale of a sample drawn afresh from `vectors` offered in id order."""
    sample = CosineScale()
    sample.add(np.stack([as_unit_vector(vectors[i]) for i in sorted(vectors)]))
    scale = sample.scale(query)
    assert scale is not None
    return scale.level, scale.spread


async def assert_scale(
    store: PostgresStore, vectors: dict[int, Vector], query: Vector
) -> None:
    """Assert that `store`'s scale of `query` is the stored vectors' now."""
    scale = await store.cosine_scale(query)
    assert scale is not None
    level, spread = expected_scale(vectors, query)
    assert math.isclose(scale.level, level, rel_tol=0, abs_tol=1e-9)
    assert math.isclose(scale.spread, spread, rel_tol=0, abs_tol=1e-9)


async def kept_counts(url: str) -> tuple[list[Any], list[Any]]:
    """Return the table's rows by model, and what the counts say."""
    connection = await asyncpg.connect(url)
    try:
        counted = [tuple(r) for r in await connection.fetch(_COUNTS)]
        kept = [tuple(r) for r in await connection.fetch(_KEPT)]
    finally:
        await connection.close()
    return counted, kept


async def test_the_scale_follows_another_stores_writes(stores: PgStores) -> None:
    """Adds, a replaced vector and purges through the first reach the second's scale."""
    first, second = await stores.open(), await stores.open()
    added = [
        r.item.id
        for r in await first.add_many([memory(f"Note {n}.") for n in range(16)])
    ]
    query = unit(vector("query"))
    stored = {item_id: vector(item_id) for item_id in added[:10]}
    await first.set_vectors(stored)
    await assert_scale(second, stored, query)
    # The same count and highest id, another vector.
    replaced = {added[3]: vector("replaced")}
    await first.set_vectors(replaced)
    stored |= replaced
    await assert_scale(second, stored, query)
    more = {item_id: vector(item_id) for item_id in added[12:]}
    await first.set_vectors(more)
    stored |= more
    await assert_scale(second, stored, query)
    await first.forget(added[:3], purge=True)
    for item_id in added[:3]:
        del stored[item_id]
    await assert_scale(second, stored, query)
    # One vector purged and one added below the highest id: the count and
    # the highest id stay, the vectors do not.
    await first.forget([added[5]], purge=True)
    del stored[added[5]]
    late = {added[10]: vector("late")}
    await first.set_vectors(late)
    stored |= late
    await assert_scale(second, stored, query)
    counted, kept = await kept_counts(stores.url)
    assert counted == [(MODEL, len(stored))]
    assert [row[:2] for row in kept] == counted


async def test_concurrent_writers_keep_the_counts(stores: PgStores) -> None:
    """Two stores writing and purging at once: the counts stay the table's."""
    first, second = await stores.open(), await stores.open()
    added = [
        r.item.id
        for r in await first.add_many([memory(f"Fact {n}.") for n in range(120)])
    ]
    await first.set_vectors({i: vector(i) for i in added[:20]})
    halves = (added[20:70], added[70:])
    await asyncio.gather(
        first.set_vectors({i: vector(i) for i in halves[0]}),
        second.set_vectors({i: vector(i) for i in halves[1]}),
        second.forget(added[:10], purge=True),
        *(first.set_vectors({i: vector(f"again {i}")}) for i in added[60:66]),
    )
    stored = {i: vector(i) for i in added[10:]}
    stored |= {i: vector(f"again {i}") for i in added[60:66]}
    counted, kept = await kept_counts(stores.url)
    assert counted == [(MODEL, 110)]
    assert [row[:2] for row in kept] == counted
    query = unit(vector("query"))
    await assert_scale(second, stored, query)
    await assert_scale(first, stored, query)


class Logged:
    """The statements a pool's connections ran (asyncpg's query logger)."""

    def __init__(self) -> None:
        """Nothing run yet."""
        self.queries: list[str] = []

    def __call__(self, record: Any) -> None:
        """Keep the text of one statement run."""
        self.queries.append(" ".join(str(record.query).split()))

    async def take(self) -> list[str]:
        """Return the statements run since the last take (their loggers run soon)."""
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        taken, self.queries = self.queries, []
        return taken


@pytest.fixture
async def logged_pool(postgres_database: str) -> AsyncIterator[tuple[Any, Logged]]:
    """Yield a migrated database's pool whose connections log each statement."""
    logged = Logged()

    async def init(connection: Any) -> None:
        await register_vector(connection)
        connection.add_query_logger(logged)

    pool = await asyncpg.create_pool(
        postgres_database, min_size=1, max_size=4, init=init
    )
    try:
        async with pool.acquire() as connection:
            await migrate(connection)
        yield pool, logged
    finally:
        await pool.close()


def draws(queries: Sequence[str]) -> int:
    """How many times the sample was drawn (its ids read in order)."""
    return sum(
        "FROM memory_vectors WHERE model = $1 ORDER BY memory_id" in q for q in queries
    )


async def test_a_search_reads_the_stamp_not_the_vectors_count(
    logged_pool: tuple[Any, Logged], clock: FakeClock
) -> None:
    """A hybrid search looks its stamp up; the sample is drawn again after writes only."""
    pool, logged = logged_pool
    memories = PostgresMemories(pool, clock=clock)
    index = PgVectorIndex(pool, MODEL, DIM)
    await index.create()
    search = PostgresSearch(pool, vectors=index, clock=clock)
    other = PostgresSearch(pool, vectors=PgVectorIndex(pool, MODEL, DIM), clock=clock)
    added = [
        r.item.id
        for r in await memories.add_many([memory(f"Note {n}.") for n in range(12)])
    ]
    await search.set_vectors({i: vector(i) for i in added[:10]})
    query = SearchQuery(text="note", vector=vector(3))
    await logged.take()
    runs = []
    for _ in range(3):
        assert await search.search(query)
        runs.append(await logged.take())
    await other.set_vectors({added[10]: vector(10)})
    await logged.take()
    assert await search.search(query)
    runs.append(await logged.take())
    await memories.forget([added[0]], purge=True)
    await logged.take()
    assert await search.search(query)
    runs.append(await logged.take())
    for queries in runs:
        assert sum(q == " ".join(STAMP.split()) for q in queries) == 1
        assert not [q for q in queries if _AGGREGATE.search(q)]
    # Drawn at the first search, then only after the other's write and the purge.
    assert [draws(queries) for queries in runs] == [1, 0, 0, 1, 1]


async def test_many_small_writes_are_folded(
    logged_pool: tuple[Any, Logged], clock: FakeClock
) -> None:
    """Past COMPACT_AFTER deltas a search folds them: its stamp stays a few rows."""
    pool, _logged = logged_pool
    memories = PostgresMemories(pool, clock=clock)
    index = PgVectorIndex(pool, MODEL, DIM)
    await index.create()
    search = PostgresSearch(pool, vectors=index, clock=clock)
    count = COMPACT_AFTER + 10
    added = [
        r.item.id
        for r in await memories.add_many([memory(f"Note {n}.") for n in range(count)])
    ]
    for item_id in added:
        await index.add([item_id], unit(vector(item_id)).reshape(1, -1))
    async with pool.acquire() as connection:
        assert await connection.fetchrow(STAMP, MODEL) == (count, count, count)
    assert await search.search(SearchQuery(text="note", vector=vector(1)))
    async with pool.acquire() as connection:
        assert await connection.fetchrow(STAMP, MODEL) == (count, count, 1)
    # A batch past COMPACT_AFTER (one delta a row) is folded as it commits.
    await index.add(added, np.stack([unit(vector(f"again {i}")) for i in added]))
    async with pool.acquire() as connection:
        assert await connection.fetchrow(STAMP, MODEL) == (count, 2 * count, 1)


async def _memories(connection: Any, count: int) -> list[int]:
    """Insert `count` bare memories; return their ids."""
    return [
        int(r[0])
        for r in await connection.fetch(
            "INSERT INTO memories (scope, type, content, content_key,"
            " created_at, updated_at, origin)"
            " SELECT 'household', 'fact', 'm' || n, 'm' || n, 0, 0, 'tool'"
            " FROM generate_series(1, $1) AS n RETURNING id",
            count,
        )
    ]


async def _schema_4(connection: Any) -> None:
    """Make the schema of version 4, its vector table as that version made it."""
    async with connection.transaction():
        for step in MIGRATIONS[:4]:
            for statement in step:
                await connection.execute(statement)
        await connection.execute(
            "CREATE TABLE memory_schema (only_row boolean PRIMARY KEY DEFAULT true"
            " CHECK (only_row), version integer NOT NULL)"
        )
        await connection.execute("INSERT INTO memory_schema (version) VALUES (4)")
    await connection.execute(
        "CREATE TABLE memory_vectors (model text NOT NULL,"
        f" memory_id bigint NOT NULL, embedding vector({DIM}) NOT NULL,"
        " PRIMARY KEY (model, memory_id))"
    )
    await connection.execute(LINK_TO_MEMORIES)


async def test_the_migration_counts_the_vectors_there(
    postgres_database: str, clock: FakeClock
) -> None:
    """Vectors of two models stored before the counts: their step counts them, then follows."""
    connection = await asyncpg.connect(postgres_database)
    try:
        await register_vector(connection)
        await _schema_4(connection)
        ids = await _memories(connection, 30)
        insert = (
            "INSERT INTO memory_vectors (model, memory_id, embedding)"
            " VALUES ($1, $2, $3)"
        )
        await connection.executemany(insert, [(MODEL, i, vector(i)) for i in ids])
        await connection.executemany(
            insert, [(OTHER, i, vector(f"other {i}")) for i in ids[:12]]
        )
        await connection.execute("DELETE FROM memories WHERE id = ANY($1)", ids[:5])
        assert await migrate(connection) == 4
        assert await schema_version(connection) == SCHEMA_VERSION
        assert await connection.fetchrow(STAMP, MODEL) == (25, 1, 1)
        assert await connection.fetchrow(STAMP, OTHER) == (7, 1, 1)
        assert await connection.fetchrow(STAMP, "none") == (0, 0, 0)
        # The triggers count from here on.
        await connection.execute("DELETE FROM memories WHERE id = ANY($1)", ids[5:8])
        await connection.executemany(insert, [(OTHER, i, vector(i)) for i in ids[12:]])
        assert await connection.fetchrow(STAMP, MODEL) == (22, 2, 2)
        assert await connection.fetchrow(STAMP, OTHER) == (22, 20, 20)
        assert await migrate(connection) == SCHEMA_VERSION
    finally:
        await connection.close()
    counted, kept = await kept_counts(postgres_database)
    assert [row[:2] for row in kept] == counted == sorted([(MODEL, 22), (OTHER, 22)])


async def test_a_vector_table_made_again_is_counted_afresh(
    postgres_database: str,
) -> None:
    """Deltas of a dropped table stay behind; a new table's counts start right."""
    connection = await asyncpg.connect(postgres_database)
    try:
        await register_vector(connection)
        await migrate(connection)
        ids = await _memories(connection, 5)
        await create_vector_table(connection, DIM)
        await connection.executemany(
            "INSERT INTO memory_vectors (model, memory_id, embedding)"
            " VALUES ($1, $2, $3)",
            [(MODEL, i, vector(i)) for i in ids],
        )
        assert await connection.fetchrow(STAMP, MODEL) == (5, 5, 5)
        await connection.execute("DROP TABLE memory_vectors")
        await connection.execute(
            "CREATE TABLE memory_vectors (model text NOT NULL,"
            f" memory_id bigint NOT NULL, embedding vector({DIM}) NOT NULL,"
            " PRIMARY KEY (model, memory_id))"
        )
        await connection.executemany(
            "INSERT INTO memory_vectors (model, memory_id, embedding)"
            " VALUES ($1, $2, $3)",
            [(MODEL, i, vector(i)) for i in ids[:3]],
        )
        await create_vector_table(connection, DIM)
        # Three vectors; the changes only grow, so no earlier stamp comes back.
        assert await connection.fetchrow(STAMP, MODEL) == (3, 6, 6)
    finally:
        await connection.close()


async def test_two_instances_attaching_at_once_count_once(
    postgres_database: str,
) -> None:
    """Both run TRACK_CHANGES on a table without it: one attaches, the rows count once."""
    connections = [await asyncpg.connect(postgres_database) for _ in range(2)]
    try:
        first = connections[0]
        await register_vector(first)
        await _schema_4(first)
        ids = await _memories(first, 9)
        await first.executemany(
            "INSERT INTO memory_vectors (model, memory_id, embedding)"
            " VALUES ($1, $2, $3)",
            [(MODEL, i, vector(i)) for i in ids],
        )
        await asyncio.gather(*(c.execute(TRACK_CHANGES) for c in connections))
        triggers = await first.fetchval(
            "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'memory_vectors_changes%'"
        )
        assert triggers == 3
        assert await first.fetchrow(STAMP, MODEL) == (9, 1, 1)
    finally:
        for connection in connections:
            await connection.close()
