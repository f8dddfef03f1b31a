"""Curating memories on PostgreSQL: supersede, reword, details, restore, expire, recall.

`PostgresCuration` does what the SQLite store's `MemoryTable.supersede`,
`update_content`, `expire_due`, `mark_recalled` and `MemoryCuration`'s
`update_details` and `restore` do, with the same validation (the store's
own `validate_memory`, `memory_key`, `memory_terms`, `insert_row`), the
same results and the same errors for the same calls: an unknown id is an
`UnknownMemoryError`, a memory that is no longer active an
`InvalidInputError`, a superseded one brought back a
`MemorySupersededError`, a text its scope already has a `MemoryTwinError`
(an `InvalidInputError` when rewording, as SQLite's).

Each call is one transaction that first locks the rows it changes
(`SELECT ... ORDER BY id FOR UPDATE`): where SQLite has one writer at a
time, here several instances write to one database, so the second of two
instances superseding one memory waits for the first, then reads it as
committed (superseded) and refuses as SQLite would refuse a memory
superseded before. A text that an other instance makes active between the
check and the write trips the one-active-twin index: that is read back as
the same twin error. A deadlock PostgreSQL breaks is run again. Each write
sends its change notice (`notify`) in its transaction; as in SQLite,
recording a recall tells no listener.

SQLite's vectors follow a rewording (deleted, embedding jobs pending
again); this backend has no vectors of its own yet, so nothing follows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime
import time
from typing import Any, Final, Literal

from ..errors import (
    InvalidInputError,
    MemorySupersededError,
    MemoryTwinError,
    UnknownMemoryError,
)
from ..languages import ANALYSIS_VERSION, DEFAULT_LANGUAGE
from ..models import MemoryItem, MemoryStatus, MemoryType, NewMemory, to_timestamp
from ..sql import storable_ids
from ..store import (
    ITEM_COLUMNS,
    insert_row,
    memory_key,
    memory_terms,
    row_to_item,
    validate_memory,
)
from .memories import PostgresMemories, compact
from .notify import ChangeKind, notify

# Times a transaction PostgreSQL chose as a deadlock's victim is run again.
_ATTEMPTS: Final = 3
_LOCK: Final = (
    f"SELECT {ITEM_COLUMNS} FROM memories m "  # noqa: S608
    "WHERE m.id = ANY($1::int8[]) ORDER BY m.id FOR UPDATE"
)
_ITEM: Final = f"SELECT {ITEM_COLUMNS} FROM memories m WHERE m.id = $1"  # noqa: S608
_REWORD: Final = (
    "UPDATE memories AS m SET content = $1, content_key = $2, "  # noqa: S608
    "confidence = coalesce($3, confidence), topic = coalesce($4, topic), "
    "updated_at = $5, terms = $6, analysed = $7 "
    f"WHERE m.id = $8 RETURNING {ITEM_COLUMNS}"
)
_DETAILS: Final = (
    "UPDATE memories AS m SET type = $1, scope = $2, tags = $3, "  # noqa: S608
    "content_key = $4, expires_at = $5, updated_at = $6, terms = $7, "
    f"analysed = $8 WHERE m.id = $9 RETURNING {ITEM_COLUMNS}"
)
_TWIN: Final = (
    "SELECT id FROM memories WHERE scope = $1 AND content_key = $2 "
    "AND status = 'active' AND id <> $3 LIMIT 1"
)
_RESTORE_TWIN: Final = (
    "SELECT m.id FROM memories a JOIN memories m "
    "ON m.scope = a.scope AND m.content_key = a.content_key "
    "AND m.status = 'active' WHERE a.id = ANY($1::int8[]) ORDER BY a.id, m.id LIMIT 1"
)
_RESTORE_DOUBLE: Final = (
    "SELECT min(id) FROM memories WHERE id = ANY($1::int8[]) "
    "GROUP BY scope, content_key HAVING count(*) > 1 ORDER BY 1 LIMIT 1"
)


def _unknown(ids: Sequence[int]) -> UnknownMemoryError:
    """Make the store's error for ids that have no memory."""
    named = ", ".join(map(str, ids))
    return UnknownMemoryError(f"no memory with id {named}", ids=named)


def _not_active(item_id: int) -> InvalidInputError:
    """Make the store's error for a change to a memory no longer active."""
    return InvalidInputError(f"memory {item_id} is not active", id=str(item_id))


async def _lock(connection: Any, ids: Sequence[int]) -> dict[int, MemoryItem]:
    """Lock the memories of `ids` (in id order) and read them as committed."""
    records = await connection.fetch(_LOCK, storable_ids(ids))
    return {int(record["id"]): row_to_item(tuple(record)) for record in records}


async def _refuse_twin(
    connection: Any, error: type[InvalidInputError], sql: str, *args: Any
) -> None:
    """Raise `error` naming the active twin `sql` finds, if it finds one."""
    twin = await connection.fetchval(sql, *args)
    if twin is not None:
        raise error(f"memory {twin} already has this text", id=str(twin))


async def _fetch_unless_twin(
    connection: Any,
    on_twin: Callable[[], Awaitable[None]],
    sql: str,
    *args: Any,
) -> list[Any]:
    """Run a write in a savepoint; a twin another writer made meanwhile raises.

    The one-active-twin index refuses the write: the savepoint is rolled
    back and `on_twin` (which looks the twin up and raises) names it.
    """
    import asyncpg  # noqa: PLC0415

    try:
        async with connection.transaction():
            return list(await connection.fetch(sql, *args))
    except asyncpg.UniqueViolationError:
        await on_twin()
        raise


class PostgresCuration:
    """The memories of one PostgreSQL database, changed by hand or by digestion."""

    def __init__(
        self,
        pool: Any,
        *,
        language: str = DEFAULT_LANGUAGE,
        clock: Callable[[], float] = time.time,
        instance: str | None = None,
    ) -> None:
        """Hold the pool, the default language, the clock and the instance's name."""
        self._pool = pool
        self.language = language
        self._clock = clock
        self.instance = instance

    async def _run[T](self, work: Callable[[Any], Awaitable[T]]) -> T:
        """Run `work(connection)` in one transaction; again after a deadlock."""
        import asyncpg  # noqa: PLC0415

        for attempt in range(1, _ATTEMPTS + 1):
            try:
                async with (
                    self._pool.acquire() as connection,
                    connection.transaction(),
                ):
                    return await work(connection)
            except asyncpg.DeadlockDetectedError:
                if attempt == _ATTEMPTS:
                    raise
        raise AssertionError  # pragma: no cover - the loop returns or raises

    async def supersede(
        self,
        old_id: int,
        new: NewMemory,
        *,
        also: Sequence[int] = (),
        now: float | None = None,
    ) -> tuple[MemoryItem, MemoryItem]:
        """Add `new` and mark `old_id` (and `also`) superseded by it, atomically.

        As `MemoryTable.supersede`: every old memory must exist, be active
        and share the new memory's scope, or nothing changes; an active
        memory of the scope with the new text is the replacement (if it is
        `old_id` itself, nothing changes). Returns `(new, old)`.
        """
        content, tags = validate_memory(new)
        olds = list(dict.fromkeys([old_id, *also]))
        moment = self._clock() if now is None else now

        async def work(connection: Any) -> tuple[MemoryItem, MemoryItem]:
            current = await _lock(connection, olds)
            if missing := [item_id for item_id in olds if item_id not in current]:
                raise _unknown(missing)
            for item in current.values():
                if item.status is not MemoryStatus.ACTIVE or item.scope != new.scope:
                    raise InvalidInputError(
                        f"memory {item.id} is not active in the new memory's scope",
                        id=str(item.id),
                    )
            # A correction without a language of its own keeps the old one's.
            language = new.language or current[old_id].language or self.language
            memory = replace(new, language=language)
            key = memory_key(content, memory.type, memory.source.conversation_id)
            row = insert_row(memory, content, tags, key, moment)
            [(added, created)] = await PostgresMemories.insert_rows(
                connection, [(memory.scope, key)], [row], [tags], moment
            )
            replaced = [item_id for item_id in olds if item_id != added.id]
            if replaced:
                await connection.execute(
                    "UPDATE memories SET status = 'superseded', superseded_by = $1, "
                    "valid_to = $2, updated_at = $2 WHERE id = ANY($3::int8[])",
                    added.id,
                    moment,
                    replaced,
                )
            if replaced or created:
                await notify(
                    connection,
                    ChangeKind.SUPERSEDED,
                    instance=self.instance,
                    scopes={memory.scope},
                    ids=[added.id, *replaced],
                )
            old = row_to_item(tuple(await connection.fetchrow(_ITEM, olds[0])))
            await compact(connection)
            return added, old

        return await self._run(work)

    async def update_content(
        self,
        item_id: int,
        *,
        content: str,
        confidence: float | None = None,
        topic: str | None = None,
        now: float | None = None,
    ) -> MemoryItem:
        """Reword an active memory in place, as `MemoryTable.update_content`.

        The de-duplication key and the keyword postings follow the new
        text; `confidence` and `topic` change when given. Another active
        memory of the scope with this text raises `InvalidInputError`.
        """
        moment = self._clock() if now is None else now

        async def work(connection: Any) -> MemoryItem:
            item = (await _lock(connection, [item_id])).get(item_id)
            if item is None:
                raise _unknown([item_id])
            text, _tags = validate_memory(
                NewMemory(content=content, source=item.source, scope=item.scope)
            )
            if item.status is not MemoryStatus.ACTIVE:
                raise _not_active(item_id)
            key = memory_key(text, item.type, item.source.conversation_id)
            twin = (_TWIN, item.scope, key, item_id)

            async def refuse() -> None:
                await _refuse_twin(connection, InvalidInputError, *twin)

            await refuse()
            records = await _fetch_unless_twin(
                connection,
                refuse,
                _REWORD,
                text,
                key,
                confidence,
                topic,
                moment,
                memory_terms(text, item.tags, item.language or self.language),
                ANALYSIS_VERSION,
                item_id,
            )
            await notify(
                connection,
                ChangeKind.UPDATED,
                instance=self.instance,
                scopes={item.scope},
                ids=[item_id],
            )
            await compact(connection)
            return row_to_item(tuple(records[0]))

        return await self._run(work)

    async def update_details(
        self,
        item_id: int,
        *,
        kind: MemoryType | None = None,
        tags: Sequence[str] | None = None,
        expires_at: datetime | Literal["keep"] | None = "keep",
        scope: str | None = None,
        now: float | None = None,
    ) -> MemoryItem:
        """Change an active memory's type, tags, expiry or owner, as `MemoryCuration`'s.

        A new owner that already has this text refuses (`MemoryTwinError`);
        a move tells the other instances that text left the old owner for
        good (`erased`), so they rewrite both owners' exports.
        """
        moment = self._clock() if now is None else now

        async def work(connection: Any) -> MemoryItem:
            item = (await _lock(connection, [item_id])).get(item_id)
            if item is None:
                raise _unknown([item_id])
            if item.status is not MemoryStatus.ACTIVE:
                raise _not_active(item_id)
            new_kind = kind or item.type
            new_scope = scope or item.scope
            _text, new_tags = validate_memory(
                NewMemory(
                    content=item.content,
                    type=new_kind,
                    scope=new_scope,
                    tags=tuple(item.tags if tags is None else tags),
                    source=item.source,
                )
            )
            key = memory_key(item.content, new_kind, item.source.conversation_id)
            twin = (_TWIN, new_scope, key, item_id)

            async def refuse() -> None:
                await _refuse_twin(connection, MemoryTwinError, *twin)

            await refuse()
            expiry = item.expires_at if expires_at == "keep" else expires_at
            records = await _fetch_unless_twin(
                connection,
                refuse,
                _DETAILS,
                str(new_kind),
                new_scope,
                " ".join(new_tags),
                key,
                to_timestamp(expiry),
                moment,
                memory_terms(item.content, new_tags, item.language or self.language),
                ANALYSIS_VERSION,
                item_id,
            )
            await connection.execute(
                "DELETE FROM memory_tags WHERE memory_id = $1", item_id
            )
            if new_tags:
                await connection.execute(
                    "INSERT INTO memory_tags (memory_id, tag) "
                    "SELECT $1, tag FROM unnest($2::text[]) AS tag",
                    item_id,
                    list(new_tags),
                )
            await notify(
                connection,
                ChangeKind.UPDATED,
                instance=self.instance,
                scopes={item.scope, new_scope},
                ids=[item_id],
                erased=new_scope != item.scope,
            )
            await compact(connection)
            return row_to_item(tuple(records[0]))

        return await self._run(work)

    async def restore(
        self, ids: Sequence[int], *, now: float | None = None
    ) -> list[int]:
        """Bring archived memories back, as `MemoryCuration.restore`.

        Active ones are left as they are; a past expiry is cleared. Unknown
        ids, a superseded memory, or a text its scope has active by now (or
        twice among those restored) raise before anything changes.
        """
        unique = sorted(set(ids))
        if not unique:
            return []
        moment = self._clock() if now is None else now

        async def work(connection: Any) -> list[int]:
            items = await _lock(connection, unique)
            if missing := [item_id for item_id in unique if item_id not in items]:
                raise _unknown(missing)
            archived = [i for i in unique if items[i].status is MemoryStatus.ARCHIVED]
            for item_id in unique:
                if items[item_id].status is MemoryStatus.SUPERSEDED:
                    raise MemorySupersededError(
                        f"memory {item_id} was superseded; the one that replaced "
                        "it is the current one",
                        id=str(item_id),
                        by=str(items[item_id].superseded_by),
                    )
            if not archived:
                return unique

            async def refuse() -> None:
                await _refuse_twin(connection, MemoryTwinError, _RESTORE_TWIN, archived)

            await refuse()
            # Two archived copies of one text: only one may come back.
            await _refuse_twin(connection, MemoryTwinError, _RESTORE_DOUBLE, archived)
            await _fetch_unless_twin(
                connection,
                refuse,
                "UPDATE memories SET status = 'active', valid_to = NULL, "
                "updated_at = $1, expires_at = CASE WHEN expires_at <= $1 "
                "THEN NULL ELSE expires_at END WHERE id = ANY($2::int8[])",
                moment,
                archived,
            )
            await notify(
                connection,
                ChangeKind.RESTORED,
                instance=self.instance,
                scopes={items[item_id].scope for item_id in archived},
                ids=archived,
            )
            await compact(connection)
            return unique

        return await self._run(work)

    async def expire_due(self, *, now: float | None = None) -> list[int]:
        """Archive active memories whose expiry has passed; their ids, ascending.

        Two instances expiring at once archive each memory once: the second
        waits on the row, then finds it no longer active.
        """
        moment = self._clock() if now is None else now

        async def work(connection: Any) -> list[int]:
            records = await connection.fetch(
                "UPDATE memories SET status = 'archived', updated_at = $1, "
                "valid_to = coalesce(valid_to, expires_at) "
                "WHERE status = 'active' AND expires_at IS NOT NULL "
                "AND expires_at <= $1 RETURNING id, scope, expires_at",
                moment,
            )
            if not records:
                return []
            await notify(
                connection,
                ChangeKind.EXPIRED,
                instance=self.instance,
                scopes={str(record["scope"]) for record in records},
                ids=[int(record["id"]) for record in records],
            )
            return sorted(int(record["id"]) for record in records)

        return await self._run(work)

    async def mark_recalled(
        self, ids: Sequence[int], *, now: float | None = None
    ) -> None:
        """Record that memories were put into a prompt (no notice, as in SQLite)."""
        unique = storable_ids(ids)
        if not unique:
            return
        moment = self._clock() if now is None else now
        async with self._pool.acquire() as connection:
            await connection.execute(
                "UPDATE memories SET last_recalled_at = $1, "
                "recall_count = recall_count + 1 WHERE id = ANY($2::int8[])",
                moment,
                unique,
            )
