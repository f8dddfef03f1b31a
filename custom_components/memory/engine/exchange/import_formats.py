"""Read a file to import: its format detected from the content, then its entries.

JSON formats are read here; the text formats in `import_text.py`.

- `assist_memory`: our lossless export (`memories.json` of `memory.export`,
  `export_json.py`): every field, the supersede history included.
- `mem0`: a mem0 `get_all` answer (`{"results": [...]}`) or an OpenMemory
  export (`{"memories": [...]}`), or a bare list of such entries: `memory`
  (or `content`), `user_id` (or `agent_id`), `created_at`, `updated_at`,
  `categories` and `metadata` (its `type` and `tags` when present).
- `home_agent`: the `.storage/home_agent.memories` file of Home Agent
  (aradlein/hass-agent-llm): a Home Assistant store whose `data.memories`
  maps ids to `content`, `type`, `extracted_at` and `expires_at` (epoch
  seconds) and `metadata.topics`.
- `ha_ai_memory`: the SQLite database of AI Long Term Memory
  (Riscue/ha-ai-memory): `memories(id, content, scope, agent_id,
  created_at, ...)`; `common` rows are the household's, `private` ones the
  agent's (owner `private:<agent_id>`); a `wing`/`room` other than
  `general` becomes a tag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import closing
from datetime import tzinfo
import json
import re
import sqlite3
from typing import Any, Final

from ..models import MemoryStatus
from .import_entries import (
    MAX_IMPORT_BYTES,
    ImportEmptyError,
    ImportEncodingError,
    ImportEntry,
    ImportEntryError,
    ImportFile,
    ImportFileError,
    ImportFormat,
    ImportTooLargeError,
    check_count,
    memory_type,
    moment,
    tag_list,
)
from .import_text import looks_like_csv, parse_csv, parse_lines, parse_markdown

SQLITE_MAGIC: Final = b"SQLite format 3\x00"
EXPORT_FORMAT: Final = "assist-memory"
_HEADING: Final = re.compile(r"^#{1,6}\s")
_MEM0_STATES: Final = {
    "active": MemoryStatus.ACTIVE,
    "paused": MemoryStatus.ARCHIVED,
    "archived": MemoryStatus.ARCHIVED,
}


def read_import(
    data: bytes,
    *,
    timezone: tzinfo,
    format: ImportFormat | None = None,  # noqa: A002 - the action's field
) -> ImportFile:
    """Parse a file; `format` overrides detection. Raises `ImportFileError`."""
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportTooLargeError(
            f"{len(data)} bytes, the limit is {MAX_IMPORT_BYTES}",
            size=f"{len(data) / 1_048_576:.1f} MB",
            limit=f"{MAX_IMPORT_BYTES // 1_048_576} MB",
        )
    if format is ImportFormat.HA_AI_MEMORY or (
        format is None and data.startswith(SQLITE_MAGIC)
    ):
        entries = _ha_ai_memory(data, timezone)
        chosen = ImportFormat.HA_AI_MEMORY
    else:
        text = decode(data)
        chosen = format or detect(text)
        entries = _PARSERS[chosen](text, timezone)
    if not entries:
        raise ImportEmptyError("no memory in the file")
    return ImportFile(format=chosen, entries=tuple(entries))


def decode(data: bytes) -> str:
    """UTF-8 (a byte order mark dropped), or UTF-16 with its byte order mark."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        codec, body = "utf-16", data
    else:
        codec, body = "utf-8", data.removeprefix(b"\xef\xbb\xbf")
    try:
        return body.decode(codec)
    except UnicodeDecodeError as err:
        line = body[: err.start].count(b"\n") + 1
        raise ImportEncodingError(
            f"not {codec} text at line {line}", where=f"line {line}"
        ) from err


def detect(text: str) -> ImportFormat:
    """Tell the format of a text from its content."""
    start = text.lstrip()
    if start.startswith(("{", "[")):
        document = _json(text)
        if isinstance(document, dict):
            if document.get("format") == EXPORT_FORMAT:
                return ImportFormat.ASSIST_MEMORY
            if (
                isinstance(document.get("data"), dict)
                and "memories" in document["data"]
            ):
                return ImportFormat.HOME_AGENT
        return ImportFormat.MEM0
    if looks_like_csv(text):
        return ImportFormat.CSV
    if any(_HEADING.match(line) for line in text.splitlines()):
        return ImportFormat.MARKDOWN
    return ImportFormat.LINES


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        where = f"line {err.lineno}"
        raise ImportFileError(
            f"{where}: {err.msg}", where=where, error=f"{err.msg} (column {err.colno})"
        ) from err
    except RecursionError as err:
        raise ImportFileError(
            "nested too deep", where="line 1", error="nested too deep"
        ) from err


def _items(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ImportFileError(
            f"{where}: not a list", where=where, error="a list was expected"
        )
    check_count(len(value))
    return value


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ImportFileError(
            f"{where}: not an object", where=where, error="an object was expected"
        )
    return value


def _text(value: Any, where: str, name: str) -> str:
    if not isinstance(value, str):
        raise ImportFileError(
            f"{where}: no {name}", where=where, error=f"`{name}` must be text"
        )
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise ImportEntryError(
        f"{where}: not a number", where=where, error=f"{str(value)[:20]!r} is no number"
    )


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)


def _assist_memory(text: str, timezone: tzinfo) -> list[ImportEntry]:
    document = _object(_json(text), "the file")
    entries: list[ImportEntry] = []
    for number, value in enumerate(_items(document.get("memories"), "memories"), 1):
        where = f"entry {number}"
        item = _object(value, where)
        status = str(item.get("status", "active"))
        if status not in set(MemoryStatus):
            raise ImportFileError(
                f"{where}: status", where=where, error=f"unknown status {status[:20]!r}"
            )
        confidence = item.get("confidence")
        entries.append(
            ImportEntry(
                where=where,
                content=_text(item.get("content"), where, "content"),
                owner=str(item.get("scope") or ""),
                type=memory_type(item.get("type"), where),
                tags=tag_list(item.get("tags")),
                status=MemoryStatus(status),
                created_at=moment(item.get("created_at"), where, timezone),
                updated_at=moment(item.get("updated_at"), where, timezone),
                valid_from=moment(item.get("valid_from"), where, timezone),
                valid_to=moment(item.get("valid_to"), where, timezone),
                expires_at=moment(item.get("expires_at"), where, timezone),
                last_recalled_at=moment(item.get("last_recalled_at"), where, timezone),
                recall_count=int(_number(item.get("recall_count") or 0, where)),
                key=_optional(item.get("id")),
                superseded_by=_optional(item.get("superseded_by")),
                topic=str(item.get("topic") or ""),
                confidence=None if confidence is None else _number(confidence, where),
                language=_optional(item.get("language")) or None,
            )
        )
    return entries


def _mem0(text: str, timezone: tzinfo) -> list[ImportEntry]:
    document = _json(text)
    if isinstance(document, dict):
        document = document.get("results", document.get("memories"))
    entries: list[ImportEntry] = []
    for number, value in enumerate(_items(document, "the file"), 1):
        where = f"entry {number}"
        item = _object(value, where)
        state = str(item.get("state") or "active").casefold()
        if state == "deleted":
            continue
        metadata = item.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        categories = item.get("categories") or metadata.get("categories")
        entries.append(
            ImportEntry(
                where=where,
                content=_text(
                    item.get("memory", item.get("content", item.get("text"))),
                    where,
                    "memory",
                ),
                owner=str(item.get("user_id") or item.get("agent_id") or ""),
                type=memory_type(metadata.get("type"), where),
                tags=(*tag_list(categories), *tag_list(metadata.get("tags"))),
                status=_MEM0_STATES.get(state, MemoryStatus.ACTIVE),
                created_at=moment(item.get("created_at"), where, timezone),
                updated_at=moment(item.get("updated_at"), where, timezone),
                key=_optional(item.get("id")),
            )
        )
    return entries


def _home_agent(text: str, timezone: tzinfo) -> list[ImportEntry]:
    document = _object(_json(text), "the file")
    memories = _object(_object(document.get("data"), "data").get("memories"), "data")
    check_count(len(memories))
    entries: list[ImportEntry] = []
    for number, (key, value) in enumerate(memories.items(), 1):
        where = f"entry {number}"
        item = _object(value, where)
        metadata = item.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        entries.append(
            ImportEntry(
                where=where,
                content=_text(item.get("content"), where, "content"),
                type=memory_type(item.get("type"), where),
                tags=tag_list(metadata.get("topics")),
                created_at=moment(item.get("extracted_at"), where, timezone),
                expires_at=moment(item.get("expires_at"), where, timezone),
                key=str(key),
            )
        )
    return entries


def _ha_ai_memory(data: bytes, timezone: tzinfo) -> list[ImportEntry]:
    try:
        with closing(sqlite3.connect(":memory:")) as conn:
            conn.deserialize(data)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
            wanted = ["id", "content", "scope", "agent_id", "created_at"]
            wanted += [name for name in ("wing", "room") if name in columns]
            rows = conn.execute(
                f"SELECT {', '.join(wanted)} FROM memories "  # noqa: S608
                "ORDER BY created_at, rowid"
            ).fetchall()
    except sqlite3.Error as err:
        raise ImportFileError(
            f"not an AI Long Term Memory database: {err}",
            where="the file",
            error=f"not an AI Long Term Memory database ({err})",
        ) from err
    check_count(len(rows))
    entries: list[ImportEntry] = []
    for number, row in enumerate(rows, 1):
        where = f"row {number}"
        values = dict(zip(wanted, row, strict=True))
        private = values["scope"] == "private"
        places = (values.get("wing"), values.get("room"))
        entries.append(
            ImportEntry(
                where=where,
                content=_text(values["content"], where, "content"),
                owner=f"private:{values['agent_id']}" if private else "common",
                tags=tuple(str(p) for p in places if p and p != "general"),
                created_at=moment(values["created_at"], where, timezone),
                key=_optional(values["id"]),
            )
        )
    return entries


_PARSERS: Final[dict[ImportFormat, Callable[[str, tzinfo], list[ImportEntry]]]] = {
    ImportFormat.ASSIST_MEMORY: _assist_memory,
    ImportFormat.MEM0: _mem0,
    ImportFormat.HOME_AGENT: _home_agent,
    ImportFormat.MARKDOWN: parse_markdown,
    ImportFormat.CSV: parse_csv,
    ImportFormat.LINES: lambda text, _timezone: parse_lines(text),
}
