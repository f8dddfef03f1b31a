"""Helpers of the facade's tests: PostgresStores opened on one database, a union type.

`PgStores` opens `PostgresStore`s on the test's database and fake clock
and closes them all at the end; `Store` is either backend, for tests that
run the same assertions on both; `Heard` counts a store's listener calls
and lets a test wait for a number of them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from custom_components.memory.engine import MemoryStore
from custom_components.memory.engine.postgres import PostgresStore
from tests.engine.conftest import MODEL, FakeClock

type Store = MemoryStore | PostgresStore


class PgStores:
    """Open PostgresStores on one database; `close_all` closes each."""

    def __init__(self, url: str, clock: FakeClock) -> None:
        """Hold the database's URL and the clock every store reads."""
        self.url = url
        self.clock = clock
        self.opened: list[PostgresStore] = []

    async def open(self, **kwargs: Any) -> PostgresStore:
        """Open one more store (defaults: the test model and clock)."""
        kwargs.setdefault("model", MODEL)
        store = PostgresStore(self.url, clock=self.clock, **kwargs)
        self.opened.append(store)
        await store.open()
        return store

    async def close_all(self) -> None:
        """Close every store opened here."""
        for store in self.opened:
            await store.close()


class Heard:
    """A listener: counts its calls, and lets a test wait for a number of them."""

    def __init__(self) -> None:
        """Nothing heard yet."""
        self.calls = 0
        self._event = asyncio.Event()

    def __call__(self) -> None:
        """Count a call and wake a waiter."""
        self.calls += 1
        self._event.set()

    async def reach(self, calls: int, timeout: float = 10.0) -> None:  # noqa: ASYNC109
        """Wait until the listener was called `calls` times in all (or time out)."""
        async with asyncio.timeout(timeout):
            while self.calls < calls:
                self._event.clear()
                await self._event.wait()
