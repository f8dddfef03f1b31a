"""`memory.export`: a readable Markdown mirror of what Assist Memory holds.

Writes `MEMORY.md` (active memories by scope and type), `memories.json`
(every memory with every field and its supersede history, which
`memory.import` reads back on another installation) and one file per day
of captured conversation under `<config>/memory/export/`. Who asks decides
what is written, as for the other actions, but more strictly: an export is a
file anyone with access to the configuration folder can read, so by default
it holds the household's memories and the caller's own person's only, admins
included. `everything: true` (admins, automations and scripts) writes every
scope. Each audience has its own folder, so exports never overwrite another
audience's files:

| audience | folder |
|---|---|
| everything | `export/` |
| the household (no person linked, or an automation) | `export/household/` |
| the household and a person | `export/person.anna/` |

The export is a mirror: whatever is erased for good (a purge, the
conversation retention) leaves it at once. The store awaits
`async_rewrite_exports` after every such erase, which rewrites from the
database every export already on disk that may hold the erased text (and
removes one it cannot rewrite); an audience that never exported gets none.
Exports and these rewrites take turns, so an export read before an erase
is never written after it.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey

from .access import Caller, scope_label
from .const import DATABASE_FOLDER, DOMAIN, EXPORT_FOLDER, LOGGER
from .engine import (
    DATABASE_ERRORS,
    HOUSEHOLD,
    ExportNotErasedError,
    MemoryItem,
    StoredConversation,
    StoredMessage,
    StoreError,
)
from .engine.exchange import (
    active_memories,
    conversations_with_messages,
    every_memory,
    folder_name,
    group_by_day,
    remove_export,
    render_day,
    render_json,
    render_memories,
    write_export,
    written_exports,
)
from .errors import store_error
from .runtime import MemoryConfigEntry

# Exports and the rewrites after an erase take turns (one Home Assistant).
_EXPORT_LOCK: Final[HassKey[asyncio.Lock]] = HassKey(f"{DOMAIN}_export_lock")


@dataclass(frozen=True, slots=True)
class Audience:
    """Whose memories an export holds (None: every scope), and where it goes."""

    scopes: tuple[str, ...] | None
    folder: Path


def export_folder(hass: HomeAssistant) -> Path:
    """`<config>/memory/export/`."""
    return Path(hass.config.path(DATABASE_FOLDER, EXPORT_FOLDER))


def audience(
    hass: HomeAssistant, caller: Caller, *, person: str | None, everything: bool
) -> Audience:
    """Decide what a caller's export holds; refuse what they may not see."""
    base = export_folder(hass)
    if everything and person is not None:
        raise ServiceValidationError(
            translation_domain=DOMAIN, translation_key="export_person_or_everything"
        )
    if everything:
        if not caller.unrestricted:
            raise ServiceValidationError(
                translation_domain=DOMAIN, translation_key="export_everything_admin"
            )
        return Audience(scopes=None, folder=base)
    if person is not None:
        if not caller.may_reach(person):
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="person_not_allowed",
                translation_placeholders={"person": person},
            )
        persons: tuple[str, ...] = (person,)
    else:
        persons = tuple(sorted(set(caller.persons)))
    # Entity ids are "person.<slug>": safe as folder names, never a path.
    return Audience(scopes=(HOUSEHOLD, *persons), folder=base / folder_name(persons))


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """What one export read from the database, rendered away from the loop."""

    items: list[MemoryItem]
    # Every memory of the audience, whatever its status (memories.json).
    every: list[MemoryItem]
    conversations: list[tuple[StoredConversation, list[StoredMessage]]]
    labels: dict[str, str]
    exported_at: datetime
    timezone: tzinfo


def _export_lock(hass: HomeAssistant) -> asyncio.Lock:
    return hass.data.setdefault(_EXPORT_LOCK, asyncio.Lock())


async def _async_snapshot(
    hass: HomeAssistant, entry: MemoryConfigEntry, scopes: tuple[str, ...] | None
) -> _Snapshot:
    """Read what an audience's export holds (raises the store's errors)."""
    runtime = entry.runtime_data
    now = dt_util.utcnow()
    items = await active_memories(runtime.store, scopes, now=now)
    every = await every_memory(runtime.store, scopes)
    conversations = await conversations_with_messages(runtime.conversations, scopes)
    # Names are read here: states belong to the event loop.
    label = scope_label(hass)
    named = {item.scope for item in items} | {c.scope for c, _m in conversations}
    return _Snapshot(
        items=items,
        every=every,
        conversations=conversations,
        labels={scope: label(scope) for scope in named},
        exported_at=now,
        timezone=dt_util.get_default_time_zone(),
    )


def _render_and_write(folder: Path, snapshot: _Snapshot) -> tuple[list[Path], int]:
    """Render and write the files (each whole); drop days no longer there.

    Runs in the executor: ten thousand memories take about 150 ms to render.
    """
    timezone = snapshot.timezone
    label = snapshot.labels.__getitem__
    memory_text = render_memories(
        snapshot.items,
        label=label,
        exported_at=snapshot.exported_at,
        timezone=timezone,
    )
    days = {
        day.file_name: render_day(day, label=label, timezone=timezone)
        for day in group_by_day(snapshot.conversations, timezone)
    }
    json_text = render_json(snapshot.every, exported_at=snapshot.exported_at)
    return write_export(folder, memory_text, days, json_text), len(days)


async def async_export(
    hass: HomeAssistant, entry: MemoryConfigEntry, target: Audience
) -> dict[str, Any]:
    """Write an audience's export; return the paths and counts."""
    async with _export_lock(hass):
        try:
            snapshot = await _async_snapshot(hass, entry, target.scopes)
        except StoreError as err:
            raise store_error(err) from err
        try:
            paths, days = await hass.async_add_executor_job(
                _render_and_write, target.folder, snapshot
            )
        except OSError as err:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="export_failed",
                translation_placeholders={
                    "folder": str(target.folder),
                    "error": str(err),
                },
            ) from err
    LOGGER.debug(
        "Exported %d memories and %d days to %s",
        len(snapshot.items),
        days,
        target.folder,
    )
    return {
        "paths": [str(path) for path in paths],
        "memories": len(snapshot.items),
        "days": days,
    }


async def async_rewrite_exports(
    hass: HomeAssistant, entry: MemoryConfigEntry, scopes: frozenset[str]
) -> None:
    """Rewrite every export on disk that may hold text of `scopes` just erased.

    The store's erase listener. An export that cannot be rewritten is
    removed instead; one that cannot be removed either raises
    `ExportNotErasedError` (the erase itself stands).
    """
    base = export_folder(hass)
    stuck: list[tuple[Path, OSError]] = []
    async with _export_lock(hass):
        try:
            written = await hass.async_add_executor_job(written_exports, base)
        except OSError as err:
            # Unreadable: whether it holds the text cannot even be known.
            written = []
            stuck.append((base, err))
        for persons, folder in written:
            allowed = None if persons is None else (HOUSEHOLD, *persons)
            if allowed is not None and scopes.isdisjoint(allowed):
                continue
            try:
                snapshot = await _async_snapshot(hass, entry, allowed)
                await hass.async_add_executor_job(_render_and_write, folder, snapshot)
            except (*DATABASE_ERRORS, OSError) as err:
                try:
                    await hass.async_add_executor_job(remove_export, folder)
                except OSError as left:
                    stuck.append((folder, left))
                    continue
                LOGGER.warning(
                    "Removed the export in %s: it could not be rewritten "
                    "after an erase: %s",
                    folder,
                    err,
                )
            else:
                LOGGER.debug("Rewrote the export in %s after an erase", folder)
    if stuck:
        where, error = stuck[0]
        raise ExportNotErasedError(
            f"erased, but the export in {where} could be neither rewritten "
            f"nor removed: {error}",
            folder=str(where),
            error=str(error),
        ) from error


async def async_remove_exports(hass: HomeAssistant) -> None:
    """Remove every audience's export (the integration is being removed)."""
    base = export_folder(hass)

    def _remove() -> None:
        for _persons, folder in reversed(written_exports(base)):
            remove_export(folder)
        with contextlib.suppress(OSError):
            base.rmdir()  # unless files of the user's own are left

    async with _export_lock(hass):
        try:
            await hass.async_add_executor_job(_remove)
        except OSError as err:
            LOGGER.warning("Could not remove the exports in %s: %s", base, err)
