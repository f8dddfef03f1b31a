"""Tests for how database failures are named (engine/errors.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
import sqlite3

import pytest

from custom_components.memory.engine.errors import (
    DatabaseFailedError,
    DatabaseFullError,
    DatabaseGoneError,
    DatabaseReadOnlyError,
    EmptyContentError,
    database_error,
)


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """Open a small WAL database like the store's, in autocommit mode."""
    with closing(
        sqlite3.connect(tmp_path / "memory.db", isolation_level=None)
    ) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE t (x)")
        yield connection


def _failure(conn: sqlite3.Connection) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as info:
        conn.execute("INSERT INTO t VALUES (randomblob(100000))")
    return info.value


def test_full(conn: sqlite3.Connection) -> None:
    """SQLite's "database or disk is full" is a full disk, with SQLite's words."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")

    err = database_error(_failure(conn))

    assert isinstance(err, DatabaseFullError)
    assert err.key == "database_full"
    assert err.placeholders == {"error": "database or disk is full"}


def test_read_only(conn: sqlite3.Connection) -> None:
    """A write to a database opened (or made) read-only."""
    conn.execute("PRAGMA query_only = 1")

    err = database_error(_failure(conn))

    assert isinstance(err, DatabaseReadOnlyError)
    assert err.key == "database_read_only"


def test_moved_in_rollback_journal_mode(tmp_path: Path) -> None:
    """SQLite itself notices a removed file outside WAL mode: the database is gone."""
    path = tmp_path / "memory.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("CREATE TABLE t (x)")
        path.unlink()

        err = database_error(_failure(conn))

    assert isinstance(err, DatabaseGoneError)
    assert err.key == "database_gone"


def test_other_sqlite_errors(conn: sqlite3.Connection) -> None:
    """Anything else SQLite raises is a database failure, never let through."""
    with pytest.raises(sqlite3.Error) as info:
        conn.execute("SELECT * FROM missing")

    err = database_error(info.value)

    assert isinstance(err, DatabaseFailedError)
    assert err.key == "store_failed"
    assert err.placeholders == {"error": "no such table: missing"}


def test_closed_connection() -> None:
    """Aiosqlite's closed connection is a database failure; other ValueErrors not."""
    for message in ("Connection closed", "no active connection"):
        err = database_error(ValueError(message))
        assert isinstance(err, DatabaseFailedError)
    assert database_error(ValueError("bad literal")) is None
    assert database_error(OverflowError("too big")) is None
    store_error = EmptyContentError("empty")
    assert database_error(store_error) is store_error
