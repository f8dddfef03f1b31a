"""Moving an entry's memories between SQLite and PostgreSQL (#26).

`async_move` runs the copy the reconfigure flow shows with progress: it
unloads the entry (so nothing writes during the copy), copies with the
engine's verified transfer (`sqlite_to_postgres` / `postgres_to_sqlite`),
switches the entry's data when the copy committed, and always loads the
entry again: on the new backend after a copy, on the old one after a
failure (the engine rolled the destination back, so it holds nothing).

The source is never changed: the SQLite file stays as it was until the user
removes it, and PostgreSQL keeps its rows. A SQLite file already in the way
of a copy back (left from before an earlier move) is renamed aside with a
timestamp, never deleted and never merged; a failed copy puts it back.
`async_target_holds_memories` tells, before anything is unloaded, whether a
PostgreSQL database already holds memories (a second Home Assistant joins a
shared memory by using them, without a copy).

URLs are only ever logged through `redact_url`; asyncpg is imported where
it is used (it is installed on demand, `backend.async_install_driver`).
"""

from __future__ import annotations

from collections.abc import Mapping
import contextlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util

from .backend import database_path, uses_postgresql
from .const import BACKEND_POSTGRESQL, BACKEND_SQLITE, CONF_BACKEND, CONF_DB_URL, LOGGER
from .embedding import store_model
from .engine.errors import StoreError, TransferError, TransferTargetNotEmptyError
from .engine.postgres import (
    TransferReport,
    postgres_to_sqlite,
    redact_url,
    register_vector,
    sqlite_to_postgres,
)

# The tables whose rows make a PostgreSQL database "already in use".
_DATA_TABLES = ("memories", "conversation_messages")
# SQLite's companions of a database file, renamed aside with it.
_COMPANIONS = ("", "-wal", "-shm", "-journal")


@dataclass(slots=True)
class MoveResult:
    """How a move ended: its report, or the error that stopped it."""

    report: TransferReport | None = None
    error: TransferError | None = None
    set_aside: Path | None = None
    counts: dict[str, str] = field(default_factory=dict)


def storage_data(
    data: Mapping[str, Any], backend: str, url: str | None
) -> dict[str, Any]:
    """Return entry data with its storage keys set to `backend` (and `url`)."""
    new = {k: v for k, v in data.items() if k not in (CONF_BACKEND, CONF_DB_URL)}
    new[CONF_BACKEND] = backend
    if backend == BACKEND_POSTGRESQL and url:
        new[CONF_DB_URL] = url
    return new


async def _pool(url: str) -> Any:
    import asyncpg  # noqa: PLC0415 - installed on demand

    return await asyncpg.create_pool(url, min_size=1, max_size=2, init=register_vector)


async def async_target_holds_memories(url: str) -> bool:
    """Whether the PostgreSQL database at `url` holds memories or messages already."""
    import asyncpg  # noqa: PLC0415 - installed on demand

    connection = await asyncpg.connect(url, timeout=10)
    try:
        for table in _DATA_TABLES:
            if await connection.fetchval("SELECT to_regclass($1)", table) is None:
                continue
            if await connection.fetchval(f"SELECT EXISTS (SELECT 1 FROM {table})"):  # noqa: S608 - a fixed name
                return True
        return False
    finally:
        await connection.close()


def set_aside(path: Path, now: datetime) -> Path | None:
    """Rename `path` (and its -wal/-shm files) aside with a timestamp; None if absent."""
    if not path.exists():
        return None
    stamp = now.strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.before-move-{stamp}")
    for suffix in _COMPANIONS:
        part = Path(f"{path}{suffix}")
        if part.exists():
            part.rename(Path(f"{aside}{suffix}"))
    return aside


def put_back(path: Path, aside: Path) -> None:
    """Undo `set_aside` after a failed copy: the empty new file goes, the old returns."""
    for suffix in _COMPANIONS:
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()
    for suffix in _COMPANIONS:
        part = Path(f"{aside}{suffix}")
        if part.exists():
            part.rename(Path(f"{path}{suffix}"))


def report_counts(report: TransferReport) -> dict[str, str]:
    """Return the counts the finish message shows: memories, messages, vectors."""

    def written(name: str) -> str:
        count = report.tables.get(name)
        return str(count.destination if count else 0)

    return {
        "memories": written("memories"),
        "messages": written("conversation_messages"),
        "vectors": written(
            "embeddings"
            if report.direction == "postgres_to_sqlite"
            else "memory_vectors"
        ),
    }


async def _copy(
    hass: HomeAssistant, old: Mapping[str, Any], url: str | None, result: MoveResult
) -> TransferReport:
    """Copy the memories from the backend `old` names to the other one."""
    if uses_postgresql(old):
        pool = await _pool(str(old[CONF_DB_URL]))
        path = database_path(hass)
        result.set_aside = await hass.async_add_executor_job(
            set_aside, path, dt_util.utcnow()
        )
        try:
            return await postgres_to_sqlite(pool, path)
        except BaseException:
            if result.set_aside is not None:
                await hass.async_add_executor_job(put_back, path, result.set_aside)
                result.set_aside = None
            raise
        finally:
            await pool.close()
    assert url is not None  # noqa: S101 - the flow asks for one
    pool = await _pool(url)
    try:
        return await sqlite_to_postgres(
            database_path(hass), pool, model=store_model(old)
        )
    finally:
        await pool.close()


async def async_move(
    hass: HomeAssistant, entry: ConfigEntry, url: str | None, *, copy: bool = True
) -> MoveResult:
    """Move the entry to the other backend (`url` for PostgreSQL); always reload it.

    With `copy` False the entry only switches (to PostgreSQL memories that
    are there already). A failure leaves the entry on its old backend and is
    returned, never raised.
    """
    old = dict(entry.data)
    backend = BACKEND_SQLITE if uses_postgresql(old) else BACKEND_POSTGRESQL
    target = redact_url(url) if url else "SQLite"
    result = MoveResult()
    if not await hass.config_entries.async_unload(entry.entry_id):
        # Still running (its unload failed): copying now could miss writes.
        result.error = TransferError("Assist Memory could not be stopped")
        return result
    try:
        if copy:
            result.report = await _copy(hass, old, url, result)
            result.counts = report_counts(result.report)
        hass.config_entries.async_update_entry(
            entry, data=storage_data(old, backend, url)
        )
        LOGGER.info("Assist Memory now keeps its memories in %s", target)
    except TransferError as err:
        result.error = err
        LOGGER.warning(
            "Moving the memories to %s failed, nothing was changed: %s",
            target,
            redact_url(str(err)),
        )
    except StoreError as err:
        # The engine's own message (a file that cannot be made): no secret in it.
        result.error = TransferError(str(err))
        LOGGER.warning(
            "Moving the memories to %s failed, nothing was changed: %s",
            target,
            redact_url(str(err)),
        )
    except Exception as err:  # noqa: BLE001 - reported by the flow, never lost
        result.error = TransferError(type(err).__name__)
        LOGGER.warning(
            "Moving the memories to %s failed, nothing was changed: %s",
            target,
            type(err).__name__,
        )
    finally:
        if entry.state is ConfigEntryState.NOT_LOADED:
            await hass.config_entries.async_setup(entry.entry_id)
    return result


def move_error(err: TransferError) -> tuple[str, dict[str, str]]:
    """Return the abort reason and placeholders of a failed move (no password in them)."""
    if isinstance(err, TransferTargetNotEmptyError):
        return "move_target_not_empty", {"error": redact_url(str(err))}
    cause = err.placeholders.get("error")
    text = f"{err} ({cause})" if cause and cause != str(err) else str(err)
    return "move_failed", {"error": redact_url(text)[:400]}
