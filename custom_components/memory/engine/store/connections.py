"""Opening the database's connections: their PRAGMAs, and readers' one-hand-off reads.

Every connection is an aiosqlite one in autocommit mode (transactions are
begun by hand) with `sqlite3.Row` rows. The shared readers (`Database`'s
reader, vector reader and vec0 shard readers) are `ReadConnection`s, which
refuse the cursor API: a cursor takes three hand-offs to the connection's
thread (execute, fetch, close) and its statement stays open between them,
keeping the connection's read snapshot; any read another coroutine queues
on that connection meanwhile runs in that old snapshot and misses what the
writer committed since (a memory just added, not found by `get`). Their
reads run each statement to its end in one hand-off instead:
`execute_fetchall`, `sql.read_one`, `sql.read_pages`.
"""

from __future__ import annotations

from pathlib import Path
import sqlite3
from typing import Any, Final, NoReturn

import aiosqlite

from ..opening import opened

BUSY_TIMEOUT_MS: Final = 10_000
# aiosqlite's default (`aiosqlite.connect`): rows a cursor's iteration fetches
# a hand-off; unused by one-hand-off reads.
_ITER_CHUNK: Final = 64
_PRAGMAS: Final = (
    f"busy_timeout = {BUSY_TIMEOUT_MS}",
    "foreign_keys = ON",
    "synchronous = NORMAL",
    "secure_delete = ON",
    "temp_store = MEMORY",
)
_ONE_HAND_OFF: Final = (
    "a shared reader reads in one hand-off (execute_fetchall, sql.read_one, "
    "sql.read_pages): an open cursor would hold its read snapshot, and reads "
    "queued meanwhile would miss committed writes"
)


class ReadConnection(aiosqlite.Connection):
    """A shared reader: `execute` and `cursor` raise TypeError (see the module)."""

    def execute(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        """Refused: read with `execute_fetchall`, `read_one` or `read_pages`."""
        raise TypeError(_ONE_HAND_OFF)

    def cursor(self) -> NoReturn:
        """Refused: read with `execute_fetchall`, `read_one` or `read_pages`."""
        raise TypeError(_ONE_HAND_OFF)


async def connect(path: Path, *, reader: bool) -> aiosqlite.Connection:
    """Open a connection to `path` with the store's PRAGMAs.

    `reader`: a shared reader, a `ReadConnection`; otherwise the writer (or
    a private connection, such as the full integrity check's). The file is
    opened on the connection's own thread whatever happens to the caller:
    a caller cancelled meanwhile closes it before the cancellation goes on
    (`opening.opened`).
    """
    return await opened(_open(path, reader), aiosqlite.Connection.close)


async def _open(path: Path, reader: bool) -> aiosqlite.Connection:
    def connector() -> sqlite3.Connection:
        return sqlite3.connect(path, isolation_level=None)

    kind = ReadConnection if reader else aiosqlite.Connection
    conn = await kind(connector, _ITER_CHUNK)
    conn.row_factory = sqlite3.Row
    try:
        for pragma in _PRAGMAS:
            await conn.execute_fetchall(f"PRAGMA {pragma}")
    except BaseException:
        # Not yet the caller's to close: its thread would linger.
        await conn.close()
        raise
    return conn
