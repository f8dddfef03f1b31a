"""Dropping the `vec0` tables an earlier version kept, once sqlite-vec is no longer used.

Before the numpy index of binary codes (issue #25), an installation that
could install sqlite-vec kept each model's vectors in a `vec0` virtual
table as well (int8 codes: `vec_<hash>` and its shadow tables). The store
no longer loads the extension unless asked for it by name, so those tables
would stay forever, and with them the codes of every memory embedded before
the upgrade, purged ones included: a purge promises that a memory's vectors
go. They are derived data (the float32 vectors in `embeddings` are the
source), so they are dropped at open.

With sqlite-vec importable (it is wherever the tables were made: it was
installed for them) the extension drops its own table. Without it, the
shadow tables are plain tables and are dropped as such, and the virtual
table's row is removed from the schema, the schema cookie bumped so every
connection reads the schema again. `secure_delete` (on for every
connection) zeroes the freed pages either way.
"""

from __future__ import annotations

import sqlite3
from typing import Final

import aiosqlite

# A vec0 table's own statement, as sqlite-vec writes it.
_VEC0: Final = "CREATE VIRTUAL TABLE % USING vec0(%"


async def leftover_vec0_tables(conn: aiosqlite.Connection) -> list[str]:
    """Names of the `vec0` virtual tables in the database."""
    rows = await conn.execute_fetchall(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE ?", (_VEC0,)
    )
    return [str(row[0]) for row in rows]


async def drop_vec0_tables(
    conn: aiosqlite.Connection, *, use_extension: bool = True
) -> int:
    """Drop every `vec0` table and its shadow tables; return how many `vec0` tables.

    `use_extension` False skips sqlite-vec even when it is importable (the
    path of a system where it is not).
    """
    names = await leftover_vec0_tables(conn)
    if not names:
        return 0
    if use_extension and await _load_sqlite_vec(conn):
        for name in names:
            await conn.execute(f'DROP TABLE "{name}"')
        return len(names)
    await conn.execute("BEGIN IMMEDIATE")
    try:
        for name in names:
            shadows = await conn.execute_fetchall(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name LIKE ? ESCAPE '\\' AND sql NOT LIKE ?",
                (name.replace("_", "\\_") + "\\_%", _VEC0),
            )
            for (shadow,) in shadows:
                await conn.execute(f'DROP TABLE "{shadow}"')
        version = next(iter(await conn.execute_fetchall("PRAGMA schema_version")))[0]
        await conn.execute("PRAGMA writable_schema = ON")
        await conn.executemany(
            "DELETE FROM sqlite_master WHERE type = 'table' AND name = ?",
            [(name,) for name in names],
        )
        await conn.execute(f"PRAGMA schema_version = {int(version) + 1}")
        await conn.execute("PRAGMA writable_schema = OFF")
        await conn.execute("COMMIT")
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    return len(names)


async def _load_sqlite_vec(conn: aiosqlite.Connection) -> bool:
    """Load sqlite-vec on `conn` when it is installed; whether it loaded."""
    try:
        import sqlite_vec  # noqa: PLC0415 - optional, only to drop its tables
    except ImportError:
        return False
    try:
        await conn.enable_load_extension(True)
        await conn.load_extension(sqlite_vec.loadable_path())
        await conn.enable_load_extension(False)
    except sqlite3.Error, AttributeError:
        return False
    return True
