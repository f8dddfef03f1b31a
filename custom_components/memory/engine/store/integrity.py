"""How much of the database to check at open, and the checks themselves.

A full `PRAGMA quick_check` reads every page: seconds at 100k memories with
a cold page cache. As Home Assistant's recorder does, it runs only when the
last close was not clean, or on demand; otherwise a cheap check reads the
header and the schema. A clean close leaves a marker next to the database
with the file's size, modification time and inode: a crash (no marker), a
write by anything else, or a file put in its place (a marker that no
longer matches) all mean a full check at the next open.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
import json
from pathlib import Path
import sqlite3
import time
from typing import Literal

import aiosqlite

from .files import FILE_MODE, marker_path

type CheckKind = Literal["full", "quick"]


@dataclass(frozen=True, slots=True)
class IntegrityCheck:
    """The result of one check: never any content."""

    kind: CheckKind
    ok: bool
    at: float
    seconds: float
    problems: int


def _fingerprint(path: Path) -> dict[str, int]:
    info = path.stat()
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "inode": info.st_ino}


def closed_cleanly(path: Path) -> bool:
    """Consume the marker: True if the database is as its last clean close left it.

    The marker is removed, so that a crash before the next clean close is
    noticed. A write-ahead log left behind is a crash's evidence too.
    """
    marker = marker_path(path)
    try:
        recorded = json.loads(marker.read_text())
    except OSError, ValueError:
        recorded = None
    with contextlib.suppress(OSError):
        marker.unlink(missing_ok=True)
    if Path(f"{path}-wal").exists():
        return False
    return bool(recorded == _fingerprint(path))


def mark_clean(path: Path) -> None:
    """Record a clean close (after the last connection closed and the WAL went)."""
    if Path(f"{path}-wal").exists():
        return  # another connection still has it open: not ours to vouch for
    marker = marker_path(path)
    marker.write_text(json.dumps(_fingerprint(path)))
    marker.chmod(FILE_MODE)


async def check(
    conn: aiosqlite.Connection, kind: CheckKind, clock: float
) -> IntegrityCheck:
    """Run a full (`quick_check`, every page) or a cheap (header, schema) check.

    A cheap check of a database too damaged to be read raises
    `sqlite3.DatabaseError`; a full one reports it.
    """
    started = time.perf_counter()
    if kind == "full":
        try:
            async with conn.execute("PRAGMA quick_check") as cursor:
                rows = [tuple(row) for row in await cursor.fetchall()]
        except sqlite3.OperationalError:
            raise  # busy, unreadable: no verdict on the file
        except sqlite3.DatabaseError:
            rows = [("malformed",)]  # too damaged for the check to go on
        problems = 0 if rows == [("ok",)] else len(rows)
    else:
        # Reads page 1 (the header) and every page of the schema.
        async with conn.execute("SELECT type, name, sql FROM sqlite_master") as cursor:
            await cursor.fetchall()
        problems = 0
    return IntegrityCheck(
        kind=kind,
        ok=problems == 0,
        at=clock,
        seconds=time.perf_counter() - started,
        problems=problems,
    )
