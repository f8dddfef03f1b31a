"""Reads of the `memories` table that only consolidation (digestion) makes.

Twins, memories on the same topic, and stored vectors of candidates: what
digestion compares a new memory with before it decides to add, merge or
supersede.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite
import numpy as np

from ..models import MemoryItem, Vector
from ..sql import IDS, read_one, rows_in
from ..text import content_key
from .rows import ITEM_COLUMNS, row_to_item


async def find_active(
    reader: aiosqlite.Connection, scope: str, content: str
) -> MemoryItem | None:
    """Find the active memory of `scope` whose text normalises like `content`."""
    row = await read_one(
        reader,
        f"SELECT {ITEM_COLUMNS} FROM memories m WHERE m.scope = ? "
        "AND m.content_key = ? AND m.status = 'active'",
        (scope, content_key(content.strip())),
    )
    return None if row is None else row_to_item(row)


async def active_by_topic(
    reader: aiosqlite.Connection, scope: str, topic: str
) -> list[MemoryItem]:
    """Active memories of `scope` with this exact topic, newest first."""
    if not topic:
        return []
    rows = await reader.execute_fetchall(
        f"SELECT {ITEM_COLUMNS} FROM memories m WHERE m.scope = ? "
        "AND m.topic = ? AND m.topic != '' AND m.status = 'active' "
        "ORDER BY m.updated_at DESC, m.id DESC LIMIT 50",
        (scope, topic),
    )
    return [row_to_item(row) for row in rows]


async def stored_vectors(
    reader: aiosqlite.Connection, model: str | None, ids: Sequence[int]
) -> dict[int, Vector]:
    """Read `model`'s unit vectors of `ids` (those that have one)."""
    unique = sorted(set(ids))
    if model is None or not unique:
        return {}
    rows = await rows_in(
        reader,
        f"SELECT memory_id, vector FROM embeddings WHERE model = ? "
        f"AND memory_id IN ({IDS})",
        unique,
        before=[model],
    )
    return {int(row[0]): np.frombuffer(row[1], dtype=np.float32) for row in rows}
