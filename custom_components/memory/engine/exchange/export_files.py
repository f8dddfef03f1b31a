"""The export's files on disk: where each audience's are, writing, removing.

An export folder holds `MEMORY.md`, `memories.json` (the lossless copy,
`export_json.py`) and `conversations/YYYY-MM-DD.md`; the
everything-audience's is `export/` itself, the household's `household/`
and a person's `person.anna/` (a user linked to two persons:
`person.anna+person.ben/`), so a folder's name says whose text it holds and
an erase can find every export that may hold what went.

Files are written whole through a temporary file next to them that is
removed if anything fails, so no partial copy is left behind; temporary
files a crash left (ours, or Home Assistant's `tmpXXXXXXXX` that earlier
versions used) are removed at the next write or erase, since they may hold
text erased since. Other files in the folders are left alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import contextlib
import os
from pathlib import Path
import re
from typing import Final

from ..models import HOUSEHOLD
from .export_json import JSON_FILE
from .markdown import CONVERSATIONS_FOLDER, DAY_FILE, MEMORY_FILE

TEMP_SUFFIX: Final = ".tmp"
# Ours (`MEMORY.md.tmp`), and `tempfile`'s names (Home Assistant's
# `write_utf8_file`, which wrote the export before and left its temporary
# file behind when a write failed half-way).
_TEMP_FILE: Final = re.compile(
    rf"^(?:(?:{re.escape(MEMORY_FILE)}|{re.escape(JSON_FILE)}"
    rf"|\d{{4}}-\d{{2}}-\d{{2}}\.md)\.tmp"
    r"|tmp[a-z0-9_]{8})$"
)
# A person's entity id; several joined by `+` for a user linked to several.
_PERSONS: Final = re.compile(r"^person\.[a-z0-9_]+(?:\+person\.[a-z0-9_]+)*$")


def folder_name(persons: Sequence[str]) -> str:
    """Name the folder of an export of the household and these persons."""
    return "+".join(persons) if persons else HOUSEHOLD


def _persons_of(name: str) -> tuple[str, ...] | None:
    """Read back `folder_name` (None: not an audience's folder)."""
    if name == HOUSEHOLD:
        return ()
    if _PERSONS.match(name):
        return tuple(name.split("+"))
    return None


def _holds_export(folder: Path) -> bool:
    return (folder / MEMORY_FILE).is_file() or (folder / CONVERSATIONS_FOLDER).is_dir()


def written_exports(base: Path) -> list[tuple[tuple[str, ...] | None, Path]]:
    """Every audience's export under `base`: (persons, or None for everything).

    A folder counts once it holds `MEMORY.md` or `conversations/`; an
    audience that never exported has none, and an erase creates none.
    """
    if not base.is_dir():
        return []
    found: list[tuple[tuple[str, ...] | None, Path]] = []
    if _holds_export(base):
        found.append((None, base))
    for folder in sorted(base.iterdir()):
        persons = _persons_of(folder.name)
        if persons is not None and folder.is_dir() and _holds_export(folder):
            found.append((persons, folder))
    return found


def write_private(path: Path, text: str) -> None:
    """Write a file whole, readable by its owner only; nothing partial remains."""
    temp = path.with_name(path.name + TEMP_SUFFIX)
    temp.unlink(missing_ok=True)
    try:
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _files_of_export(folder: Path) -> list[Path]:
    """List the files an export wrote (or left half-written) in `folder`."""
    found: list[Path] = []
    for directory, pattern in (
        (folder, None),
        (folder / CONVERSATIONS_FOLDER, DAY_FILE),
    ):
        if not directory.is_dir():
            continue
        for path in directory.iterdir():
            name = path.name
            if (
                (pattern is None and name in {MEMORY_FILE, JSON_FILE})
                or (pattern is not None and pattern.match(name))
                or _TEMP_FILE.match(name)
            ) and not path.is_dir():
                found.append(path)
    return sorted(found)


def write_export(
    folder: Path,
    memory_text: str,
    days: Mapping[str, str],
    json_text: str | None = None,
) -> list[Path]:
    """Write `MEMORY.md`, `memories.json` and the day files; drop days gone.

    `days` maps file names (`2026-03-14.md`) to their text. Returns the
    paths written, `MEMORY.md` first. Without `json_text`, a `memories.json`
    left from before is removed too (it may hold what was erased since).
    """
    conversations = folder / CONVERSATIONS_FOLDER
    conversations.mkdir(parents=True, exist_ok=True)
    written = [folder / MEMORY_FILE]
    write_private(written[0], memory_text)
    if json_text is not None:
        written.append(folder / JSON_FILE)
        write_private(written[-1], json_text)
    for name, text in days.items():
        written.append(conversations / name)
        write_private(written[-1], text)
    for path in _files_of_export(folder):
        # Days erased since (retention, purge) must not live on in the
        # mirror, nor in a temporary file a crash left.
        if path.parent == conversations and path.name in days:
            continue
        if path not in written:
            path.unlink(missing_ok=True)
    return written


def remove_export(folder: Path) -> None:
    """Remove what an export wrote in `folder`, and the folders left empty."""
    for path in _files_of_export(folder):
        path.unlink(missing_ok=True)
    for directory in (folder / CONVERSATIONS_FOLDER, folder):
        # Another file still there (the user's own) keeps its folder.
        with contextlib.suppress(OSError):
            directory.rmdir()
