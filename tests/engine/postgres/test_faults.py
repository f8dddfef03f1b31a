"""A PostgreSQL server that goes away, hangs or comes back, under an open store.

A `TcpProxy` stands between the store and the real test server: `cut`
(every connection closed, new ones refused), `stall` (nothing answered)
and `restore`. Every kind of call then raises `DatabaseUnavailableError`
with no password in its message or in the log, soon (the store's
timeouts); once the server is back the same store works again, its
acknowledged writes are there, its feed listens again and says so, and
its availability listeners heard False, then True.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
import logging
import time
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest

from custom_components.memory.engine import (
    DatabaseUnavailableError,
    MessageQuery,
    MessageRole,
    NewMemory,
    SearchQuery,
)
from custom_components.memory.engine.embedding.jobs import MEMORIES
from custom_components.memory.engine.postgres import (
    ChangeFeed,
    PostgresStore,
    ServerProblem,
    check_server,
    conversation_log,
    digest_queue,
)
from custom_components.memory.engine.postgres.faults import is_connection_error
from custom_components.memory.engine.store import BrowseQuery
from tests.engine.conftest import MODEL, FakeClock, memory as new_memory
from tests.engine.postgres.services import ANNA, talk
from tests.engine.postgres.stores import Heard
from tests.tcp_proxy import TcpProxy

# Short, so that a hang ends the test's waits soon.
TIMEOUT = 1.5


@pytest.fixture
async def proxy(postgres_database: str) -> AsyncIterator[TcpProxy]:
    """Yield a proxy in front of the test server."""
    async with TcpProxy.for_url(postgres_database) as proxy:
        yield proxy


@pytest.fixture
def url(proxy: TcpProxy, postgres_database: str) -> str:
    """Return the test database's URL through the proxy (it has a password)."""
    url = proxy.url_through(postgres_database)
    assert urlsplit(url).password
    return url


@pytest.fixture
async def store(url: str, clock: FakeClock) -> AsyncIterator[PostgresStore]:
    """Yield an open store through the proxy, with short timeouts."""
    store = PostgresStore(
        url, model=MODEL, clock=clock, timeout=TIMEOUT, command_timeout=TIMEOUT
    )
    await store.open()
    try:
        yield store
    finally:
        await store.close()


def assert_secret_kept(
    url: str, err: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    """Neither the error nor any log line at INFO or above holds the password."""
    password = urlsplit(url).password
    assert password
    assert password not in str(err)
    assert password not in repr(err.args)
    assert all(password not in str(value) for value in vars(err).values())
    for record in caplog.records:
        if record.levelno >= logging.INFO:
            assert password not in record.getMessage()


class Seen:
    """An availability listener: what it heard, and a way to wait for it."""

    def __init__(self) -> None:
        """Nothing heard yet."""
        self.heard: list[bool] = []
        self._event = asyncio.Event()

    def __call__(self, available: bool) -> None:
        """Record one change."""
        self.heard.append(available)
        self._event.set()

    async def until(self, heard: list[bool]) -> None:
        """Wait until exactly `heard` was heard (10 s at most)."""
        async with asyncio.timeout(10):
            while self.heard != heard:
                self._event.clear()
                await self._event.wait()


def memory(text: str, **kwargs: Any) -> NewMemory:
    """Make a fact of Anna's."""
    return new_memory(text, scope=ANNA, **kwargs)


async def test_every_kind_of_call_fails_clearly_then_works_again(
    store: PostgresStore,
    proxy: TcpProxy,
    url: str,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Cut: each call raises DatabaseUnavailableError; back: the same store works."""
    caplog.set_level(logging.DEBUG)
    log, queue = conversation_log(store), digest_queue(store)
    jobs = store.embedding_jobs("faults")
    now = datetime.fromtimestamp(clock(), UTC)
    kept = (await store.add(memory("Anna drinks green tea"))).item
    row = await talk(log, "before", now, [(MessageRole.USER, "I like tea")], scope=ANNA)
    heard: list[bool] = []
    store.add_availability_listener(heard.append)

    await proxy.cut()
    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "add": lambda: store.add(memory("Anna walks the dog")),
        "search": lambda: store.search(SearchQuery(text="tea")),
        "browse": lambda: store.browse(BrowseQuery()),
        "forget": lambda: store.forget([kept.id]),
        "get": lambda: store.get(kept.id),
        "stats": store.stats,
        "log save": lambda: talk(log, "during", now, [(MessageRole.USER, "Hi")]),
        "log search": lambda: log.search(MessageQuery(text="tea")),
        "queue due": lambda: queue.due(now, idle_before=None),
        "queue count": queue.count_waiting,
        "jobs newest": jobs.newest_ids,
        "jobs enqueue": lambda: jobs.enqueue([MEMORIES], MODEL, after={}, clock=clock),
    }
    for name, call in calls.items():
        started = time.monotonic()
        with pytest.raises(DatabaseUnavailableError) as caught:
            await call()
        assert time.monotonic() - started < 3 * TIMEOUT, name
        assert "127.0.0.1" in str(caught.value), name
        assert_secret_kept(url, caught.value, caplog)
    assert heard == [False]
    assert store.available == heard[-1]

    await proxy.restore()
    assert (await store.get(kept.id)) == kept
    assert heard == [False, True]
    assert store.available == heard[-1]
    added = await store.add(memory("Anna walks the dog"))
    assert added.created
    assert [hit.item.id for hit in await store.search(SearchQuery(text="dog"))] == [
        added.item.id
    ]
    assert [m.content for m in await log.messages(row)] == ["I like tea"]
    assert await queue.count_waiting() >= 0
    assert await jobs.newest_ids()


async def test_the_feed_listens_again_and_says_so(
    store: PostgresStore, proxy: TcpProxy, url: str, clock: FakeClock
) -> None:
    """With no call at all, the feed tells availability and listeners of the outage."""
    changes = Heard()
    store.add_listener(changes)
    store.add_availability_listener(boom)
    seen = Seen()
    store.add_availability_listener(seen)
    await proxy.cut()
    await seen.until([False])
    await proxy.restore()
    await seen.until([False, True])
    # Notices sent meanwhile may be lost: the listeners were told to read again.
    await changes.reach(1)
    # Another instance's write is heard again through the new connection.
    other = PostgresStore(url, model=MODEL, clock=clock)
    await other.open()
    try:
        await other.add(memory("Anna is back"))
        await changes.reach(2)
    finally:
        await other.close()


async def test_the_feed_tells_its_connection_listeners(
    url: str, proxy: TcpProxy, caplog: pytest.LogCaptureFixture
) -> None:
    """False when it cannot reconnect, True once back; a listener that raises is logged."""
    feed = ChangeFeed(url, min_delay=0.05, timeout=TIMEOUT)
    feed.add_connection_listener(boom)
    seen = Seen()
    remove = feed.add_connection_listener(seen)
    await feed.start()
    try:
        await proxy.cut()
        await seen.until([False])
        await proxy.restore()
        await seen.until([False, True])
        assert feed.connected
        remove()
    finally:
        await feed.stop()
    assert "connection listener failed" in caplog.text


def boom(_available: bool) -> None:
    """Fail, as a listener that should not stop the others."""
    raise RuntimeError("boom")


async def test_a_stalled_server_fails_within_the_timeouts(
    url: str, proxy: TcpProxy, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that accepts but never answers: open, calls and close all end."""
    store = PostgresStore(
        url, model=MODEL, clock=clock, timeout=TIMEOUT, command_timeout=TIMEOUT
    )
    await store.open()
    heard: list[bool] = []
    store.add_availability_listener(heard.append)
    kept = await store.add(memory("Anna likes jazz"))
    proxy.stall()
    started = time.monotonic()
    with pytest.raises(DatabaseUnavailableError, match="did not answer") as caught:
        await store.search(SearchQuery(text="jazz"))
    assert time.monotonic() - started < 3 * TIMEOUT
    assert_secret_kept(url, caught.value, caplog)
    assert heard == [False]

    await proxy.restore()
    assert (await store.get(kept.item.id)) == kept.item
    assert heard == [False, True]

    proxy.stall()
    started = time.monotonic()
    await store.close()
    assert time.monotonic() - started < 4 * TIMEOUT

    late = PostgresStore(url, model=MODEL, clock=clock, timeout=TIMEOUT)
    started = time.monotonic()
    with pytest.raises(DatabaseUnavailableError) as caught:
        await late.open()
    assert time.monotonic() - started < 3 * TIMEOUT
    assert_secret_kept(url, caught.value, caplog)
    assert not late.available


async def test_open_gives_up_within_its_timeout_at_every_step(
    url: str, proxy: TcpProxy, clock: FakeClock
) -> None:
    """A server that answers the check, then hangs, still fails `open` in time."""
    store = PostgresStore(url, model=MODEL, clock=clock, timeout=TIMEOUT)
    connections = proxy.connections

    async def stall_after_check() -> None:
        # The check's connection, then the pool's first: stall from the third.
        await proxy.accepted(connections + 2)
        proxy.stall()

    task = asyncio.create_task(stall_after_check())
    started = time.monotonic()
    with pytest.raises(DatabaseUnavailableError):
        await store.open()
    assert time.monotonic() - started < 3 * TIMEOUT
    await task
    await proxy.restore()
    await store.open()
    await store.close()


async def test_check_server_is_bounded(
    url: str, proxy: TcpProxy, clock: FakeClock
) -> None:
    """`check_server` on a hung server says so within its timeout; `open` raises its message."""
    await proxy.cut()
    store = PostgresStore(url, model=MODEL, clock=clock, timeout=TIMEOUT)
    with pytest.raises(DatabaseUnavailableError, match="Cannot reach PostgreSQL"):
        await store.open()
    assert not store.available
    await proxy.restore()
    proxy.stall()
    started = time.monotonic()
    check = await check_server(url, timeout=TIMEOUT)
    assert time.monotonic() - started < 3 * TIMEOUT
    assert check.problem is ServerProblem.CANNOT_CONNECT
    assert str(urlsplit(url).password) not in check.message


async def test_a_write_cut_in_its_transaction_leaves_nothing(
    store: PostgresStore, proxy: TcpProxy, postgres_database: str
) -> None:
    """Cut after a batch's rows are in, before it commits: none of them stays."""
    acknowledged = await store.add_many([memory(f"Fact {n} of Anna") for n in range(5)])
    batch = [memory(f"Note {n} on the garden", tags=("garden",)) for n in range(50)]
    # Straight to the server, not through the proxy: holds the tags' table, so
    # the batch's memories are inserted and its tags wait.
    blocker = await asyncpg.connect(postgres_database)
    try:
        lock = blocker.transaction()
        await lock.start()
        await blocker.execute("LOCK TABLE memory_tags IN ACCESS EXCLUSIVE MODE")
        task = asyncio.create_task(store.add_many(batch))
        await until_backends(blocker, True, 1)
        await proxy.cut()
        with pytest.raises(DatabaseUnavailableError):
            await task
        await lock.rollback()
        # The server ends the batch's transaction once it finds its client gone.
        await until_backends(blocker, False, 0)
        count = "SELECT count(*) FROM memories WHERE content LIKE $1"
        assert await blocker.fetchval(count, "Note %") == 0
        assert await blocker.fetchval(count, "Fact %") == len(acknowledged)
    finally:
        await blocker.close()
    await proxy.restore()
    assert all(result.created for result in await store.add_many(batch))


async def until_backends(connection: Any, waiting: bool, count: int) -> None:
    """Wait until `count` other client backends of the database (waiting on a lock)."""
    query = (
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        " AND (NOT $1 OR wait_event_type = 'Lock')"
    )
    for _ in range(500):
        if await connection.fetchval(query, waiting) == count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never {count} backends")


async def test_sql_errors_pass_unchanged(store: PostgresStore) -> None:
    """A server-side error is the parts' to handle: not a connection fault."""
    with pytest.raises(asyncpg.UndefinedTableError) as caught:
        await store.pool.execute("SELECT * FROM no_such_table")
    assert not is_connection_error(caught.value)
    assert store.available
    await store.pool.executemany("SELECT $1::int", [(1,), (2,)])
    assert [tuple(row) for row in await store.pool.fetch("SELECT 1")] == [(1,)]
    with pytest.raises(KeyError), store.pool.guard():
        raise KeyError("not a fault")
    assert store.pool.get_max_size() == 4
    assert is_connection_error(asyncpg.InterfaceError("connection is closed"))
    assert not is_connection_error(asyncpg.InterfaceError("another operation"))
