"""Tests for the store's life cycle: file modes, integrity checks, the index load."""

from __future__ import annotations

import os
from pathlib import Path
import stat

from .conftest import StoreFactory, memory, vector


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
