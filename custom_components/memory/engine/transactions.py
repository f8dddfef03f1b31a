"""One write transaction, safe under cancellation: through aiosqlite, or on its thread.

aiosqlite runs each statement on the connection's own thread. A task that
is cancelled while it awaits `COMMIT` stops waiting, but the `COMMIT` still
runs; the `ROLLBACK` that follows then finds no transaction and raises. If
that error replaced the `CancelledError`, the cancelled task would carry on
as if a write had merely failed (a worker loop retries it), and whoever
cancelled it, such as unloading the integration, would wait forever. So a
failing `ROLLBACK` is logged at debug level and the original exception,
cancellation included, goes on.

Writes of several statements run as one plain sqlite3 function on that
thread instead (`on_writer`: one hand-off, not one a statement), inside
`immediate`, the same transaction for a sqlite3 connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
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
        await on_writer(conn, rollback)
        raise


def rollback(conn: sqlite3.Connection) -> None:
    """`ROLLBACK` whatever is open; a transaction already ended is no error.

    No transaction left: the COMMIT ran after all, or the error already
    ended it. Either way there is nothing to undo.
    """
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error as err:
        _LOGGER.debug("Nothing to roll back: %s", err)


@contextmanager
def immediate(conn: sqlite3.Connection, *, commit: bool = True) -> Iterator[None]:
    """On the connection's own thread: `BEGIN IMMEDIATE` … `COMMIT`.

    `ROLLBACK` on any exception. Without `commit` the transaction stays
    open for the caller's further statements and its `COMMIT`.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        if commit:
            conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


async def on_writer[T](
    conn: aiosqlite.Connection, work: Callable[[sqlite3.Connection], T]
) -> T:
    """Run `work` with the sqlite3 connection on its own thread: one hand-off.

    Each aiosqlite call is a trip to the connection's thread and back; a
    write made of several statements pays one trip instead of one a
    statement. aiosqlite (pinned 0.22.1) has no public way in: `_execute`
    is what its own methods use to run on that thread. Its thread holds the
    last call's result until the next call has run, so a cursor of the
    writer whose rows were not all read keeps its statement stepping
    through `work`, and a `COMMIT` in `work` would fail: the writer's
    row-returning statements are read to their end (`execute_fetchall`,
    or `async with` the cursor).
    """

    def run() -> T:
        return work(conn._conn)  # noqa: SLF001 - see above

    result: T = await conn._execute(run)  # type: ignore[no-untyped-call]  # noqa: SLF001
    return result
