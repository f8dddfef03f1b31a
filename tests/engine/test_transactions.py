"""Write transactions under cancellation, on a real aiosqlite connection.

aiosqlite runs statements on the connection's thread, in order. A statement
that sleeps there (`pause(seconds)`) holds back what is queued after it, so
the test can cancel a task at the exact moment it awaits `COMMIT` or `BEGIN`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
import sqlite3
import time

import aiosqlite
import pytest

from custom_components.memory.engine.transactions import immediate_transaction


def _pause(seconds: float) -> int:
    time.sleep(seconds)
    return 0


@pytest.fixture
async def conn(tmp_path: Path) -> AsyncIterator[aiosqlite.Connection]:
    """Open a connection in autocommit mode (as the store does), with a table."""
    async with aiosqlite.connect(tmp_path / "t.db", isolation_level=None) as conn:
        await conn.create_function("pause", 1, _pause)
        await conn.execute("CREATE TABLE t (x INTEGER)")
        yield conn


async def _hold_thread(
    conn: aiosqlite.Connection, seconds: float
) -> asyncio.Task[None]:
    """Queue a slow statement and wait until the connection's thread runs it."""

    async def run() -> None:
        await conn.execute_fetchall("SELECT pause(?)", (seconds,))

    task = asyncio.create_task(run())
    await asyncio.sleep(0.05)
    return task


async def _count(conn: aiosqlite.Connection) -> int:
    rows = list(await conn.execute_fetchall("SELECT count(*) FROM t"))
    return int(rows[0][0])


async def test_commits_and_rolls_back(conn: aiosqlite.Connection) -> None:
    """The block's writes are committed, or undone when it raises."""
    async with immediate_transaction(conn):
        await conn.execute("INSERT INTO t VALUES (1)")

    async def fail() -> None:
        async with immediate_transaction(conn):
            await conn.execute("INSERT INTO t VALUES (2)")
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await fail()
    assert not conn.in_transaction
    assert await _count(conn) == 1


async def test_cancelled_during_commit_stays_cancelled(
    conn: aiosqlite.Connection,
) -> None:
    """COMMIT runs anyway; the failing ROLLBACK must not replace the cancel.

    Before, the task raised "cannot rollback - no transaction is active": a
    worker loop took that for a failed write, went on, and unloading the
    integration waited for it forever.
    """
    inside = asyncio.Event()
    go = asyncio.Event()

    async def write() -> None:
        async with immediate_transaction(conn):
            await conn.execute("INSERT INTO t VALUES (1)")
            inside.set()
            await go.wait()

    task = asyncio.create_task(write())
    await inside.wait()
    held = await _hold_thread(conn, 0.3)
    go.set()
    for _ in range(5):  # let the task queue its COMMIT behind the pause
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await held
    assert not conn.in_transaction
    assert await _count(conn) == 1  # the COMMIT did run
    async with immediate_transaction(conn):  # and the connection is usable
        await conn.execute("INSERT INTO t VALUES (2)")
    assert await _count(conn) == 2


async def test_cancelled_during_begin_leaves_no_transaction(
    conn: aiosqlite.Connection,
) -> None:
    """A BEGIN that runs after its task was cancelled is rolled back."""
    held = await _hold_thread(conn, 0.3)

    async def write() -> None:
        async with immediate_transaction(conn):
            await conn.execute("INSERT INTO t VALUES (1)")

    task = asyncio.create_task(write())
    for _ in range(5):  # let the task queue its BEGIN behind the pause
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await held
    await conn.execute_fetchall("SELECT 1")  # everything queued has run
    assert not conn.in_transaction
    assert await _count(conn) == 0
    async with immediate_transaction(conn):
        await conn.execute("INSERT INTO t VALUES (2)")
    assert await _count(conn) == 1


async def test_failed_begin_keeps_its_error(conn: aiosqlite.Connection) -> None:
    """A BEGIN that fails reports why, not that there was nothing to roll back."""
    await conn.execute("BEGIN")
    with pytest.raises(sqlite3.OperationalError, match="within a transaction"):
        async with immediate_transaction(conn):
            pytest.fail("the block must not run")  # pragma: no cover
    assert not conn.in_transaction
