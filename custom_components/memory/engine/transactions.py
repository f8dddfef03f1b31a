"""One write transaction on an aiosqlite connection, safe under cancellation.

aiosqlite runs each statement on the connection's own thread. A task that
is cancelled while it awaits `COMMIT` stops waiting, but the `COMMIT` still
runs; the `ROLLBACK` that follows then finds no transaction and raises. If
that error replaced the `CancelledError`, the cancelled task would carry on
as if a write had merely failed (a worker loop retries it), and whoever
cancelled it, such as unloading the integration, would wait forever. So a
failing `ROLLBACK` is logged at debug level and the original exception,
cancellation included, goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
import logging
import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiosqlite

_LOGGER = logging.getLogger(__name__)


@asynccontextmanager
async def immediate_transaction(conn: aiosqlite.Connection) -> AsyncIterator[None]:
    """`BEGIN IMMEDIATE` … `COMMIT`; `ROLLBACK` on any exception.

    `BEGIN` is inside the guard too: cancelled while it is queued, it still
    runs, and the `ROLLBACK` queued after it ends the transaction it opens.
    """
    try:
        await conn.execute("BEGIN IMMEDIATE")
        yield
        await conn.execute("COMMIT")
    except BaseException:
        try:
            await conn.execute("ROLLBACK")
        except sqlite3.Error as err:
            # No transaction left: the COMMIT ran after all, or the error
            # already ended it. Either way there is nothing to undo.
            _LOGGER.debug("Nothing to roll back: %s", err)
        raise
