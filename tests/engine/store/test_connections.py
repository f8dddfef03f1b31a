"""Tests of the connections: the shared readers refuse the cursor API.

A cursor keeps its statement, and its connection's read snapshot, open
between hand-offs; a read another coroutine queues on a shared reader
meanwhile would miss what the writer committed since (a memory just added,
then not found). No test drives that interleaving reliably through the
store's own paths, so the protection is this guard: every shared reader is
a `ReadConnection`, whose `execute` and `cursor` raise, and the whole suite
(which runs every reader path) shows that none of them needs a cursor.
`tests/engine/test_sql.py` shows that a write between two pages of
`read_pages` is seen.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
import threading
import warnings

import aiosqlite
import pytest

from custom_components.memory.engine import MemoryStore
from custom_components.memory.engine.store.connections import ReadConnection, connect
from tests.engine.conftest import Backend


def _readers(store: MemoryStore) -> list[aiosqlite.Connection]:
    return [store.database.connections()[1], *store.database.vector_readers]


async def test_the_readers_refuse_cursors(store: MemoryStore, backend: Backend) -> None:
    """The reader and every vector reader raise TypeError for execute and cursor."""
    readers = _readers(store)
    # The reader, the vector reader, and sqlite-vec's second shard's reader.
    assert len(readers) == (3 if backend == "sqlite-vec" else 2)
    for reader in readers:
        assert isinstance(reader, ReadConnection)
        with pytest.raises(TypeError, match="one hand-off"):
            await reader.execute("SELECT 1")
        with pytest.raises(TypeError, match="one hand-off"):
            await reader.cursor()
        # One-hand-off reads work, with the store's row factory.
        rows = await reader.execute_fetchall("SELECT 1 AS one")
        assert [row["one"] for row in rows] == [1]


async def test_the_writer_keeps_cursors(store: MemoryStore) -> None:
    """The writer is a plain connection: its transactions step statements."""
    writer, _reader = store.database.connections()
    assert not isinstance(writer, ReadConnection)
    async with writer.execute("SELECT 2") as cursor:
        assert tuple(await cursor.fetchone() or ()) == (2,)


async def test_readers_have_the_pragmas(store: MemoryStore) -> None:
    """Every reader waits for locks and checks foreign keys like the writer."""
    for conn in (store.database.connections()[0], *_readers(store)):
        timeout = await conn.execute_fetchall("PRAGMA busy_timeout")
        keys = await conn.execute_fetchall("PRAGMA foreign_keys")
        assert [tuple(row) for row in (*timeout, *keys)] == [(10_000,), (1,)]


async def test_a_cancelled_open_leaves_no_database_open(tmp_path: Path) -> None:
    """Cancelled while its thread opens the file, the connection is closed anyway.

    The file is opened on the connection's own thread whatever the caller
    does; a set-up cancelled then (Home Assistant stopping, the entry
    unloaded) used to leave that sqlite3 connection for the garbage
    collector, which warns "unclosed database".
    """
    before = set(threading.enumerate())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = asyncio.create_task(connect(tmp_path / "memory.db", reader=False))
        await asyncio.sleep(0)  # the file is being opened on the new thread
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            _opened = await task
        for _ in range(500):
            started = set(threading.enumerate()) - before
            if not any(thread.is_alive() for thread in started):
                break
            await asyncio.sleep(0.01)
        gc.collect()
    assert not set(threading.enumerate()) - before
    assert not [w for w in caught if "unclosed database" in str(w.message)]
