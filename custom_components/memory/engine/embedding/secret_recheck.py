"""Vectors made from a secret the detector of their day missed, made again.

Every text is redacted before it is embedded (`embedding_jobs.sent_text`),
by the detector of its day. When `secrets.DETECTOR_VERSION` grows, a stored
memory or message may hold a vector made from a value the detector now
redacts ("Der Garagencode ist 4512" before German compounds were known).
`prepare` reads a batch of rows by id and redacts them in a worker thread;
each ready job of a row with a secret whose text hash is not that of what
would be sent now is stale. `write` puts those jobs back to pending, so
the embedding worker makes their vectors again from the redacted text; the
old vector serves until the new one replaces it, as during a model's
rebuild (it was made on this machine or already sent: keeping it a little
longer tells no one more, and semantic search keeps the row). How far the
pass got is kept in `store_settings`: it runs once per detector version, in
the background (`recheck`, batch by batch), and resumes after a restart.

Search terms are not redone: they are made from the full text on purpose,
so the owner finds a code by its words; whoever may not see a value cannot
find a memory by it either (`secrets.found_without_secrets`, applied with
the current detector whenever results are shown).

The pass reads and writes through `SecretChecks`: `SqliteSecretChecks` on
a SQLite store, a store's own where it offers one (`SecretCheckSource`:
`PostgresStore.secret_checks()`, whose `store_settings` keeps the same
names, and whose `kinds` are the memories: it keeps no message vectors).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
import contextlib
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

import aiosqlite

from ..privacy import DETECTOR_VERSION, has_secret
from ..sql import placeholders
from ..store import DatabaseAccess
from .jobs import KINDS, JobTables, sent_text, text_hash

# Rows read per batch: a few tens of milliseconds of redaction.
BATCH: Final = 500
# The detector version every stored vector has been checked against.
VERSION_SETTING: Final = "secrets_checked"
# The last id checked of each kind while a pass is under way.
_AFTER: Final = {kind: f"secrets_checked_{kind.name}" for kind in KINDS}

# A stale job: its row's id, its model, the hash it was made from.
type Stale = tuple[int, str, bytes]


@dataclass(frozen=True, slots=True)
class Batch:
    """What one batch found: stale jobs `(row id, model, old hash)` of one kind.

    `kind` is None when every row has been checked: the pass is over.
    """

    kind: JobTables | None
    read: int = 0
    last: int = 0
    stale: list[Stale] = field(default_factory=list)

    def progress(self) -> tuple[dict[str, int], list[str]]:
        """Return the settings to write and those to drop once it is written."""
        if self.kind is None:
            return {VERSION_SETTING: DETECTOR_VERSION}, list(_AFTER.values())
        return {_AFTER[self.kind]: self.last}, []


class SecretChecks(Protocol):
    """What the pass reads and writes of one store."""

    @property
    def kinds(self) -> tuple[JobTables, ...]:
        """The kinds of text the store embeds."""
        ...

    async def setting(self, name: str) -> int:
        """Return a setting of `store_settings` (0 when unset)."""
        ...

    async def rows(
        self, kind: JobTables, after: int, limit: int
    ) -> list[tuple[int, str]]:
        """Return the next embedded rows above `after`: id and content."""
        ...

    async def ready_jobs(self, kind: JobTables, ids: Sequence[int]) -> list[Stale]:
        """Return the ready jobs of these rows: id, model, hash."""
        ...

    async def write(self, batch: Batch) -> None:
        """Queue the batch's stale jobs again and record its progress, at once."""
        ...


@runtime_checkable
class SecretCheckSource(Protocol):
    """A store of another backend, which checks its own tables."""

    def secret_checks(self) -> SecretChecks:
        """Return the store's tables as the pass reads and writes them."""
        ...


class SqliteSecretChecks:
    """The pass's reads and writes on a SQLite store's database."""

    kinds: Final = KINDS

    def __init__(
        self,
        reader: aiosqlite.Connection,
        transaction: Callable[
            [], contextlib.AbstractAsyncContextManager[aiosqlite.Connection]
        ]
        | None = None,
    ) -> None:
        """Read through `reader`; write in the store's `transaction`, if given."""
        self._reader = reader
        self._transaction = transaction

    async def setting(self, name: str) -> int:
        """Return a setting of `store_settings` (0 when unset)."""
        return await _setting(self._reader, name)

    async def rows(
        self, kind: JobTables, after: int, limit: int
    ) -> list[tuple[int, str]]:
        """Return the next embedded rows above `after`: id and content."""
        return [
            (int(row[0]), str(row[1]))
            for row in await self._reader.execute_fetchall(
                f"SELECT m.id, m.content FROM {kind.items} m "  # noqa: S608
                f"WHERE m.id > ? AND {kind.where} ORDER BY m.id LIMIT ?",
                (after, limit),
            )
        ]

    async def ready_jobs(self, kind: JobTables, ids: Sequence[int]) -> list[Stale]:
        """Return the ready jobs of these rows: id, model, hash."""
        if not ids:
            return []
        return [
            (int(row[0]), str(row[1]), bytes(row[2]))
            for row in await self._reader.execute_fetchall(
                f"SELECT {kind.key}, model, text_hash FROM {kind.jobs} "  # noqa: S608
                f"WHERE state = 'ready' AND {kind.key} IN ({placeholders(len(ids))})",
                ids,
            )
        ]

    async def write(self, batch: Batch) -> None:
        """Queue the batch's stale jobs again and record its progress, at once."""
        assert self._transaction is not None  # noqa: S101 - made by `recheck`
        async with self._transaction() as conn:
            await write(conn, batch)


async def _setting(conn: aiosqlite.Connection, name: str) -> int:
    rows = await conn.execute_fetchall(
        "SELECT value FROM store_settings WHERE name = ?", (name,)
    )
    row = next(iter(rows), None)
    return int(row[0]) if row else 0


async def due(reader: aiosqlite.Connection) -> bool:
    """Whether stored vectors were not checked with the current detector."""
    return await _setting(reader, VERSION_SETTING) < DETECTOR_VERSION


def _sent_hashes(kind: JobTables, rows: Sequence[tuple[int, str]]) -> dict[int, bytes]:
    """Hash what would be sent now of each row that holds a secret."""
    return {
        row_id: text_hash(sent_text(kind, content))
        for row_id, content in rows
        if has_secret(content)
    }


async def check(checks: SecretChecks, limit: int = BATCH) -> Batch | None:
    """Check the next `limit` rows; None when the current detector's pass is done."""
    if await checks.setting(VERSION_SETTING) >= DETECTOR_VERSION:
        return None
    for kind in checks.kinds:
        after = await checks.setting(_AFTER[kind])
        rows = await checks.rows(kind, after, limit)
        if not rows:
            continue
        sent = await asyncio.to_thread(_sent_hashes, kind, rows)
        jobs = await checks.ready_jobs(kind, sorted(sent))
        stale = [job for job in jobs if job[2] != sent[job[0]]]
        return Batch(kind, read=len(rows), last=rows[-1][0], stale=stale)
    return Batch(None)


async def prepare(reader: aiosqlite.Connection, limit: int = BATCH) -> Batch | None:
    """Check the next `limit` rows of a SQLite store (see `check`)."""
    return await check(SqliteSecretChecks(reader), limit)


async def write(conn: aiosqlite.Connection, batch: Batch) -> None:
    """Queue the stale jobs' texts again and record the progress (SQLite).

    A job embedded again since `prepare` (its hash changed) is left alone.
    """
    settings, cleared = batch.progress()
    if batch.kind is not None:
        kind = batch.kind
        await conn.executemany(
            f"UPDATE {kind.jobs} SET state = 'pending', attempts = 0, "  # noqa: S608
            "next_attempt_at = 0, error = NULL "
            f"WHERE {kind.key} = ? AND model = ? AND state = 'ready' AND text_hash = ?",
            batch.stale,
        )
    await conn.executemany(
        "INSERT OR REPLACE INTO store_settings (name, value) VALUES (?, ?)",
        list(settings.items()),
    )
    await conn.executemany(
        "DELETE FROM store_settings WHERE name = ?", [(name,) for name in cleared]
    )


def secret_checks(store: DatabaseAccess | SecretCheckSource) -> SecretChecks:
    """Return the store's own checks (`SecretCheckSource`), else SQLite's."""
    if isinstance(store, SecretCheckSource):
        return store.secret_checks()
    return SqliteSecretChecks(store.reader, store.transaction)


async def recheck(store: DatabaseAccess | SecretCheckSource, limit: int = BATCH) -> int:
    """Check up to `limit` rows; return how many were read (0: nothing left).

    The write wakes the embedding worker (the store's listeners).
    """
    checks = secret_checks(store)
    batch = await check(checks, limit)
    if batch is None:
        return 0
    await checks.write(batch)
    return batch.read
