"""The memory store: one SQLite file, keyword and vector search, safe writes.

Three aiosqlite connections: a writer used under an asyncio lock (one
serialised writer, whole transactions) and two readers for searches (one
for the keyword side, one for the vector side, so that they run side by
side), which in WAL mode never wait for a write and only see committed data.
With sqlite-vec a fourth, a second vector reader, scans the other half of
the `vec0` shards at the same time.
"""

from __future__ import annotations

import asyncio
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
import contextlib
import hashlib
import logging
from pathlib import Path
import sqlite3
import time
from typing import Any, Final, Literal

import aiosqlite
import numpy as np
import numpy.typing as npt

from .errors import (
    ContentTooLongError,
    DatabaseCorruptError,
    DatabaseGoneError,
    DatabaseTooNewError,
    DatabaseUnavailableError,
    EmptyContentError,
    InvalidInputError,
    InvalidLimitError,
    InvalidScopeError,
    InvalidTagError,
    StoreError,
    TooManyTagsError,
    UnknownMemoryError,
    VectorDimensionError,
)
from .files import make_private
from .fusion import Ranked, add_context, fuse
from .integrity import CheckKind, IntegrityCheck, check, closed_cleanly, mark_clean
from .models import (
    MAX_CONTENT_CHARS,
    MAX_SCOPE_CHARS,
    MAX_SEARCH_LIMIT,
    MAX_TAG_CHARS,
    MAX_TAGS,
    AddResult,
    MemoryItem,
    MemoryStatus,
    MemoryType,
    NewMemory,
    Origin,
    SearchHit,
    SearchQuery,
    Source,
    StoreStats,
    Vector,
    from_timestamp,
    to_timestamp,
)
from .schema import MIGRATIONS, SCHEMA_VERSION
from .text import (
    clean_content,
    content_key,
    fts_match_expression,
    is_blank,
    normalize_tag,
    query_terms,
    term_coverage,
)
from .transactions import immediate_transaction
from .vectors import (
    BACKEND_NUMPY,
    BACKEND_SQLITE_VEC,
    NumpyIndex,
    SqliteVecIndex,
    VectorIndex,
    as_unit_vector,
)

_LOGGER = logging.getLogger(__name__)

type BackendChoice = Literal["auto", "numpy", "sqlite-vec"]
# A search's candidates so far: keyword hits (id, bm25, coverage), the
# semantic pool (id, cosine), and cosines of candidates outside that pool.
type _Signals = tuple[
    list[tuple[int, float, float]], list[tuple[int, float]], dict[int, float]
]

# Candidates each signal contributes before fusion (tuned by bench/locomo.py).
# Every candidate is then scored on both signals (keyword hits outside the
# semantic pool get their exact cosine), which makes the pools' size matter
# little: 50 and 200 gave the same recall on LoCoMo.
KEYWORD_POOL: Final = 50
SEMANTIC_POOL: Final = 50
# FTS5 ranks its matches alone and hands over this many times the keyword
# pool to be joined with `memories` and filtered (bench/engine.py: a third
# of the keyword query's time at 100k memories).
KEYWORD_OVERFETCH: Final = 4
# The int8 index is asked for more than the pool, then re-scored exactly.
SEMANTIC_OVERSAMPLE: Final = 4
# vec0 shards, each scanned on its own read connection at the same time: one
# per core of the 2-core target machine (vec0's PyPI build has no SIMD, so
# one thread scanning 100k vectors misses the 50 ms target; bench/engine.py).
VEC0_SHARDS: Final = 2
# Below this many filtered candidates, a selective filter scans exactly.
EXACT_SCAN_MAX: Final = 20_000
# FTS5 column weights: content, tags.
BM25_WEIGHTS: Final = (1.0, 0.5)
_BM25: Final = f"bm25(memories_fts, {', '.join(map(str, BM25_WEIGHTS))})"
_LOAD_BATCH: Final = 4096
_BUSY_TIMEOUT_MS: Final = 10_000
# SQLite's largest INTEGER, so the largest id a row can have.
MAX_ROW_ID: Final = 2**63 - 1
# Ids per `IN (…)` when reading vectors of many rows.
_ID_CHUNK: Final = 500
# How long closing waits for a write in flight (seconds).
CLOSE_WAIT: Final = 10.0

_ITEM_COLUMNS: Final = (
    "m.id, m.scope, m.type, m.content, m.tags, m.status, m.superseded_by, "
    "m.valid_from, m.valid_to, m.expires_at, m.created_at, m.updated_at, "
    "m.last_recalled_at, m.recall_count, m.origin, m.conversation_id, "
    "m.agent_id, m.device_id, m.user_id, m.topic, m.confidence, m.message_id"
)


# Awaited with the scopes whose text was just erased for good (a purge, the
# conversation retention), after the erase is committed. The export mirror
# rewrites its files with it; a listener that could not make its copies go
# raises a `StoreError`, which the erasing call then raises.
type EraseListener = Callable[[frozenset[str]], Awaitable[None]]


def placeholders(count: int) -> str:
    """`?,?,…` for an `IN (…)` of `count` values: values are always bound."""
    return ",".join("?" * count)


async def exact_scores(
    conn: aiosqlite.Connection, sql: str, args: Sequence[Any], unit: Vector
) -> list[tuple[int, float]]:
    """Cosines with a unit query of the `(id, float32 vector)` rows `sql` reads."""
    rows = list(await conn.execute_fetchall(sql, args))
    if not rows:
        return []
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32)
    scores = matrix.reshape(len(rows), -1) @ unit
    return [
        (int(row[0]), float(score)) for row, score in zip(rows, scores, strict=True)
    ]


async def exact_cosines(
    conn: aiosqlite.Connection,
    unit: Vector,
    ids: Sequence[int],
    *,
    table: str,
    key: str,
    model: str,
) -> dict[int, float]:
    """Cosines of the stored vectors of `ids` (column `key` of `table`)."""
    scores: dict[int, float] = {}
    for start in range(0, len(ids), _ID_CHUNK):
        chunk = ids[start : start + _ID_CHUNK]
        scores.update(
            await exact_scores(
                conn,
                f"SELECT {key}, vector FROM {table} WHERE model = ? "
                f"AND {key} IN ({placeholders(len(chunk))})",
                [model, *chunk],
                unit,
            )
        )
    return scores


async def cosines_outside_pool(
    conn: aiosqlite.Connection,
    vector: Vector,
    semantic: Sequence[tuple[int, float]],
    ids: Sequence[int],
    *,
    table: str,
    key: str,
    model: str,
) -> dict[int, float]:
    """Exact cosines of those `ids` the semantic pool left out (none without one).

    A keyword hit outside the pool still gets its semantic score, so fusion
    weighs it like the pooled ones.
    """
    pooled = {item_id for item_id, _score in semantic}
    missing = sorted({item_id for item_id in ids if item_id not in pooled})
    if not semantic or not missing:
        return {}
    return await exact_cosines(
        conn, as_unit_vector(vector), missing, table=table, key=key, model=model
    )


async def semantic_pool(
    conn: aiosqlite.Connection,
    index: VectorIndex,
    unit: Vector,
    *,
    base: str,
    args: Sequence[Any],
    key: str,
    pool: int,
) -> list[tuple[int, float]]:
    """Find the `pool` nearest rows `(id, cosine)` that `base` admits, best first.

    `base` selects `(id, vector)` with the filters (`args` bound); the int8
    `index` proposes candidates, whose float32 vectors are scored exactly.
    When a selective filter (one person's rows) leaves too few of them, its
    whole subset is scanned exactly, up to `EXACT_SCAN_MAX` rows.
    """
    wanted = pool * SEMANTIC_OVERSAMPLE
    candidates = await index.knn(unit, wanted)
    # knn returns min(k, size) ids, so fewer than asked for means the index
    # holds no more (known without `count()`, a full scan in vec0).
    every = len(candidates) < wanted
    if every:
        sql, sql_args = base, list(args)
    else:
        ids = [item_id for item_id, _score in candidates]
        sql = f"{base} AND {key} IN ({placeholders(len(ids))})"
        sql_args = [*args, *ids]
    scored = await exact_scores(conn, sql, sql_args, unit)
    if len(scored) < pool and not every:
        rows = await conn.execute_fetchall(f"SELECT count(*) FROM ({base})", args)
        count = int(next(iter(rows))[0])
        if len(scored) < count <= EXACT_SCAN_MAX:
            scored = await exact_scores(conn, base, args, unit)
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored[:pool]


# An expired twin no longer counts: archive it (as expire_due would) so it
# cannot swallow the new memory and then be archived with it.
_ARCHIVE_EXPIRED_TWIN: Final = (
    "UPDATE memories SET status = 'archived', updated_at = ?, "
    "valid_to = coalesce(valid_to, expires_at) WHERE scope = ? "
    "AND content_key = ? AND status = 'active' AND expires_at <= ?"
)
_INSERT_COLUMNS: Final = (
    "scope",
    "type",
    "content",
    "content_key",
    "tags",
    "valid_from",
    "expires_at",
    "created_at",
    "updated_at",
    "origin",
    "conversation_id",
    "agent_id",
    "device_id",
    "user_id",
    "topic",
    "confidence",
    "message_id",
)
# Rows per multi-row INSERT: 500 x 17 values stays far below SQLite's
# 32,766 bound parameters.
_INSERT_CHUNK: Final = 500


def _insert_row(
    memory: NewMemory, content: str, tags: tuple[str, ...], key: str, now: float
) -> tuple[Any, ...]:
    """Values of `_INSERT_COLUMNS` for a validated memory."""
    source = memory.source
    return (
        memory.scope,
        str(memory.type),
        content,
        key,
        " ".join(tags),
        to_timestamp(memory.valid_from) or now,
        to_timestamp(memory.expires_at),
        now,
        now,
        str(source.origin),
        source.conversation_id,
        source.agent_id,
        source.device_id,
        source.user_id,
        memory.topic,
        memory.confidence,
        memory.message_id,
    )


def _row_to_item(row: sqlite3.Row) -> MemoryItem:
    created = from_timestamp(row["created_at"])
    updated = from_timestamp(row["updated_at"])
    assert created is not None  # noqa: S101 - NOT NULL columns
    assert updated is not None  # noqa: S101
    return MemoryItem(
        id=row["id"],
        scope=row["scope"],
        type=MemoryType(row["type"]),
        content=row["content"],
        tags=tuple(row["tags"].split()),
        status=MemoryStatus(row["status"]),
        superseded_by=row["superseded_by"],
        valid_from=from_timestamp(row["valid_from"]),
        valid_to=from_timestamp(row["valid_to"]),
        expires_at=from_timestamp(row["expires_at"]),
        created_at=created,
        updated_at=updated,
        last_recalled_at=from_timestamp(row["last_recalled_at"]),
        recall_count=row["recall_count"],
        source=Source(
            origin=Origin(row["origin"]),
            conversation_id=row["conversation_id"],
            agent_id=row["agent_id"],
            device_id=row["device_id"],
            user_id=row["user_id"],
        ),
        topic=row["topic"],
        confidence=row["confidence"],
        message_id=row["message_id"],
    )


def validate_memory(memory: NewMemory) -> tuple[str, tuple[str, ...]]:
    """Check a new memory; return its cleaned content and normalised tags.

    NUL and other control characters (but tabs and line breaks) are dropped;
    text with no visible character (only spaces, zero-width or other
    invisible characters) is not a memory.
    """
    content = clean_content(memory.content).strip()
    if is_blank(content):
        raise EmptyContentError("memory content is empty")
    if len(content) > MAX_CONTENT_CHARS:
        raise ContentTooLongError(
            f"memory content has {len(content)} characters, "
            f"the limit is {MAX_CONTENT_CHARS}",
            length=str(len(content)),
            limit=str(MAX_CONTENT_CHARS),
        )
    validate_scope(memory.scope)
    return content, normalize_tags(memory.tags)


def storable_ids(ids: Iterable[int]) -> list[int]:
    """Ids SQLite can hold (1 to 2**63 - 1), unique and sorted.

    Any other id cannot exist; binding it would raise OverflowError.
    """
    return sorted({item_id for item_id in ids if 1 <= item_id <= MAX_ROW_ID})


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


def validate_scope(scope: str) -> None:
    """Check that a scope (household or a person's id) is short and non-empty."""
    if not scope.strip() or len(scope) > MAX_SCOPE_CHARS:
        raise InvalidScopeError("scope must be 1 to 100 characters", scope=scope[:100])


def normalize_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Normalise and de-duplicate tags; raise on one that cannot be stored."""
    result: dict[str, None] = {}
    for tag in tags:
        normal = normalize_tag(tag)
        if normal is None or len(normal) > MAX_TAG_CHARS:
            raise InvalidTagError(
                "tags are 1 to 40 letters, digits, '_', '-' or '.'", tag=tag[:40]
            )
        result[normal] = None
    if len(result) > MAX_TAGS:
        raise TooManyTagsError(
            f"{len(result)} tags, the limit is {MAX_TAGS}",
            count=str(len(result)),
            limit=str(MAX_TAGS),
        )
    return tuple(result)


def _model_table(model: str) -> str:
    return "vec_" + hashlib.sha256(model.encode()).hexdigest()[:16]


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


class MemoryStore:
    """Stores, finds and forgets memories in one SQLite database file."""

    def __init__(
        self,
        path: str | Path,
        *,
        model: str | None = None,
        vector_backend: BackendChoice = "auto",
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Nothing touches the disk until `open`.

        `model` names the embedding model whose vectors searches use; vectors
        of other models may be stored but are never mixed into a search.
        """
        self.path = Path(path)
        self._model = model
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
        self._index: VectorIndex | None = None
        self._sqlite_vec = False
        self._listeners: list[Callable[[], None]] = []
        self._erase_listeners: list[EraseListener] = []
        self._paused = False
        # The open file's (device, inode), learnt at its first use.
        self._identity: tuple[int, int] | None = None
        # Set by a successful `open`: its `close` leaves the clean marker.
        self._opened = False
        self._index_pending = False
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
            self._writer = await self._connect()
            # Check and migrate before switching to WAL, which rewrites the
            # header: a corrupt or too-new file must be left byte for byte.
            await self._check_integrity(self._writer, "quick" if clean else "full")
            await self._migrate(self._writer)
            # Read the result: an unfinished statement would keep the lock
            # the switch took, and the reader could not open the database.
            async with self._writer.execute("PRAGMA journal_mode = WAL") as cursor:
                await cursor.fetchall()
            self._reader = await self._connect()
            self._vector_reader = await self._connect()
            if self._backend_choice != "numpy":
                for _shard in range(1, VEC0_SHARDS):
                    self._shard_readers.append(await self._connect())
            self._sqlite_vec = await self._try_sqlite_vec()
            if defer_index:
                self._index_pending = True
            else:
                await self._load_index()
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
            if not self._index_pending or self._writer is None:
                return
            try:
                await self._load_index()
            except sqlite3.Error as err:
                _LOGGER.warning(
                    "The memory vector index did not load; searches use keywords "
                    "only: %s",
                    err,
                )

    async def _connect(self) -> aiosqlite.Connection:
        conn = await aiosqlite.connect(self.path, isolation_level=None)
        conn.row_factory = sqlite3.Row
        try:
            for pragma in (
                f"busy_timeout = {_BUSY_TIMEOUT_MS}",
                "foreign_keys = ON",
                "synchronous = NORMAL",
                "secure_delete = ON",
                "temp_store = MEMORY",
            ):
                await conn.execute(f"PRAGMA {pragma}")
        except BaseException:
            # Not yet ours to close in `close()`: its thread would linger.
            await conn.close()
            raise
        return conn

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
        self._require()
        conn = await self._connect()
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
        async with conn.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def _try_sqlite_vec(self) -> bool:
        if self._backend_choice == "numpy":
            return False
        try:
            import sqlite_vec  # noqa: PLC0415 - optional at run time
        except ImportError:
            if self._backend_choice == "sqlite-vec":
                raise
            return False
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
            if self._backend_choice == "sqlite-vec":
                # Not DatabaseCorruptError, which open() would make of it.
                raise DatabaseUnavailableError(
                    f"sqlite-vec did not load: {err}", path=str(self.path)
                ) from err
            _LOGGER.warning("sqlite-vec did not load, using numpy search: %s", err)
            return False
        return True

    async def _model_dim(self, conn: aiosqlite.Connection, model: str) -> int | None:
        rows = await conn.execute_fetchall(
            "SELECT dim FROM embedding_models WHERE model = ?", (model,)
        )
        row = next(iter(rows), None)
        return int(row[0]) if row else None

    async def _load_index(self) -> None:
        """Build the active model's index from `embeddings` (derived data)."""
        writer, reader = self._require()
        self._index = None
        self._index_pending = False
        if self._model is None:
            return
        dim = await self._model_dim(reader, self._model)
        if dim is None:
            return
        async with reader.execute(
            "SELECT count(*) FROM embeddings WHERE model = ?", (self._model,)
        ) as cursor:
            row = await cursor.fetchone()
        stored = int(row[0]) if row else 0
        index: VectorIndex
        if self._sqlite_vec:
            assert self._vector_reader is not None  # noqa: S101 - opened with reader
            vec_index = SqliteVecIndex(
                writer,
                [self._vector_reader, *self._shard_readers],
                _model_table(self._model),
                dim,
            )
            await vec_index.create()
            index = vec_index
            if await index.count() == stored:
                self._index = index
                return
            await index.clear()
        else:
            index = NumpyIndex(dim, capacity=stored)
        async with reader.execute(
            "SELECT memory_id, vector FROM embeddings WHERE model = ?", (self._model,)
        ) as cursor:
            while rows := list(await cursor.fetchmany(_LOAD_BATCH)):
                ids = [row[0] for row in rows]
                matrix = np.frombuffer(
                    b"".join(row[1] for row in rows), dtype=np.float32
                ).reshape(len(rows), dim)
                await index.add(ids, matrix)
        self._index = index

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """Run one write transaction under the single-writer lock.

        For engine modules that keep their own tables (conversation log,
        embedding queue); listeners fire after it commits.
        """
        writer, _reader = self._require()
        async with self._write_lock, immediate_transaction(writer):
            yield writer
        self._changed()

    @property
    def reader(self) -> aiosqlite.Connection:
        """The read-only connection: sees committed data, never waits for writes."""
        return self._require()[1]

    async def pause_writes(self) -> None:
        """Fold the WAL into the main file and hold writes until resumed.

        A backup that copies the database file meanwhile gets a consistent
        copy; searches keep working.
        """
        writer, _reader = self._require()
        await self._write_lock.acquire()
        try:
            await writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
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
        self._index_pending = False  # a `load_index` still waiting: nothing to do
        if self._writer is not None and not self._paused:
            try:
                async with asyncio.timeout(CLOSE_WAIT):
                    await self._write_lock.acquire()
                self._write_lock.release()
            except TimeoutError:
                _LOGGER.warning("Closing the memory database during a slow write")
        if self._index is not None:
            await self._index.close()
            self._index = None
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

    def _require(self) -> tuple[aiosqlite.Connection, aiosqlite.Connection]:
        if self._writer is None or self._reader is None:
            raise DatabaseUnavailableError("the memory store is not open", path="")
        self._identity = check_database_file(self.path, self._identity)
        return self._writer, self._reader

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` after every committed change; returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

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

    # -- writes -------------------------------------------------------------

    async def add(
        self, memory: NewMemory, *, vector: npt.ArrayLike | None = None
    ) -> AddResult:
        """Add one memory, or return its active twin in the same scope."""
        vectors = None if vector is None else [vector]
        return (await self.add_many([memory], vectors=vectors))[0]

    async def add_many(
        self,
        memories: Sequence[NewMemory],
        *,
        vectors: Sequence[npt.ArrayLike | None] | None = None,
    ) -> list[AddResult]:
        """Add memories in one transaction; all are validated before any write.

        `vectors` (of the store's model) are stored for newly created items.
        """
        writer, _reader = self._require()
        prepared = [(memory, *validate_memory(memory)) for memory in memories]
        if vectors is not None and len(vectors) != len(memories):
            raise InvalidInputError("one vector per memory is needed")
        units: list[Vector | None] = [
            None if vector is None else as_unit_vector(vector)
            for vector in (vectors or [None] * len(memories))
        ]
        if any(unit is not None for unit in units) and self._model is None:
            raise InvalidInputError("the store has no embedding model for vectors")
        now = self._clock()
        new_vectors: dict[int, Vector] = {}
        async with self._write_lock:
            async with immediate_transaction(writer):
                outcome = await self._insert_many(writer, prepared, now)
                for (item_id, created), unit in zip(outcome, units, strict=True):
                    if created and unit is not None:
                        new_vectors[item_id] = unit
                if new_vectors:
                    await self._store_vectors(writer, new_vectors)
            if new_vectors:
                await self._index_add(new_vectors)
        items = await self.get_many([item_id for item_id, _ in outcome], conn=writer)
        self._changed()
        return [
            AddResult(item=items[item_id], created=created)
            for item_id, created in outcome
        ]

    async def _insert_many(
        self,
        conn: aiosqlite.Connection,
        prepared: Sequence[tuple[NewMemory, str, tuple[str, ...]]],
        now: float,
    ) -> list[tuple[int, bool]]:
        """Insert validated memories; return `(id, created)` for each, in order.

        A few statements for the whole batch (one aiosqlite round trip is a
        thread hand-off, which dominated the per-row version): expired twins
        archived, the rows inserted with one multi-row INSERT per chunk, twins
        looked up, tags written. A batch that repeats a text in one scope goes
        row by row, so that its first copy is the one kept, as with `add`.
        """
        keys = [content_key(content) for _memory, content, _tags in prepared]
        pairs = [
            (memory.scope, key)
            for (memory, _content, _tags), key in zip(prepared, keys, strict=True)
        ]
        if len(set(pairs)) < len(pairs):
            return [
                await self._insert(conn, memory, content, tags, now)
                for memory, content, tags in prepared
            ]
        await conn.executemany(
            _ARCHIVE_EXPIRED_TWIN, [(now, *pair, now) for pair in pairs]
        )
        created: dict[tuple[str, str], int] = {}
        for start in range(0, len(prepared), _INSERT_CHUNK):
            chunk = range(start, min(start + _INSERT_CHUNK, len(prepared)))
            values = ", ".join(
                ["(" + placeholders(len(_INSERT_COLUMNS)) + ")"] * len(chunk)
            )
            rows = await conn.execute_fetchall(
                f"INSERT INTO memories ({', '.join(_INSERT_COLUMNS)}) VALUES {values} "
                "ON CONFLICT (scope, content_key) WHERE status = 'active' DO NOTHING "
                "RETURNING id, scope, content_key",
                [
                    value
                    for i in chunk
                    for value in _insert_row(*prepared[i], keys[i], now)
                ],
            )
            created.update(((row[1], row[2]), int(row[0])) for row in rows)
        existing: dict[tuple[str, str], int] = {}
        twins = sorted(
            {key for pair, key in zip(pairs, keys, strict=True) if pair not in created}
        )
        for start in range(0, len(twins), 500):
            chunk_keys = twins[start : start + 500]
            rows = await conn.execute_fetchall(
                "SELECT id, scope, content_key FROM memories WHERE status = 'active' "
                f"AND content_key IN ({placeholders(len(chunk_keys))})",
                chunk_keys,
            )
            existing.update(((row[1], row[2]), int(row[0])) for row in rows)
        tag_rows = [
            (created[pair], tag)
            for (_memory, _content, tags), pair in zip(prepared, pairs, strict=True)
            if pair in created
            for tag in tags
        ]
        if tag_rows:
            await conn.executemany(
                "INSERT INTO memory_tags (memory_id, tag) VALUES (?, ?)", tag_rows
            )
        # The conflict proves the twin exists.
        return [
            (created[pair], True) if pair in created else (existing[pair], False)
            for pair in pairs
        ]

    async def _insert(
        self,
        conn: aiosqlite.Connection,
        memory: NewMemory,
        content: str,
        tags: tuple[str, ...],
        now: float,
    ) -> tuple[int, bool]:
        key = content_key(content)
        # An expired twin no longer counts: archive it (as expire_due would)
        # so it cannot swallow the new memory and then be archived with it.
        await conn.execute(_ARCHIVE_EXPIRED_TWIN, (now, memory.scope, key, now))
        rows = await conn.execute_fetchall(
            f"INSERT INTO memories ({', '.join(_INSERT_COLUMNS)}) "
            f"VALUES ({placeholders(len(_INSERT_COLUMNS))}) "
            "ON CONFLICT (scope, content_key) WHERE status = 'active' DO NOTHING "
            "RETURNING id",
            _insert_row(memory, content, tags, key, now),
        )
        row = next(iter(rows), None)
        if row is not None:
            item_id = int(row[0])
            if tags:
                await conn.executemany(
                    "INSERT INTO memory_tags (memory_id, tag) VALUES (?, ?)",
                    [(item_id, tag) for tag in tags],
                )
            return item_id, True
        rows = await conn.execute_fetchall(
            "SELECT id FROM memories WHERE scope = ? AND content_key = ? "
            "AND status = 'active'",
            (memory.scope, key),
        )
        existing = next(iter(rows), None)
        assert existing is not None  # noqa: S101 - the conflict proves it exists
        return int(existing[0]), False

    async def _store_vectors(
        self, conn: aiosqlite.Connection, vectors: Mapping[int, Vector]
    ) -> None:
        """Write unit vectors of the active model; learn its dimension once."""
        assert self._model is not None  # noqa: S101 - checked by callers
        dims = {len(vector) for vector in vectors.values()}
        known = await self._model_dim(conn, self._model)
        expected = known if known is not None else min(dims)
        if dims != {expected}:
            raise VectorDimensionError(
                f"model {self._model} makes {expected}-dimensional vectors, "
                f"got {sorted(dims)}",
                expected=str(expected),
                got=",".join(str(dim) for dim in sorted(dims)),
            )
        if known is None:
            await conn.execute(
                "INSERT INTO embedding_models (model, dim, created_at) VALUES (?, ?, ?)",
                (self._model, expected, self._clock()),
            )
        await conn.executemany(
            "INSERT OR REPLACE INTO embeddings (memory_id, model, vector) "
            "VALUES (?, ?, ?)",
            [
                (item_id, self._model, vector.tobytes())
                for item_id, vector in vectors.items()
            ],
        )

    async def _index_add(self, vectors: Mapping[int, Vector]) -> None:
        if self._index is None:
            await self._load_index()
            return  # freshly built from the table, which holds these vectors
        ids = list(vectors)
        await self._index.add(ids, np.stack([vectors[i] for i in ids]))

    async def set_vectors(self, vectors: Mapping[int, npt.ArrayLike]) -> None:
        """Store (or replace) vectors of the store's model for existing items."""
        writer, _reader = self._require()
        if self._model is None:
            raise InvalidInputError("the store has no embedding model for vectors")
        units = {item_id: as_unit_vector(vector) for item_id, vector in vectors.items()}
        if not units:
            return
        async with self._write_lock:
            await self._check_ids(writer, list(units))
            async with immediate_transaction(writer):
                await self._store_vectors(writer, units)
            await self._index_add(units)
        self._changed()

    async def _check_ids(self, conn: aiosqlite.Connection, ids: Sequence[int]) -> None:
        unique = sorted(set(ids))
        found: set[int] = set()
        storable = storable_ids(unique)
        for start in range(0, len(storable), 500):
            chunk = storable[start : start + 500]
            async with conn.execute(
                f"SELECT id FROM memories WHERE id IN ({placeholders(len(chunk))})",
                chunk,
            ) as cursor:
                found.update(int(row[0]) for row in await cursor.fetchall())
        missing = [item_id for item_id in unique if item_id not in found]
        if missing:
            raise UnknownMemoryError(
                f"no memory with id {', '.join(map(str, missing))}",
                ids=", ".join(map(str, missing)),
            )

    async def forget(self, ids: Sequence[int], *, purge: bool = False) -> list[int]:
        """Archive memories, or with `purge` erase every copy of them.

        Unknown ids raise before anything changes. Purging also rewrites the
        full-text index and truncates the write-ahead log, so the text is gone
        from the database files, not only hidden.
        """
        writer, _reader = self._require()
        unique = sorted(set(ids))
        if not unique:
            return []
        now = self._clock()
        scopes: set[str] = set()
        async with self._write_lock:
            await self._check_ids(writer, unique)
            marks = placeholders(len(unique))
            async with immediate_transaction(writer):
                if purge:
                    async with writer.execute(
                        f"DELETE FROM memories WHERE id IN ({marks}) RETURNING scope",
                        unique,
                    ) as cursor:
                        scopes.update(str(row[0]) for row in await cursor.fetchall())
                    await writer.execute(
                        "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')"
                    )
                else:
                    await writer.execute(
                        "UPDATE memories SET status = 'archived', updated_at = ?, "
                        f"valid_to = coalesce(valid_to, ?) WHERE id IN ({marks}) "
                        "AND status = 'active'",
                        [now, now, *unique],
                    )
            if purge:
                if self._index is not None:
                    await self._index.remove(unique)
                await self._erase_leftovers(writer)
        self._changed()
        await self.erased(scopes)
        return unique

    @staticmethod
    async def _erase_leftovers(writer: aiosqlite.Connection) -> None:
        """Drop the copies a DELETE leaves in the write-ahead log.

        Its pages are folded into the file (where secure_delete zeroes the
        freed ones) and the log is truncated. The vec0 index needs nothing
        more: sqlite-vec (0.1.9) clears a deleted vector's bytes in its chunk,
        which the purge tests check.
        """
        await writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    async def truncate_wal(self) -> None:
        """Erase what deleted rows left in the write-ahead log.

        For engine modules that delete through `transaction()` (the
        conversation log) and must leave no copy of the text behind.
        """
        writer, _reader = self._require()
        async with self._write_lock:
            await self._erase_leftovers(writer)

    async def expire_due(self) -> list[int]:
        """Archive active memories whose expiry time has passed."""
        writer, _reader = self._require()
        now = self._clock()
        async with (
            self._write_lock,
            writer.execute(
                # Without INDEXED BY, SQLite walks every active memory's row
                # through the status index: 0.4 s at 100k with a cold cache,
                # at every start (bench/startup.py).
                "UPDATE memories INDEXED BY memories_expires "
                "SET status = 'archived', updated_at = ?, "
                "valid_to = coalesce(valid_to, expires_at) "
                "WHERE status = 'active' AND expires_at IS NOT NULL "
                "AND expires_at <= ? RETURNING id",
                (now, now),
            ) as cursor,
        ):
            expired = [int(row[0]) for row in await cursor.fetchall()]
        if expired:
            self._changed()
        return expired

    async def mark_recalled(self, ids: Sequence[int]) -> None:
        """Record that memories were put into a prompt."""
        writer, _reader = self._require()
        unique = sorted(set(ids))
        if not unique:
            return
        async with self._write_lock:
            await writer.execute(
                "UPDATE memories SET last_recalled_at = ?, "
                f"recall_count = recall_count + 1 WHERE id IN "
                f"({placeholders(len(unique))})",
                [self._clock(), *unique],
            )

    # -- reads --------------------------------------------------------------

    async def get(self, item_id: int) -> MemoryItem | None:
        """One memory by id, whatever its status."""
        return (await self.get_many([item_id])).get(item_id)

    async def get_many(
        self, ids: Sequence[int], *, conn: aiosqlite.Connection | None = None
    ) -> dict[int, MemoryItem]:
        """Memories by id; missing ids are absent from the result."""
        if conn is None:
            _writer, conn = self._require()
        unique = storable_ids(ids)
        items: dict[int, MemoryItem] = {}
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            rows = await conn.execute_fetchall(
                f"SELECT {_ITEM_COLUMNS} FROM memories m "
                f"WHERE m.id IN ({placeholders(len(chunk))})",
                chunk,
            )
            for row in rows:
                items[row["id"]] = _row_to_item(row)
        return items

    def _filters(self, query: SearchQuery) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if query.status != "any":
            clauses.append("m.status = ?")
            params.append(query.status)
        if query.status == "active":
            clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
            params.append(self._clock())
        if query.scopes is not None:
            clauses.append(f"m.scope IN ({placeholders(len(query.scopes))})")
            params.extend(query.scopes)
        if query.types:
            clauses.append(f"m.type IN ({placeholders(len(query.types))})")
            params.extend(str(kind) for kind in query.types)
        if query.tags:
            tags = normalize_tags(query.tags)
            clauses.append(
                "m.id IN (SELECT memory_id FROM memory_tags WHERE tag IN "
                f"({placeholders(len(tags))}))"
            )
            params.extend(tags)
        if query.since is not None:
            clauses.append("m.created_at >= ?")
            params.append(to_timestamp(query.since))
        return (" AND ".join(clauses) or "1"), params

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        """Find memories: keyword, semantic or both, fused into one ranking."""
        _writer, reader = self._require()
        if not 1 <= query.limit <= MAX_SEARCH_LIMIT:
            raise InvalidLimitError(
                f"limit must be 1 to {MAX_SEARCH_LIMIT}",
                limit=str(query.limit),
                max=str(MAX_SEARCH_LIMIT),
            )
        if query.scopes is not None and not query.scopes:
            return []
        where, params = self._filters(query)
        text = query.text.strip()
        if (not text or text == "*") and query.vector is None:
            return await self._recent(reader, where, params, query.limit)
        # The vector scan runs in a worker thread: start it first so that it
        # overlaps the FTS5 query instead of queueing behind it.
        unit = self._query_unit(query)
        # The vector scan runs in a worker thread (numpy) or on its own
        # connection (vec0): started first, it overlaps the FTS5 query.
        semantic_task = asyncio.create_task(self._semantic(query, unit, where, params))
        try:
            keyword, cosines = await self._keyword(
                reader, text, (where, params), query.limit, unit
            )
        except BaseException:
            semantic_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, StoreError):
                await semantic_task
            raise
        semantic = await semantic_task
        # Keyword hits outside the semantic pool keep the cosine their row
        # brought; pool members outside the keyword pool get their bm25.
        pooled = {item_id for item_id, _score in semantic}
        similarity = (
            {i: score for i, score in cosines.items() if i not in pooled}
            if semantic
            else {}
        )
        keyword = await self._complete_keyword(reader, query, keyword, pooled)
        fused = fuse(keyword, semantic, similarity)
        if query.context and fused:
            fused = await self._context(
                reader, query, (where, params), (keyword, semantic, similarity), fused
            )
        ranked = [entry for entry in fused if entry.score >= query.min_score][
            : query.limit
        ]
        items = await self.get_many([entry.id for entry in ranked], conn=reader)
        return [
            SearchHit(item=items[entry.id], score=entry.score, matched=entry.signals)
            for entry in ranked
            if entry.id in items
        ]

    async def _recent(
        self, conn: aiosqlite.Connection, where: str, params: list[Any], limit: int
    ) -> list[SearchHit]:
        async with conn.execute(
            f"SELECT {_ITEM_COLUMNS} FROM memories m WHERE {where} "
            "ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
            [*params, limit],
        ) as cursor:
            rows = await cursor.fetchall()
        return [
            SearchHit(item=_row_to_item(row), score=1.0, matched=()) for row in rows
        ]

    def _query_unit(self, query: SearchQuery) -> Vector | None:
        """Return the query's unit vector, or None when no index can use it."""
        if query.vector is None or self._model is None:
            return None
        unit = as_unit_vector(query.vector)
        if self._index is None:
            return None
        if len(unit) != self._index.dim:
            raise VectorDimensionError(
                f"model {self._model} makes {self._index.dim}-dimensional "
                f"vectors, the query has {len(unit)}",
                expected=str(self._index.dim),
                got=str(len(unit)),
            )
        return unit

    async def _keyword(
        self,
        conn: aiosqlite.Connection,
        text: str,
        filters: tuple[str, list[Any]],
        limit: int,
        unit: Vector | None = None,
    ) -> tuple[list[tuple[int, float, float]], dict[int, float]]:
        """FTS5 hits `(id, bm25, coverage)` best first, and their cosines.

        FTS5 ranks its matches on its own first (a bounded sort, without
        touching `memories`), and only the best KEYWORD_OVERFETCH times the
        pool are joined and filtered: far cheaper than joining every match
        when a common word matches a third of the memories. Only when the
        filters leave too few of those is every match joined. With `unit`,
        each hit's stored vector comes along and its cosine is returned.
        """
        expression = fts_match_expression(text)
        if expression is None:
            return [], {}
        where, params = filters
        pool = max(KEYWORD_POOL, limit)
        vector = "NULL"
        join = ""
        args: list[Any] = []
        if unit is not None:
            vector = "e.vector"
            join = "LEFT JOIN embeddings e ON e.model = ? AND e.memory_id = m.id "
            args.append(self._model)
        sql = (
            f"WITH f AS MATERIALIZED (SELECT rowid AS id, {_BM25} AS rank "
            "FROM memories_fts WHERE memories_fts MATCH ? "
            "ORDER BY rank, rowid LIMIT ?) "
            f"SELECT m.id, m.content, m.tags, f.rank, {vector}, "
            "(SELECT count(*) FROM f) FROM f CROSS JOIN memories m ON m.id = f.id "
            f"{join}WHERE {where} ORDER BY f.rank, m.id LIMIT ?"
        )
        wanted = pool * KEYWORD_OVERFETCH
        rows = list(
            await conn.execute_fetchall(sql, [expression, wanted, *args, *params, pool])
        )
        if len(rows) < pool and (not rows or rows[0][5] >= wanted):
            # The filters kept too few of the best matches: rank them all.
            rows = list(
                await conn.execute_fetchall(sql, [expression, -1, *args, *params, pool])
            )
        terms = query_terms(text)
        hits = [
            (int(row[0]), float(row[3]), term_coverage(terms, f"{row[1]} {row[2]}"))
            for row in rows
        ]
        cosines: dict[int, float] = {}
        if unit is not None:
            stored = [row for row in rows if row[4] is not None]
            if stored:
                matrix = np.frombuffer(
                    b"".join(row[4] for row in stored), dtype=np.float32
                ).reshape(len(stored), -1)
                cosines = {
                    int(row[0]): float(score)
                    for row, score in zip(stored, matrix @ unit, strict=True)
                }
        return hits, cosines

    async def _keyword_of(
        self, conn: aiosqlite.Connection, text: str, ids: Sequence[int]
    ) -> list[tuple[int, float, float]]:
        """FTS5 hits among `ids` (which passed the filters already).

        bm25 is computed for these rows only; FTS5 is kept the outer loop
        (`CROSS JOIN`, `+rowid`) so that its statistics are gathered once,
        not once per id.
        """
        expression = fts_match_expression(text)
        if expression is None or not ids:
            return []
        hits: list[tuple[int, float, float]] = []
        terms = query_terms(text)
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            rows = await conn.execute_fetchall(
                f"SELECT memories_fts.rowid, {_BM25}, m.content, m.tags "
                "FROM memories_fts CROSS JOIN memories m "
                "ON m.id = memories_fts.rowid WHERE memories_fts MATCH ? "
                f"AND +memories_fts.rowid IN ({placeholders(len(chunk))})",
                [expression, *chunk],
            )
            hits.extend(
                (int(row[0]), float(row[1]), term_coverage(terms, f"{row[2]} {row[3]}"))
                for row in rows
            )
        hits.sort(key=lambda hit: (hit[1], hit[0]))
        return hits

    async def _complete_keyword(
        self,
        conn: aiosqlite.Connection,
        query: SearchQuery,
        keyword: list[tuple[int, float, float]],
        ids: Iterable[int],
    ) -> list[tuple[int, float, float]]:
        """Add the bm25 of `ids` outside the keyword pool.

        Only needed when the pool was full: if it was not, every match that
        passes the filters is in it already.
        """
        have = {hit[0] for hit in keyword}
        missing = sorted({item_id for item_id in ids if item_id not in have})
        if not missing or len(keyword) < max(KEYWORD_POOL, query.limit):
            return keyword
        return keyword + await self._keyword_of(conn, query.text.strip(), missing)

    async def _similarity(
        self,
        conn: aiosqlite.Connection,
        query: SearchQuery,
        semantic: Sequence[tuple[int, float]],
        ids: Sequence[int],
    ) -> dict[int, float]:
        """Exact cosines of `ids` outside the semantic pool (none without one)."""
        if query.vector is None or not semantic:
            return {}
        assert self._model is not None  # noqa: S101 - a semantic pool needs one
        return await cosines_outside_pool(
            conn,
            query.vector,
            semantic,
            ids,
            table="embeddings",
            key="memory_id",
            model=self._model,
        )

    async def _complete(
        self,
        conn: aiosqlite.Connection,
        query: SearchQuery,
        signals: _Signals,
        ids: Sequence[int],
    ) -> tuple[list[tuple[int, float, float]], dict[int, float]]:
        """Score `ids` on both signals: bm25 and cosine where still missing.

        Keyword hits outside the semantic pool get their exact cosine; ids
        outside the keyword pool get their bm25 if the pool was full (if it
        was not, every match is in it already).
        """
        keyword, semantic, similarity = signals
        keyword = await self._complete_keyword(conn, query, keyword, ids)
        similarity = similarity | await self._similarity(conn, query, semantic, ids)
        return keyword, similarity

    async def _context(
        self,
        conn: aiosqlite.Connection,
        query: SearchQuery,
        filters: tuple[str, list[Any]],
        signals: _Signals,
        fused: list[Ranked],
    ) -> list[Ranked]:
        """Score candidates with their conversation neighbours (`query.context`).

        Neighbours are the memories with the next lower and higher id in the
        same conversation (turns are stored in order) that pass the filters.
        Neighbours that are not candidates are scored on both signals first.
        """
        where, params = filters
        keyword, semantic, similarity = signals
        known = {entry.id for entry in fused}
        around = sorted({i + step for i in known for step in (-1, 0, 1)} - {0})
        conversation: dict[int, str] = {}
        for start in range(0, len(around), 500):
            chunk = around[start : start + 500]
            async with conn.execute(
                f"SELECT m.id, m.conversation_id FROM memories m WHERE m.id IN "
                f"({placeholders(len(chunk))}) AND m.conversation_id IS NOT NULL "
                f"AND {where}",
                [*chunk, *params],
            ) as cursor:
                conversation.update(
                    (int(row[0]), str(row[1])) for row in await cursor.fetchall()
                )
        neighbours: dict[int, list[int]] = {}
        for item_id, conversation_id in conversation.items():
            near = [
                other
                for other in (item_id - 1, item_id + 1)
                if conversation.get(other) == conversation_id
                and (item_id in known or other in known)
            ]
            if near:
                neighbours[item_id] = near
        new = sorted(set(neighbours) - known)
        if new:
            keyword, similarity = await self._complete(
                conn, query, (keyword, semantic, similarity), new
            )
            fused = fuse(keyword, semantic, similarity)
        return add_context(fused, neighbours)

    async def _semantic(
        self,
        query: SearchQuery,
        unit: Vector | None,
        where: str,
        params: list[Any],
    ) -> list[tuple[int, float]]:
        """Return the semantic pool `(id, cosine)`, best first, exactly re-scored.

        Reads through its own connection, so that it runs beside the keyword
        query on the reader instead of queueing behind it.
        """
        if unit is None or self._index is None or self._vector_reader is None:
            return []
        base = (
            "SELECT e.memory_id, e.vector FROM embeddings e "
            f"JOIN memories m ON m.id = e.memory_id WHERE e.model = ? AND {where}"
        )
        return await semantic_pool(
            self._vector_reader,
            self._index,
            unit,
            base=base,
            args=[self._model, *params],
            key="e.memory_id",
            pool=max(SEMANTIC_POOL, query.limit),
        )

    async def stats(self) -> StoreStats:
        """Return counts and sizes for sensors and diagnostics (never content)."""
        _writer, reader = self._require()
        by_status: dict[str, int] = {}
        by_type: dict[str, int] = {}
        by_scope: dict[str, int] = {}
        vectors: dict[str, int] = {}
        queries: tuple[tuple[str, dict[str, int]], ...] = (
            ("SELECT status, count(*) FROM memories GROUP BY status", by_status),
            # Counted from covering indexes: through the status index SQLite
            # reads every row, content and all (0.4 s at 100k memories with
            # a cold cache, at every start; bench/startup.py).
            (
                (
                    "SELECT type, count(*) FROM memories "
                    "INDEXED BY memories_type_recent "
                    "WHERE status = 'active' GROUP BY type"
                ),
                by_type,
            ),
            (
                (
                    "SELECT scope, count(*) FROM memories INDEXED BY memories_scope "
                    "WHERE status = 'active' GROUP BY scope"
                ),
                by_scope,
            ),
            ("SELECT model, count(*) FROM embeddings GROUP BY model", vectors),
        )
        for sql, target in queries:
            async with reader.execute(sql) as cursor:
                target.update({row[0]: int(row[1]) for row in await cursor.fetchall()})
        return StoreStats(
            schema_version=await self.schema_version(reader),
            vector_backend=self.vector_backend,
            active_model=self._model,
            by_status=by_status,
            active_by_type=by_type,
            active_by_scope=by_scope,
            vectors_by_model=vectors,
            database_bytes=self.database_bytes(),
        )

    def database_bytes(self) -> int:
        """Size on disk of the database and its write-ahead log."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += Path(f"{self.path}{suffix}").stat().st_size
            except FileNotFoundError:
                continue
        return total

    # -- consolidation (engine/consolidation.py) ------------------------------

    async def find_active(self, scope: str, content: str) -> MemoryItem | None:
        """Find the active memory of `scope` whose text normalises like `content`."""
        _writer, reader = self._require()
        async with reader.execute(
            f"SELECT {_ITEM_COLUMNS} FROM memories m WHERE m.scope = ? "
            "AND m.content_key = ? AND m.status = 'active'",
            (scope, content_key(content.strip())),
        ) as cursor:
            row = await cursor.fetchone()
        return None if row is None else _row_to_item(row)

    async def active_by_topic(self, scope: str, topic: str) -> list[MemoryItem]:
        """Active memories of `scope` with this exact topic, newest first."""
        _writer, reader = self._require()
        if not topic:
            return []
        async with reader.execute(
            f"SELECT {_ITEM_COLUMNS} FROM memories m WHERE m.scope = ? "
            "AND m.topic = ? AND m.topic != '' AND m.status = 'active' "
            "ORDER BY m.updated_at DESC, m.id DESC LIMIT 50",
            (scope, topic),
        ) as cursor:
            rows = await cursor.fetchall()
        return [_row_to_item(row) for row in rows]

    async def stored_vectors(self, ids: Sequence[int]) -> dict[int, Vector]:
        """Read the active model's unit vectors of `ids` (those that have one)."""
        _writer, reader = self._require()
        unique = sorted(set(ids))
        if self._model is None or not unique:
            return {}
        vectors: dict[int, Vector] = {}
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            async with reader.execute(
                "SELECT memory_id, vector FROM embeddings WHERE model = ? "
                f"AND memory_id IN ({placeholders(len(chunk))})",
                [self._model, *chunk],
            ) as cursor:
                for row in await cursor.fetchall():
                    vectors[int(row[0])] = np.frombuffer(row[1], dtype=np.float32)
        return vectors

    async def supersede(
        self, old_id: int, new: NewMemory, *, also: Sequence[int] = ()
    ) -> tuple[MemoryItem, MemoryItem]:
        """Add `new` and mark `old_id` (and `also`) superseded by it, atomically.

        The old memories keep their text: they get status `superseded`, a
        link to the new one (`superseded_by`) and `valid_to` = now, so history
        stays searchable with status `any`. Every old memory must exist, be
        active and share the new memory's scope; otherwise nothing changes.
        If `new` normalises like an active memory of its scope, that memory
        is the replacement (and if it is `old_id` itself, nothing changes).
        Returns `(new, old)`.
        """
        writer, _reader = self._require()
        content, tags = validate_memory(new)
        olds = list(dict.fromkeys([old_id, *also]))
        now = self._clock()
        async with self._write_lock:
            current = await self.get_many(olds, conn=writer)
            missing = [item_id for item_id in olds if item_id not in current]
            if missing:
                raise UnknownMemoryError(
                    f"no memory with id {', '.join(map(str, missing))}",
                    ids=", ".join(map(str, missing)),
                )
            for item in current.values():
                if item.status is not MemoryStatus.ACTIVE or item.scope != new.scope:
                    raise InvalidInputError(
                        f"memory {item.id} is not active in the new memory's scope",
                        id=str(item.id),
                    )
            async with immediate_transaction(writer):
                new_id, _created = await self._insert(writer, new, content, tags, now)
                replaced = [item_id for item_id in olds if item_id != new_id]
                if replaced:
                    await writer.execute(
                        "UPDATE memories SET status = 'superseded', "
                        "superseded_by = ?, valid_to = ?, updated_at = ? "
                        f"WHERE id IN ({placeholders(len(replaced))})",
                        [new_id, now, now, *replaced],
                    )
            items = await self.get_many([new_id, old_id], conn=writer)
        self._changed()
        return items[new_id], items[old_id]

    async def update_content(
        self,
        item_id: int,
        *,
        content: str,
        confidence: float | None = None,
        topic: str | None = None,
    ) -> MemoryItem:
        """Reword an active memory in place (digestion's near-duplicate merge).

        The de-duplication key and the full-text index follow the new text.
        Vectors of the old text are deleted (for every model) and the
        memory's embedding jobs go back to pending with the new text, so no
        vector ever describes words the memory no longer has. `confidence`
        and `topic` are changed when given; `updated_at` is always refreshed.
        Raises `InvalidInputError` if another active memory of the scope has
        the same text.
        """
        writer, _reader = self._require()
        now = self._clock()
        async with self._write_lock:
            item = (await self.get_many([item_id], conn=writer)).get(item_id)
            if item is None:
                raise UnknownMemoryError(
                    f"no memory with id {item_id}", ids=str(item_id)
                )
            text, _tags = validate_memory(
                NewMemory(content=content, source=item.source, scope=item.scope)
            )
            if item.status is not MemoryStatus.ACTIVE:
                raise InvalidInputError(
                    f"memory {item_id} is not active", id=str(item_id)
                )
            key = content_key(text)
            async with writer.execute(
                "SELECT id FROM memories WHERE scope = ? AND content_key = ? "
                "AND status = 'active' AND id != ?",
                (item.scope, key, item_id),
            ) as cursor:
                twin = await cursor.fetchone()
            if twin is not None:
                raise InvalidInputError(
                    f"memory {twin[0]} already has this text", id=str(twin[0])
                )
            reworded = text != item.content
            async with immediate_transaction(writer):
                await writer.execute(
                    "UPDATE memories SET content = ?, content_key = ?, "
                    "confidence = coalesce(?, confidence), "
                    "topic = coalesce(?, topic), updated_at = ? WHERE id = ?",
                    (text, key, confidence, topic, now, item_id),
                )
                if reworded:
                    await writer.execute(
                        "DELETE FROM embeddings WHERE memory_id = ?", (item_id,)
                    )
                    # The queue's text hash (embedding_queue.text_hash).
                    digest = hashlib.sha256(text.encode("utf-8")).digest()
                    await writer.execute(
                        "UPDATE embedding_jobs SET text_hash = ?, state = 'pending', "
                        "attempts = 0, next_attempt_at = 0, error = NULL, "
                        "updated_at = ? WHERE memory_id = ?",
                        (digest, now, item_id),
                    )
            if reworded and self._index is not None:
                await self._index.remove([item_id])
            updated = (await self.get_many([item_id], conn=writer))[item_id]
        self._changed()
        return updated
