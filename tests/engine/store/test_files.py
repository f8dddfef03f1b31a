"""Tests for the database's files: removing a database for good."""

from __future__ import annotations

from pathlib import Path

from custom_components.memory.engine.store import remove_database


def test_remove_database_deletes_its_files_only(tmp_path: Path) -> None:
    """The database, WAL, SHM and clean marker go; moved-aside and others stay."""
    path = tmp_path / "memory.db"
    for suffix in ("", "-wal", "-shm", ".clean"):
        Path(f"{path}{suffix}").write_text("x")
    aside = tmp_path / "memory.db.corrupt-2026-11-23T21-30-05"
    aside.write_text("evidence")
    (tmp_path / "other.db").write_text("not ours")

    remove_database(path)

    assert sorted(file.name for file in tmp_path.iterdir()) == [
        aside.name,
        "other.db",
    ]


def test_remove_database_without_files(tmp_path: Path) -> None:
    """Removing a database that was never created (or half of it) is fine."""
    path = tmp_path / "memory.db"
    Path(f"{path}-wal").write_text("x")

    remove_database(path)
    remove_database(path)

    assert list(tmp_path.iterdir()) == []
