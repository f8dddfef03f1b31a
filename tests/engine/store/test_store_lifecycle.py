"""Tests for the store's life cycle: file modes, integrity checks, the index load."""

from __future__ import annotations

from contextlib import closing
from datetime import UTC, datetime
import os
from pathlib import Path
import random
import shutil
import sqlite3
import stat
from typing import Any

import pytest

from custom_components.memory.engine import (
    DatabaseCorruptError,
    MemoryStore,
    SearchQuery,
    Signal,
)
from custom_components.memory.engine.store.files import marker_path, move_aside
from tests.engine.conftest import MODEL, StoreFactory, memory, vector


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_files_are_private(open_store: StoreFactory, tmp_path: Path) -> None:
    """The folder is 0700; the database, its WAL and SHM are 0600."""
    os.umask(0o022)  # the usual umask: files 0644, folders 0755
    path = tmp_path / "memory" / "memory.db"
    store = await open_store(path)
    await store.add_many([memory("The alarm code is private")], vectors=[vector(1)])

    assert _mode(path.parent) == 0o700
    for suffix in ("", "-wal", "-shm"):
        assert Path(f"{path}{suffix}").exists()
        assert _mode(Path(f"{path}{suffix}")) == 0o600, suffix


async def test_existing_files_are_tightened(
    open_store: StoreFactory, tmp_path: Path
) -> None:
    """A folder and database made readable by all earlier are made private."""
    path = tmp_path / "memory" / "memory.db"
    first = await open_store(path)
    await first.add(memory("Kept"))
    await first.close()
    path.parent.chmod(0o755)
    path.chmod(0o644)

    store = await open_store(path)
    await store.add(memory("Also kept"))

    assert _mode(path.parent) == 0o700
    for suffix in ("", "-wal", "-shm"):
        assert _mode(Path(f"{path}{suffix}")) == 0o600, suffix


def sql_rows(path: Path, statement: str) -> list[tuple[Any, ...]]:
    """Run one read on a plain sqlite3 connection."""
    with closing(sqlite3.connect(path)) as conn:
        return [tuple(row) for row in conn.execute(statement)]


def _damage(path: Path, pages: range, page_size: int = 4096) -> None:
    """Write random bytes over whole pages of a database file, in place."""
    garbage = random.Random(7).randbytes(page_size * len(pages))
    with path.open("r+b") as file:
        file.seek(pages.start * page_size)
        file.write(garbage)


async def _filled(store_factory: StoreFactory, path: Path, count: int = 400) -> None:
    store = await store_factory(path)
    await store.add_many(
        [memory(f"Row {i} " + "padding " * 50) for i in range(count)],
        vectors=[vector(i) for i in range(count)],
    )
    await store.close()


async def test_clean_close_means_a_cheap_check(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """A new file gets a full check; after a clean close, the header and schema."""
    first = await store_factory()
    assert first.last_check is not None
    assert first.last_check.kind == "full"
    await first.add(memory("Kept"))
    await first.close()
    assert marker_path(db_path).exists()

    second = await store_factory()

    assert second.last_check is not None
    assert (second.last_check.kind, second.last_check.ok) == ("quick", True)
    # Consumed at open: a crash from here on leaves no marker.
    assert not marker_path(db_path).exists()
    await second.close()
    assert marker_path(db_path).exists()


async def test_crash_means_a_full_check(
    store_factory: StoreFactory, db_path: Path, tmp_path: Path
) -> None:
    """A database left as a crash leaves it (no marker, a WAL) is fully checked."""
    store = await store_factory()
    await store.add(memory("Written before the crash"))
    crashed = tmp_path / "crashed" / "memory.db"
    crashed.parent.mkdir()
    for suffix in ("", "-wal"):
        shutil.copyfile(f"{db_path}{suffix}", f"{crashed}{suffix}")

    reopened = await store_factory(crashed)

    assert reopened.last_check is not None
    assert reopened.last_check.kind == "full"
    hits = await reopened.search(SearchQuery(text="crash"))
    assert [hit.item.content for hit in hits] == ["Written before the crash"]


async def test_damage_after_a_clean_close_is_found(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """Pages overwritten since the clean close: the marker no longer matches."""
    await _filled(store_factory, db_path)
    assert marker_path(db_path).exists()
    _damage(db_path, range(20, 24))
    damaged = db_path.read_bytes()

    with pytest.raises(DatabaseCorruptError):
        await store_factory()

    assert db_path.read_bytes() == damaged


async def test_damage_behind_a_matching_marker_is_found_on_demand(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """Damage the cheap check cannot see is found by `check_integrity`."""
    await _filled(store_factory, db_path)
    before = db_path.stat()
    _damage(db_path, range(20, 24))
    os.utime(db_path, ns=(before.st_atime_ns, before.st_mtime_ns))

    store = await store_factory()
    assert store.last_check is not None
    assert store.last_check.kind == "quick"

    result = await store.check_integrity()

    assert (result.kind, result.ok) == ("full", False)
    assert result.problems > 0
    assert store.last_check == result


async def test_deferred_index(store_factory: StoreFactory, db_path: Path) -> None:
    """Before `load_index` searches use keywords only; after, the same as ever."""
    await _filled(store_factory, db_path, count=50)
    query = SearchQuery(text="Row 7", vector=vector(7), limit=5)
    eager = await store_factory()
    expected = [(hit.item.id, hit.score) for hit in await eager.search(query)]
    await eager.close()

    store = MemoryStore(db_path, model=MODEL, vector_backend="numpy")
    await store.open(defer_index=True)
    try:
        keyword_only = await store.search(query)
        assert all(Signal.SEMANTIC not in hit.matched for hit in keyword_only)
        assert keyword_only

        await store.load_index()
        await store.load_index()  # harmless twice

        assert [(hit.item.id, hit.score) for hit in await store.search(query)] == (
            expected
        )
        assert Signal.SEMANTIC in (await store.search(query))[0].matched
    finally:
        await store.close()


async def test_unreadable_vectors_leave_keyword_search(
    store_factory: StoreFactory, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Damaged vector pages: the index does not load; keyword search still works."""
    await _filled(store_factory, db_path, count=400)
    rows = sql_rows(
        db_path, "SELECT rootpage FROM sqlite_master WHERE name = 'embeddings'"
    )
    before = db_path.stat()
    with db_path.open("r+b") as file:
        file.seek((int(rows[0][0]) - 1) * 4096)
        file.write(b"\xff" * 4096)  # the embeddings table's root page
    os.utime(db_path, ns=(before.st_atime_ns, before.st_mtime_ns))

    store = MemoryStore(db_path, model=MODEL, vector_backend="numpy")
    await store.open(defer_index=True)
    try:
        await store.load_index()
        hits = await store.search(SearchQuery(text="Row 7", vector=vector(7)))
    finally:
        await store.close()

    assert "vector index did not load" in caplog.text
    assert hits
    assert all(Signal.SEMANTIC not in hit.matched for hit in hits)


async def test_unreadable_marker_means_a_full_check(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """A marker that is not what a clean close writes vouches for nothing."""
    first = await store_factory()
    await first.close()
    marker_path(db_path).write_text("not json")

    store = await store_factory()

    assert store.last_check is not None
    assert store.last_check.kind == "full"


async def test_no_marker_while_another_connection_has_it_open(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """Closing while another program holds the database leaves no marker."""
    store = await store_factory()
    await store.add(memory("Kept"))
    with closing(sqlite3.connect(db_path)) as other:
        other.execute("SELECT count(*) FROM memories").fetchall()
        await store.close()
        assert Path(f"{db_path}-wal").exists()
        assert not marker_path(db_path).exists()

    reopened = await store_factory()

    assert reopened.last_check is not None
    assert reopened.last_check.kind == "full"


def test_move_aside_keeps_every_file(tmp_path: Path) -> None:
    """The database, WAL and SHM move together; a second move never overwrites."""
    path = tmp_path / "memory.db"
    now = datetime(2026, 11, 23, 21, 30, 5, tzinfo=UTC)
    for round_ in (1, 2):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").write_text(f"round {round_}{suffix}")
        move_aside(path, now)

    assert sorted(file.name for file in tmp_path.iterdir()) == [
        "memory.db.corrupt-2026-11-23T21-30-05",
        "memory.db.corrupt-2026-11-23T21-30-05-2",
        "memory.db.corrupt-2026-11-23T21-30-05-2-shm",
        "memory.db.corrupt-2026-11-23T21-30-05-2-wal",
        "memory.db.corrupt-2026-11-23T21-30-05-shm",
        "memory.db.corrupt-2026-11-23T21-30-05-wal",
    ]
    first = tmp_path / "memory.db.corrupt-2026-11-23T21-30-05"
    assert first.read_text() == "round 1"
    assert Path(f"{first}-2-wal").read_text() == "round 2-wal"
