"""The `memories` table: add, read, forget, expire, supersede, reword, count.

`MemoryTable` holds the `Database` and the memories' vectors
(`MemoryVectors`). Every write runs under the database's single-writer lock
in one transaction, and listeners hear of it once committed; a purge leaves
no copy of the text in the database files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
import sqlite3

import aiosqlite
import numpy.typing as npt

from ..errors import InvalidInputError, UnknownMemoryError
from ..languages import ANALYSIS_VERSION
from ..models import AddResult, MemoryItem, MemoryStatus, NewMemory, StoreStats, Vector
from ..sql import IDS, placeholders, rows_in, storable_ids
from ..transactions import immediate, immediate_transaction, on_writer, rollback
from ..vectors import as_unit_vectors
from .database import Database, erase_wal
from .memory_vectors import Codes, MemoryVectors
from .rows import (
    ITEM_COLUMNS,
    Prepared,
    check_ids,
    insert_memory,
    insert_row,
    memory_key,
    memory_terms,
    row_to_item,
    validate_memory,
    write_memories,
)


class MemoryTable:
    """The memories a database holds, with their vectors."""

    def __init__(self, database: Database, vectors: MemoryVectors) -> None:
        """Hold the database and the memories' vectors."""
        self._db = database
        self._vectors = vectors

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
        writer, _reader = self._db.connections()
        prepared: list[Prepared] = [
            (replace(memory, language=memory.language or self._db.language), *checked)
            for memory in memories
            for checked in (validate_memory(memory),)
        ]
        if vectors is not None and len(vectors) != len(memories):
            raise InvalidInputError("one vector per memory is needed")
        given = list(vectors or [])
        now = self._db.now()
        new_vectors: dict[int, Vector] = {}
        codes: Codes | None = None
        async with self._db.write_lock:
            if all(vector is None for vector in given):
                # Analysed, written, committed and read back in one hand-off.
                written = await on_writer(
                    writer,
                    partial(write_memories, prepared=prepared, now=now, commit=True),
                )
            else:
                # Vectors checked and scaled, memories analysed and written,
                # their vectors and codes written, committed and put in the
                # numpy index, in one hand-off.
                written, new_vectors, codes, indexed = await on_writer(
                    writer,
                    partial(
                        _write_with_vectors,
                        prepared=prepared,
                        vectors=given,
                        part=self._vectors,
                        model=self._db.model,
                        now=now,
                    ),
                )
                if new_vectors and codes is not None:
                    await self._vectors.index_add(new_vectors, codes, indexed=indexed)
        self._db.changed()
        return [AddResult(item=item, created=created) for item, created in written]

    async def forget(self, ids: Sequence[int], *, purge: bool = False) -> list[int]:
        """Archive memories, or with `purge` erase every copy of them.

        Unknown ids raise before anything changes. Purging also rewrites the
        full-text index and truncates the write-ahead log, so the text is gone
        from the database files, not only hidden.
        """
        writer, _reader = self._db.connections()
        unique = sorted(set(ids))
        if not unique:
            return []
        now = self._db.now()
        scopes: set[str] = set()
        async with self._db.write_lock:
            await check_ids(writer, unique)
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
                await self._vectors.remove(unique)
                await erase_wal(writer)
        self._db.changed()
        await self._db.erased(scopes)
        return unique

    async def expire_due(self) -> list[int]:
        """Archive active memories whose expiry time has passed."""
        writer, _reader = self._db.connections()
        now = self._db.now()
        async with (
            self._db.write_lock,
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
            self._db.changed()
        return expired

    async def mark_recalled(self, ids: Sequence[int]) -> None:
        """Record that memories were put into a prompt."""
        writer, _reader = self._db.connections()
        unique = sorted(set(ids))
        if not unique:
            return
        async with self._db.write_lock:
            await writer.execute(
                "UPDATE memories SET last_recalled_at = ?, "
                f"recall_count = recall_count + 1 WHERE id IN "
                f"({placeholders(len(unique))})",
                [self._db.now(), *unique],
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
            _writer, conn = self._db.connections()
        rows = await rows_in(
            conn,
            f"SELECT {ITEM_COLUMNS} FROM memories m WHERE m.id IN ({IDS})",
            storable_ids(ids),
        )
        return {row["id"]: row_to_item(row) for row in rows}

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
        writer, _reader = self._db.connections()
        content, tags = validate_memory(new)
        olds = list(dict.fromkeys([old_id, *also]))
        now = self._db.now()
        async with self._db.write_lock:
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
            # A correction without a language of its own keeps the old one's.
            language = new.language or current[old_id].language or self._db.language
            new = replace(new, language=language)
            # Analysed, written, committed and read back in one hand-off.
            added, old = await on_writer(
                writer,
                partial(_supersede, prepared=(new, content, tags), olds=olds, now=now),
            )
        self._db.changed()
        return added, old

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
        writer, _reader = self._db.connections()
        now = self._db.now()
        async with self._db.write_lock:
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
            key = memory_key(text, item.type, item.source.conversation_id)
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
                    "topic = coalesce(?, topic), updated_at = ?, terms = ?, "
                    "analysed = ? WHERE id = ?",
                    (
                        text,
                        key,
                        confidence,
                        topic,
                        now,
                        memory_terms(
                            text, item.tags, item.language or self._db.language
                        ),
                        ANALYSIS_VERSION,
                        item_id,
                    ),
                )
                if reworded:
                    # Its embedding jobs start again: the schema's trigger
                    # `memories_reworded_jobs`.
                    await self._vectors.delete(writer, item_id)
            if reworded:
                await self._vectors.remove([item_id])
            updated = (await self.get_many([item_id], conn=writer))[item_id]
        self._db.changed()
        return updated

    async def stats(self) -> StoreStats:
        """Return counts and sizes for sensors and diagnostics (never content)."""
        _writer, reader = self._db.connections()
        by_status: dict[str, int] = {}
        by_type: dict[str, int] = {}
        by_scope: dict[str, int] = {}
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
        )
        for sql, target in queries:
            rows = await reader.execute_fetchall(sql)
            target.update({row[0]: int(row[1]) for row in rows})
        return StoreStats(
            schema_version=await self._db.schema_version(reader),
            vector_backend=self._db.vector_backend,
            active_model=self._db.model,
            by_status=by_status,
            active_by_type=by_type,
            active_by_scope=by_scope,
            vectors_by_model=await self._vectors.counts(reader),
            database_bytes=self._db.database_bytes(),
        )


def _supersede(
    conn: sqlite3.Connection,
    prepared: Prepared,
    olds: Sequence[int],
    now: float,
) -> tuple[MemoryItem, MemoryItem]:
    """On the writer's thread: add `prepared`, mark `olds` superseded by it.

    Returns the new memory and the first of `olds`, as committed.
    """
    memory, content, tags = prepared
    key = memory_key(content, memory.type, memory.source.conversation_id)
    row = insert_row(memory, content, tags, key, now)
    with immediate(conn):
        new, _created = insert_memory(conn, (memory.scope, key), row, tags)
        replaced = [item_id for item_id in olds if item_id != new.id]
        if replaced:
            conn.execute(
                "UPDATE memories SET status = 'superseded', "
                "superseded_by = ?, valid_to = ?, updated_at = ? "
                f"WHERE id IN ({placeholders(len(replaced))})",
                [new.id, now, now, *replaced],
            )
        old = conn.execute(
            f"SELECT {ITEM_COLUMNS} FROM memories m WHERE m.id = ?", (olds[0],)
        ).fetchall()
    return new, row_to_item(old[0])


def _write_with_vectors(
    conn: sqlite3.Connection,
    prepared: Sequence[Prepared],
    vectors: Sequence[npt.ArrayLike | None],
    part: MemoryVectors,
    model: str | None,
    now: float,
) -> tuple[list[tuple[MemoryItem, bool]], dict[int, Vector], Codes | None, bool]:
    """On the writer's thread: scale the vectors, write the memories and theirs.

    Every vector is checked before anything is written; the new memories'
    vectors (by id) and codes are written in the same transaction, which
    commits here (any error rolls it back first), and the codes go into a
    loaded numpy index (`indexed`) before the lock is let go: a cancelled
    caller leaves the memory, its vector and the index in step.
    """
    units = as_unit_vectors(vectors)
    if model is None:
        raise InvalidInputError("the store has no embedding model for vectors")
    try:
        written = write_memories(conn, prepared, now, commit=False)
        new_vectors = {
            item.id: unit
            for (item, created), unit in zip(written, units, strict=True)
            if created and unit is not None
        }
        codes = part.write(conn, new_vectors) if new_vectors else None
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    indexed = codes is not None and part.index_codes(list(new_vectors), codes)
    return written, new_vectors, codes, indexed
