"""Re-analysing stored rows whose search terms predate the current analysers.

After the migration to analysed terms (schema 7), and whenever
`analysis.ANALYSIS_VERSION` grows, rows carry terms of an older analysis (or
none). `pending` counts them and `reanalyse_batch` redoes a batch: the words
are analysed in a worker thread, then written in one short transaction that
skips any row changed meanwhile (a reworded memory got its new terms when it
was reworded). A row that never had a language gets the store's default, the
language it was analysed in (`prepare`, then `write`). Home Assistant runs batches in the background
after set-up, so set-up never waits for them; until a row is done, keyword
search does not find it (its meaning still can).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Final

import aiosqlite

from ..languages import ANALYSIS_VERSION, index_terms, language_code
from .rows import memory_terms

# Rows per batch: a few tens of milliseconds of analysis, a short write.
BATCH: Final = 500

# A row's new terms, its language and its id.
type _Update = tuple[str, str, int]
type Updates = tuple[list[_Update], list[_Update]]


async def pending(conn: aiosqlite.Connection) -> int:
    """Memories and messages whose terms are not of the current analysis."""
    rows = await conn.execute_fetchall(
        "SELECT (SELECT count(*) FROM memories WHERE analysed < ?) + "
        "(SELECT count(*) FROM conversation_messages WHERE analysed < ?)",
        (ANALYSIS_VERSION, ANALYSIS_VERSION),
    )
    return int(next(iter(rows))[0])


def _analyse(
    memories: Sequence[tuple[int, str, str, str]],
    messages: Sequence[tuple[int, str, str]],
    default: str,
) -> Updates:
    """Analyse memories `(id, content, tags, language)` and messages `(id, content, language)`."""
    memory_updates = []
    for row_id, content, tags, language in memories:
        code = language_code(language, default)
        memory_updates.append((memory_terms(content, tags.split(), code), code, row_id))
    message_updates = []
    for row_id, content, language in messages:
        code = language_code(language, default)
        message_updates.append((index_terms(content, code), code, row_id))
    return memory_updates, message_updates


async def prepare(
    reader: aiosqlite.Connection, default: str, limit: int = BATCH
) -> Updates:
    """Read up to `limit` rows to redo, memories first, and analyse them.

    The analysis runs in a worker thread; nothing is written.
    """
    memories = [
        (int(row[0]), str(row[1]), str(row[2]), str(row[3]))
        for row in await reader.execute_fetchall(
            "SELECT id, content, tags, language FROM memories "
            "WHERE analysed < ? LIMIT ?",
            (ANALYSIS_VERSION, limit),
        )
    ]
    messages: list[tuple[int, str, str]] = []
    if len(memories) < limit:
        messages = [
            (int(row[0]), str(row[1]), str(row[2]))
            for row in await reader.execute_fetchall(
                "SELECT id, content, language FROM conversation_messages "
                "WHERE analysed < ? LIMIT ?",
                (ANALYSIS_VERSION, limit - len(memories)),
            )
        ]
    return await asyncio.to_thread(_analyse, memories, messages, default)


async def write(conn: aiosqlite.Connection, updates: Updates) -> None:
    """Store analysed terms, skipping rows that changed since `prepare`."""
    version = ANALYSIS_VERSION
    for table, rows in zip(("memories", "conversation_messages"), updates, strict=True):
        await conn.executemany(
            f"UPDATE {table} SET terms = ?, language = ?, analysed = ? "  # noqa: S608
            "WHERE id = ? AND analysed < ?",
            [(terms, code, version, row_id, version) for terms, code, row_id in rows],
        )
