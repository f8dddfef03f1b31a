"""Moving every memory from a SQLite store file to PostgreSQL, verified (#26).

`sqlite_to_postgres` copies every row of every table both schemas have
(`transfer_tables.TABLES`) and the memories' vectors into a PostgreSQL
database that holds none yet, ids included; `transfer_back.
postgres_to_sqlite` is the way back. Both:

- read the source only: the SQLite file through a `mode=ro` connection,
  PostgreSQL in a read-only REPEATABLE READ transaction, each one snapshot,
  so a store still in use is copied as of one moment;
- refuse a destination that holds any row (`TransferTargetNotEmptyError`,
  the destination left as it was) and write it in one transaction, in
  batches (`COPY` into PostgreSQL, `executemany` into SQLite): any failure
  leaves it empty;
- count every table on both sides and hash the memories and messages
  (`transfer_tables.Checksum`) before committing: a difference rolls the
  copy back (`TransferError`), so a committed copy is a verified one;
- keep the identity sequences past every id the source ever gave (SQLite's
  `sqlite_sequence`, PostgreSQL's sequences), so no id is handed out twice.

The destination's keyword indexes are made there by its own triggers
(PostgreSQL's postings, SQLite's FTS5); the report says whether the
postings hold what FTS5 holds (`postings_match`). Message vectors travel
with their messages (`message_embeddings` <-> `message_vectors`, every
model, in the order they were written, so the log's cosine scale samples
them alike). A ready embedding job whose vector does not travel (a memory
model of another dimension than `memory_vectors` holds) goes back to
pending, so the vector is made again there. What has no table on the other
side is reported with its row count in `skipped` (SQLite's `store_settings`,
PostgreSQL's claims), what the destination makes again in `derived`.

asyncpg is imported where its errors are caught; `pool` is an asyncpg pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
import logging
from pathlib import Path
import sqlite3
from typing import Any

import aiosqlite
import numpy as np

from ..errors import TransferError, TransferTargetNotEmptyError
from .message_search import data_tokens
from .schema import COMPACT_TOTALS, migrate
from .schema_conversations import COMPACT_MESSAGE_TOTALS
from .transfer_report import Tally, TransferReport
from .transfer_sides import (
    open_source,
    pg_columns,
    pg_high,
    quoted,
    sqlite_columns,
    sqlite_count,
    sqlite_high,
    sqlite_tables,
)
from .transfer_tables import (
    BATCH,
    CHECKED,
    MEMORIES,
    MESSAGES,
    PG_DATA,
    PG_MESSAGE_VECTORS,
    PG_VECTORS,
    POSTINGS,
    SQLITE_DERIVED,
    SQLITE_MESSAGE_VECTORS,
    SQLITE_VECTORS,
    TABLES,
    Checksum,
    Table,
    check_columns,
    same_postings,
    write_rows,
)
from .vectors import create_vector_table, register_vector, table_dim

_LOGGER = logging.getLogger(__name__)


def _with_data_terms(rows: Iterable[Any]) -> list[tuple[Any, ...]]:
    """Messages with their `data` as FTS5 tokenizes it (`data_terms`)."""
    at = MESSAGES.columns.index("data")
    return [(*row, data_tokens(str(row[at]))) for row in rows]


class _ToPostgres:
    """One copy of a SQLite store into an empty PostgreSQL database, in its transaction."""

    def __init__(
        self, source: aiosqlite.Connection, conn: Any, batch: int, model: str | None
    ) -> None:
        self._source = source
        self._conn = conn
        self._batch = batch
        self._model = model
        self._tally = Tally("sqlite_to_postgres")
        # Models whose vectors are copied, and their dimension.
        self.models: list[str] = []
        self.dim: int | None = None
        # Models of the message vectors (all travel).
        self.message_models: list[str] = []

    async def run(self) -> TransferReport:
        """Check both sides, copy every table, verify; the caller commits."""
        tables = await sqlite_tables(self._source)
        for table in TABLES:
            check_columns(
                table, await sqlite_columns(self._source, table.name), postgres=False
            )
            check_columns(
                table, await pg_columns(self._conn, table.name), postgres=True
            )
        await self._refuse_data()
        await self._choose_vectors()
        rows = await self._source.execute_fetchall(
            f"SELECT DISTINCT model FROM {SQLITE_MESSAGE_VECTORS} ORDER BY model"  # noqa: S608
        )
        self.message_models = [str(row[0]) for row in rows]
        await self._copy_memories()
        for table in TABLES[1:]:
            await self._copy(table)
        await self._copy_vectors()
        await self._copy_message_vectors()
        await self._sequences()
        await self._conn.execute(COMPACT_TOTALS)
        await self._conn.execute(COMPACT_MESSAGE_TOTALS)
        await self._leftovers(tables)
        await self._verify()
        return self._tally.report()

    async def _refuse_data(self) -> None:
        """Lock the destination's tables against writers; refuse any row in them."""
        names = list(PG_DATA)
        if await self._conn.fetchval("SELECT to_regclass($1)", PG_VECTORS):
            names.append(PG_VECTORS)
        await self._conn.execute(f"LOCK TABLE {', '.join(names)} IN EXCLUSIVE MODE")
        for name in names:
            rows = int(await self._conn.fetchval(f"SELECT count(*) FROM {name}"))  # noqa: S608
            if rows:
                raise TransferTargetNotEmptyError(
                    f"the PostgreSQL database already holds {name} rows",
                    table=name,
                    rows=str(rows),
                )

    async def _choose_vectors(self) -> None:
        """Pick the one dimension `memory_vectors` holds; other models are skipped.

        The table's own if it exists, else the dimension of `model` (the
        store's), else the one of the most vectors.
        """
        rows = await self._source.execute_fetchall(
            "SELECT m.model, m.dim, (SELECT count(*) FROM embeddings e"
            " WHERE e.model = m.model) FROM embedding_models m ORDER BY m.model"
        )
        stored = {str(r[0]): (int(r[1]), int(r[2])) for r in rows if int(r[2])}
        if not stored:
            return
        by_dim: dict[int, int] = {}
        for size, count in stored.values():
            by_dim[size] = by_dim.get(size, 0) + count
        dim = await table_dim(self._conn)
        if dim is None and self._model is not None and self._model in stored:
            dim = stored[self._model][0]
        if dim is None:
            dim = max(by_dim, key=lambda d: (by_dim[d], -d))
        await create_vector_table(self._conn, dim)
        self.dim = dim
        for model, (model_dim, count) in sorted(stored.items()):
            if model_dim == dim:
                self.models.append(model)
            else:
                self._tally.skipped[f"{SQLITE_VECTORS}:{model}"] = count

    async def _batches(self, sql: str, *args: Any) -> AsyncIterator[list[Any]]:
        """Yield the rows of a source query, `batch` at a time."""
        async with self._source.execute(sql, args) as cursor:
            while rows := list(await cursor.fetchmany(self._batch)):
                yield rows

    async def _write(self, table: str, columns: Iterable[str], records: Any) -> None:
        await self._conn.copy_records_to_table(
            table, records=records, columns=list(columns)
        )

    async def _copy_memories(self) -> None:
        """Memories without their supersede links, then the links (any order of ids)."""
        at = MEMORIES.columns.index("superseded_by")
        links: list[tuple[int, int]] = []
        async for rows in self._batches(MEMORIES.select()):
            links += [(int(r[0]), int(r[at])) for r in rows if r[at] is not None]
            records = [(*r[:at], None, *r[at + 1 :]) for r in rows]
            await self._write(MEMORIES.name, MEMORIES.columns, records)
            self._tally.add(MEMORIES.name, len(rows), len(records))
        for first in range(0, len(links), self._batch):
            part = links[first : first + self._batch]
            await self._conn.execute(
                "UPDATE memories m SET superseded_by = s.successor"
                " FROM unnest($1::bigint[], $2::bigint[]) AS s(id, successor)"
                " WHERE m.id = s.id",
                [item for item, _by in part],
                [by for _item, by in part],
            )

    async def _copy(self, table: Table) -> None:
        """Copy one table; jobs whose vector stays behind become pending."""
        sql = table.select()
        columns = table.columns
        if table is MESSAGES:
            columns = (*columns, "data_terms")
        if table.job_key == "memory_id":
            sql = table.select(
                "EXISTS (SELECT 1 FROM embeddings e WHERE e.model = j.model"
                " AND e.memory_id = j.memory_id)"
            )
        elif table.job_key is not None:
            sql = table.select(
                f"EXISTS (SELECT 1 FROM {SQLITE_MESSAGE_VECTORS} e"  # noqa: S608
                " WHERE e.model = j.model AND e.message_id = j.message_id)"
            )
        models = self.models if table.job_key == "memory_id" else self.message_models
        async for rows in self._batches(sql):
            records, reset = write_rows(table, rows, models)
            if table is MESSAGES:
                records = await asyncio.to_thread(_with_data_terms, records)
            await self._write(table.name, columns, records)
            self._tally.add(table.name, len(rows), len(records), reset)

    async def _copy_vectors(self) -> None:
        """Each copied model's float32 blobs as `memory_vectors` rows."""
        for model in self.models:
            async for rows in self._batches(
                "SELECT memory_id, vector FROM embeddings WHERE model = ?"
                " ORDER BY memory_id",
                model,
            ):
                records = []
                for item_id, blob in rows:
                    vector = np.frombuffer(blob, dtype="<f4")
                    if len(vector) != self.dim:
                        raise TransferError(
                            f"a vector of {model} has {len(vector)} dimensions",
                            error=f"memory {item_id}: {len(vector)} of {self.dim}",
                        )
                    records.append((model, int(item_id), vector))
                await self._write(
                    PG_VECTORS, ("model", "memory_id", "embedding"), records
                )
                self._tally.add(PG_VECTORS, len(rows), len(records))

    async def _copy_message_vectors(self) -> None:
        """`message_embeddings` as `message_vectors` rows, in SQLite's id order."""
        async for rows in self._batches(
            f"SELECT model, message_id, vector FROM {SQLITE_MESSAGE_VECTORS}"  # noqa: S608
            " ORDER BY id"
        ):
            records = [
                (str(model), int(item), np.frombuffer(blob, dtype="<f4"))
                for model, item, blob in rows
            ]
            await self._write(
                PG_MESSAGE_VECTORS, ("model", "message_id", "embedding"), records
            )
            self._tally.add(PG_MESSAGE_VECTORS, len(rows), len(records))

    async def _sequences(self) -> None:
        """Move each identity past every id the SQLite store ever handed out."""
        high = await sqlite_high(self._source)
        for table in TABLES:
            if not table.identity:
                continue
            top = max(
                high.get(table.name, 0),
                await sqlite_count(
                    self._source,
                    f"SELECT coalesce(max(id), 0) FROM {table.name}",  # noqa: S608
                ),
                await pg_high(self._conn, table.name),
            )
            if top:
                await self._conn.execute(
                    "SELECT setval(pg_get_serial_sequence($1, 'id')::regclass, $2)",
                    table.name,
                    top,
                )

    async def _leftovers(self, tables: list[str]) -> None:
        """Count the source's tables that have no place in PostgreSQL."""
        known = {table.name for table in TABLES} | {
            SQLITE_VECTORS,
            SQLITE_MESSAGE_VECTORS,
        }
        for name in tables:
            if name in known:
                continue
            sql = f"SELECT count(*) FROM {quoted(name)}"  # noqa: S608
            rows = await sqlite_count(self._source, sql)
            target = (
                self._tally.derived if name in SQLITE_DERIVED else self._tally.skipped
            )
            target[name] = rows

    async def _verify(self) -> None:
        """Count and hash both sides; compare FTS5's vocabulary with the postings."""
        tally = self._tally
        for table in TABLES:
            tally.source[table.name] = await sqlite_count(
                self._source,
                f"SELECT count(*) FROM {table.name}",  # noqa: S608
            )
            tally.destination[table.name] = int(
                await self._conn.fetchval(f"SELECT count(*) FROM {table.name}")  # noqa: S608
            )
        if self.models:
            marks = ", ".join("?" * len(self.models))
            tally.source[PG_VECTORS] = await sqlite_count(
                self._source,
                f"SELECT count(*) FROM embeddings WHERE model IN ({marks})",  # noqa: S608
                *self.models,
            )
            tally.destination[PG_VECTORS] = int(
                await self._conn.fetchval(f"SELECT count(*) FROM {PG_VECTORS}")  # noqa: S608
            )
        tally.source[PG_MESSAGE_VECTORS] = await sqlite_count(
            self._source,
            f"SELECT count(*) FROM {SQLITE_MESSAGE_VECTORS}",  # noqa: S608
        )
        tally.destination[PG_MESSAGE_VECTORS] = int(
            await self._conn.fetchval(f"SELECT count(*) FROM {PG_MESSAGE_VECTORS}")  # noqa: S608
        )
        for name, sql in CHECKED.items():
            mine, theirs = Checksum(), Checksum()
            async for rows in self._batches(sql):
                mine.add(rows)
            async for record in self._conn.cursor(sql, prefetch=self._batch):
                theirs.add([record])
            tally.checksums[name] = (mine.hexdigest(), theirs.hexdigest())
        for postings in POSTINGS:
            vocab = await self._source.execute_fetchall(postings.sqlite_vocab)
            held = await self._conn.fetch(postings.pg_vocab)
            totals = await self._conn.fetchrow(postings.pg_totals)
            count = tally.source[postings.name]
            tally.postings &= same_postings(vocab, held, count, totals)


async def sqlite_to_postgres(
    sqlite_path: str | Path,
    pool: Any,
    *,
    batch: int = BATCH,
    model: str | None = None,
) -> TransferReport:
    """Copy a SQLite store into an empty PostgreSQL database; return the verified report.

    `pool` is an asyncpg pool on a database with pgvector; its schema is
    migrated first, and the connection the copy uses learns pgvector's
    binary form (`register_vector`, which the store's pools have anyway). `model` (the store's embedding model) picks the
    dimension of `memory_vectors` when vectors of several dimensions are
    stored. The SQLite file is only read. Raises `TransferTargetNotEmptyError`
    when the database holds any memory, message, job or vector, and
    `TransferError` when the copy fails or does not match: the database
    then holds none of it. No HNSW index is built here: the store opened
    on the database afterwards starts each one its rows call for in the
    background (`hnsw_builds`), so a move's result and time do not depend
    on a build (~38 min at 1M memories on two cores).
    """
    import asyncpg  # noqa: PLC0415

    path = Path(sqlite_path)
    source = await open_source(path)
    try:
        async with pool.acquire() as conn:
            try:
                await migrate(conn)
            except RuntimeError as err:
                raise TransferError(str(err), error=str(err)) from err
            await register_vector(conn)
            async with conn.transaction():
                copy = _ToPostgres(source, conn, batch, model)
                report = await copy.run()
    except (asyncpg.PostgresError, sqlite3.Error) as err:
        raise TransferError(
            f"the copy to PostgreSQL failed: {type(err).__name__}", error=str(err)
        ) from err
    finally:
        await source.close()
    _LOGGER.info(
        "Copied the SQLite store to PostgreSQL: %s",
        ", ".join(f"{name} {count.written}" for name, count in report.tables.items()),
    )
    return report
