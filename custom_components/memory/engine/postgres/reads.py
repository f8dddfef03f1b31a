"""Reads of the memories on PostgreSQL: history, twins, topics, counts.

`PostgresReads` answers as the SQLite store's `history` (what a memory
superseded, oldest first, and what superseded it, each way at most
`MAX_CHAIN`), `find_active` and `active_by_topic` (what digestion compares
a new memory with) and `stats` (counts by status, type and scope for the
sensors, never content) do, item for item.
"""

from __future__ import annotations

from typing import Any, Final

from ..models import MemoryItem, StoreStats
from ..store import ITEM_COLUMNS, MAX_CHAIN, row_to_item
from ..text import content_key
from .schema import schema_version

# The name `StoreStats.vector_backend` gives this backend.
VECTOR_BACKEND: Final = "pgvector"


def _items(records: Any) -> list[MemoryItem]:
    """Map records that begin with `ITEM_COLUMNS` to their memories."""
    return [row_to_item(tuple(record)) for record in records]


class PostgresReads:
    """Reads of one PostgreSQL database's memories, over an asyncpg pool."""

    def __init__(self, pool: Any) -> None:
        """Hold the pool of a database `schema.migrate` set up."""
        self._pool = pool

    async def history(
        self, item: MemoryItem
    ) -> tuple[list[MemoryItem], list[MemoryItem]]:
        """Return what `item` superseded (oldest first) and what superseded it."""
        before: list[MemoryItem] = []
        wanted = [item.id]
        seen = {item.id}
        async with self._pool.acquire() as connection:
            while wanted and len(before) < MAX_CHAIN:
                records = await connection.fetch(
                    f"SELECT {ITEM_COLUMNS} FROM memories m "  # noqa: S608
                    "WHERE m.superseded_by = ANY($1::int8[]) ORDER BY m.id",
                    wanted,
                )
                found = [older for older in _items(records) if older.id not in seen]
                seen.update(older.id for older in found)
                before[:0] = found
                wanted = [older.id for older in found]
            after: list[MemoryItem] = []
            current = item
            while current.superseded_by is not None and len(after) < MAX_CHAIN:
                record = await connection.fetchrow(
                    f"SELECT {ITEM_COLUMNS} FROM memories m WHERE m.id = $1",  # noqa: S608
                    current.superseded_by,
                )
                if record is None or int(record["id"]) in seen:
                    break
                current = row_to_item(tuple(record))
                seen.add(current.id)
                after.append(current)
        return before, after

    async def find_active(self, scope: str, content: str) -> MemoryItem | None:
        """Find the active memory of `scope` whose text normalises like `content`."""
        async with self._pool.acquire() as connection:
            record = await connection.fetchrow(
                f"SELECT {ITEM_COLUMNS} FROM memories m WHERE m.scope = $1 "  # noqa: S608
                "AND m.content_key = $2 AND m.status = 'active'",
                scope,
                content_key(content.strip()),
            )
        return None if record is None else row_to_item(tuple(record))

    async def active_by_topic(self, scope: str, topic: str) -> list[MemoryItem]:
        """Active memories of `scope` with this exact topic, newest first (50)."""
        if not topic:
            return []
        async with self._pool.acquire() as connection:
            records = await connection.fetch(
                f"SELECT {ITEM_COLUMNS} FROM memories m WHERE m.scope = $1 "  # noqa: S608
                "AND m.topic = $2 AND m.topic <> '' AND m.status = 'active' "
                "ORDER BY m.updated_at DESC, m.id DESC LIMIT 50",
                scope,
                topic,
            )
        return _items(records)

    async def stats(self, *, model: str | None = None) -> StoreStats:
        """Count memories by status, and active ones by type and scope; never content.

        The database's size is `pg_database_size`; vectors are not counted
        here (this backend's vectors are their own part).
        """
        async with self._pool.acquire() as connection:
            by_status = await connection.fetch(
                "SELECT status, count(*) FROM memories GROUP BY status"
            )
            by_type = await connection.fetch(
                "SELECT type, count(*) FROM memories WHERE status = 'active' "
                "GROUP BY type"
            )
            by_scope = await connection.fetch(
                "SELECT scope, count(*) FROM memories WHERE status = 'active' "
                "GROUP BY scope"
            )
            version = await schema_version(connection)
            size = await connection.fetchval(
                "SELECT pg_database_size(current_database())"
            )
        return StoreStats(
            schema_version=version,
            vector_backend=VECTOR_BACKEND,
            active_model=model,
            by_status={str(r[0]): int(r[1]) for r in by_status},
            active_by_type={str(r[0]): int(r[1]) for r in by_type},
            active_by_scope={str(r[0]): int(r[1]) for r in by_scope},
            database_bytes=int(size),
        )
