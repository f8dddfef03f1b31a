"""Either side of a move: the SQLite source opened read-only, catalogs, ids handed out.

`open_source` opens a SQLite store with `mode=ro` in one read snapshot and
refuses a file of another schema version; the rest read what a copy needs
to know of either side: a store's own tables (no virtual tables nor their
shadows), a table's columns, single counts, and the highest id each
identity has handed out (SQLite's `sqlite_sequence`, PostgreSQL's
sequences), so a copy never lets an id be handed out twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
import sqlite3
from typing import Any

import aiosqlite

from ..errors import (
    DatabaseTooNewError,
    DatabaseUnavailableError,
    TransferError,
    TransferTargetNotEmptyError,
)
from ..store import SCHEMA_VERSION as SQLITE_SCHEMA_VERSION


def quoted(name: str) -> str:
    """`name` as an SQL identifier (a table name read from a catalog)."""
    return '"' + name.replace('"', '""') + '"'


async def open_readonly(path: Path) -> tuple[aiosqlite.Connection, int]:
    """Open a SQLite file read-only (`mode=ro`) in one read snapshot; its schema version."""
    if not await asyncio.to_thread(path.is_file):
        raise DatabaseUnavailableError(
            f"cannot open {path}: no such file", path=str(path), error="no such file"
        )
    uri = f"{(await asyncio.to_thread(path.resolve)).as_uri()}?mode=ro"
    conn = await aiosqlite.connect(uri, uri=True, isolation_level=None)
    try:
        await conn.execute("BEGIN")
        rows = await conn.execute_fetchall("PRAGMA user_version")
        # The first read takes the snapshot every later read sees.
        await conn.execute_fetchall("SELECT count(*) FROM sqlite_master")
    except sqlite3.Error as err:
        await conn.close()
        raise DatabaseUnavailableError(
            f"cannot open {path}: {err}", path=str(path), error=str(err)
        ) from err
    except BaseException:
        await conn.close()
        raise
    return conn, int(next(iter(rows))[0])


async def open_source(path: Path) -> aiosqlite.Connection:
    """Open a SQLite store to copy from: read-only, one snapshot, this code's schema.

    A file of another schema version is refused: an older one is opened by
    the store once (which migrates it) before it moves.
    """
    conn, version = await open_readonly(path)
    if version == SQLITE_SCHEMA_VERSION:
        return conn
    await conn.close()
    if version > SQLITE_SCHEMA_VERSION:
        raise DatabaseTooNewError(
            f"{path} has schema {version}, this version knows {SQLITE_SCHEMA_VERSION}",
            path=str(path),
            version=str(version),
        )
    raise TransferError(
        f"{path} has schema {version}: open it with this version first",
        error=f"the SQLite store is at schema {version}, not {SQLITE_SCHEMA_VERSION}",
    )


async def refuse_sqlite_data(conn: aiosqlite.Connection, names: Iterable[str]) -> None:
    """Raise `TransferTargetNotEmptyError` if any of these tables (that exist) has a row."""
    present = set(await sqlite_tables(conn))
    for name in names:
        if name not in present:
            continue
        rows = await sqlite_count(conn, f"SELECT count(*) FROM {quoted(name)}")  # noqa: S608
        if rows:
            raise TransferTargetNotEmptyError(
                f"the SQLite store already holds {name} rows",
                table=name,
                rows=str(rows),
            )


async def pg_tables(conn: Any) -> list[str]:
    """Return the tables of the connection's schema."""
    rows = await conn.fetch(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        " ORDER BY tablename"
    )
    return [str(row[0]) for row in rows]


async def sqlite_tables(conn: aiosqlite.Connection) -> list[str]:
    """Return the store's own tables: no virtual tables, their shadows, nor SQLite's."""
    rows = list(
        await conn.execute_fetchall(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
        )
    )
    virtual = [
        str(name)
        for name, sql in rows
        if str(sql or "").upper().startswith("CREATE VIRTUAL TABLE")
    ]
    return sorted(
        str(name)
        for name, _sql in rows
        if str(name) not in virtual
        and not str(name).startswith("sqlite_")
        and not any(str(name).startswith(f"{table}_") for table in virtual)
    )


async def sqlite_count(conn: aiosqlite.Connection, sql: str, *args: Any) -> int:
    """Return the single number a query returns."""
    rows = await conn.execute_fetchall(sql, args)
    return int(next(iter(rows))[0])


async def sqlite_columns(conn: aiosqlite.Connection, table: str) -> list[str]:
    """Return a SQLite table's column names."""
    rows = await conn.execute_fetchall(f"PRAGMA table_info({quoted(table)})")
    return [str(row[1]) for row in rows]


async def pg_columns(conn: Any, table: str) -> list[str]:
    """Return a PostgreSQL table's column names (of the connection's schema)."""
    rows = await conn.fetch(
        "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1)"
        " AND attnum > 0 AND NOT attisdropped",
        table,
    )
    return [str(row[0]) for row in rows]


async def pg_high(conn: Any, table: str) -> int:
    """Return the highest id a PostgreSQL identity column has handed out (0: none)."""
    value = await conn.fetchval(
        "SELECT greatest("  # noqa: S608
        f" (SELECT coalesce(max(id), 0) FROM {table}),"
        " coalesce(pg_sequence_last_value("
        " pg_get_serial_sequence($1, 'id')::regclass), 0))",
        table,
    )
    return int(value)


async def sqlite_high(conn: aiosqlite.Connection) -> dict[str, int]:
    """Return the highest id each AUTOINCREMENT table gave (`sqlite_sequence`)."""
    rows = await conn.execute_fetchall("SELECT name, seq FROM sqlite_sequence")
    return {str(name): int(seq or 0) for name, seq in rows}
