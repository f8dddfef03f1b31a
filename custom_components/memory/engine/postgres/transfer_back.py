"""Moving every memory from PostgreSQL back into a SQLite store file, verified (#26).

`postgres_to_sqlite` is `transfer.sqlite_to_postgres` the other way round,
with the same promises (the source only read, in one REPEATABLE READ
snapshot; an empty destination, written in one transaction; both sides
counted and hashed before the commit). The destination is a store file
that does not exist yet or holds no rows; the store's own `Database`
creates and migrates it, and no `MemoryStore` may have it open meanwhile.

What SQLite makes itself is left to it: its triggers fill the FTS5 indexes
as the rows go in (the report compares their vocabulary with PostgreSQL's
postings), `embedding_models` gets one row a model of `memory_vectors`
or of `message_vectors` (created now: PostgreSQL keeps no such date), and `embedding_codes`, the
numpy index's codes, are left to the store's next open, which makes the
active model's from its vectors in one pass (`MemoryVectors.load`, as after
migration 12); another model's are made when it becomes the active one.
Message vectors go to `message_embeddings` in their `seq` order (the
order SQLite's ids then take), but not those of a model whose memories'
vectors have another dimension: SQLite keeps one dimension a model
(skipped, and their ready jobs pending again). `store_settings` starts empty, so the store's background passes (the secret
recheck) go over every row once. Foreign keys are checked at the commit
(`defer_foreign_keys`), so a supersede link may name a later id.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
import logging
from pathlib import Path
import sqlite3
import time
from typing import Any, Final

import aiosqlite
import numpy as np

from ..errors import TransferError
from ..store import Database
from .schema import SCHEMA_VERSION, schema_version
from .transfer_report import Tally, TransferReport
from .transfer_sides import (
    open_readonly,
    pg_columns,
    pg_high,
    pg_tables,
    refuse_sqlite_data,
    sqlite_columns,
    sqlite_count,
)
from .transfer_tables import (
    BATCH,
    CHECKED,
    PG_DERIVED,
    PG_MESSAGE_VECTORS,
    PG_VECTORS,
    POSTINGS,
    SQLITE_DATA,
    SQLITE_MESSAGE_VECTORS,
    SQLITE_VECTORS,
    TABLES,
    Checksum,
    Table,
    check_columns,
    same_postings,
    write_rows,
)
from .vectors import register_vector, table_dim

_LOGGER = logging.getLogger(__name__)

# A vector travels with its memory; one without (nothing ties them yet) stays.
_HELD: Final = "EXISTS (SELECT 1 FROM memories m WHERE m.id = v.memory_id)"


class _ToSqlite:
    """One copy of a PostgreSQL database into an empty SQLite store, in its transaction."""

    def __init__(
        self,
        conn: Any,
        writer: aiosqlite.Connection,
        batch: int,
        clock: Callable[[], float],
    ) -> None:
        self._conn = conn
        self._writer = writer
        self._batch = batch
        self._clock = clock
        self._tally = Tally("postgres_to_sqlite")
        self._vectors = False
        self._models: list[str] = []
        # Each copied memory model's dimension; the message models copied.
        self._dims: dict[str, int] = {}
        self._message_models: list[str] = []

    async def run(self) -> TransferReport:
        """Check both sides, copy every table, verify; the caller commits."""
        version = await schema_version(self._conn)
        if version != SCHEMA_VERSION:
            raise TransferError(
                f"the PostgreSQL schema is version {version}, not {SCHEMA_VERSION}",
                error=f"schema {version} (this version copies {SCHEMA_VERSION})",
            )
        for table in TABLES:
            check_columns(
                table, await pg_columns(self._conn, table.name), postgres=True
            )
            check_columns(
                table, await sqlite_columns(self._writer, table.name), postgres=False
            )
        await refuse_sqlite_data(self._writer, SQLITE_DATA)
        # Checked at COMMIT: a supersede link may name a later id.
        await self._writer.execute("PRAGMA defer_foreign_keys = ON")
        self._vectors = bool(
            await self._conn.fetchval("SELECT to_regclass($1)", PG_VECTORS)
        )
        if self._vectors:
            await self._copy_vectors()
        await self._copy_message_vectors()
        for table in TABLES:
            await self._copy(table)
        await self._sequences()
        await self._writer.execute("DELETE FROM store_settings")
        await self._leftovers()
        await self._verify()
        return self._tally.report()

    async def _rows(self, sql: str, *args: Any) -> AsyncIterator[list[tuple[Any, ...]]]:
        """Yield the rows of a source query, `batch` at a time (in the snapshot)."""
        cursor = await self._conn.cursor(sql, *args)
        while rows := await cursor.fetch(self._batch):
            yield [tuple(row) for row in rows]

    async def _copy(self, table: Table) -> None:
        """Copy one table; jobs whose vector stays behind become pending."""
        sql = table.select()
        if table.job_key == "memory_id" and self._vectors:
            sql = table.select(
                f"EXISTS (SELECT 1 FROM {PG_VECTORS} v WHERE v.model = j.model"  # noqa: S608
                " AND v.memory_id = j.memory_id)"
            )
        elif table.job_key == "memory_id":
            sql = table.select("false")
        elif table.job_key is not None:
            sql = table.select(
                f"EXISTS (SELECT 1 FROM {PG_MESSAGE_VECTORS} v"  # noqa: S608
                " WHERE v.model = j.model AND v.message_id = j.message_id)"
            )
        models = self._models if table.job_key == "memory_id" else self._message_models
        marks = ", ".join("?" * len(table.columns))
        insert = (
            f"INSERT INTO {table.name} ({', '.join(table.columns)})"  # noqa: S608
            f" VALUES ({marks})"
        )
        async for rows in self._rows(sql):
            records, reset = write_rows(table, rows, models)
            await self._writer.executemany(insert, records)
            self._tally.add(table.name, len(rows), len(records), reset)

    async def _copy_vectors(self) -> None:
        """`memory_vectors` as float32 blobs in `embeddings`, a model row each."""
        dim = await table_dim(self._conn)
        models = await self._conn.fetch(
            f"SELECT model FROM {PG_VECTORS} v WHERE {_HELD}"  # noqa: S608
            " GROUP BY model ORDER BY model"
        )
        self._models = [str(row[0]) for row in models]
        self._dims = dict.fromkeys(self._models, int(dim or 0))
        now = self._clock()
        await self._writer.executemany(
            "INSERT INTO embedding_models (model, dim, created_at) VALUES (?, ?, ?)",
            [(model, dim, now) for model in self._models],
        )
        async for rows in self._rows(
            f"SELECT v.memory_id, v.model, v.embedding FROM {PG_VECTORS} v"  # noqa: S608
            f" WHERE {_HELD} ORDER BY v.model, v.memory_id"
        ):
            records = [
                (int(item), str(model), np.asarray(vector, dtype="<f4").tobytes())
                for item, model, vector in rows
            ]
            await self._writer.executemany(
                "INSERT INTO embeddings (memory_id, model, vector) VALUES (?, ?, ?)",
                records,
            )
            self._tally.add(SQLITE_VECTORS, len(rows), len(records))
        alone = int(
            await self._conn.fetchval(
                f"SELECT count(*) FROM {PG_VECTORS} v WHERE NOT {_HELD}"  # noqa: S608
            )
        )
        if alone:
            self._tally.skipped[f"{PG_VECTORS}:without memory"] = alone

    async def _copy_message_vectors(self) -> None:
        """`message_vectors` as float32 blobs in `message_embeddings`, in `seq` order.

        A model new to `embedding_models` gets its row; one whose memory
        vectors have another dimension is skipped (SQLite keeps one a model).
        """
        found = await self._conn.fetch(
            f"SELECT model, min(vector_dims(embedding)), count(*)"  # noqa: S608
            f" FROM {PG_MESSAGE_VECTORS} GROUP BY model ORDER BY model"
        )
        now = self._clock()
        for model, dim, count in ((str(r[0]), int(r[1]), int(r[2])) for r in found):
            if self._dims.get(model, dim) != dim:
                self._tally.skipped[f"{PG_MESSAGE_VECTORS}:{model}"] = count
                continue
            self._message_models.append(model)
            if model not in self._dims:
                await self._writer.execute(
                    "INSERT INTO embedding_models (model, dim, created_at)"
                    " VALUES (?, ?, ?)",
                    (model, dim, now),
                )
        async for rows in self._rows(
            f"SELECT message_id, model, embedding FROM {PG_MESSAGE_VECTORS}"  # noqa: S608
            " WHERE model = ANY($1::text[]) ORDER BY seq",
            self._message_models,
        ):
            records = [
                (int(item), str(model), np.asarray(vector, dtype="<f4").tobytes())
                for item, model, vector in rows
            ]
            await self._writer.executemany(
                f"INSERT INTO {SQLITE_MESSAGE_VECTORS} (message_id, model, vector)"  # noqa: S608
                " VALUES (?, ?, ?)",
                records,
            )
            self._tally.add(SQLITE_MESSAGE_VECTORS, len(rows), len(records))

    async def _sequences(self) -> None:
        """Move each AUTOINCREMENT past every id PostgreSQL ever handed out."""
        for table in TABLES:
            if not table.identity:
                continue
            top = await pg_high(self._conn, table.name)
            cursor = await self._writer.execute(
                "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?",
                (top, table.name),
            )
            if cursor.rowcount == 0 and top:
                await self._writer.execute(
                    "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
                    (table.name, top),
                )

    async def _leftovers(self) -> None:
        """Count what PostgreSQL holds that SQLite has no place for, or makes itself."""
        # `store_settings` is not data (the background passes' progress): the
        # SQLite store's own starts empty, so its passes run again.
        known = {table.name for table in TABLES} | {
            PG_VECTORS,
            PG_MESSAGE_VECTORS,
            "memory_schema",
            "store_settings",
        }
        for name in await pg_tables(self._conn):
            if name in known:
                continue
            rows = int(await self._conn.fetchval(f'SELECT count(*) FROM "{name}"'))  # noqa: S608
            target = self._tally.derived if name in PG_DERIVED else self._tally.skipped
            target[name] = rows
        for table in TABLES:
            if table.job_key is None:
                continue
            claims = int(
                await self._conn.fetchval(
                    f"SELECT count(*) FROM {table.name}"  # noqa: S608
                    " WHERE claimed_by IS NOT NULL"
                )
            )
            if claims:
                self._tally.skipped[f"{table.name}:claims"] = claims

    async def _verify(self) -> None:
        """Count and hash both sides; compare the postings with FTS5's vocabulary."""
        tally = self._tally
        writer = self._writer
        for table in TABLES:
            tally.source[table.name] = int(
                await self._conn.fetchval(f"SELECT count(*) FROM {table.name}")  # noqa: S608
            )
            tally.destination[table.name] = await sqlite_count(
                writer,
                f"SELECT count(*) FROM {table.name}",  # noqa: S608
            )
        if self._vectors:
            tally.source[SQLITE_VECTORS] = int(
                await self._conn.fetchval(
                    f"SELECT count(*) FROM {PG_VECTORS} v WHERE {_HELD}"  # noqa: S608
                )
            )
            tally.destination[SQLITE_VECTORS] = await sqlite_count(
                writer, "SELECT count(*) FROM embeddings"
            )
        tally.source[SQLITE_MESSAGE_VECTORS] = int(
            await self._conn.fetchval(
                f"SELECT count(*) FROM {PG_MESSAGE_VECTORS}"  # noqa: S608
                " WHERE model = ANY($1::text[])",
                self._message_models,
            )
        )
        tally.destination[SQLITE_MESSAGE_VECTORS] = await sqlite_count(
            writer,
            f"SELECT count(*) FROM {SQLITE_MESSAGE_VECTORS}",  # noqa: S608
        )
        for name, sql in CHECKED.items():
            mine, theirs = Checksum(), Checksum()
            async for rows in self._rows(sql):
                mine.add(rows)
            async with writer.execute(sql) as cursor:
                while batch := list(await cursor.fetchmany(self._batch)):
                    theirs.add(batch)
            tally.checksums[name] = (mine.hexdigest(), theirs.hexdigest())
        for postings in POSTINGS:
            vocab = await writer.execute_fetchall(postings.sqlite_vocab)
            held = await self._conn.fetch(postings.pg_vocab)
            totals = await self._conn.fetchrow(postings.pg_totals)
            count = tally.source[postings.name]
            tally.postings &= same_postings(vocab, held, count, totals)


async def _refuse_existing(path: Path) -> None:
    """Refuse an existing file with rows before opening it as a store (which migrates)."""
    if not await asyncio.to_thread(path.exists):
        return
    conn, _version = await open_readonly(path)
    try:
        await refuse_sqlite_data(conn, SQLITE_DATA)
    finally:
        await conn.close()


async def postgres_to_sqlite(
    pool: Any,
    sqlite_path: str | Path,
    *,
    batch: int = BATCH,
    clock: Callable[[], float] = time.time,
) -> TransferReport:
    """Copy a PostgreSQL database into a new (or empty) SQLite store; the verified report.

    `pool` is an asyncpg pool on a database of this code's schema; it is
    only read. Raises `TransferTargetNotEmptyError` when the store holds
    any row (left as it was), and `TransferError` when the copy fails or
    does not match: the store then holds none of it. `clock` dates the
    `embedding_models` rows.
    """
    import asyncpg  # noqa: PLC0415

    path = Path(sqlite_path)
    await _refuse_existing(path)
    database = Database(path, clock=clock)
    await database.open()
    try:
        async with pool.acquire() as conn:
            if await conn.fetchval(
                "SELECT to_regclass($1) IS NOT NULL OR to_regclass($2) IS NOT NULL",
                PG_VECTORS,
                PG_MESSAGE_VECTORS,
            ):
                await register_vector(conn)
            async with (
                conn.transaction(isolation="repeatable_read", readonly=True),
                database.transaction() as writer,
            ):
                report = await _ToSqlite(conn, writer, batch, clock).run()
    except (asyncpg.PostgresError, sqlite3.Error) as err:
        raise TransferError(
            f"the copy to SQLite failed: {type(err).__name__}", error=str(err)
        ) from err
    finally:
        await database.close()
    _LOGGER.info(
        "Copied the PostgreSQL memories to %s: %s",
        path.name,
        ", ".join(f"{name} {count.written}" for name, count in report.tables.items()),
    )
    return report
