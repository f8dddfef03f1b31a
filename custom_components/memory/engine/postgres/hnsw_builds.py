"""HNSW builds off the critical path: in the background, concurrently, one process at a time.

A model's HNSW index (`vectors.PgVectorIndex` over `memory_vectors`,
`message_vectors.PgMessageVectors` over `message_vectors`) takes seconds
at 20k rows and minutes past that: ~38 min at 1M memories on 2 cores
(bench/pg_engine.py). So no open, add or move waits for one. A store that
finds a model at its threshold without a valid index starts
`build_locked` in a task of its pool (`start_build`), cancelled and
awaited when the store closes (`stop_builds`). Until the index is valid
PostgreSQL's planner does not use it, and searches scan exactly.

`build_locked` takes a session-level advisory lock per index
(`lock_key`), with `pg_try_advisory_lock`: one process of any Home
Assistant on the database builds, the others leave it to that one and see
the index appear. It runs `CREATE INDEX CONCURRENTLY IF NOT EXISTS`
outside a transaction, so writes go on meanwhile, bounded only by
`BUILD_TIMEOUT` (hours, not the store's 30 s a query). A CONCURRENTLY
build that failed or was cancelled (a closed store, a server restart)
leaves an INVALID index (`pg_index.indisvalid` false; a cancelled task
cancels its statement on the server too, `pg_cancel_backend`, since a
backend waiting or building would not notice its client gone) that `IF NOT EXISTS`
would take for done: under the lock an invalid index is a leftover (a
build in progress would hold the lock), so it is dropped and built again.

A build that fails is logged at WARNING (the error's class and the
server's words, never a URL) and not tried again on that pool: the next
open, with a new pool, tries again. Nothing of it reaches the callers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
import contextlib
from dataclasses import dataclass, field
import hashlib
import logging
import time
from typing import Any, Final

_LOGGER = logging.getLogger(__name__)

# An HNSW build's bound: 1M memories of 384 dimensions took ~38 min on two
# cores (bench/pg_engine.py); four hours leave a small board room, and
# only a hung server is cut off.
BUILD_TIMEOUT: Final = 4 * 3600.0
# Seconds a cancelled build waits for the server to hear of it (a close).
CANCEL_TIMEOUT: Final = 5.0
# Building the graph in memory is several times faster than spilling to
# disk: 100k vectors of 384 dimensions need ~200 MB.
BUILD_MEMORY: Final = "512MB"

# The statement that builds an index, made on the locked connection (it may
# read the rows first); None: no index is called for.
type Plan = Callable[[Any], Awaitable[str | None]]


@dataclass
class _PoolBuilds:
    """The builds of one pool: running tasks and the indexes that failed."""

    tasks: dict[str, asyncio.Task[bool]] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)


# By pool (asyncpg's pool takes no weak reference): an entry goes when its
# pool's builds stop, or when its last task ends without a failure.
_POOLS: dict[Any, _PoolBuilds] = {}


def lock_key(name: str) -> int:
    """Return the advisory lock key of index `name` (a signed 64-bit hash)."""
    digest = hashlib.sha256(b"hnsw build " + name.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


async def index_state(connection: Any, name: str) -> bool | None:
    """Say whether index `name` is valid (True), INVALID (False) or absent (None)."""
    # By the catalog's rows, not `to_regclass`: its cache may not yet know
    # of an index another session made during this one's transaction.
    value = await connection.fetchval(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " WHERE c.relname = $1 AND pg_table_is_visible(c.oid)",
        name,
    )
    return None if value is None else bool(value)


async def build_locked(
    pool: Any, name: str, plan: Plan, *, analyze: str | None = None
) -> bool:
    """Build index `name` concurrently under its lock; say whether it is valid now.

    False: another process holds the lock (it builds), or `plan` calls for
    no index. An INVALID leftover is dropped first. `analyze` names a table
    to analyse after the build, so the planner sees its rows.
    """
    key = lock_key(name)
    async with pool.acquire() as connection:
        if not await connection.fetchval("SELECT pg_try_advisory_lock($1)", key):
            return False
        pid = connection.get_server_pid()
        try:
            built = await _build(connection, name, plan, analyze)
        except asyncio.CancelledError:
            # The pool drops or resets the connection (either releases the
            # lock), but a server backend waiting or building does not see
            # its client go: cancel the statement there too.
            await _cancel_on_server(pool, pid)
            raise
        except Exception:
            with contextlib.suppress(Exception):
                await connection.execute("SELECT pg_advisory_unlock_all()")
            raise
        await connection.execute("RESET maintenance_work_mem")
        await connection.execute("SELECT pg_advisory_unlock($1)", key)
    return built


async def _cancel_on_server(pool: Any, pid: int) -> None:
    """Cancel the statement of server process `pid`, within `CANCEL_TIMEOUT`."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(CANCEL_TIMEOUT), pool.acquire() as connection:
            await connection.execute("SELECT pg_cancel_backend($1)", pid)


async def _build(connection: Any, name: str, plan: Plan, analyze: str | None) -> bool:
    """Build under the lock held by `build_locked`; say whether the index is valid."""
    state = await index_state(connection, name)
    if state:
        return True
    if state is False:
        _LOGGER.info("Dropping %s, left INVALID by an interrupted build", name)
        await connection.execute(
            f"DROP INDEX CONCURRENTLY IF EXISTS {name}", timeout=BUILD_TIMEOUT
        )
    statement = await plan(connection)
    if statement is None:
        return False
    started = time.monotonic()
    _LOGGER.info("Building %s in the background: searches stay exact until then", name)
    await connection.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
    await connection.execute(statement, timeout=BUILD_TIMEOUT)
    if analyze is not None:
        await connection.execute(f"ANALYZE {analyze}", timeout=BUILD_TIMEOUT)
    _LOGGER.info("Built %s in %.0f s", name, time.monotonic() - started)
    return True


async def _guarded(pool: Any, name: str, build: Callable[[], Awaitable[bool]]) -> bool:
    """Run a build; a failure is logged and remembered, never raised."""
    import asyncpg  # noqa: PLC0415

    try:
        return await build()
    except Exception as err:  # noqa: BLE001 - a background task reports, never raises
        said = f": {err}" if isinstance(err, asyncpg.PostgresError) else ""
        _LOGGER.warning(
            "Building the HNSW index %s failed (%s%s); searches by meaning stay"
            " exact, and the next start of the store tries again",
            name,
            type(err).__name__,
            said,
        )
        _POOLS.setdefault(pool, _PoolBuilds()).failed.add(name)
        return False


def building(pool: Any, name: str) -> bool:
    """Say whether this process builds index `name` on `pool` now."""
    builds = _POOLS.get(pool)
    task = None if builds is None else builds.tasks.get(name)
    return task is not None and not task.done()


def start_build(pool: Any, name: str, build: Callable[[], Awaitable[bool]]) -> bool:
    """Start `build` of index `name` in the background, once at a time.

    Returns False, starting nothing, while one runs or once one has failed
    on this pool (the next pool, at the next open, tries again).
    """
    builds = _POOLS.setdefault(pool, _PoolBuilds())
    if name in builds.failed or building(pool, name):
        return False
    task = asyncio.get_running_loop().create_task(
        _guarded(pool, name, build), name=f"memory: build {name}"
    )
    builds.tasks[name] = task

    def _done(done: asyncio.Task[bool]) -> None:
        if builds.tasks.get(name) is done:
            del builds.tasks[name]
        if not builds.tasks and not builds.failed and _POOLS.get(pool) is builds:
            del _POOLS[pool]

    task.add_done_callback(_done)
    return True


async def wait_builds(pool: Any) -> None:
    """Wait until this process's builds on `pool` have ended (tests, benchmarks)."""
    while (builds := _POOLS.get(pool)) is not None and builds.tasks:
        await asyncio.gather(*builds.tasks.values(), return_exceptions=True)


async def stop_build(pool: Any, name: str) -> None:
    """Cancel this process's build of index `name` on `pool` and wait for it."""
    builds = _POOLS.get(pool)
    task = None if builds is None else builds.tasks.get(name)
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def stop_builds(pool: Any) -> None:
    """Cancel every build on `pool`, wait for them, forget the pool (its close)."""
    builds = _POOLS.pop(pool, None)
    if builds is None:
        return
    for task in builds.tasks.values():
        task.cancel()
    await asyncio.gather(*builds.tasks.values(), return_exceptions=True)
