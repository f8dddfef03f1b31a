"""The database's life cycle: connections, checks, migration, writes' lock.

Three aiosqlite connections (`connections.py`): a writer used under an
asyncio lock (one serialised writer, whole transactions) and two readers
for searches (one for the keyword side, one for the vector side, so that
they run side by side), which in WAL mode never wait for a write, only see
committed data, and read in one hand-off each (so no open statement holds
an old snapshot for the reads queued behind it).
With sqlite-vec a fourth, a second vector reader, scans the other half of
the `vec0` shards at the same time. Opening checks the file (fully only
after an unclean close, `integrity.py`) and migrates it (`schema.py`);
every use checks that the file is still the one opened. Listeners hear of
every committed change and of every erase for good.

It is held, not inherited: the memories' table, vectors, search and the
queues reach it through its public methods; derived data (the vector
index) registers with `add_derived` (`parts.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
import contextlib
import logging
from pathlib import Path
import sqlite3
import time
from typing import Final, Literal

import aiosqlite

from ..errors import (
    DatabaseCorruptError,
    DatabaseGoneError,
    DatabaseTooNewError,
    DatabaseUnavailableError,
)
from ..languages import DEFAULT_LANGUAGE, language_code
from ..sql import read_one
from ..transactions import immediate_transaction
from ..vectors import BACKEND_NUMPY, BACKEND_SQLITE_VEC, Readings
from .connections import connect
from .files import make_private
from .integrity import CheckKind, IntegrityCheck, check, closed_cleanly, mark_clean
from .parts import DerivedData, EraseListener
from .schema import MIGRATIONS, SCHEMA_VERSION
from .vec0_leftovers import drop_vec0_tables

_LOGGER = logging.getLogger(__name__)

type BackendChoice = Literal["auto", "numpy", "sqlite-vec"]

# vec0 shards, each scanned on its own read connection at the same time: one
# per core of the 2-core target machine (vec0's PyPI build has no SIMD, so
# one thread scanning 100k vectors misses the 50 ms target; bench/engine.py).
VEC0_SHARDS: Final = 2
# How long closing waits for a write in flight (seconds).
CLOSE_WAIT: Final = 10.0


def check_database_file(path: Path, known: tuple[int, int] | None) -> tuple[int, int]:
    """Return the database file's (device, inode); raise if it is not `known`.

    In WAL mode SQLite goes on writing to a file that was deleted or moved
    while open, and all of it is lost at the next start. A stat costs a few
    microseconds, so every use of the store checks that its file is still
    the one it opened.
    """
    try:
        info = path.stat()
    except OSError as err:
        raise DatabaseGoneError(
            f"{path} is gone", error=f"{path}: {err.strerror or err}"
        ) from err
    identity = (info.st_dev, info.st_ino)
    if known is not None and identity != known:
        raise DatabaseGoneError(
            f"{path} was replaced", error=f"{path} is another file now"
        )
    return identity


async def _thread_ended(conn: aiosqlite.Connection) -> None:
    """Wait for aiosqlite's worker thread, which outlives `close()` briefly.

    Home Assistant (and its test harness) treat a thread left running after
    unload as a leak.
    """
    thread = conn._thread  # noqa: SLF001 - aiosqlite has no public handle
    if thread.is_alive():
        # `close()` has already stopped it; it only has to return. Joined in a
        # worker thread, not polled with `asyncio.sleep`, which never wakes
        # while a test freezes the event loop's clock.
        await asyncio.to_thread(thread.join)


async def erase_wal(writer: aiosqlite.Connection) -> None:
    """Drop the copies a DELETE leaves in the write-ahead log.

    Its pages are folded into the file (where secure_delete zeroes the
    freed ones) and the log is truncated. The vec0 index needs nothing
    more: sqlite-vec (0.1.9) clears a deleted vector's bytes in its chunk,
    which the purge tests check. Called with writes held.
    """
    # Its row read: a stepping statement fails a COMMIT (transactions.on_writer).
    await writer.execute_fetchall("PRAGMA wal_checkpoint(TRUNCATE)")


class Database:
    """One SQLite database file: its connections, their life cycle, its writes' lock."""

    def __init__(
        self,
        path: str | Path,
        *,
        model: str | None = None,
        vector_backend: BackendChoice = "auto",
        clock: Callable[[], float] = time.time,
        language: str = DEFAULT_LANGUAGE,
    ) -> None:
        """Nothing touches the disk until `open`.

        `model` names the embedding model whose vectors searches use; vectors
        of other models may be stored but are never mixed into a search.
        `language` (Home Assistant's) is the one memories, messages and
        queries that come without their own are analysed in.
        """
        self.path = Path(path)
        self._model = model
        self.language = language_code(language)
        # How well the model reads each language (`vectors.Readings`): the
        # embedding worker measures, searches weigh their vectors by it.
        self.readings = Readings(self.language)
        self._backend_choice = vector_backend
        self._clock = clock
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        # Searches' vector side (knn, exact re-scoring) reads through its own
        # connection so that it runs beside their keyword side.
        self._vector_reader: aiosqlite.Connection | None = None
        # The vec0 shards other than the first, scanned beside it (opened
        # only when sqlite-vec may be used).
        self._shard_readers: list[aiosqlite.Connection] = []
        self._write_lock = asyncio.Lock()
        self._derived: list[DerivedData] = []
        self._sqlite_vec = False
        self._listeners: list[Callable[[], None]] = []
        self._erase_listeners: list[EraseListener] = []
        self._paused = False
        # The open file's (device, inode), learnt at its first use.
        self._identity: tuple[int, int] | None = None
        # Set by a successful `open`: its `close` leaves the clean marker.
        self._opened = False
        self._derived_pending = False
        self.last_check: IntegrityCheck | None = None

    # -- life cycle ---------------------------------------------------------

    @property
    def vector_backend(self) -> str:
        """The backend in use (or that would be used once vectors exist)."""
        return BACKEND_SQLITE_VEC if self._sqlite_vec else BACKEND_NUMPY

    @property
    def model(self) -> str | None:
        """The embedding model searches use."""
        return self._model

    async def open(self, *, defer_index: bool = False) -> None:
        """Open (creating if needed), check, migrate, and load the vector index.

        The whole file is checked only when its last close was not clean;
        a cheap check reads its header and schema otherwise. With
        `defer_index`, the vector index is left to `load_index`, and
        searches use keywords only until then.
        """
        try:
            clean = await asyncio.to_thread(self._prepare_files)
        except OSError as err:
            raise DatabaseUnavailableError(
                f"cannot create {err.filename or self.path}: {err.strerror}",
                path=str(self.path),
            ) from err
        try:
            self._writer = await connect(self.path, reader=False)
            # Check and migrate before switching to WAL, which rewrites the
            # header: a corrupt or too-new file must be left byte for byte.
            await self._check_integrity(self._writer, "quick" if clean else "full")
            await self._migrate(self._writer)
            # Run to its end: an unfinished statement would keep the lock
            # the switch took, and the reader could not open the database.
            await self._writer.execute_fetchall("PRAGMA journal_mode = WAL")
            self._reader = await connect(self.path, reader=True)
            self._vector_reader = await connect(self.path, reader=True)
            if self._backend_choice == "sqlite-vec":
                for _shard in range(1, VEC0_SHARDS):
                    self._shard_readers.append(await connect(self.path, reader=True))
            self._sqlite_vec = await self._try_sqlite_vec()
            if not self._sqlite_vec:
                # What an earlier version kept in sqlite-vec's tables goes.
                await drop_vec0_tables(self._writer)
            if defer_index:
                self._derived_pending = True
            else:
                await self._load_derived()
        except sqlite3.DatabaseError as err:
            await self.close()
            if isinstance(err, sqlite3.OperationalError) and (
                "unable to open" in str(err) or "readonly" in str(err)
            ):
                raise DatabaseUnavailableError(
                    f"cannot open {self.path}: {err}", path=str(self.path)
                ) from err
            raise DatabaseCorruptError(
                f"{self.path} is not a usable database: {err}", path=str(self.path)
            ) from err
        except BaseException:
            await self.close()
            raise
        self._opened = True

    def _prepare_files(self) -> bool:
        """Make the files private; True if the last close was clean."""
        make_private(self.path)
        return closed_cleanly(self.path)

    async def load_index(self) -> None:
        """Load the vector index `open(defer_index=True)` left; harmless twice.

        Holds writes meanwhile (a write's vectors go into the index it
        loads), never searches. A vector table that cannot be read leaves
        searches on keywords only, with a warning.
        """
        async with self._write_lock:
            if not self._derived_pending or self._writer is None:
                return
            try:
                await self._load_derived()
            except sqlite3.Error as err:
                _LOGGER.warning(
                    "The memory vector index did not load; searches use keywords "
                    "only: %s",
                    err,
                )

    async def _check_integrity(
        self, conn: aiosqlite.Connection, kind: CheckKind
    ) -> None:
        self.last_check = await check(conn, kind, self._clock())
        if not self.last_check.ok:
            raise DatabaseCorruptError(
                f"{self.path} failed its integrity check", path=str(self.path)
            )

    async def check_integrity(self) -> IntegrityCheck:
        """Check every page now, on a connection of its own.

        Writes and searches go on meanwhile. The result is also kept in `last_check`.
        """
        self.connections()
        conn = await connect(self.path, reader=False)
        try:
            self.last_check = await check(conn, "full", self._clock())
        finally:
            await conn.close()
            await _thread_ended(conn)
        return self.last_check

    async def _migrate(self, conn: aiosqlite.Connection) -> None:
        version = await self.schema_version(conn)
        if version > SCHEMA_VERSION:
            raise DatabaseTooNewError(
                f"{self.path} has schema {version}, this version knows "
                f"{SCHEMA_VERSION}",
                path=str(self.path),
                version=str(version),
            )
        if version == SCHEMA_VERSION:
            return
        async with immediate_transaction(conn):
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step]:
                    await conn.execute(statement)
                await conn.execute(f"PRAGMA user_version = {step + 1}")
        _LOGGER.info(
            "Memory database migrated from schema %s to %s", version, SCHEMA_VERSION
        )

    @staticmethod
    async def schema_version(conn: aiosqlite.Connection) -> int:
        """Return the `user_version` of a connection's database."""
        row = await read_one(conn, "PRAGMA user_version")
        return int(row[0]) if row else 0

    async def _try_sqlite_vec(self) -> bool:
        """Load sqlite-vec when it is asked for by name; `auto` is the numpy index.

        numpy's binary codes scan faster than vec0's PyPI build (no SIMD) at
        every size measured and hold less memory (docs/benchmarks/engine.md,
        issue #25), so `auto` never loads the extension.
        """
        if self._backend_choice != "sqlite-vec":
            return False
        import sqlite_vec  # noqa: PLC0415 - optional at run time

        path = sqlite_vec.loadable_path()
        try:
            for conn in (
                self._writer,
                self._reader,
                self._vector_reader,
                *self._shard_readers,
            ):
                assert conn is not None  # noqa: S101
                await conn.enable_load_extension(True)
                await conn.load_extension(path)
                await conn.enable_load_extension(False)
        except (sqlite3.Error, AttributeError) as err:
            # Not DatabaseCorruptError, which open() would make of it.
            raise DatabaseUnavailableError(
                f"sqlite-vec did not load: {err}", path=str(self.path)
            ) from err
        return True

    def add_derived(self, derived: DerivedData) -> None:
        """Build `derived` at open (or `load_index`) and release it at close."""
        self._derived.append(derived)

    async def _load_derived(self) -> None:
        """Build the derived data not built yet; a bare database has none."""
        self._derived_pending = False
        for derived in self._derived:
            if not derived.loaded:
                await derived.load()

    @property
    def write_lock(self) -> asyncio.Lock:
        """The single writer's lock: held for a whole write, its index updates too."""
        return self._write_lock

    @property
    def vector_readers(self) -> list[aiosqlite.Connection]:
        """Searches' vector-side connections: the first, then the vec0 shards'."""
        first = [] if self._vector_reader is None else [self._vector_reader]
        return [*first, *self._shard_readers]

    @property
    def uses_sqlite_vec(self) -> bool:
        """Whether sqlite-vec's extension is loaded on every connection."""
        return self._sqlite_vec

    def now(self) -> float:
        """Return the database's clock's time (seconds since the epoch)."""
        return self._clock()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """Run one write transaction under the single-writer lock.

        For engine modules that keep their own tables (conversation log,
        embedding queue); listeners fire after it commits.
        """
        writer, _reader = self.connections()
        async with self._write_lock, immediate_transaction(writer):
            yield writer
        self.changed()

    @property
    def reader(self) -> aiosqlite.Connection:
        """The read-only connection: sees committed data, never waits for writes."""
        return self.connections()[1]

    async def pause_writes(self) -> None:
        """Fold the WAL into the main file and hold writes until resumed.

        A backup that copies the database file meanwhile gets a consistent
        copy; searches keep working.
        """
        writer, _reader = self.connections()
        await self._write_lock.acquire()
        try:
            await writer.execute_fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
        except BaseException:
            self._write_lock.release()
            raise
        self._paused = True

    def resume_writes(self) -> None:
        """Let writes continue after `pause_writes`; harmless when not paused."""
        if self._paused:
            self._paused = False
            self._write_lock.release()

    async def close(self) -> None:
        """Close the connections and release the index; safe to call twice.

        A write in flight (retention, the embedding worker, digestion) is
        let finish first, for at most `CLOSE_WAIT` seconds: closing the
        connection under it would fail it half way. Paused writes (a backup)
        hold the lock: closing does not wait for those.
        """
        self._derived_pending = False  # a `load_index` still waiting: nothing to do
        if self._writer is not None and not self._paused:
            try:
                async with asyncio.timeout(CLOSE_WAIT):
                    await self._write_lock.acquire()
                self._write_lock.release()
            except TimeoutError:
                _LOGGER.warning("Closing the memory database during a slow write")
        for derived in self._derived:
            await derived.close()
        shard_readers, self._shard_readers = self._shard_readers, []
        for conn in (*shard_readers, self._vector_reader, self._reader, self._writer):
            if conn is not None:
                try:
                    await conn.close()
                except sqlite3.Error as err:  # pragma: no cover - best effort
                    _LOGGER.debug("Error closing memory database: %s", err)
                await _thread_ended(conn)
        self._vector_reader = self._reader = self._writer = None
        if self._opened:
            self._opened = False
            try:
                await asyncio.to_thread(mark_clean, self.path)
            except OSError as err:
                _LOGGER.debug("Cannot mark the memory database closed: %s", err)

    def connections(self) -> tuple[aiosqlite.Connection, aiosqlite.Connection]:
        """Return the writer (under `write_lock` only) and the reader, file checked."""
        if self._writer is None or self._reader is None:
            raise DatabaseUnavailableError("the memory store is not open", path="")
        self._identity = check_database_file(self.path, self._identity)
        return self._writer, self._reader

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` after every committed change; returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def changed(self) -> None:
        """Tell the listeners that a change was committed."""
        for listener in list(self._listeners):
            listener()

    async def truncate_wal(self) -> None:
        """Erase what deleted rows left in the write-ahead log.

        For engine modules that delete through `transaction()` (the
        conversation log) and must leave no copy of the text behind.
        """
        writer, _reader = self.connections()
        async with self._write_lock:
            await erase_wal(writer)

    def add_erase_listener(self, listener: EraseListener) -> Callable[[], None]:
        """Await `listener` after every erase for good; returns a remover.

        Copies of the text outside the database (the Markdown export) are
        the listener's to rewrite or remove; see `EraseListener`.
        """
        self._erase_listeners.append(listener)
        return lambda: self._erase_listeners.remove(listener)

    async def erased(self, scopes: Iterable[str]) -> None:
        """Tell the erase listeners which scopes lost text for good.

        Every erase for good calls it once committed: purges of memories
        here, and of conversation messages (purge, retention) in the log.
        """
        erased = frozenset(scopes)
        if not erased:
            return
        for listener in list(self._erase_listeners):
            await listener(erased)

    def database_bytes(self) -> int:
        """Size on disk of the database and its write-ahead log."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += Path(f"{self.path}{suffix}").stat().st_size
            except FileNotFoundError:
                continue
        return total
