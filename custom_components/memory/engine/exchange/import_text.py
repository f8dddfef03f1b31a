"""Text formats of an import: a list of lines, Markdown, and CSV with a header.

- Lines: what ChatGPT and Claude show under their saved memories, one a
  line (a leading bullet or number is dropped).
- Markdown: our own `MEMORY.md` export (`## person`, `### Facts`, and
  `- text (#12, 2026-03-14; tags: a, b; until 2026-06-01)`) and a seed-style
  `MEMORY.md` an agent kept: a bullet or a paragraph line is a memory; a
  heading that names a type sets it, any other heading becomes a tag.
- CSV: a header with `content` (or `memory`, `text`); `type`, `tags`,
  `person` (or `user`, `owner`, `scope`) and `date` (or `created_at`) are
  read when present. Comma, semicolon or tab separated.
"""

from __future__ import annotations

import csv
from datetime import tzinfo
import re
from typing import Final

from ..models import MemoryType
from ..text import normalize_tag
from .import_entries import (
    ImportColumnError,
    ImportEntry,
    ImportFileError,
    check_count,
    memory_type,
    moment,
    tag_list,
)
from .markdown import TYPE_HEADINGS

_BULLET: Final = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_HEADING: Final = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# The details our export writes after a memory (escaped `#`, the date, tags,
# the expiry).
_DETAILS: Final = re.compile(
    r"\s\(\\#(?P<id>\d+), (?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:; tags: (?P<tags>[^;()]*))?(?:; until (?P<until>\d{4}-\d{2}-\d{2}))?\)$"
)
_EXPORT_HEAD: Final = re.compile(r"^Active memories exported .*: \d+\.$")
_UNESCAPE: Final = re.compile(r"\\([\\`*_\[\]!|~#+\-=.)])")
_ENTITIES: Final = {"&lt;": "<", "&gt;": ">", "&amp;": "&"}
_HEADING_TYPES: Final = {
    heading.casefold(): kind for kind, heading in TYPE_HEADINGS.items()
} | {str(kind): kind for kind in MemoryType}
_CONTENT: Final = ("content", "memory", "text")
_OWNER: Final = ("person", "user", "user_id", "owner", "scope")
_DATE: Final = ("date", "created_at", "created")


def unescape_markdown(text: str) -> str:
    """Undo `markdown.escape_markdown`: backslash escapes and the three entities."""
    text = _UNESCAPE.sub(r"\1", text)
    for entity, char in _ENTITIES.items():
        text = text.replace(entity, char)
    return text


def parse_lines(text: str) -> list[ImportEntry]:
    """One memory a non-empty line; bullets and numbers in front are dropped."""
    entries = [
        ImportEntry(where=f"line {number}", content=_BULLET.sub("", line).strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]
    check_count(len(entries))
    return entries


def parse_markdown(text: str, timezone: tzinfo) -> list[ImportEntry]:
    """Read our MEMORY.md export or a seed-style one (see the module's docstring)."""
    lines = text.splitlines()
    ours = bool(lines) and lines[0].strip() == "# Memory"
    entries: list[ImportEntry] = []
    owner = ""
    kind = MemoryType.FACT
    tags: dict[int, str] = {}
    last: tuple[int, list[str]] | None = None

    def flush() -> None:
        if last is None:
            return
        number, parts = last
        entries.append(
            _markdown_entry(
                f"line {number}",
                " ".join(parts),
                owner=owner,
                kind=kind,
                tags=tuple(tags.values()),
                ours=ours,
                timezone=timezone,
            )
        )

    for number, line in enumerate(lines, start=1):
        heading = _HEADING.match(line)
        if heading is not None:
            flush()
            last = None
            level, title = len(heading.group(1)), unescape_markdown(heading.group(2))
            if ours and level == 2:
                owner, kind = title, MemoryType.FACT
                continue
            tags = {key: tag for key, tag in tags.items() if key < level}
            if title.casefold() in _HEADING_TYPES:
                kind = _HEADING_TYPES[title.casefold()]
            elif not ours and (tag := normalize_tag(title[:40])) is not None:
                tags[level] = tag
            continue
        if not line.strip() or (ours and _EXPORT_HEAD.match(line.strip())):
            flush()
            last = None
            continue
        if _BULLET.match(line) or last is None or not line.startswith((" ", "\t")):
            flush()
            last = (number, [_BULLET.sub("", line).strip()])
        else:
            last[1].append(line.strip())
    flush()
    check_count(len(entries))
    return entries


def _markdown_entry(
    where: str,
    text: str,
    *,
    owner: str,
    kind: MemoryType,
    tags: tuple[str, ...],
    ours: bool,
    timezone: tzinfo,
) -> ImportEntry:
    created = expires = None
    details = _DETAILS.search(text) if ours else None
    if details is not None:
        text = text[: details.start()]
        created = moment(details["date"], where, timezone)
        expires = moment(details["until"], where, timezone)
        tags = tag_list(unescape_markdown(details["tags"] or ""))
    return ImportEntry(
        where=where,
        content=unescape_markdown(text) if ours else text,
        owner=owner,
        type=kind,
        tags=tags,
        created_at=created,
        expires_at=expires,
    )


def parse_csv(text: str, timezone: tzinfo) -> list[ImportEntry]:
    """Read CSV with a header; `content` is required (see the module's docstring)."""
    lines = text.splitlines()
    first = lines[0] if lines else ""
    delimiter = max(",;\t", key=first.count)
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    try:
        header = [cell.strip().casefold() for cell in next(reader, [])]
        column = {name: index for index, name in enumerate(header)}
        content = next((column[name] for name in _CONTENT if name in column), None)
        if content is None:
            raise ImportColumnError(
                "no content column", columns=", ".join(header)[:200] or "-"
            )
        owner = next((column[name] for name in _OWNER if name in column), None)
        date = next((column[name] for name in _DATE if name in column), None)
        kind, tags = column.get("type"), column.get("tags")
        entries: list[ImportEntry] = []
        for row in reader:
            where = f"line {reader.line_num}"
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise ImportFileError(
                    f"{where}: {len(row)} cells",
                    where=where,
                    error=f"{len(row)} cells where the header has {len(header)}",
                )
            entries.append(
                ImportEntry(
                    where=where,
                    content=row[content],
                    owner="" if owner is None else row[owner].strip(),
                    type=memory_type(None if kind is None else row[kind], where),
                    tags=() if tags is None else tag_list(row[tags]),
                    created_at=None
                    if date is None
                    else moment(row[date], where, timezone),
                )
            )
            check_count(len(entries))
    except csv.Error as err:
        where = f"line {reader.line_num}"
        raise ImportFileError(f"{where}: {err}", where=where, error=str(err)) from err
    return entries


def looks_like_csv(text: str) -> bool:
    """Tell CSV from prose: a header of short names, a second line as wide."""
    lines = [line for line in text.splitlines()[:2] if line.strip()]
    if len(lines) < 2:
        return False
    delimiter = max(",;\t", key=lines[0].count)
    try:
        rows = list(csv.reader(lines, delimiter=delimiter))
    except csv.Error:
        return False
    header = rows[0]
    return (
        len(header) >= 2
        and len(rows[1]) == len(header)
        and all(re.fullmatch(r"\s*\w{1,30}\s*", cell) for cell in header)
    )
