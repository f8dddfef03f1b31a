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

from .analysis import ANALYSIS_VERSION, index_terms
from .languages import language_code
from .memory_rows import memory_terms

# Rows per batch: a few tens of milliseconds of analysis, a short write.
BATCH: Final = 500

type _Row = tuple[int, str, str, str]


async def pending(conn: aiosqlite.Connection) -> int:
    """Memories and messages whose terms are not of the current analysis."""
    rows = await conn.execute_fetchall(
        "SELECT (SELECT count(*) FROM memories WHERE analysed < ?) + "
        "(SELECT count(*) FROM conversation_messages WHERE analysed < ?)",
        (ANALYSIS_VERSION, ANALYSIS_VERSION),
    )
    return int(next(iter(rows))[0])


def _memory_terms(rows: Sequence[_Row], default: str) -> list[tuple[str, str, int]]:
    result = []
    for _id, content, tags, language in rows:
        code = language_code(language, default) if language else default
        result.append((memory_terms(content, tags.split(), code), code, _id))
    return result


def _message_terms(rows: Sequence[_Row], default: str) -> list[tuple[str, str, int]]:
    result = []
    for _id, content, _data, language in rows:
        code = language_code(language, default) if language else default
        result.append((index_terms(content, code), code, _id))
    return result


type Updates = tuple[list[tuple[str, str, int]], list[tuple[str, str, int]]]


async def prepare(
    reader: aiosqlite.Connection, default: str, limit: int = BATCH
) -> Updates:
    """Read up to `limit` rows to redo, memories first, and analyse them.

    The analysis runs in a worker thread; nothing is written.
    """
    memories: list[_Row] = [
        (int(row[0]), str(row[1]), str(row[2]), str(row[3]))
        for row in await reader.execute_fetchall(
            "SELECT id, content, tags, language FROM memories "
            "WHERE analysed < ? LIMIT ?",
            (ANALYSIS_VERSION, limit),
        )
    ]
    messages: list[_Row] = []
    if len(memories) < limit:
        messages = [
            (int(row[0]), str(row[1]), str(row[2]), str(row[3]))
            for row in await reader.execute_fetchall(
                "SELECT id, content, data, language FROM conversation_messages "
                "WHERE analysed < ? LIMIT ?",
                (ANALYSIS_VERSION, limit - len(memories)),
            )
        ]
    return (
        await asyncio.to_thread(_memory_terms, memories, default),
        await asyncio.to_thread(_message_terms, messages, default),
    )


async def write(conn: aiosqlite.Connection, updates: Updates) -> None:
    """Store analysed terms, skipping rows that changed since `prepare`."""
    memories, messages = updates
    version = ANALYSIS_VERSION
    await conn.executemany(
        "UPDATE memories SET terms = ?, language = ?, analysed = ? "
        "WHERE id = ? AND analysed < ?",
        [(terms, code, version, i, version) for terms, code, i in memories],
    )
    await conn.executemany(
        "UPDATE conversation_messages SET terms = ?, language = ?, analysed = ? "
        "WHERE id = ? AND analysed < ?",
        [(terms, code, version, i, version) for terms, code, i in messages],
    )
