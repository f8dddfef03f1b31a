"""`memory.export`: a readable Markdown mirror of what Assist Memory holds.

Writes `MEMORY.md` (active memories by scope and type) and one file per day
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
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Final

from homeassistant.core import (
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    SupportsResponse,
    callback,
)
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.util import dt as dt_util
from homeassistant.util.file import write_utf8_file
import probatio

from .const import DATABASE_FOLDER, DOMAIN, EXPORT_FOLDER, LOGGER
from .coordinator import MemoryConfigEntry, loaded_entry
from .engine import HOUSEHOLD, MemoryItem, StoredConversation, StoredMessage, StoreError
from .engine.export import (
    CONVERSATIONS_FOLDER,
    DAY_FILE,
    MEMORY_FILE,
    active_memories,
    conversations_with_messages,
    group_by_day,
    render_day,
    render_memories,
)
from .errors import translated_errors
from .recall import scope_label
from .services import ATTR_PERSON, Caller, async_caller
from .validation import PERSON

SERVICE_EXPORT: Final = "export"
ATTR_EVERYTHING: Final = "everything"

EXPORT_SCHEMA: Final = probatio.Schema(
    {
        probatio.Optional(ATTR_PERSON): PERSON,
        probatio.Optional(ATTR_EVERYTHING, default=False): cv.boolean,
    }
)


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
    folder = base / ("+".join(persons) if persons else HOUSEHOLD)
    return Audience(scopes=(HOUSEHOLD, *persons), folder=folder)


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """What one export read from the database, rendered away from the loop."""

    items: list[MemoryItem]
    conversations: list[tuple[StoredConversation, list[StoredMessage]]]
    labels: dict[str, str]
    exported_at: datetime
    timezone: tzinfo


def _render_and_write(folder: Path, snapshot: _Snapshot) -> tuple[list[Path], int]:
    """Render and write the files (each atomically); drop days no longer there.

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
    conversations = folder / CONVERSATIONS_FOLDER
    conversations.mkdir(parents=True, exist_ok=True)
    written = [folder / MEMORY_FILE]
    write_utf8_file(str(written[0]), memory_text, private=True)
    names: set[str] = set()
    for day in group_by_day(snapshot.conversations, timezone):
        path = conversations / day.file_name
        write_utf8_file(
            str(path), render_day(day, label=label, timezone=timezone), private=True
        )
        written.append(path)
        names.add(day.file_name)
    for path in conversations.iterdir():
        # Days erased since (retention, purge) must not live on in the mirror.
        if DAY_FILE.match(path.name) and path.name not in names:
            path.unlink(missing_ok=True)
    return written, len(names)


async def async_export(
    hass: HomeAssistant, entry: MemoryConfigEntry, target: Audience
) -> dict[str, Any]:
    """Write an audience's export; return the paths and counts."""
    runtime = entry.runtime_data
    now = dt_util.utcnow()
    try:
        items = await active_memories(runtime.store, target.scopes, now=now)
        conversations = await conversations_with_messages(
            runtime.conversations, target.scopes
        )
    except StoreError as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="store_failed",
            translation_placeholders={"error": str(err)},
        ) from err
    # Names are read here: states belong to the event loop.
    label = scope_label(hass)
    scopes = {item.scope for item in items} | {c.scope for c, _m in conversations}
    snapshot = _Snapshot(
        items=items,
        conversations=conversations,
        labels={scope: label(scope) for scope in scopes},
        exported_at=now,
        timezone=dt_util.get_default_time_zone(),
    )
    try:
        paths, days = await hass.async_add_executor_job(
            _render_and_write, target.folder, snapshot
        )
    except (OSError, HomeAssistantError) as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="export_failed",
            translation_placeholders={
                "folder": str(target.folder),
                "error": str(err.__cause__ or err),
            },
        ) from err
    LOGGER.debug(
        "Exported %d memories and %d days to %s", len(items), days, target.folder
    )
    return {
        "paths": [str(path) for path in paths],
        "memories": len(items),
        "days": days,
    }


async def _async_export(call: ServiceCall) -> ServiceResponse:
    entry = loaded_entry(call.hass)
    caller = await async_caller(call.hass, call)
    target = audience(
        call.hass,
        caller,
        person=call.data.get(ATTR_PERSON),
        everything=call.data[ATTR_EVERYTHING],
    )
    return await async_export(call.hass, entry, target)


@callback
def async_setup_export(hass: HomeAssistant) -> None:
    """Register `memory.export` (once per Home Assistant start)."""
    hass.services.async_register(
        DOMAIN,
        SERVICE_EXPORT,
        translated_errors(_async_export),
        schema=EXPORT_SCHEMA,
        supports_response=SupportsResponse.OPTIONAL,
    )
