"""The database's files: their names, private modes, moving aside, removal.

Memories are private to the household: only Home Assistant's user may read
the folder and the files (SQLite gives the WAL and SHM the database's mode).
"""

from __future__ import annotations

import contextlib
from datetime import datetime
import logging
import os
from pathlib import Path
import stat
from typing import Final

_LOGGER = logging.getLogger(__name__)

FOLDER_MODE: Final = 0o700
FILE_MODE: Final = 0o600
DATABASE_SUFFIXES: Final = ("", "-wal", "-shm")
MARKER_SUFFIX: Final = ".clean"


def marker_path(path: Path) -> Path:
    """Where the clean-close marker of the database at `path` lives."""
    return Path(f"{path}{MARKER_SUFFIX}")


def _tighten(path: Path, mode: int) -> None:
    """Give `path` `mode` if it needs it; a file we may not change is left."""
    try:
        if stat.S_IMODE(path.stat().st_mode) != mode:
            path.chmod(mode)
    except OSError as err:
        _LOGGER.debug("Cannot restrict %s: %s", path, err.strerror)


def make_private(path: Path) -> None:
    """Create the database's folder and file readable by this user only.

    Existing ones are tightened; a missing database file is created empty
    (which SQLite opens as an empty database) so that it never exists with
    the umask's wider mode. Raises OSError when the folder cannot be made.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    _tighten(path.parent, FOLDER_MODE)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    for suffix in DATABASE_SUFFIXES:
        file = Path(f"{path}{suffix}")
        with contextlib.suppress(OSError):
            if stat.S_ISREG(file.stat().st_mode):
                _tighten(file, FILE_MODE)


def move_aside(path: Path, now: datetime) -> Path:
    """Move a damaged database (and its WAL and SHM) aside; never delete it.

    `memory.db` becomes `memory.db.corrupt-<date>` (with a number when that
    name is taken), its WAL and SHM the same name with their suffixes, as
    Home Assistant's recorder does with a damaged database. Returns the new
    name of the database file.
    """
    stamp = now.strftime("%Y-%m-%dT%H-%M-%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    number = 1
    while any(Path(f"{target}{suffix}").exists() for suffix in DATABASE_SUFFIXES):
        number += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{number}")
    for suffix in DATABASE_SUFFIXES:
        source = Path(f"{path}{suffix}")
        if source.exists():
            source.rename(f"{target}{suffix}")
    return target


def remove_database(path: Path) -> None:
    """Delete the database at `path` for good: with its WAL, SHM and marker.

    What the integration's removal asks for. Databases moved aside
    (`memory.db.corrupt-...`) are kept: they are evidence the user may
    still want. Missing files are fine; blocking, so run it in an executor.
    """
    for suffix in DATABASE_SUFFIXES:
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    marker_path(path).unlink(missing_ok=True)
