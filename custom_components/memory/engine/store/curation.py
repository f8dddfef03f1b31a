"""Curating memories by hand: another type, tags, expiry or owner; bringing one back.

What the Memory panel does to a memory besides rewording it (a new wording
is a new memory superseding the old: `MemoryTable.supersede`) and
forgetting it (`MemoryTable.forget`). Every change keeps the one active
copy per text and scope, refusing rather than merging. `MemoryCuration`
holds the `Database` and reads memories through the `MemoryTable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from ..errors import (
    InvalidInputError,
    MemorySupersededError,
    MemoryTwinError,
    UnknownMemoryError,
)
from ..languages import ANALYSIS_VERSION
from ..models import MemoryItem, MemoryStatus, MemoryType, NewMemory, to_timestamp
from ..sql import placeholders
from ..transactions import immediate_transaction
from .database import Database
from .memories import MemoryTable
from .rows import check_ids, memory_key, memory_terms, validate_memory


class MemoryCuration:
    """The memories, changed by hand."""

    def __init__(self, database: Database, table: MemoryTable) -> None:
        """Hold the database and the memories' table (its reads)."""
        self._db = database
        self._table = table

    async def update_details(
        self,
        item_id: int,
        *,
        kind: MemoryType | None = None,
        tags: Sequence[str] | None = None,
        expires_at: datetime | Literal["keep"] | None = "keep",
        scope: str | None = None,
    ) -> MemoryItem:
        """Change an active memory's type, tags, expiry or owner, in place.

        The wording is not touched (a new wording is a new memory that
        supersedes this one: `supersede`), so there is no history to keep.
        Tags are searched with the text, so its terms follow them. A new
        owner (scope) that already has this text refuses, as an add would;
        the old and the new owner's exports are rewritten (`erased`).
        """
        writer, _reader = self._db.connections()
        now = self._db.now()
        async with self._db.write_lock:
            item = (await self._table.get_many([item_id], conn=writer)).get(item_id)
            if item is None:
                raise UnknownMemoryError(
                    f"no memory with id {item_id}", ids=str(item_id)
                )
            if item.status is not MemoryStatus.ACTIVE:
                raise InvalidInputError(
                    f"memory {item_id} is not active", id=str(item_id)
                )
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
            async with writer.execute(
                "SELECT id FROM memories WHERE scope = ? AND content_key = ? "
                "AND status = 'active' AND id != ?",
                (new_scope, key, item_id),
            ) as cursor:
                twin = await cursor.fetchone()
            if twin is not None:
                raise MemoryTwinError(
                    f"memory {twin[0]} already has this text", id=str(twin[0])
                )
            expiry = item.expires_at if expires_at == "keep" else expires_at
            async with immediate_transaction(writer):
                await writer.execute(
                    "UPDATE memories SET type = ?, scope = ?, tags = ?, content_key = ?, "
                    "expires_at = ?, updated_at = ?, terms = ?, analysed = ? "
                    "WHERE id = ?",
                    (
                        str(new_kind),
                        new_scope,
                        " ".join(new_tags),
                        key,
                        to_timestamp(expiry),
                        now,
                        memory_terms(
                            item.content, new_tags, item.language or self._db.language
                        ),
                        ANALYSIS_VERSION,
                        item_id,
                    ),
                )
                await writer.execute(
                    "DELETE FROM memory_tags WHERE memory_id = ?", (item_id,)
                )
                await writer.executemany(
                    "INSERT INTO memory_tags (memory_id, tag) VALUES (?, ?)",
                    [(item_id, tag) for tag in new_tags],
                )
            updated = (await self._table.get_many([item_id], conn=writer))[item_id]
        self._db.changed()
        if new_scope != item.scope:
            await self._db.erased({item.scope, new_scope})
        return updated

    async def restore(self, ids: Sequence[int]) -> list[int]:
        """Bring archived memories back; active ones are left as they are.

        A past expiry is cleared (it would archive the memory again at once).
        Unknown ids, a superseded memory (its replacement is the current
        one), or one whose text an active memory of its scope has by now,
        raise before anything changes.
        """
        writer, _reader = self._db.connections()
        unique = sorted(set(ids))
        if not unique:
            return []
        now = self._db.now()
        async with self._db.write_lock:
            await check_ids(writer, unique)
            items = await self._table.get_many(unique, conn=writer)
            archived = [i for i in unique if items[i].status is MemoryStatus.ARCHIVED]
            for item_id in unique:
                if items[item_id].status is MemoryStatus.SUPERSEDED:
                    raise MemorySupersededError(
                        f"memory {item_id} was superseded; the one that replaced "
                        "it is the current one",
                        id=str(item_id),
                        by=str(items[item_id].superseded_by),
                    )
            marks = placeholders(len(archived))
            if archived:
                twins = await writer.execute_fetchall(
                    "SELECT a.id, m.id FROM memories a JOIN memories m "
                    "ON m.scope = a.scope AND m.content_key = a.content_key "
                    f"AND m.status = 'active' WHERE a.id IN ({marks})",
                    archived,
                )
                for _restored, twin in twins:
                    raise MemoryTwinError(
                        f"memory {twin} already has this text", id=str(twin)
                    )
                # Two archived copies of one text: only one may come back.
                doubles = await writer.execute_fetchall(
                    "SELECT min(id) FROM memories "
                    f"WHERE id IN ({marks}) GROUP BY scope, content_key "
                    "HAVING count(*) > 1",
                    archived,
                )
                for (twin,) in doubles:
                    raise MemoryTwinError(
                        f"memory {twin} already has this text", id=str(twin)
                    )
                async with immediate_transaction(writer):
                    await writer.execute(
                        "UPDATE memories SET status = 'active', valid_to = NULL, "
                        "updated_at = ?, expires_at = CASE WHEN expires_at <= ? "
                        f"THEN NULL ELSE expires_at END WHERE id IN ({marks})",
                        [now, now, *archived],
                    )
        self._db.changed()
        return unique
