"""A PostgreSQL server that goes away, comes back or hangs: one seam for its faults.

`FaultPool` wraps the store's asyncpg pool; every part of this room that
is built on `PostgresStore.pool` (memories, search, the conversation log,
the digestion and embedding queues...) gets it, so a fault is translated
in one place. Its `acquire()` context and its direct `fetch`, `fetchrow`,
`fetchval`, `execute` and `executemany` raise `ServerUnavailableError`
(a `DatabaseUnavailableError` whose own key says the server is away for
now, with no password in its message) instead of asyncpg's
connection errors, `OSError` or a bare `TimeoutError`: when a connection
cannot be made (any failure then: refused, timed out, a changed
password, a dropped database) or one drops or hangs under a call
(`is_connection_error`). Server-side SQL errors (a unique violation, a
deadlock...) pass unchanged: the parts handle them. A connection that
failed under a call is terminated rather than returned to the pool, and
the pool makes new ones when the server is back, so the same open store
works again without reopening. Waits are bounded: each connection
attempt by `CONNECT_TIMEOUT`, each query and each wait for a free
connection by `COMMAND_TIMEOUT` (or the store's own values).

PostgreSQL's transactions keep a failed write whole or absent: a call
that returned committed (it is there after an outage); one that raised
may have committed just before the connection dropped, never half.

`Availability` says whether the server answers: `set(False)` when a call
failed on the connection (or the change feed cannot reconnect),
`set(True)` when a pooled connection's block ends without a fault again
(or the feed is back); listeners
are called on each change only, and the change is logged with the
server's host and port, never the URL.

`open_pool` checks the server (`check_server`) and makes the pool within
the timeouts; `deadline` bounds a whole open: past it,
`DatabaseUnavailableError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
import contextlib
import logging
from types import TracebackType
from typing import Any, Final

from ..errors import ServerUnavailableError
from .server import (
    check_server,
    connect_failure,
    driver_errors,
    redact_url,
    scrub,
    server_name,
)
from .vectors import register_vector

_LOGGER = logging.getLogger(__name__)

# Seconds a connection attempt (and the open's check) may take.
CONNECT_TIMEOUT: Final = 10.0
# Seconds a query, or a wait for a free connection of the pool, may take.
COMMAND_TIMEOUT: Final = 30.0

type AvailabilityListener = Callable[[bool], None]


def is_connection_error(err: BaseException) -> bool:
    """Say whether `err` means the connection failed (not the SQL it ran)."""
    import asyncpg  # noqa: PLC0415

    if isinstance(
        err,
        asyncpg.PostgresConnectionError
        | asyncpg.CannotConnectNowError
        | asyncpg.AdminShutdownError
        | asyncpg.CrashShutdownError
        | asyncpg.TooManyConnectionsError
        | OSError
        | TimeoutError,
    ):
        return True
    # "connection is closed", "pool is closing": not the API's misuse.
    return isinstance(err, asyncpg.InterfaceError) and (
        "closed" in str(err) or "closing" in str(err)
    )


def unavailable(
    err: BaseException, url: str, *, timeout: float, connecting: bool
) -> ServerUnavailableError:
    """Say what a fault means, naming the server by host and port only."""
    target = server_name(url)
    if isinstance(err, TimeoutError):
        message = f"PostgreSQL at {target} did not answer within {timeout:g} s."
    elif connecting:
        message = connect_failure(err, url, timeout).message
    else:
        reason = scrub(str(err), url) or type(err).__name__
        message = f"Lost the connection to PostgreSQL at {target}: {reason}."
    return ServerUnavailableError(message, path=redact_url(url), error=message)


class Availability:
    """Whether the server answers, and who to tell when that changes."""

    def __init__(self, url: str) -> None:
        """Start available: the store opened, or is about to."""
        self._url = url
        self.available = True
        self._listeners: list[AvailabilityListener] = []

    def add_listener(self, listener: AvailabilityListener) -> Callable[[], None]:
        """Call `listener(available)` on each change; returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def set(self, available: bool) -> None:
        """Record whether the server answers; tell the listeners of a change."""
        if available == self.available:
            return
        self.available = available
        if available:
            _LOGGER.info("PostgreSQL at %s answers again", server_name(self._url))
        else:
            _LOGGER.warning(
                "PostgreSQL at %s cannot be reached", server_name(self._url)
            )
        for listener in list(self._listeners):
            try:
                listener(available)
            except Exception:
                _LOGGER.exception("A memory store availability listener failed")


class FaultPool:
    """An asyncpg pool whose connection faults raise `DatabaseUnavailableError`."""

    def __init__(
        self,
        pool: Any,
        url: str,
        availability: Availability,
        *,
        timeout: float = COMMAND_TIMEOUT,
    ) -> None:
        """Wrap `pool`; `timeout` bounds a wait for one of its connections."""
        self.pool = pool
        self._url = url
        self.availability = availability
        self._timeout = timeout

    def __getattr__(self, name: str) -> Any:
        """Anything else is the pool's own (its size, `expire_connections`...)."""
        return getattr(self.pool, name)

    @contextlib.contextmanager
    def guard(self, *, connecting: bool = False) -> Iterator[None]:
        """Translate a connection fault of the block (any failure when `connecting`)."""
        try:
            yield
        except Exception as err:
            if not (connecting or is_connection_error(err)):
                raise
            self.availability.set(False)
            raise unavailable(
                err, self._url, timeout=self._timeout, connecting=connecting
            ) from err

    def acquire(self) -> _Acquired:
        """Lend a connection for an `async with` block, faults translated."""
        return _Acquired(self)

    async def fetch(self, query: str, *args: Any, **kwargs: Any) -> Any:
        """Run a query on a pooled connection and return its rows."""
        async with self.acquire() as connection:
            return await connection.fetch(query, *args, **kwargs)

    async def fetchrow(self, query: str, *args: Any, **kwargs: Any) -> Any:
        """Run a query on a pooled connection and return its first row."""
        async with self.acquire() as connection:
            return await connection.fetchrow(query, *args, **kwargs)

    async def fetchval(self, query: str, *args: Any, **kwargs: Any) -> Any:
        """Run a query on a pooled connection and return one value."""
        async with self.acquire() as connection:
            return await connection.fetchval(query, *args, **kwargs)

    async def execute(self, query: str, *args: Any, **kwargs: Any) -> Any:
        """Run a statement on a pooled connection and return its status."""
        async with self.acquire() as connection:
            return await connection.execute(query, *args, **kwargs)

    async def executemany(self, command: str, args: Any, **kwargs: Any) -> Any:
        """Run a statement for each set of arguments on a pooled connection."""
        async with self.acquire() as connection:
            return await connection.executemany(command, args, **kwargs)

    async def close(self) -> None:
        """Close the pool politely within the timeout, else drop its connections."""
        import asyncio  # noqa: PLC0415

        try:
            async with asyncio.timeout(self._timeout):
                await self.pool.close()
        except driver_errors() as err:
            _LOGGER.debug("Closing the pool failed (%s): dropped", type(err).__name__)
            self.pool.terminate()


class _Acquired:
    """`FaultPool.acquire()`: a pooled connection; a broken one is not returned."""

    def __init__(self, pool: FaultPool) -> None:
        self._pool = pool
        self._connection: Any = None

    async def __aenter__(self) -> Any:
        pool = self._pool
        with pool.guard(connecting=True):
            self._connection = await pool.pool.acquire(timeout=pool._timeout)  # noqa: SLF001
        return self._connection

    async def __aexit__(
        self,
        _type: type[BaseException] | None,
        error: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        import asyncpg  # noqa: PLC0415

        pool, connection = self._pool, self._connection
        broken = error is not None and is_connection_error(error)
        if error is None or (isinstance(error, asyncpg.PostgresError) and not broken):
            # The server answered the block (an SQL error is an answer too).
            pool.availability.set(True)
        if broken or (error is not None and not isinstance(error, Exception)):
            # Dropped, hung or cancelled mid-query: its state is unknown. A
            # connection that closed was already given back (InterfaceError).
            with contextlib.suppress(Exception):
                connection.terminate()
        with pool.guard():
            await pool.pool.release(connection, timeout=pool._timeout)  # noqa: SLF001
            if broken:
                raise error  # type: ignore[misc]  # translated by the guard


async def open_pool(
    url: str,
    availability: Availability,
    *,
    size: int,
    timeout: float = CONNECT_TIMEOUT,  # noqa: ASYNC109
    command_timeout: float = COMMAND_TIMEOUT,
) -> FaultPool:
    """Check the server and make the store's pool, or raise `DatabaseUnavailableError`.

    `timeout` bounds the check and each connection attempt, `command_timeout`
    each query and each wait for a pooled connection.
    """
    import asyncpg  # noqa: PLC0415

    check = await check_server(url, timeout=timeout)
    if not check.ok:
        availability.set(False)
        raise ServerUnavailableError(
            check.message, path=redact_url(url), error=check.message
        )
    faulty = FaultPool(None, url, availability, timeout=timeout)
    with faulty.guard(connecting=True):
        faulty.pool = await asyncpg.create_pool(
            url,
            min_size=1,
            max_size=size,
            init=register_vector,
            timeout=timeout,
            command_timeout=command_timeout,
        )
    faulty._timeout = command_timeout  # noqa: SLF001
    return faulty


@contextlib.asynccontextmanager
async def deadline(
    url: str, availability: Availability, seconds: float
) -> AsyncIterator[None]:
    """Give the block `seconds`; past them raise `DatabaseUnavailableError`."""
    import asyncio  # noqa: PLC0415

    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError as err:
        availability.set(False)
        raise unavailable(err, url, timeout=seconds, connecting=True) from err
