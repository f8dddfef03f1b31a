"""Rows of the `memories` table: validation, mapping, inserts with duplicate checks.

A memory is validated before any write (`validate_memory`); a row reads
back as a `MemoryItem` (`row_to_item`). Inserts keep one active memory per
text and scope: a twin returns the existing row instead of a new one. They
are plain sqlite3 functions run on the writer's own thread
(`transactions.on_writer`): an add is analysed, written, committed and read
back in one hand-off instead of one a statement, and its term analysis is
off the event loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import functools
import logging
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
from ..sql import IDS, chunks, placeholders, rows_in, storable_ids
from ..text import clean_content, content_key, is_blank, normalize_tag
from ..transactions import immediate

_LOGGER = logging.getLogger(__name__)

_ITEM_NAMES: Final = (
    "id",
    "scope",
    "type",
    "content",
    "tags",
    "status",
    "superseded_by",
    "valid_from",
    "valid_to",
    "expires_at",
    "created_at",
    "updated_at",
    "last_recalled_at",
    "recall_count",
    "origin",
    "conversation_id",
    "agent_id",
    "device_id",
    "user_id",
    "topic",
    "confidence",
    "message_id",
    "language",
)
ITEM_COLUMNS: Final = ", ".join(f"m.{name}" for name in _ITEM_NAMES)
# The same columns in an INSERT's RETURNING (which takes no table alias).
_RETURNED: Final = ", ".join(_ITEM_NAMES)

# An expired twin no longer counts: archive it (as expire_due would) so it
# cannot swallow the new memory and then be archived with it.
_ARCHIVE_EXPIRED_TWIN: Final = (
    "UPDATE memories SET status = 'archived', updated_at = ?, "
    "valid_to = coalesce(valid_to, expires_at) WHERE scope = ? "
    "AND content_key = ? AND status = 'active' AND expires_at <= ?"
)
INSERT_COLUMNS: Final = (
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
    """Values of `INSERT_COLUMNS` for a validated memory.

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
    terms = index_terms(content, language)
    words = " ".join(tag.replace("_", " ") for tag in tags)
    if not words:
        return terms
    return " ".join(part for part in (terms, index_terms(words, language)) if part)


# Rows written together share their times: each is converted once.
_time = functools.lru_cache(maxsize=1024)(from_timestamp)


_TYPES: Final = {member.value: member for member in MemoryType}
_STATUSES: Final = {member.value: member for member in MemoryStatus}
_ORIGINS: Final = {member.value: member for member in Origin}
_ITEM_WIDTH: Final = len(_ITEM_NAMES)


def row_to_item(row: sqlite3.Row | tuple[Any, ...]) -> MemoryItem:
    """Map a row that begins with `ITEM_COLUMNS` to its memory.

    Read by position (in `_ITEM_NAMES`' order; a name is a scan of the
    row's columns); the enums through dicts of their values.
    """
    (
        item_id,
        scope,
        kind,
        content,
        tags,
        status,
        superseded_by,
        valid_from,
        valid_to,
        expires_at,
        created_at,
        updated_at,
        last_recalled_at,
        recall_count,
        origin,
        conversation_id,
        agent_id,
        device_id,
        user_id,
        topic,
        confidence,
        message_id,
        language,
    ) = row[:_ITEM_WIDTH]
    created = _time(created_at)
    updated = _time(updated_at)
    assert created is not None  # noqa: S101 - NOT NULL columns
    assert updated is not None  # noqa: S101
    return MemoryItem(
        id=item_id,
        scope=scope,
        type=_TYPES.get(kind) or MemoryType(kind),
        content=content,
        tags=tuple(tags.split()),
        status=_STATUSES.get(status) or MemoryStatus(status),
        superseded_by=superseded_by,
        valid_from=_time(valid_from),
        valid_to=_time(valid_to),
        expires_at=_time(expires_at),
        created_at=created,
        updated_at=updated,
        last_recalled_at=_time(last_recalled_at),
        recall_count=recall_count,
        source=Source(
            origin=_ORIGINS.get(origin) or Origin(origin),
            conversation_id=conversation_id,
            agent_id=agent_id,
            device_id=device_id,
            user_id=user_id,
        ),
        topic=topic,
        confidence=confidence,
        message_id=message_id,
        language=language,
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


type Prepared = tuple[NewMemory, str, tuple[str, ...]]
"""A validated memory (its language set), its cleaned content and its tags."""


def write_memories(
    conn: sqlite3.Connection,
    prepared: Sequence[Prepared],
    now: float,
    *,
    commit: bool,
) -> list[tuple[MemoryItem, bool]]:
    """On the writer's thread: insert memories; return `(item, created)` each.

    The terms are analysed first, outside the transaction (and off the
    event loop); then `BEGIN IMMEDIATE`, the inserts with their duplicate
    checks (`insert_many`) and, with `commit`, `COMMIT`. Without it the
    transaction stays open for the caller's further statements (vectors)
    and its `COMMIT`. On any error it is rolled back before the error goes
    on.
    """
    keys = [
        memory_key(content, memory.type, memory.source.conversation_id)
        for memory, content, _tags in prepared
    ]
    rows = [
        insert_row(memory, content, tags, key, now)
        for (memory, content, tags), key in zip(prepared, keys, strict=True)
    ]
    with immediate(conn, commit=commit):
        return insert_many(conn, prepared, keys, rows, now)


def insert_many(
    conn: sqlite3.Connection,
    prepared: Sequence[Prepared],
    keys: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    now: float,
) -> list[tuple[MemoryItem, bool]]:
    """Insert analysed memories in the open transaction; `(item, created)` each.

    A few statements for the whole batch: expired twins archived, the rows
    inserted with one multi-row INSERT per chunk (which returns them as
    stored), twins read, tags written. A batch that repeats a text in one
    scope goes row by row, so that its first copy is the one kept, as with
    `add`.
    """
    pairs = [
        (memory.scope, key)
        for (memory, _content, _tags), key in zip(prepared, keys, strict=True)
    ]
    if len(set(pairs)) < len(pairs):
        return [
            insert_memory(conn, pair, row, tags)
            for pair, row, (_memory, _content, tags) in zip(
                pairs, rows, prepared, strict=True
            )
        ]
    conn.executemany(_ARCHIVE_EXPIRED_TWIN, [(now, *pair, now) for pair in pairs])
    created: dict[tuple[str, str], MemoryItem] = {}
    for chunk in chunks(rows, _INSERT_CHUNK):
        values = ", ".join(["(" + placeholders(len(INSERT_COLUMNS)) + ")"] * len(chunk))
        cursor = conn.execute(
            f"INSERT INTO memories ({', '.join(INSERT_COLUMNS)}) VALUES {values} "
            "ON CONFLICT (scope, content_key) WHERE status = 'active' DO NOTHING "
            f"RETURNING {_RETURNED}, content_key",
            [value for row in chunk for value in row],
        )
        created.update(
            ((row[1], row[_ITEM_WIDTH]), row_to_item(row)) for row in cursor.fetchall()
        )
    twins = sorted(
        {key for pair, key in zip(pairs, keys, strict=True) if pair not in created}
    )
    existing: dict[tuple[str, str], MemoryItem] = {}
    for keys_chunk in chunks(twins):
        cursor = conn.execute(
            f"SELECT {ITEM_COLUMNS}, m.content_key FROM memories m "
            "WHERE m.status = 'active' "
            f"AND m.content_key IN ({placeholders(len(keys_chunk))})",
            keys_chunk,
        )
        existing.update(
            ((row[1], row[_ITEM_WIDTH]), row_to_item(row)) for row in cursor.fetchall()
        )
    tag_rows = [
        (created[pair].id, tag)
        for (_memory, _content, tags), pair in zip(prepared, pairs, strict=True)
        if pair in created
        for tag in tags
    ]
    if tag_rows:
        conn.executemany(
            "INSERT INTO memory_tags (memory_id, tag) VALUES (?, ?)", tag_rows
        )
    # The conflict proves the twin exists.
    return [
        (created[pair], True) if pair in created else (existing[pair], False)
        for pair in pairs
    ]


def insert_memory(
    conn: sqlite3.Connection,
    pair: tuple[str, str],
    row: tuple[Any, ...],
    tags: tuple[str, ...],
) -> tuple[MemoryItem, bool]:
    """Insert one analysed memory (`insert_row`'s values) of `(scope, key)`.

    In the open transaction; returns `(item, created)`, its active twin's
    item if one was there.
    """
    now = row[INSERT_COLUMNS.index("created_at")]
    # An expired twin no longer counts: archive it (as expire_due would)
    # so it cannot swallow the new memory and then be archived with it.
    conn.execute(_ARCHIVE_EXPIRED_TWIN, (now, *pair, now))
    found = conn.execute(
        f"INSERT INTO memories ({', '.join(INSERT_COLUMNS)}) "
        f"VALUES ({placeholders(len(INSERT_COLUMNS))}) "
        "ON CONFLICT (scope, content_key) WHERE status = 'active' DO NOTHING "
        f"RETURNING {_RETURNED}",
        row,
    ).fetchall()
    if found:
        item = row_to_item(found[0])
        if tags:
            conn.executemany(
                "INSERT INTO memory_tags (memory_id, tag) VALUES (?, ?)",
                [(item.id, tag) for tag in tags],
            )
        return item, True
    twin = conn.execute(
        f"SELECT {ITEM_COLUMNS} FROM memories m WHERE m.scope = ? "
        "AND m.content_key = ? AND m.status = 'active'",
        pair,
    ).fetchall()
    assert twin  # noqa: S101 - the conflict proves it exists
    return row_to_item(twin[0]), False


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
