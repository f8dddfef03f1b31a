"""Fixtures of the PostgreSQL memories' tests: a migrated database's pool, its parts, open stores."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from custom_components.memory.engine.postgres import (
    PostgresCuration,
    PostgresKeywords,
    PostgresMemories,
    PostgresReads,
    migrate,
)
from tests.engine.conftest import PROVIDER_MODEL, START, FakeClock, StoreFactory
from tests.engine.postgres.parity import Both
from tests.engine.postgres.stores import PgStores, Store


@pytest.fixture
async def postgres_pool(postgres_database: str) -> AsyncIterator[Any]:
    """Yield an asyncpg pool on a fresh database with the memories' schema."""
    pool = await asyncpg.create_pool(postgres_database, min_size=1, max_size=4)
    try:
        async with pool.acquire() as connection:
            await migrate(connection)
        yield pool
    finally:
        await pool.close()


@pytest.fixture
def pg_memories(postgres_pool: Any) -> PostgresMemories:
    """Return the memories of `postgres_pool`, their clock fixed at START."""
    return PostgresMemories(postgres_pool, clock=lambda: START)


@pytest.fixture
def pg_keywords(postgres_pool: Any) -> PostgresKeywords:
    """Return keyword search over `postgres_pool`."""
    return PostgresKeywords(postgres_pool)


@pytest.fixture
async def both(
    store_factory: StoreFactory,
    db_path: Path,
    postgres_pool: Any,
    clock: FakeClock,
) -> Both:
    """Return a SQLite store and the PostgreSQL parts on one fake clock."""
    store = await store_factory()
    return Both(
        store,
        db_path,
        postgres_pool,
        PostgresMemories(postgres_pool, clock=clock),
        PostgresCuration(postgres_pool, clock=clock),
        PostgresReads(postgres_pool),
    )


@pytest.fixture(params=["sqlite", "postgres"])
def backend_url(request: pytest.FixtureRequest) -> str | None:
    """Each backend in turn: None for SQLite, a fresh database's URL for PostgreSQL."""
    if request.param == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_database")
    return url


@pytest.fixture
async def stores(postgres_database: str, clock: FakeClock) -> AsyncIterator[PgStores]:
    """Open PostgresStores on one fresh database; all closed after the test."""
    opened = PgStores(postgres_database, clock)
    try:
        yield opened
    finally:
        await opened.close_all()


@pytest.fixture
async def provider_store(
    backend_url: str | None, store_factory: StoreFactory, clock: FakeClock
) -> AsyncIterator[Store]:
    """Open a store of each backend in turn, filing vectors under the provider's model."""
    if backend_url is None:
        yield await store_factory(model=PROVIDER_MODEL)
        return
    stores = PgStores(backend_url, clock)
    try:
        yield await stores.open(model=PROVIDER_MODEL)
    finally:
        await stores.close_all()
