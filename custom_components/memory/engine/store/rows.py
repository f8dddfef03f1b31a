"""Rows of the `memories` table: validation, mapping, inserts with duplicate checks.

A memory is validated before any write (`validate_memory`); a row reads
back as a `MemoryItem` (`row_to_item`). Inserts keep one active memory per
text and scope: a twin returns the existing row instead of a new one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import sqlite3
from typing import Any, Final

import aiosqlite

from ..errors import (
    ContentTooLongError,
    EmptyContentError,
    InvalidLimitError,
    InvalidScopeError,
    InvalidTagError,
    TooManyTagsError,
    UnknownMemoryError,
)
from ..languages import ANALYSIS_VERSION, index_terms, language_code
from ..models import (
    MAX_CONTENT_CHARS,
    MAX_SCOPE_CHARS,
    MAX_SEARCH_LIMIT,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MemoryItem,
    MemoryStatus,
    MemoryType,
    NewMemory,
    Origin,
    Source,
    from_timestamp,
    to_timestamp,
)
from ..sql import IDS, placeholders, rows_in, storable_ids
from ..text import clean_content, content_key, is_blank, normalize_tag

ITEM_COLUMNS: Final = (
    "m.id, m.scope, m.type, m.content, m.tags, m.status, m.superseded_by, "
    "m.valid_from, m.valid_to, m.expires_at, m.created_at, m.updated_at, "
    "m.last_recalled_at, m.recall_count, m.origin, m.conversation_id, "
    "m.agent_id, m.device_id, m.user_id, m.topic, m.confidence, m.message_id, "
    "m.language"
)

# An expired twin no longer counts: archive it (as expire_due would) so it
# cannot swallow the new memory and then be archived with it.
_ARCHIVE_EXPIRED_TWIN: Final = (
    "UPDATE memories SET status = 'archived', updated_at = ?, "
    "valid_to = coalesce(valid_to, expires_at) WHERE scope = ? "
    "AND content_key = ? AND status = 'active' AND expires_at <= ?"
)
_INSERT_COLUMNS: Final = (
    "scope",
    "type",
    "content",
    "content_key",
    "tags",
    "valid_from",
    "expires_at",
    "created_at",
    "updated_at",
    "origin",
    "conversation_id",
    "agent_id",
    "device_id",
    "user_id",
    "topic",
    "confidence",
    "message_id",
    "language",
    "terms",
    "analysed",
)
# Rows per multi-row INSERT: 500 x 20 values stays far below SQLite's
# 32,766 bound parameters.
_INSERT_CHUNK: Final = 500


def insert_row(
    memory: NewMemory, content: str, tags: tuple[str, ...], key: str, now: float
) -> tuple[Any, ...]:
    """Values of `_INSERT_COLUMNS` for a validated memory.

    Its language must be set (`MemoryTable` puts the store's default in).
    """
    source = memory.source
    language = language_code(memory.language)
    return (
        memory.scope,
        str(memory.type),
        content,
        key,
        " ".join(tags),
        to_timestamp(memory.valid_from) or now,
        to_timestamp(memory.expires_at),
        now,
        now,
        str(source.origin),
        source.conversation_id,
        source.agent_id,
        source.device_id,
        source.user_id,
        memory.topic,
        memory.confidence,
        memory.message_id,
        language,
        memory_terms(content, tags, language),
        ANALYSIS_VERSION,
    )


def memory_terms(content: str, tags: Iterable[str], language: str) -> str:
    """Return the searchable terms of a memory: its text's and its tags' words."""
    words = " ".join(tag.replace("_", " ") for tag in tags)
    return " ".join(
        part
        for part in (index_terms(content, language), index_terms(words, language))
        if part
    )


def row_to_item(row: sqlite3.Row) -> MemoryItem:
    """Map a row of `ITEM_COLUMNS` to its memory."""
    created = from_timestamp(row["created_at"])
    updated = from_timestamp(row["updated_at"])
    assert created is not None  # noqa: S101 - NOT NULL columns
    assert updated is not None  # noqa: S101
    return MemoryItem(
        id=row["id"],
        scope=row["scope"],
        type=MemoryType(row["type"]),
        content=row["content"],
        tags=tuple(row["tags"].split()),
        status=MemoryStatus(row["status"]),
        superseded_by=row["superseded_by"],
        valid_from=from_timestamp(row["valid_from"]),
        valid_to=from_timestamp(row["valid_to"]),
        expires_at=from_timestamp(row["expires_at"]),
        created_at=created,
        updated_at=updated,
        last_recalled_at=from_timestamp(row["last_recalled_at"]),
        recall_count=row["recall_count"],
        source=Source(
            origin=Origin(row["origin"]),
            conversation_id=row["conversation_id"],
            agent_id=row["agent_id"],
            device_id=row["device_id"],
            user_id=row["user_id"],
        ),
        topic=row["topic"],
        confidence=row["confidence"],
        message_id=row["message_id"],
        language=row["language"],
    )


def validate_memory(memory: NewMemory) -> tuple[str, tuple[str, ...]]:
    """Check a new memory; return its cleaned content and normalised tags.

    NUL and other control characters (but tabs and line breaks) are dropped;
    text with no visible character (only spaces, zero-width or other
    invisible characters) is not a memory.
    """
    content = clean_content(memory.content).strip()
    if is_blank(content):
        raise EmptyContentError("memory content is empty")
    if len(content) > MAX_CONTENT_CHARS:
        raise ContentTooLongError(
            f"memory content has {len(content)} characters, "
            f"the limit is {MAX_CONTENT_CHARS}",
            length=str(len(content)),
            limit=str(MAX_CONTENT_CHARS),
        )
    validate_scope(memory.scope)
    return content, normalize_tags(memory.tags)


def validate_limit(limit: int) -> None:
    """Refuse a search limit outside 1..MAX_SEARCH_LIMIT (memories and messages)."""
    if not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise InvalidLimitError(
            f"limit must be 1 to {MAX_SEARCH_LIMIT}",
            limit=str(limit),
            max=str(MAX_SEARCH_LIMIT),
        )


def validate_scope(scope: str) -> None:
    """Check that a scope (household or a person's id) is short and non-empty."""
    if not scope.strip() or len(scope) > MAX_SCOPE_CHARS:
        raise InvalidScopeError("scope must be 1 to 100 characters", scope=scope[:100])


def normalize_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Normalise and de-duplicate tags; raise on one that cannot be stored."""
    result: dict[str, None] = {}
    for tag in tags:
        normal = normalize_tag(tag)
        if normal is None or len(normal) > MAX_TAG_CHARS:
            raise InvalidTagError(
                "tags are 1 to 40 letters, digits, '_', '-' or '.'", tag=tag[:40]
            )
        result[normal] = None
    if len(result) > MAX_TAGS:
        raise TooManyTagsError(
            f"{len(result)} tags, the limit is {MAX_TAGS}",
            count=str(len(result)),
            limit=str(MAX_TAGS),
        )
    return tuple(result)


def memory_key(content: str, kind: MemoryType, conversation_id: str | None) -> str:
    """Return the de-duplication key of a memory's text (one active per key and scope).

    A conversation's summary is its own memory: its key also holds its type
    and conversation, so it never swallows, or is swallowed by, a fact of
    the same words, nor another conversation's summary; digesting the same
    conversation again still finds it (migration 8 keyed the older ones).
    """
    key = content_key(content)
    if kind == MemoryType.SUMMARY:
        return f"summary:{conversation_id or ''}:{key}"
    return key


async def insert_many(
    conn: aiosqlite.Connection,
    prepared: Sequence[tuple[NewMemory, str, tuple[str, ...]]],
    now: float,
) -> list[tuple[int, bool]]:
    """Insert validated memories; return `(id, created)` for each, in order.

    A few statements for the whole batch (one aiosqlite round trip is a
    thread hand-off, which dominated the per-row version): expired twins
    archived, the rows inserted with one multi-row INSERT per chunk, twins
    looked up, tags written. A batch that repeats a text in one scope goes
    row by row, so that its first copy is the one kept, as with `add`.
    """
    keys = [
        memory_key(content, memory.type, memory.source.conversation_id)
        for memory, content, _tags in prepared
    ]
    pairs = [
        (memory.scope, key)
        for (memory, _content, _tags), key in zip(prepared, keys, strict=True)
    ]
    if len(set(pairs)) < len(pairs):
        return [
            await insert_memory(conn, memory, content, tags, now)
            for memory, content, tags in prepared
        ]
    await conn.executemany(_ARCHIVE_EXPIRED_TWIN, [(now, *pair, now) for pair in pairs])
    created: dict[tuple[str, str], int] = {}
    for start in range(0, len(prepared), _INSERT_CHUNK):
        chunk = range(start, min(start + _INSERT_CHUNK, len(prepared)))
        values = ", ".join(
            ["(" + placeholders(len(_INSERT_COLUMNS)) + ")"] * len(chunk)
        )
        rows = await conn.execute_fetchall(
            f"INSERT INTO memories ({', '.join(_INSERT_COLUMNS)}) VALUES {values} "
            "ON CONFLICT (scope, content_key) WHERE status = 'active' DO NOTHING "
            "RETURNING id, scope, content_key",
            [value for i in chunk for value in insert_row(*prepared[i], keys[i], now)],
        )
        created.update(((row[1], row[2]), int(row[0])) for row in rows)
    existing: dict[tuple[str, str], int] = {}
    twins = sorted(
        {key for pair, key in zip(pairs, keys, strict=True) if pair not in created}
    )
    rows = await rows_in(
        conn,
        "SELECT id, scope, content_key FROM memories WHERE status = 'active' "
        f"AND content_key IN ({IDS})",
        twins,
    )
    existing.update(((row[1], row[2]), int(row[0])) for row in rows)
    tag_rows = [
        (created[pair], tag)
        for (_memory, _content, tags), pair in zip(prepared, pairs, strict=True)
        if pair in created
        for tag in tags
    ]
    if tag_rows:
        await conn.executemany(
            "INSERT INTO memory_tags (memory_id, tag) VALUES (?, ?)", tag_rows
        )
    # The conflict proves the twin exists.
    return [
        (created[pair], True) if pair in created else (existing[pair], False)
        for pair in pairs
    ]


async def insert_memory(
    conn: aiosqlite.Connection,
    memory: NewMemory,
    content: str,
    tags: tuple[str, ...],
    now: float,
) -> tuple[int, bool]:
    """Insert one validated memory; return `(id, created)` (its twin's id if not)."""
    key = memory_key(content, memory.type, memory.source.conversation_id)
    # An expired twin no longer counts: archive it (as expire_due would)
    # so it cannot swallow the new memory and then be archived with it.
    await conn.execute(_ARCHIVE_EXPIRED_TWIN, (now, memory.scope, key, now))
    rows = await conn.execute_fetchall(
        f"INSERT INTO memories ({', '.join(_INSERT_COLUMNS)}) "
        f"VALUES ({placeholders(len(_INSERT_COLUMNS))}) "
        "ON CONFLICT (scope, content_key) WHERE status = 'active' DO NOTHING "
        "RETURNING id",
        insert_row(memory, content, tags, key, now),
    )
    row = next(iter(rows), None)
    if row is not None:
        item_id = int(row[0])
        if tags:
            await conn.executemany(
                "INSERT INTO memory_tags (memory_id, tag) VALUES (?, ?)",
                [(item_id, tag) for tag in tags],
            )
        return item_id, True
    rows = await conn.execute_fetchall(
        "SELECT id FROM memories WHERE scope = ? AND content_key = ? "
        "AND status = 'active'",
        (memory.scope, key),
    )
    existing = next(iter(rows), None)
    assert existing is not None  # noqa: S101 - the conflict proves it exists
    return int(existing[0]), False


async def check_ids(conn: aiosqlite.Connection, ids: Sequence[int]) -> None:
    """Raise `UnknownMemoryError` naming every id of `ids` with no memory."""
    unique = sorted(set(ids))
    rows = await rows_in(
        conn, f"SELECT id FROM memories WHERE id IN ({IDS})", storable_ids(unique)
    )
    found = {int(row[0]) for row in rows}
    missing = [item_id for item_id in unique if item_id not in found]
    if missing:
        raise UnknownMemoryError(
            f"no memory with id {', '.join(map(str, missing))}",
            ids=", ".join(map(str, missing)),
        )
