"""The same calls on the SQLite store and on PostgreSQL, their results compared.

`Both` runs each call on a `MemoryStore` and on this room's parts, on one
fake clock, and asserts that the results are equal once SQLite's ids are
read as PostgreSQL's (the two number rows alike until a skipped INSERT
spends one of PostgreSQL's identity values), that an error is the same
error with the same message and placeholders, and, after each call, that
both databases hold the same rows (every column a `MemoryItem` has, the
tags table, the analysed terms and keys) and the same counts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
import re
from typing import Any, Literal, cast

from custom_components.memory.engine import (
    MemoryItem,
    MemoryStore,
    MemoryType,
    NewMemory,
    StoreError,
)
from custom_components.memory.engine.postgres import (
    PostgresCuration,
    PostgresMemories,
    PostgresReads,
)
from tests.engine.conftest import sql

_NUMBER = re.compile(r"\d+")


class Both:
    """A SQLite store and a PostgreSQL database, driven by the same calls."""

    def __init__(
        self,
        store: MemoryStore,
        path: Path,
        pool: Any,
        memories: PostgresMemories,
        curation: PostgresCuration,
        reads: PostgresReads,
    ) -> None:
        """Hold both backends; `ids` maps SQLite's ids to PostgreSQL's."""
        self.store = store
        self.path = path
        self.pool = pool
        self.memories = memories
        self.curation = curation
        self.reads = reads
        self.ids: dict[int, int] = {}

    def pg(self, item_id: int) -> int:
        """PostgreSQL's id of SQLite's `item_id` (an unknown one as it is)."""
        return self.ids.get(item_id, item_id)

    def _text(self, text: str) -> str:
        return _NUMBER.sub(lambda m: str(self.pg(int(m.group()))), text)

    def same(self, lite: MemoryItem, pg: MemoryItem) -> MemoryItem:
        """Assert two items equal but for the ids; return SQLite's."""
        assert self.ids.setdefault(lite.id, pg.id) == pg.id
        link = lite.superseded_by
        assert pg == replace(
            lite, id=pg.id, superseded_by=None if link is None else self.pg(link)
        )
        return lite

    def same_list(
        self, lite: Sequence[MemoryItem], pg: Sequence[MemoryItem]
    ) -> list[MemoryItem]:
        """Assert two lists of items equal, in order."""
        assert len(lite) == len(pg)
        return [self.same(a, b) for a, b in zip(lite, pg, strict=True)]

    async def call[L, P](
        self, lite: Callable[[], Awaitable[L]], pg: Callable[[], Awaitable[P]]
    ) -> tuple[L, P]:
        """Run both; an error on either must be the same error on both (raised)."""
        lite_error: StoreError | None = None
        pg_error: StoreError | None = None
        lite_result: L | None = None
        pg_result: P | None = None
        try:
            lite_result = await lite()
        except StoreError as err:
            lite_error = err
        try:
            pg_result = await pg()
        except StoreError as err:
            pg_error = err
        if lite_error is not None or pg_error is not None:
            assert type(pg_error) is type(lite_error), (lite_error, pg_error)
            assert lite_error is not None
            assert pg_error is not None
            assert str(pg_error) == self._text(str(lite_error))
            assert pg_error.placeholders == {
                key: self._text(value) for key, value in lite_error.placeholders.items()
            }
            await self.check_tables()
            raise lite_error
        return cast("L", lite_result), cast("P", pg_result)

    # -- the calls -------------------------------------------------------------

    async def add(self, memory: NewMemory) -> MemoryItem:
        """Add on both; the same item and `created`."""
        lite, pg = await self.call(
            lambda: self.store.add(memory), lambda: self.memories.add(memory)
        )
        assert lite.created == pg.created
        self.same(lite.item, pg.item)
        await self.check_tables()
        return lite.item

    async def forget(self, ids: Sequence[int], *, purge: bool = False) -> list[int]:
        """Forget on both."""
        lite, pg = await self.call(
            lambda: self.store.forget(ids, purge=purge),
            lambda: self.memories.forget([self.pg(i) for i in ids], purge=purge),
        )
        assert pg == [self.pg(i) for i in lite]
        await self.check_tables()
        return lite

    async def supersede(
        self, old_id: int, new: NewMemory, *, also: Sequence[int] = ()
    ) -> tuple[MemoryItem, MemoryItem]:
        """Supersede on both; the same new and old items."""
        lite, pg = await self.call(
            lambda: self.store.supersede(old_id, new, also=also),
            lambda: self.curation.supersede(
                self.pg(old_id), new, also=[self.pg(i) for i in also]
            ),
        )
        pair = self.same(lite[0], pg[0]), self.same(lite[1], pg[1])
        await self.check_tables()
        return pair

    async def update_content(self, item_id: int, **kwargs: Any) -> MemoryItem:
        """Reword on both."""
        lite, pg = await self.call(
            lambda: self.store.update_content(item_id, **kwargs),
            lambda: self.curation.update_content(self.pg(item_id), **kwargs),
        )
        self.same(lite, pg)
        await self.check_tables()
        return lite

    async def update_details(
        self,
        item_id: int,
        *,
        kind: MemoryType | None = None,
        tags: Sequence[str] | None = None,
        expires_at: datetime | Literal["keep"] | None = "keep",
        scope: str | None = None,
    ) -> MemoryItem:
        """Change details on both."""
        lite, pg = await self.call(
            lambda: self.store.update_details(
                item_id, kind=kind, tags=tags, expires_at=expires_at, scope=scope
            ),
            lambda: self.curation.update_details(
                self.pg(item_id),
                kind=kind,
                tags=tags,
                expires_at=expires_at,
                scope=scope,
            ),
        )
        self.same(lite, pg)
        await self.check_tables()
        return lite

    async def restore(self, ids: Sequence[int]) -> list[int]:
        """Restore on both."""
        lite, pg = await self.call(
            lambda: self.store.restore(ids),
            lambda: self.curation.restore([self.pg(i) for i in ids]),
        )
        assert pg == [self.pg(i) for i in lite]
        await self.check_tables()
        return lite

    async def expire_due(self) -> list[int]:
        """Expire on both; the same ids (SQLite's RETURNING order is unspecified)."""
        lite, pg = await self.call(self.store.expire_due, self.curation.expire_due)
        assert pg == sorted(self.pg(i) for i in lite)
        await self.check_tables()
        return lite

    async def mark_recalled(self, ids: Sequence[int]) -> None:
        """Record a recall on both."""
        await self.call(
            lambda: self.store.mark_recalled(ids),
            lambda: self.curation.mark_recalled([self.pg(i) for i in ids]),
        )
        await self.check_tables()

    async def get(self, item_id: int) -> MemoryItem:
        """Read one memory on both."""
        lite, pg = await self.call(
            lambda: self.store.get(item_id), lambda: self.memories.get(self.pg(item_id))
        )
        assert lite is not None
        assert pg is not None
        return self.same(lite, pg)

    async def history(self, item_id: int) -> tuple[list[MemoryItem], list[MemoryItem]]:
        """Read a memory's history on both."""
        item = await self.get(item_id)
        pg_item = await self.memories.get(self.pg(item_id))
        assert pg_item is not None
        lite, pg = await self.call(
            lambda: self.store.history(item), lambda: self.reads.history(pg_item)
        )
        return self.same_list(lite[0], pg[0]), self.same_list(lite[1], pg[1])

    # -- the tables ------------------------------------------------------------

    async def check_tables(self) -> None:
        """Assert that both databases hold the same rows, tags, terms and counts."""
        rows = sql(self.path, "SELECT id FROM memories ORDER BY id")
        lite_ids = [int(row[0]) for row in rows]
        assert set(lite_ids) <= set(self.ids), "a row neither call returned"
        lite_items = await self.store.get_many(lite_ids)
        pg_items = await self.memories.get_many([self.pg(i) for i in lite_ids])
        assert len(pg_items) == len(lite_items)
        for item_id, item in lite_items.items():
            self.same(item, pg_items[self.pg(item_id)])
        async with self.pool.acquire() as connection:
            pg_rows = await connection.fetch(
                "SELECT id, content_key, terms, analysed FROM memories"
            )
            pg_tags = await connection.fetch("SELECT memory_id, tag FROM memory_tags")
        lite_rows = sql(
            self.path, "SELECT id, content_key, terms, analysed FROM memories"
        )
        assert {tuple(r) for r in pg_rows} == {
            (self.pg(r[0]), *r[1:]) for r in lite_rows
        }
        lite_tags = sql(self.path, "SELECT memory_id, tag FROM memory_tags")
        assert {tuple(r) for r in pg_tags} == {(self.pg(i), t) for i, t in lite_tags}
        lite_stats = await self.store.stats()
        pg_stats = await self.reads.stats()
        assert (
            pg_stats.by_status,
            pg_stats.active_by_type,
            pg_stats.active_by_scope,
        ) == (
            lite_stats.by_status,
            lite_stats.active_by_type,
            lite_stats.active_by_scope,
        )
