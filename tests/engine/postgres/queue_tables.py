"""Rows of the conversation tables for the queues' tests, on both backends.

`add_conversation` and `add_message` write the same row to either backend
(the PostgreSQL tables are the schema's: `schema_conversations`, linked to
the job and claim tables by `schema_jobs.conversation_links`).
"""

from __future__ import annotations

from typing import Any

from custom_components.memory.engine import MemoryStore

_CONVERSATION = (
    "INSERT INTO conversations (conversation_id, scope, started_at, updated_at, "
    "ended_at) VALUES ({}, {}, {}, {}, {}) RETURNING id"
)
_MESSAGE = (
    "INSERT INTO conversation_messages (conversation, role, content, scope, "
    "created_at, language) VALUES ({}, {}, {}, {}, {}, {}) RETURNING id"
)


async def _lite(store: MemoryStore, sql: str, args: tuple[Any, ...]) -> int:
    async with store.transaction() as conn:
        cursor = await conn.execute(sql.format(*("?" * len(args))), args)
        row = await cursor.fetchone()
        await cursor.close()
    assert row is not None
    return int(row[0])


async def _pg(pool: Any, sql: str, args: tuple[Any, ...]) -> int:
    marks = [f"${at}" for at in range(1, len(args) + 1)]
    return int(await pool.fetchval(sql.format(*marks), *args))


async def add_conversation(
    store: MemoryStore,
    pool: Any,
    conversation_id: str,
    *,
    scope: str,
    started: float,
    updated: float,
    ended: float | None,
) -> int:
    """Add one conversation row to both backends; return its (common) id."""
    args = (conversation_id, scope, started, updated, ended)
    lite = await _lite(store, _CONVERSATION, args)
    assert await _pg(pool, _CONVERSATION, args) == lite
    return lite


async def add_message(
    store: MemoryStore,
    pool: Any,
    conversation: int,
    role: str,
    content: str,
    *,
    scope: str,
    created: float,
    language: str = "",
) -> int:
    """Add one message to both backends; return its (common) id."""
    args = (conversation, role, content, scope, created, language)
    lite = await _lite(store, _MESSAGE, args)
    assert await _pg(pool, _MESSAGE, args) == lite
    return lite
