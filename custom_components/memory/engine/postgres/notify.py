"""Changes heard across instances: `pg_notify` in each write, a `ChangeFeed` to listen.

Several Home Assistants may share one database; each one's panel and
sensors must follow what the others write, as `store.Database.changed()`
tells the listeners of one SQLite file. Every committing write of this room
(`PostgresMemories`, `PostgresCuration`, `PostgresConversationLog`, the
vectors, the embedding jobs and the digestion queue) calls
`notify` inside its own transaction, so PostgreSQL delivers the notice on commit and drops it on a
rollback. The payload on channel `CHANNEL` is a small JSON object: the
kind of change, the writing instance, the affected scopes and ids and
whether text was erased for good (a purge, a memory moved to another
scope: the exports of those scopes are rewritten, as `Database.erased`
asks). Never any memory content: a notice is readable by every role that
may LISTEN. PostgreSQL refuses payloads of 8000 bytes or more, so a long
list of ids (then scopes) is dropped for None: "more than can be listed".

`ChangeFeed` holds one dedicated connection with a LISTEN on the channel
and calls its listeners (plain callables, as `Database.add_listener`'s) with
each `Change`, those of its own instance left out when asked. When the
connection drops (the server restarts, `pg_terminate_backend`, a network
cut the periodic ping notices), it reconnects with a growing delay; once
back it tells the listeners `ChangeKind.RESYNC` (every scope, no ids):
notices sent while it was away are lost, so they read everything again.
Its connection listeners (`add_connection_listener`) hear False when an
attempt to reconnect fails (the server is away, not just this
connection) and True once it listens again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
import contextlib
from dataclasses import dataclass
from enum import StrEnum
import json
import logging
import random
from typing import Any, Final

from .server import driver_errors

_LOGGER = logging.getLogger(__name__)

CHANNEL: Final = "assist_memory"
# PostgreSQL's bound on a NOTIFY payload is 8000 bytes (less than it).
MAX_PAYLOAD: Final = 7900
_NOTIFY: Final = "SELECT pg_notify($1, $2)"


class ChangeKind(StrEnum):
    """What a write did; `RESYNC` is the feed's own: it was away, read again."""

    ADDED = "added"
    ARCHIVED = "archived"
    PURGED = "purged"
    SUPERSEDED = "superseded"
    UPDATED = "updated"
    RESTORED = "restored"
    EXPIRED = "expired"
    # The conversation log's (`PostgresConversationLog`): messages appended
    # and conversations ended carry conversation row ids; purged messages
    # their own ids (and `erased`).
    MESSAGES_ADDED = "messages_added"
    CONVERSATIONS_ENDED = "conversations_ended"
    MESSAGES_PURGED = "messages_purged"
    # Vectors stored (`PgVectorIndex`) and embedding jobs marked ready
    # (`PostgresJobs.mark_ready`) carry memory ids; a digestion state change
    # (`PostgresDigestQueue`) its conversation row's id. An older version's
    # `decode` reads these as None: it ignores them, as before.
    VECTORS_SET = "vectors_set"
    EMBEDDINGS_READY = "embeddings_ready"
    DIGESTION_CHANGED = "digestion_changed"
    RESYNC = "resync"


@dataclass(frozen=True, slots=True)
class Change:
    """One notice: kind, writer, scopes and ids (None: too many to list)."""

    kind: ChangeKind
    instance: str | None = None
    scopes: frozenset[str] | None = None
    ids: tuple[int, ...] | None = None
    # Text left these scopes for good (their exports are rewritten).
    erased: bool = False


def encode(change: Change) -> str:
    """Write a change as its JSON payload, under `MAX_PAYLOAD` bytes."""
    body: dict[str, Any] = {
        "kind": str(change.kind),
        "instance": change.instance,
        "scopes": None if change.scopes is None else sorted(change.scopes),
        "ids": None if change.ids is None else list(change.ids),
        "erased": change.erased,
    }
    for dropped in ("ids", "scopes"):
        text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
        if len(text.encode()) < MAX_PAYLOAD:
            return text
        body[dropped] = None
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def decode(payload: str) -> Change | None:
    """Read a payload `encode` wrote; None for anything else."""
    try:
        body = json.loads(payload)
        scopes = body.get("scopes")
        ids = body.get("ids")
        instance = body.get("instance")
        return Change(
            kind=ChangeKind(body["kind"]),
            instance=None if instance is None else str(instance),
            scopes=None if scopes is None else frozenset(map(str, scopes)),
            ids=None if ids is None else tuple(int(i) for i in ids),
            erased=bool(body.get("erased", False)),
        )
    except ValueError, TypeError, KeyError, AttributeError:
        return None


async def notify(
    connection: Any,
    kind: ChangeKind,
    *,
    instance: str | None,
    scopes: Iterable[str],
    ids: Iterable[int],
    erased: bool = False,
) -> None:
    """Send a change on `CHANNEL` within the connection's open transaction."""
    change = Change(
        kind=kind,
        instance=instance,
        scopes=frozenset(scopes),
        ids=tuple(sorted(set(ids))),
        erased=erased,
    )
    await connection.execute(_NOTIFY, CHANNEL, encode(change))


type ChangeListener = Callable[[Change], None]


class ChangeFeed:
    """One dedicated connection listening on `CHANNEL`, reconnecting by itself."""

    def __init__(
        self,
        url: str,
        *,
        instance: str | None = None,
        ignore_own: bool = False,
        min_delay: float = 0.5,
        max_delay: float = 60.0,
        ping_every: float = 30.0,
        timeout: float = 10.0,
    ) -> None:
        """Hold the URL and how to behave; nothing connects until `start`.

        `instance` names this instance (the writers' `instance`); with
        `ignore_own` its own notices are not passed on. Reconnection waits
        `min_delay`, doubling up to `max_delay`; every `ping_every` seconds
        a query checks that a quiet connection is still alive.
        """
        self._url = url
        self.instance = instance
        self._ignore_own = ignore_own
        self._min_delay = min_delay
        self._max_delay = max_delay
        self._ping_every = ping_every
        self._timeout = timeout
        self._listeners: list[ChangeListener] = []
        self._connection_listeners: list[Callable[[bool], None]] = []
        self._connection: Any = None
        self._lost = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self.reconnects = 0

    @property
    def connected(self) -> bool:
        """Say whether the feed is listening now."""
        return self._connection is not None and not self._connection.is_closed()

    @property
    def server_pid(self) -> int | None:
        """Return the server process of the listening connection (None: none)."""
        return self._connection.get_server_pid() if self.connected else None

    def add_listener(self, listener: ChangeListener) -> Callable[[], None]:
        """Call `listener` with every change heard; returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def add_connection_listener(
        self, listener: Callable[[bool], None]
    ) -> Callable[[], None]:
        """Call `listener(False)` when reconnecting fails, `(True)` once back."""
        self._connection_listeners.append(listener)
        return lambda: self._connection_listeners.remove(listener)

    def _tell_connected(self, connected: bool) -> None:
        """Tell the connection listeners; one that raises does not stop the others."""
        for listener in list(self._connection_listeners):
            try:
                listener(connected)
            except Exception:
                _LOGGER.exception("A memory change feed connection listener failed")

    async def start(self) -> None:
        """Connect and listen (a first failure raises), then watch the connection."""
        if self._task is not None:
            return
        self._stopping = False
        await self._connect()
        self._task = asyncio.create_task(self._watch(), name="memory-change-feed")

    async def stop(self) -> None:
        """Stop watching and close the connection."""
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self._close()

    async def _connect(self) -> None:
        """Open the connection and LISTEN on it."""
        import asyncpg  # noqa: PLC0415

        connection = await asyncpg.connect(self._url, timeout=self._timeout)
        try:
            connection.add_termination_listener(self._terminated)
            await connection.add_listener(CHANNEL, self._heard)
        except BaseException:
            connection.terminate()
            raise
        self._lost.clear()
        self._connection = connection
        _LOGGER.debug("Listening for memory changes on %s", CHANNEL)

    async def _close(self) -> None:
        """Close the connection, if one is open, without raising."""

        connection, self._connection = self._connection, None
        if connection is None or connection.is_closed():
            return
        connection.remove_termination_listener(self._terminated)
        try:
            await connection.close(timeout=self._timeout)
        except driver_errors():
            connection.terminate()

    def _terminated(self, connection: Any) -> None:
        """Wake the watcher to reconnect (unless stopping): the connection closed."""
        if connection is self._connection and not self._stopping:
            _LOGGER.debug("The memory change feed lost its connection")
            self._lost.set()

    async def _alive(self) -> bool:
        """Ping the connection; False when it does not answer."""

        connection = self._connection
        if connection is None or connection.is_closed():
            return False
        try:
            await connection.fetchval("SELECT 1", timeout=self._timeout)
        except driver_errors():
            return False
        return True

    async def _watch(self) -> None:
        """Wait for a lost connection (or a failed ping), then reconnect."""
        while True:
            try:
                await asyncio.wait_for(self._lost.wait(), self._ping_every)
            except TimeoutError:
                if await self._alive():
                    continue
            await self._reconnect()

    async def _reconnect(self) -> None:
        """Connect again with a growing delay; then tell listeners to read again."""

        with contextlib.suppress(Exception):
            await self._close()
        delay = self._min_delay
        while True:
            await asyncio.sleep(delay * random.uniform(1.0, 1.25))  # noqa: S311
            try:
                await self._connect()
            except driver_errors(ValueError) as err:
                _LOGGER.debug(
                    "The memory change feed could not reconnect (%s); again in %.1f s",
                    type(err).__name__,
                    min(delay * 2, self._max_delay),
                )
                delay = min(delay * 2, self._max_delay)
                self._tell_connected(False)
                continue
            break
        self.reconnects += 1
        _LOGGER.info("The memory change feed reconnected to PostgreSQL")
        self._tell_connected(True)
        self._deliver(Change(kind=ChangeKind.RESYNC))

    def _heard(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        """Parse a notice and pass it on (not our own, when so asked)."""
        change = decode(payload)
        if change is None:
            _LOGGER.debug("Ignored a notice on %s that is no change", CHANNEL)
            return
        if (
            self._ignore_own
            and self.instance is not None
            and change.instance == self.instance
        ):
            return
        self._deliver(change)

    def _deliver(self, change: Change) -> None:
        """Call every listener; one that raises does not stop the others."""
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:
                _LOGGER.exception("A memory change listener failed (%s)", change.kind)
