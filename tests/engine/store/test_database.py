"""Tests of the database: persistence, backends, transactions, opening, closing.

Most tests run on both vector backends through the `store` fixture.
"""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import closing
from pathlib import Path
import random
import sqlite3
import sys

import pytest
import sqlite_vec

from custom_components.memory.engine import (
    SCHEMA_VERSION,
    DatabaseCorruptError,
    DatabaseTooNewError,
    DatabaseUnavailableError,
    MemoryStore,
    SearchQuery,
)
from custom_components.memory.engine.store import (
    database as database_module,
    memory_vectors as memory_vectors_module,
)
from tests.engine.conftest import (
    DIM,
    MODEL,
    Backend,
    FakeClock,
    StoreFactory,
    ids,
    memory,
    sql,
    vector,
)

# -- the database alone -----------------------------------------------------------------


async def test_bare_database_has_no_index(db_path: Path) -> None:
    """The database alone opens, migrates and closes: no derived data to load."""
    database = database_module.Database(db_path, model=MODEL)
    await database.open(defer_index=True)
    try:
        assert await database.schema_version(database.reader) == SCHEMA_VERSION
        await database.load_index()
        assert database._derived == []
        assert not database._derived_pending
    finally:
        await database.close()
    assert database_module.Database(db_path).database_bytes() > 0


# -- persistence ------------------------------------------------------------------------


async def test_reopen_keeps_everything(open_store: StoreFactory, db_path: Path) -> None:
    """Memories, vectors and the index survive close and reopen."""
    store = await open_store()
    added = await store.add_many(
        [memory(f"Persistent note {i}", tags=("keep",)) for i in range(300)],
        vectors=[vector(i) for i in range(300)],
    )
    await store.forget([added[0].item.id])
    queries = [
        SearchQuery(vector=vector(5)),
        SearchQuery(text="persistent note 17", vector=vector(17)),
        SearchQuery(text="keep", status="any", limit=50),
    ]
    before = [await store.search(query) for query in queries]
    stats_before = await store.stats()
    await store.close()
    await store.close()  # twice is fine
    with pytest.raises(DatabaseUnavailableError):
        await store.search(SearchQuery())
    assert Path(f"{db_path}-wal").exists() is False

    reopened = await open_store()
    after = [await reopened.search(query) for query in queries]
    assert after == before
    assert after[0][0].item.id == added[5].item.id
    assert after[0][0].score == pytest.approx(1.0, abs=1e-5)
    stats_after = await reopened.stats()
    assert stats_after.by_status == stats_before.by_status
    assert stats_after.vectors_by_model == {MODEL: 300}
    # The index is whole: each stored vector finds its own memory.
    for i in (1, 150, 299):
        hits = await reopened.search(SearchQuery(vector=vector(i), limit=1))
        assert ids(hits) == [added[i].item.id]


@pytest.mark.parametrize(
    ("first", "second"), [("numpy", "sqlite-vec"), ("sqlite-vec", "numpy")]
)
async def test_switch_backend_between_opens(
    store_factory: StoreFactory, first: Backend, second: Backend
) -> None:
    """The index is derived data: another backend rebuilds it from the table."""
    store = await store_factory(vector_backend=first)
    added = await store.add_many(
        [memory(f"Switch note {i}") for i in range(100)],
        vectors=[vector(i) for i in range(100)],
    )
    before = await store.search(SearchQuery(vector=vector(3), limit=20))
    await store.close()
    reopened = await store_factory(vector_backend=second)
    assert reopened.vector_backend == second
    after = await reopened.search(SearchQuery(vector=vector(3), limit=20))
    assert ids(after) == ids(before)
    assert after[0].item.id == added[3].item.id
    # Back to the first backend after changes made with the second.
    await reopened.set_vectors({added[0].item.id: vector(500)})
    await reopened.close()
    third = await store_factory(vector_backend=first)
    hits = await third.search(SearchQuery(vector=vector(500), limit=1))
    assert ids(hits) == [added[0].item.id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_auto_backend_is_numpy(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """`auto` uses the numpy index even where sqlite-vec loads: no vec0 table."""
    store = await store_factory(vector_backend="auto")
    assert store.vector_backend == "numpy"
    assert store.database._shard_readers == []
    item = (await store.add(memory("Auto"), vector=vector(1))).item
    assert (await store.stats()).vector_backend == "numpy"
    assert ids(await store.search(SearchQuery(vector=vector(1)))) == [item.id]
    with closing(sqlite3.connect(db_path)) as conn:
        tables = conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'vec_%'"
        ).fetchall()
    assert tables == []


async def test_sqlite_vec_by_name_needs_the_package(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the sqlite_vec package `auto` is unaffected; asking for it raises."""
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)
    store = await store_factory(vector_backend="auto")
    assert store.vector_backend == "numpy"
    await store.close()
    with pytest.raises(ImportError):
        await store_factory(vector_backend="sqlite-vec")


async def test_sqlite_vec_by_name_needs_the_extension(
    store_factory: StoreFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """An extension that does not load: `auto` never tries it; asking for it raises."""
    monkeypatch.setattr(
        sqlite_vec, "loadable_path", lambda: str(tmp_path / "missing_vec0")
    )
    store = await store_factory(vector_backend="auto")
    assert store.vector_backend == "numpy"
    await store.close()
    with pytest.raises(DatabaseUnavailableError) as info:
        await store_factory(vector_backend="sqlite-vec")
    assert info.value.key == "database_unavailable"


# -- transactions, pausing and rollbacks -----------------------------------------------


async def test_transaction(store: MemoryStore) -> None:
    """`transaction` commits as a whole and notifies, or rolls back."""
    item = (await store.add(memory("Counted"))).item
    calls: list[None] = []
    store.add_listener(lambda: calls.append(None))
    async with store.transaction() as conn:
        await conn.execute(
            "UPDATE memories SET recall_count = 7 WHERE id = ?", (item.id,)
        )
    assert calls == [None]
    rows = await store.reader.execute_fetchall(
        "SELECT recall_count FROM memories WHERE id = ?", (item.id,)
    )
    assert [tuple(row) for row in rows] == [(7,)]

    async def failing() -> None:
        async with store.transaction() as conn:
            await conn.execute(
                "UPDATE memories SET recall_count = 9 WHERE id = ?", (item.id,)
            )
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await failing()
    assert calls == [None]
    again = await store.get(item.id)
    assert again is not None
    assert again.recall_count == 7


async def test_pause_writes(store: MemoryStore, db_path: Path) -> None:
    """Paused: the WAL is folded in, writes wait, searches go on."""
    first = (await store.add(memory("Written before the pause"))).item
    await store.pause_writes()
    assert Path(f"{db_path}-wal").stat().st_size == 0
    assert b"Written before the pause" in db_path.read_bytes()
    pending = asyncio.create_task(store.add(memory("Written during the pause")))
    await asyncio.sleep(0.05)
    assert not pending.done()
    assert ids(await store.search(SearchQuery(text="written"))) == [first.id]
    store.resume_writes()
    assert (await pending).created
    store.resume_writes()  # harmless when not paused
    assert len(await store.search(SearchQuery(text="written"))) == 2
    await store.add(memory("Not blocked any more"))


async def test_forget_rolls_back_on_error(store: MemoryStore, db_path: Path) -> None:
    """A failure inside forget changes nothing; the store keeps working."""
    item = (await store.add(memory("Sticky note"), vector=vector(1))).item
    sql(
        db_path,
        "CREATE TRIGGER no_archive BEFORE UPDATE OF status ON memories "
        "BEGIN SELECT RAISE(ABORT, 'archive blocked'); END",
    )
    sql(
        db_path,
        "CREATE TRIGGER no_delete BEFORE DELETE ON memories "
        "BEGIN SELECT RAISE(ABORT, 'delete blocked'); END",
    )
    with pytest.raises(sqlite3.IntegrityError, match="archive blocked"):
        await store.forget([item.id])
    with pytest.raises(sqlite3.IntegrityError, match="delete blocked"):
        await store.forget([item.id], purge=True)
    assert await store.get(item.id) == item
    assert ids(await store.search(SearchQuery(text="sticky", vector=vector(1)))) == [
        item.id
    ]
    sql(db_path, "DROP TRIGGER no_archive")
    sql(db_path, "DROP TRIGGER no_delete")
    assert await store.forget([item.id], purge=True) == [item.id]
    assert await store.get(item.id) is None


# -- opening: corrupt, too new, unavailable ------------------------------------------------


async def test_random_bytes_are_corrupt(
    open_store: StoreFactory, db_path: Path
) -> None:
    """A file of random bytes is refused and left untouched."""
    data = random.Random(1).randbytes(16_384)
    db_path.write_bytes(data)
    with pytest.raises(DatabaseCorruptError) as info:
        await open_store()
    assert info.value.key == "database_corrupt"
    assert info.value.placeholders == {"path": str(db_path)}
    assert db_path.read_bytes() == data


@pytest.mark.parametrize("keep", [0.5, 0.9])
async def test_truncated_database_is_corrupt(
    open_store: StoreFactory, db_path: Path, keep: float
) -> None:
    """A database cut short is refused and left untouched."""
    store = await open_store()
    await store.add_many(
        [memory(f"Row {i} " + "padding " * 50) for i in range(400)],
        vectors=[vector(i) for i in range(400)],
    )
    await store.close()
    data = db_path.read_bytes()
    assert len(data) > 100_000
    truncated = data[: int(len(data) * keep) // 4096 * 4096 + 100]
    db_path.write_bytes(truncated)
    with pytest.raises(DatabaseCorruptError):
        await open_store()
    assert db_path.read_bytes() == truncated


@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
async def test_database_too_new(
    open_store: StoreFactory, db_path: Path, journal_mode: str
) -> None:
    """A schema newer than this code knows is refused and left untouched."""
    with closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        conn.execute(f"PRAGMA journal_mode = {journal_mode}")
        conn.execute("CREATE TABLE future (x)")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    data = db_path.read_bytes()
    with pytest.raises(DatabaseTooNewError) as info:
        await open_store()
    assert info.value.key == "database_too_new"
    assert info.value.placeholders == {
        "path": str(db_path),
        "version": str(SCHEMA_VERSION + 1),
    }
    assert db_path.read_bytes() == data


async def test_parent_is_a_file(open_store: StoreFactory, tmp_path: Path) -> None:
    """A folder that cannot be created makes the database unavailable."""
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    with pytest.raises(DatabaseUnavailableError) as info:
        await open_store(blocker / "memory.db")
    assert info.value.key == "database_unavailable"
    assert info.value.placeholders == {"path": str(blocker / "memory.db")}
    assert blocker.read_text() == "not a folder"


async def test_path_is_a_folder(open_store: StoreFactory, tmp_path: Path) -> None:
    """A path SQLite cannot open makes the database unavailable, not corrupt."""
    folder = tmp_path / "memory.db"
    folder.mkdir()
    with pytest.raises(DatabaseUnavailableError):
        await open_store(folder)


async def test_creates_missing_folders(
    open_store: StoreFactory, tmp_path: Path
) -> None:
    """Missing parent folders are created."""
    path = tmp_path / "a" / "b" / "memory.db"
    store = await open_store(path)
    await store.add(memory("Nested"))
    assert path.exists()
    assert store.path == path


async def test_not_open(clock: FakeClock, tmp_path: Path) -> None:
    """Every call on a store that is not open raises DatabaseUnavailableError."""
    store = MemoryStore(tmp_path / "memory.db", model=MODEL, clock=clock)
    assert not (tmp_path / "memory.db").exists()
    for call in (
        store.add(memory("x")),
        store.search(SearchQuery()),
        store.forget([1]),
        store.stats(),
        store.expire_due(),
        store.get(1),
        store.set_vectors({1: vector(1)}),
        store.mark_recalled([1]),
    ):
        with pytest.raises(DatabaseUnavailableError):
            await call
    await store.close()


async def test_integrity_check_failure(open_store: StoreFactory, db_path: Path) -> None:
    """A file that opens but fails `quick_check` is corrupt and left untouched."""
    with closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (NULL)")
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = 'CREATE TABLE t (x NOT NULL)' "
            "WHERE name = 't'"
        )
    data = db_path.read_bytes()
    with pytest.raises(DatabaseCorruptError, match="integrity check"):
        await open_store()
    assert db_path.read_bytes() == data


def test_database_bytes_without_files(tmp_path: Path) -> None:
    """No file yet: zero bytes."""
    assert MemoryStore(tmp_path / "absent.db").database_bytes() == 0


# -- auto backend at any size, sharded vec0 ---------------------------------------


async def test_vec0_searches_during_writes(store_factory: StoreFactory) -> None:
    """Searches over both shards run while vectors are added, replaced, forgotten."""
    store = await store_factory(vector_backend="sqlite-vec")
    assert len(store.database._shard_readers) == database_module.VEC0_SHARDS - 1
    first = await store.add_many(
        [memory(f"Steady note {i}") for i in range(60)],
        vectors=[vector(i) for i in range(60)],
    )
    done = asyncio.Event()
    added: list[int] = []

    async def write() -> None:
        for batch in range(10):
            results = await store.add_many(
                [memory(f"Busy note {batch} {i}") for i in range(10)],
                vectors=[vector(1000 + batch * 10 + i) for i in range(10)],
            )
            added.extend(result.item.id for result in results)
            await store.set_vectors({first[batch].item.id: vector(5000 + batch)})
            await store.forget([first[30 + batch].item.id], purge=True)
        done.set()

    async def search() -> int:
        rounds = 0
        while not done.is_set() or not rounds:
            hits = await store.search(SearchQuery(vector=vector(45), limit=5))
            # Memory 45 is never rewritten: it stays the best match throughout.
            assert ids(hits)[0] == first[45].item.id
            assert hits[0].score == pytest.approx(1.0, abs=1e-5)
            rounds += 1
        return rounds

    _, *rounds = await asyncio.gather(write(), search(), search())
    assert min(rounds) >= 1
    assert (await store.stats()).vectors_by_model[MODEL] == 60 + 100 - 10
    for position, item_id in enumerate(added):
        hits = await store.search(SearchQuery(vector=vector(1000 + position), limit=1))
        assert ids(hits) == [item_id]
    for batch in range(10):
        hits = await store.search(SearchQuery(vector=vector(5000 + batch), limit=1))
        assert ids(hits) == [first[batch].item.id]
    await store.close()
    assert store.database._shard_readers == []


@pytest.mark.parametrize(
    "layout",
    [
        f"embedding int8[{DIM}] distance_metric=cosine",  # per-row scales
        f"embedding int8[{DIM}]",  # L2, one table without shards
    ],
)
async def test_vec0_table_of_the_old_layout_is_rebuilt(
    store_factory: StoreFactory, db_path: Path, layout: str
) -> None:
    """A `vec0` table of an earlier layout is replaced on open, not trusted."""
    store = await store_factory(vector_backend="sqlite-vec")
    added = await store.add_many(
        [memory(f"Layout note {i}") for i in range(20)],
        vectors=[vector(i) for i in range(20)],
    )
    await store.close()
    table = memory_vectors_module._model_table(MODEL)
    with closing(sqlite3.connect(db_path)) as conn:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"CREATE VIRTUAL TABLE {table} USING vec0({layout})")
        # As many rows as vectors, all pointing the wrong way.
        conn.executemany(
            f"INSERT INTO {table} (rowid, embedding) VALUES (?, vec_int8(?))",  # noqa: S608
            [(result.item.id, bytes([1] * DIM)) for result in added],
        )
        conn.commit()
    reopened = await store_factory(vector_backend="sqlite-vec")
    for i in (3, 17):
        hits = await reopened.search(SearchQuery(vector=vector(i), limit=1))
        assert ids(hits) == [added[i].item.id]
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_close_lets_a_write_in_flight_finish(open_store: StoreFactory) -> None:
    """Unloading while retention or digestion writes commits that write first."""
    store = await open_store()
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow_write() -> None:
        async with store.transaction() as conn:
            await conn.execute(
                "INSERT INTO memories (scope, type, content, content_key, "
                "created_at, updated_at, origin) "
                "VALUES ('household', 'fact', 'Late write', 'late write', 0, 0, 'tool')"
            )
            started.set()
            await release.wait()

    writer = asyncio.create_task(slow_write())
    await started.wait()
    closing = asyncio.create_task(store.close())
    await asyncio.sleep(0.05)
    assert not closing.done()  # waits for the transaction, not under it
    release.set()
    await writer  # committed, no "no active connection"
    await closing

    reopened = await open_store()
    await reopened.reanalyse()  # written by raw SQL, without search terms
    hits = await reopened.search(SearchQuery(text="late write"))
    assert [hit.item.content for hit in hits] == ["Late write"]


async def test_close_gives_up_on_a_write_that_hangs(
    open_store: StoreFactory,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A write that never ends cannot keep Home Assistant from stopping."""
    monkeypatch.setattr(database_module, "CLOSE_WAIT", 0.05)
    store = await open_store()
    await store.add(memory("Kept before the hang"))
    started = asyncio.Event()

    async def hanging_write() -> None:
        async with store.transaction():
            started.set()
            await asyncio.Event().wait()

    writer = asyncio.create_task(hanging_write())
    await started.wait()
    await store.close()
    assert "Closing the memory database during a slow write" in caplog.text
    writer.cancel()
    with contextlib.suppress(asyncio.CancelledError, ValueError, sqlite3.Error):
        await writer

    reopened = await open_store()
    hits = await reopened.search(SearchQuery(text="kept"))
    assert [hit.item.content for hit in hits] == ["Kept before the hang"]
