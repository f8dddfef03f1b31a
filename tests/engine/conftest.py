"""Fixtures and helpers for the engine tests (plain pytest, no Home Assistant).

`store` is parametrised over both vector backends, so every test that uses it
runs once with the numpy index and once with sqlite-vec's `vec0` table.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
import sqlite3
import threading
from typing import Any, Literal

import aiohttp
import numpy as np
import numpy.typing as npt
import pytest

from custom_components.memory.engine import (
    MemoryStore,
    MemoryType,
    NewMemory,
    Origin,
    SearchHit,
    Signal,
    Source,
)
from custom_components.memory.engine.embedding.providers import (
    OllamaProvider,
    model_key,
)
from custom_components.memory.engine.embedding.queue import (
    BATCH_SIZE,
    QUERY_TIMEOUT,
    EmbeddingQueue,
)
from tests.provider_servers import FakeEmbeddingServer

type Backend = Literal["numpy", "sqlite-vec"]
type BackendChoice = Literal["auto", "numpy", "sqlite-vec"]
BACKENDS: tuple[Backend, ...] = ("numpy", "sqlite-vec")

DIM = 16
MODEL = "test-model"
# 2026-01-01T00:00:00Z: the fake clock starts here.
START = datetime(2026, 1, 1, tzinfo=UTC).timestamp()

SOURCE = Source(
    origin=Origin.TOOL,
    conversation_id="conv-1",
    agent_id="conversation.agent",
    device_id="device-1",
    user_id="user-1",
)


class FakeClock:
    """A settable clock for the store: every call returns `now`."""

    def __init__(self, now: float = START) -> None:
        """Start at `now` (epoch seconds)."""
        self.now = now

    def __call__(self) -> float:
        """Return the current fake time."""
        return self.now

    def advance(self, seconds: float) -> float:
        """Move forward and return the new time."""
        self.now += seconds
        return self.now


def vector(seed: int | str, dim: int = DIM) -> npt.NDArray[np.float32]:
    """Make a deterministic pseudo-random vector: one seed, one vector."""
    if isinstance(seed, str):
        seed = int.from_bytes(seed.encode()[:16].ljust(16, b"\0"), "little")
    rng = np.random.default_rng(seed)
    return rng.standard_normal(dim).astype(np.float32)


def unit(values: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """`values` as a float32 unit vector, as the store keeps them."""
    array = np.asarray(values, dtype=np.float32)
    return (array / np.linalg.norm(array)).astype(np.float32)


def memory(content: str, **kwargs: Any) -> NewMemory:
    """Make a new memory with a test source; keyword arguments override fields."""
    kwargs.setdefault("source", SOURCE)
    kwargs.setdefault("type", MemoryType.FACT)
    return NewMemory(content=content, **kwargs)


type StoreFactory = Callable[..., Awaitable[MemoryStore]]


@pytest.fixture(autouse=True)
def join_connection_threads() -> Iterator[None]:
    """Wait for the worker threads of closed aiosqlite connections to end.

    `aiosqlite.Connection.close()` returns before its thread has exited, and
    the Home Assistant plugin's cleanup check fails on any thread still alive.
    """
    before = set(threading.enumerate())
    yield
    for thread in set(threading.enumerate()) - before:
        if thread.name.endswith("(_connection_worker_thread)"):
            thread.join(timeout=10)
            assert not thread.is_alive(), "an aiosqlite connection was not closed"


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    """Open a plain aiohttp session, as Home Assistant's shared one would be."""
    async with aiohttp.ClientSession() as client:
        yield client


@pytest.fixture
def provider(
    session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> OllamaProvider:
    """Point an Ollama provider at the local server (the queue tests' model)."""
    return OllamaProvider(session, model="embed-small", url=embedding_server.url)


# The key `provider`'s vectors (embed-small, 32 dimensions) are filed under.
PROVIDER_MODEL = model_key("ollama", "embed-small", 32)


def make_queue(
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    *,
    model: str = PROVIDER_MODEL,
    batch_size: int = BATCH_SIZE,
    query_timeout: float = QUERY_TIMEOUT,
) -> EmbeddingQueue:
    """Make an embedding queue on the test clock, for 32-dimension vectors."""
    return EmbeddingQueue(
        store,
        provider,
        model,
        clock=clock,
        dimensions=32,
        batch_size=batch_size,
        query_timeout=query_timeout,
    )


def fresh_bool(value: object) -> bool:
    """Read a boolean afresh (mypy would keep it narrowed from an earlier assert)."""
    return bool(value)


async def run_until_idle(queue: EmbeddingQueue, *, steps: int = 100) -> float | None:
    """Run until nothing is due now (at most `steps`); return the last delay."""
    for _ in range(steps):
        delay = await queue.run_once()
        if delay != 0:
            return delay
    raise AssertionError("the queue never settled")


@pytest.fixture
def clock() -> FakeClock:
    """Give every store of a test the same fake clock."""
    return FakeClock()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    """Each vector backend in turn."""
    choice: Backend = request.param
    return choice


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the test's database lives."""
    return tmp_path / "memory.db"


@pytest.fixture
async def store_factory(db_path: Path, clock: FakeClock) -> AsyncIterator[StoreFactory]:
    """Open stores (defaults: the test's path, numpy, the test model and clock).

    Every store opened through it is closed at the end of the test, so a test
    may close and reopen freely, or open one store per backend.
    """
    opened: list[MemoryStore] = []

    async def factory(
        path: Path | None = None,
        *,
        model: str | None = MODEL,
        vector_backend: BackendChoice = "numpy",
    ) -> MemoryStore:
        store = MemoryStore(
            path or db_path, model=model, vector_backend=vector_backend, clock=clock
        )
        opened.append(store)
        await store.open()
        return store

    yield factory
    for store in opened:
        await store.close()


@pytest.fixture
def open_store(store_factory: StoreFactory, backend: Backend) -> StoreFactory:
    """Like `store_factory`, with the test's backend as the default."""

    async def factory(
        path: Path | None = None,
        *,
        model: str | None = MODEL,
        vector_backend: Backend | None = None,
    ) -> MemoryStore:
        return await store_factory(
            path, model=model, vector_backend=vector_backend or backend
        )

    return factory


@pytest.fixture
async def store(open_store: StoreFactory, backend: Backend) -> MemoryStore:
    """Open a store on an empty database; it is closed after the test."""
    opened = await open_store()
    assert opened.vector_backend == backend
    return opened


# -- what the store tests read back --------------------------------------------

KEYWORD = (Signal.KEYWORD,)
SEMANTIC = (Signal.SEMANTIC,)
BOTH = (Signal.KEYWORD, Signal.SEMANTIC)


def ids(hits: list[SearchHit]) -> list[int]:
    """Return the ids of search hits, in order."""
    return [hit.item.id for hit in hits]


def contents(hits: list[SearchHit]) -> list[str]:
    """Return the contents of search hits, in order."""
    return [hit.item.content for hit in hits]


def sql(path: Path, statement: str, *args: Any) -> list[tuple[Any, ...]]:
    """Run one statement on a separate plain sqlite3 connection."""
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute(statement, args).fetchall()
        conn.commit()
    return [tuple(row) for row in rows]


def file_bytes(path: Path) -> bytes:
    """Read the database file and its write-ahead log, if any."""
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def near(
    seed: int | str, noise: float = 0.05, dim: int = DIM
) -> npt.NDArray[np.float32]:
    """Make a vector close to `vector(seed)`."""
    base = vector(seed, dim)
    return base + noise * float(np.linalg.norm(base)) * vector(f"noise-{seed}", dim)
