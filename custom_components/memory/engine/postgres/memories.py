"""Memories on PostgreSQL: add with the SQLite store's de-duplication, read, forget.

`PostgresMemories` holds an asyncpg pool whose database `schema.migrate`
has set up. Validation, the de-duplication key, the analysed terms and the
row's values are the SQLite store's own (`store.validate_memory`,
`memory_key`, `insert_row`, `row_to_item`), so both backends store the same
row for the same memory and read it back as the same `MemoryItem`.

An add runs as `store.rows.insert_many` does, in one transaction: an
expired active twin archived first, the rows inserted with `ON CONFLICT
(scope, content_key) WHERE status = 'active' DO NOTHING` (returned as
stored), the twins of those that conflicted read, tags written; a batch
that repeats a text in one scope goes row by row, its first copy kept. Two
instances adding the same fact at once: the unique index makes the second
INSERT wait for the first transaction, then do nothing, and its next
statement (a new snapshot under READ COMMITTED) reads the first one's row,
so both get the same item and one row is stored. A deadlock between two
batches that cross (PostgreSQL aborts one) is retried. An add that creates
rows, and every forget, sends its change notice (`notify`) in its
transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
import logging
import time
from typing import Any, Final

from ..errors import UnknownMemoryError
from ..languages import DEFAULT_LANGUAGE
from ..models import AddResult, MemoryItem, NewMemory
from ..sql import storable_ids
from ..store import (
    INSERT_COLUMNS,
    ITEM_COLUMNS,
    Prepared,
    insert_row,
    memory_key,
    row_to_item,
    validate_memory,
)
from .notify import ChangeKind, notify
from .schema import COMPACT_AFTER, COMPACT_TOTALS

_LOGGER = logging.getLogger(__name__)

# The PostgreSQL type of each of `INSERT_COLUMNS`, for `unnest` of arrays.
_COLUMN_TYPES: Final = {
    "valid_from": "float8",
    "expires_at": "float8",
    "created_at": "float8",
    "updated_at": "float8",
    "confidence": "float8",
    "message_id": "int8",
    "analysed": "int4",
}
_INSERT: Final = (
    f"INSERT INTO memories AS m ({', '.join(INSERT_COLUMNS)}) "  # noqa: S608
    "SELECT * FROM unnest("
    + ", ".join(
        f"${at}::{_COLUMN_TYPES.get(name, 'text')}[]"
        for at, name in enumerate(INSERT_COLUMNS, 1)
    )
    + ") ON CONFLICT (scope, content_key) WHERE status = 'active' DO NOTHING "
    f"RETURNING {ITEM_COLUMNS}, m.content_key"
)
_ARCHIVE_EXPIRED_TWINS: Final = (
    "UPDATE memories SET status = 'archived', updated_at = $1, "
    "valid_to = coalesce(valid_to, expires_at) "
    "FROM unnest($2::text[], $3::text[]) AS twin(scope, content_key) "
    "WHERE memories.scope = twin.scope AND memories.content_key = twin.content_key "
    "AND memories.status = 'active' AND memories.expires_at <= $1"
)
_TWINS: Final = (
    f"SELECT {ITEM_COLUMNS}, m.content_key FROM memories m "  # noqa: S608
    "JOIN unnest($1::text[], $2::text[]) AS twin(scope, content_key) "
    "ON m.scope = twin.scope AND m.content_key = twin.content_key "
    "WHERE m.status = 'active'"
)
_TAGS: Final = (
    "INSERT INTO memory_tags (memory_id, tag) "
    "SELECT * FROM unnest($1::int8[], $2::text[])"
)
# Times a transaction PostgreSQL chose as a deadlock's victim is run again.
_ATTEMPTS: Final = 3


def _item(record: Any) -> MemoryItem:
    """Map a record that begins with `ITEM_COLUMNS` to its memory."""
    return row_to_item(tuple(record))


class PostgresMemories:
    """The memories of one PostgreSQL database, over an asyncpg pool."""

    def __init__(
        self,
        pool: Any,
        *,
        language: str = DEFAULT_LANGUAGE,
        clock: Any = time.time,
        instance: str | None = None,
    ) -> None:
        """Hold the pool, the default language, the clock and the instance's name.

        `instance` names this writer in its change notices (`notify`).
        """
        self._pool = pool
        self.language = language
        self._clock = clock
        self.instance = instance

    def prepare(self, memories: Sequence[NewMemory]) -> list[Prepared]:
        """Validate memories (every one before any write) and set their language."""
        return [
            (replace(memory, language=memory.language or self.language), *checked)
            for memory in memories
            for checked in (validate_memory(memory),)
        ]

    async def add(self, memory: NewMemory, *, now: float | None = None) -> AddResult:
        """Add one memory, or return its active twin in the same scope."""
        return (await self.add_many([memory], now=now))[0]

    async def add_many(
        self, memories: Sequence[NewMemory], *, now: float | None = None
    ) -> list[AddResult]:
        """Add memories in one transaction; all are validated before any write."""
        prepared = self.prepare(memories)
        written = await self.write(prepared, self._clock() if now is None else now)
        return [AddResult(item=item, created=created) for item, created in written]

    async def write(
        self, prepared: Sequence[Prepared], now: float
    ) -> list[tuple[MemoryItem, bool]]:
        """Insert validated memories in one transaction; `(item, created)` each."""
        if not prepared:
            return []
        import asyncpg  # noqa: PLC0415

        keys = [
            memory_key(content, memory.type, memory.source.conversation_id)
            for memory, content, _tags in prepared
        ]
        rows = [
            insert_row(memory, content, tags, key, now)
            for (memory, content, tags), key in zip(prepared, keys, strict=True)
        ]
        for attempt in range(1, _ATTEMPTS + 1):
            try:
                async with self._pool.acquire() as connection:
                    return await self._insert(connection, prepared, keys, rows, now)
            except asyncpg.DeadlockDetectedError:
                if attempt == _ATTEMPTS:
                    raise
                _LOGGER.debug("Adding memories met a deadlock: again (%s)", attempt)
        raise AssertionError  # pragma: no cover - the loop returns or raises

    async def _insert(
        self,
        connection: Any,
        prepared: Sequence[Prepared],
        keys: Sequence[str],
        rows: Sequence[tuple[Any, ...]],
        now: float,
    ) -> list[tuple[MemoryItem, bool]]:
        """Run `write`'s transaction on one connection."""
        pairs = [
            (memory.scope, key)
            for (memory, _content, _tags), key in zip(prepared, keys, strict=True)
        ]
        async with connection.transaction():
            if len(set(pairs)) < len(pairs):
                # Row by row, so the first copy of a repeated text is kept.
                written = [
                    (await self.insert_rows(connection, [pair], [row], [tags], now))[0]
                    for pair, row, (_memory, _content, tags) in zip(
                        pairs, rows, prepared, strict=True
                    )
                ]
            else:
                tags = [tags for _memory, _content, tags in prepared]
                written = await self.insert_rows(connection, pairs, rows, tags, now)
            if added := [item for item, created in written if created]:
                await notify(
                    connection,
                    ChangeKind.ADDED,
                    instance=self.instance,
                    scopes={item.scope for item in added},
                    ids=[item.id for item in added],
                )
            await compact(connection)
        return written

    @staticmethod
    async def insert_rows(
        connection: Any,
        pairs: Sequence[tuple[str, str]],
        rows: Sequence[tuple[Any, ...]],
        tags: Sequence[tuple[str, ...]],
        now: float,
    ) -> list[tuple[MemoryItem, bool]]:
        """Insert rows of distinct `(scope, key)` pairs in the open transaction."""
        scopes = [scope for scope, _key in pairs]
        keys = [key for _scope, key in pairs]
        # An expired twin no longer counts: archive it (as expire_due would)
        # so it cannot swallow the new memory and then be archived with it.
        await connection.execute(_ARCHIVE_EXPIRED_TWINS, now, scopes, keys)
        columns = [list(column) for column in zip(*rows, strict=True)]
        created = {
            (record["scope"], record["content_key"]): _item(record)
            for record in await connection.fetch(_INSERT, *columns)
        }
        missing = [pair for pair in pairs if pair not in created]
        existing: dict[tuple[str, str], MemoryItem] = {}
        if missing:
            records = await connection.fetch(
                _TWINS, [scope for scope, _key in missing], [key for _s, key in missing]
            )
            existing = {
                (record["scope"], record["content_key"]): _item(record)
                for record in records
            }
        tag_rows = [
            (created[pair].id, tag)
            for pair, row_tags in zip(pairs, tags, strict=True)
            if pair in created
            for tag in row_tags
        ]
        if tag_rows:
            await connection.execute(
                _TAGS,
                [item_id for item_id, _tag in tag_rows],
                [t for _i, t in tag_rows],
            )
        written: list[tuple[MemoryItem, bool]] = []
        for pair in pairs:
            if pair in created:
                written.append((created[pair], True))
            elif pair in existing:
                written.append((existing[pair], False))
            else:
                # The twin that blocked the insert was archived or deleted
                # by a third writer since: too rare to be more than an error.
                raise RuntimeError(f"the active twin of a memory in {pair[0]} vanished")
        return written

    async def get(self, item_id: int) -> MemoryItem | None:
        """One memory by id, whatever its status."""
        return (await self.get_many([item_id])).get(item_id)

    async def get_many(self, ids: Sequence[int]) -> dict[int, MemoryItem]:
        """Memories by id; missing ids are absent from the result."""
        wanted = storable_ids(ids)
        if not wanted:
            return {}
        async with self._pool.acquire() as connection:
            records = await connection.fetch(
                f"SELECT {ITEM_COLUMNS} FROM memories m "  # noqa: S608
                "WHERE m.id = ANY($1::int8[])",
                wanted,
            )
        return {int(record["id"]): _item(record) for record in records}

    async def forget(
        self, ids: Sequence[int], *, purge: bool = False, now: float | None = None
    ) -> list[int]:
        """Archive memories, or with `purge` delete them (tags and postings too).

        Unknown ids raise `UnknownMemoryError` before anything changes.
        """
        unique = sorted(set(ids))
        if not unique:
            return []
        moment = self._clock() if now is None else now
        async with self._pool.acquire() as connection, connection.transaction():
            found = {
                int(record["id"]): str(record["scope"])
                for record in await connection.fetch(
                    "SELECT id, scope FROM memories WHERE id = ANY($1::int8[])",
                    storable_ids(unique),
                )
            }
            if missing := [item_id for item_id in unique if item_id not in found]:
                raise UnknownMemoryError(
                    f"no memory with id {', '.join(map(str, missing))}",
                    ids=", ".join(map(str, missing)),
                )
            if purge:
                await connection.execute(
                    "DELETE FROM memories WHERE id = ANY($1::int8[])", unique
                )
            else:
                await connection.execute(
                    "UPDATE memories SET status = 'archived', updated_at = $1, "
                    "valid_to = coalesce(valid_to, $1) "
                    "WHERE id = ANY($2::int8[]) AND status = 'active'",
                    moment,
                    unique,
                )
            await notify(
                connection,
                ChangeKind.PURGED if purge else ChangeKind.ARCHIVED,
                instance=self.instance,
                scopes=set(found.values()),
                ids=unique,
                erased=purge,
            )
            await compact(connection)
        return unique


async def compact(connection: Any) -> None:
    """Fold the keyword totals' deltas once there are more than COMPACT_AFTER."""
    deltas = await connection.fetchval(
        "SELECT count(*) FROM (SELECT 1 FROM memory_term_totals LIMIT $1) AS d",
        COMPACT_AFTER + 1,
    )
    if deltas > COMPACT_AFTER:
        await connection.execute(COMPACT_TOTALS)
