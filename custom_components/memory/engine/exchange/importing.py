"""Import memories from another tool: a preview first, then all or nothing.

`preview_import` tells what `run_import` would do, by the same rules as
`memory.add`: an entry whose text an active memory of its scope already
has (or an earlier entry of the file) is a duplicate and is not stored; one
that says nearly the same as an active memory (`near_duplicates`: the
keyword overlap digestion merges at, and no conflicting number, negation or
name) supersedes it; the others are new. Entries the source had replaced or
archived come along as history, linked to their replacement.

`run_import` plans again inside one write transaction (what was previewed
may have changed) and writes everything in it, so a failure stores nothing.
Rows keep their original times and get origin `import`, the source's name
in `agent_id` (`import:mem0`) and the importing user in `user_id`. The
search terms are made in a worker thread; the embedding queue picks the new
rows up in the background, so keyword search finds them at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
import time
from typing import Any, Final

import aiosqlite

from ..errors import InvalidInputError
from ..languages import ANALYSIS_VERSION, language_code
from ..memory_store import MemoryStore
from ..models import MemoryStatus, MemoryType, NewMemory, Origin, Source, to_timestamp
from ..privacy import has_secret
from ..sql import IDS, rows_in
from ..store import memory_key, memory_terms, validate_memory
from .import_entries import ImportEntry, ImportEntryError, ImportFile
from .import_similar import near_duplicate_pairs

# Rows a progress report stands for.
PROGRESS_STEP: Final = 5000
_COLUMNS: Final = (
    "scope, type, content, content_key, tags, status, valid_from, valid_to, "
    "expires_at, created_at, updated_at, last_recalled_at, recall_count, origin, "
    "agent_id, user_id, topic, confidence, language, terms, analysed"
)
_NOT_NEAR: Final = frozenset({MemoryType.SUMMARY, MemoryType.PROFILE})

type Progress = Callable[[int, int], None]


@dataclass(slots=True)
class _Row:
    """One entry as it would be stored."""

    entry: ImportEntry
    scope: str
    content: str
    tags: tuple[str, ...]
    key: str
    status: MemoryStatus
    action: str = "new"  # new, duplicate, supersede, history
    twin: int | None = None  # the existing memory (duplicate) or the one replaced
    first: int | None = None  # the earlier entry of the file with the same text


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportPlan:
    """What an import does: counts by kind and by scope (never any text)."""

    format: str
    total: int
    new: int
    duplicates: int
    supersedes: int
    history: int
    # Entries holding a code, PIN or password: counted by the preview only
    # (the detector takes 0.1 ms a text), None after an import.
    secrets: int | None
    by_scope: dict[str, int] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Serialise for the action's and the panel's preview."""
        return {
            "format": self.format,
            "total": self.total,
            "new": self.new,
            "duplicates": self.duplicates,
            "supersedes": self.supersedes,
            "history": self.history,
            "secrets": self.secrets,
            "by_scope": dict(self.by_scope),
            "owners": dict(self.owners),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportResult:
    """What an import did: its plan, the ids it stored and those it superseded."""

    plan: ImportPlan
    ids: tuple[int, ...]
    superseded: tuple[int, ...]


def _prepare(
    file: ImportFile, scopes: Mapping[str, str], language: str, now: float
) -> list[_Row]:
    """Validate every entry (CPU only); the first bad one raises, naming itself."""
    rows: list[_Row] = []
    for entry in file.entries:
        memory = NewMemory(
            content=entry.content,
            source=Source(origin=Origin.IMPORT),
            type=entry.type,
            scope=scopes[entry.owner],
            tags=entry.tags,
        )
        try:
            content, tags = validate_memory(memory)
        except InvalidInputError as err:
            raise ImportEntryError(
                f"{entry.where}: {err}", where=entry.where, error=str(err)
            ) from err
        status = entry.status
        expires = to_timestamp(entry.expires_at)
        if status is MemoryStatus.ACTIVE and expires is not None and expires <= now:
            status = MemoryStatus.ARCHIVED
        rows.append(
            _Row(
                entry=entry,
                scope=memory.scope,
                content=content,
                tags=tags,
                key=memory_key(content, entry.type, None),
                status=status,
                action="new" if status is MemoryStatus.ACTIVE else "history",
            )
        )
    return rows


async def _classify(
    conn: aiosqlite.Connection, rows: list[_Row], now: float, language: str
) -> None:
    """Mark duplicates (of the store or of the file) and near duplicates.

    Each text is compared in its own language (`language`: the store's
    default, for entries and rows without one).
    """
    seen: dict[tuple[str, str], int] = {}
    for index, row in enumerate(rows):
        if row.action != "new":
            continue
        pair = (row.scope, row.key)
        if pair in seen:
            row.action, row.first = "duplicate", seen[pair]
        else:
            seen[pair] = index
    existing = await rows_in(
        conn,
        "SELECT id, scope, content_key FROM memories WHERE status = 'active' "  # noqa: S608
        f"AND content_key IN ({IDS}) AND (expires_at IS NULL OR expires_at > ?)",
        sorted({key for _scope, key in seen}),
        after=[now],
    )
    twins = {(row[1], row[2]): int(row[0]) for row in existing}
    for pair, index in seen.items():
        if pair in twins:
            rows[index].action, rows[index].twin = "duplicate", twins[pair]
    candidates = [
        row for row in rows if row.action == "new" and row.entry.type not in _NOT_NEAR
    ]
    if not candidates:
        return
    scopes = sorted({row.scope for row in candidates})
    stored = await rows_in(
        conn,
        "SELECT id, scope, content, language FROM memories INDEXED BY memories_scope "  # noqa: S608
        f"WHERE status = 'active' AND scope IN ({IDS}) "
        "AND type NOT IN ('summary', 'profile') "
        "AND (expires_at IS NULL OR expires_at > ?)",
        scopes,
        after=[now],
    )
    if not stored:
        return
    pairs = await asyncio.to_thread(
        near_duplicate_pairs,
        [
            (row.scope, row.content, language_code(row.entry.language, language))
            for row in candidates
        ],
        [
            (int(row[0]), str(row[1]), str(row[2]), str(row[3] or language))
            for row in stored
        ],
    )
    for index, item_id in pairs.items():
        candidates[index].action, candidates[index].twin = "supersede", item_id


def _plan(
    file: ImportFile,
    scopes: Mapping[str, str],
    rows: list[_Row],
    *,
    secrets: bool = True,
) -> ImportPlan:
    counts = {"new": 0, "duplicate": 0, "supersede": 0, "history": 0}
    by_scope: dict[str, int] = {}
    for row in rows:
        counts[row.action] += 1
        if row.action != "duplicate":
            by_scope[row.scope] = by_scope.get(row.scope, 0) + 1
    return ImportPlan(
        format=str(file.format),
        total=len(rows),
        new=counts["new"],
        duplicates=counts["duplicate"],
        supersedes=counts["supersede"],
        history=counts["history"],
        secrets=sum(has_secret(row.content) for row in rows) if secrets else None,
        by_scope=by_scope,
        owners={owner: scopes[owner] for owner in file.owners},
    )


def _check_owners(file: ImportFile, scopes: Mapping[str, str]) -> None:
    missing = [owner for owner in file.owners if owner not in scopes]
    if missing:
        raise InvalidInputError(f"no scope for {len(missing)} owners")


async def preview_import(
    store: MemoryStore,
    file: ImportFile,
    scopes: Mapping[str, str],
    *,
    now: float | None = None,
) -> ImportPlan:
    """Tell what `run_import` would do; `scopes` maps each owner to its scope."""
    _check_owners(file, scopes)
    moment = time.time() if now is None else now
    rows = await asyncio.to_thread(_prepare, file, scopes, store.language, moment)
    await _classify(store.reader, rows, moment, store.language)
    return await asyncio.to_thread(_plan, file, scopes, rows)


def _values(
    rows: Sequence[_Row], language: str, source: Source, now: float
) -> list[tuple[Any, ...]]:
    """Make the INSERT's values of the rows to store, search terms included."""
    values: list[tuple[Any, ...]] = []
    for row in rows:
        entry = row.entry
        created = to_timestamp(entry.created_at) or now
        valid_to = to_timestamp(entry.valid_to)
        if row.status is not MemoryStatus.ACTIVE and valid_to is None:
            valid_to = to_timestamp(entry.expires_at) or to_timestamp(entry.updated_at)
        code = language_code(entry.language, language)
        values.append(
            (
                row.scope,
                str(entry.type),
                row.content,
                row.key,
                " ".join(row.tags),
                str(row.status),
                to_timestamp(entry.valid_from) or created,
                valid_to,
                to_timestamp(entry.expires_at),
                created,
                to_timestamp(entry.updated_at) or created,
                to_timestamp(entry.last_recalled_at),
                entry.recall_count,
                str(Origin.IMPORT),
                source.agent_id,
                source.user_id,
                entry.topic,
                entry.confidence,
                code,
                memory_terms(row.content, row.tags, code),
                ANALYSIS_VERSION,
            )
        )
    return values


async def run_import(
    store: MemoryStore,
    file: ImportFile,
    scopes: Mapping[str, str],
    *,
    source_name: str,
    user_id: str | None = None,
    now: float | None = None,
    progress: Progress | None = None,
) -> ImportResult:
    """Import every entry in one transaction, as `preview_import` describes."""
    _check_owners(file, scopes)
    moment = time.time() if now is None else now
    language = store.language
    rows = await asyncio.to_thread(_prepare, file, scopes, language, moment)
    source = Source(origin=Origin.IMPORT, agent_id=source_name, user_id=user_id)
    async with store.transaction() as conn:
        await _classify(conn, rows, moment, language)
        plan = _plan(file, scopes, rows, secrets=False)
        stored = [row for row in rows if row.action != "duplicate"]
        ids = await _insert(conn, stored, language, source, moment, progress)
        superseded = await _link(conn, rows, stored, ids, moment)
    return ImportResult(plan=plan, ids=tuple(ids), superseded=tuple(superseded))


async def _insert(
    conn: aiosqlite.Connection,
    stored: list[_Row],
    language: str,
    source: Source,
    now: float,
    progress: Progress | None,
) -> list[int]:
    """Insert the rows and their tags; return their ids, in order."""
    # Expired twins no longer count (as `memory.add` treats them).
    await conn.executemany(
        "UPDATE memories SET status = 'archived', updated_at = ?, "
        "valid_to = coalesce(valid_to, expires_at) WHERE scope = ? "
        "AND content_key = ? AND status = 'active' AND expires_at <= ?",
        [
            (now, row.scope, row.key, now)
            for row in stored
            if row.status is MemoryStatus.ACTIVE
        ],
    )
    ids: list[int] = []
    marks = ", ".join("?" * (_COLUMNS.count(",") + 1))
    for start in range(0, len(stored), PROGRESS_STEP):
        chunk = stored[start : start + PROGRESS_STEP]
        values = await asyncio.to_thread(_values, chunk, language, source, now)
        before = await _sequence(conn)
        await conn.executemany(
            f"INSERT INTO memories ({_COLUMNS}) VALUES ({marks})",  # noqa: S608
            values,
        )
        after = await _sequence(conn)
        # AUTOINCREMENT under the write lock: the chunk's ids are consecutive.
        assert after - before == len(chunk)  # noqa: S101
        ids.extend(range(before + 1, after + 1))
        if progress is not None:
            progress(start + len(chunk), len(stored))
    await conn.executemany(
        "INSERT INTO memory_tags (memory_id, tag) VALUES (?, ?)",
        [
            (item_id, tag)
            for row, item_id in zip(stored, ids, strict=True)
            for tag in row.tags
        ],
    )
    return ids


async def _sequence(conn: aiosqlite.Connection) -> int:
    rows = await conn.execute_fetchall(
        "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0)"
    )
    return int(next(iter(rows))[0])


def _stored_as(row: _Row, rows: list[_Row], new_id: Mapping[int, int]) -> int:
    """Return the id an entry ends up as: its own row's, or its twin's."""
    if row.first is not None:
        row = rows[row.first]
    if row.action == "duplicate":
        assert row.twin is not None  # noqa: S101 - a store twin has its id
        return row.twin
    return new_id[id(row)]


async def _link(
    conn: aiosqlite.Connection,
    rows: list[_Row],
    stored: list[_Row],
    ids: list[int],
    now: float,
) -> list[int]:
    """Link the history to its replacements; supersede the near duplicates."""
    new_id = {id(row): item_id for row, item_id in zip(stored, ids, strict=True)}
    by_key: dict[str, int] = {}
    for row in rows:
        if row.entry.key is None:
            continue
        by_key.setdefault(row.entry.key, _stored_as(row, rows, new_id))
    links = [
        (by_key[row.entry.superseded_by], new_id[id(row)])
        for row in stored
        if row.entry.superseded_by is not None and row.entry.superseded_by in by_key
    ]
    await conn.executemany("UPDATE memories SET superseded_by = ? WHERE id = ?", links)
    replaced = {
        row.twin: new_id[id(row)]
        for row in stored
        if row.action == "supersede" and row.twin is not None
    }
    await conn.executemany(
        "UPDATE memories SET status = 'superseded', superseded_by = ?, "
        "valid_to = ?, updated_at = ? WHERE id = ? AND status = 'active'",
        [(new, now, now, old) for old, new in replaced.items()],
    )
    return list(replaced)
