"""`memory.import`: bring memories from another tool, previewed, all or nothing.

The one import path of the action and of the panel's Import dialog
(`websocket_import.py`): a file's bytes are parsed in the executor
(`engine/exchange/import_formats.py`), each source owner (a mem0 user, a scope of
AI Long Term Memory, a person heading of our Markdown export) is given a
scope, and the engine previews or imports (`engine/exchange/importing.py`). Nobody
imports into a scope they could not write to with `memory.add`. A file is
read only from inside the configuration folder. Progress of an import
shows as a persistent notification (counts only, never text).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from homeassistant.components import persistent_notification
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, callback
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.util import dt as dt_util
import probatio

from .access import Caller, async_caller
from .const import ATTR_DRY_RUN, ATTR_PERSON, DOMAIN, LOGGER
from .engine import HOUSEHOLD, MemoryStore, StoreError
from .engine.exchange import (
    MAX_IMPORT_BYTES,
    ImportFile,
    ImportFormat,
    preview_import,
    read_import,
    run_import,
)
from .errors import store_error
from .runtime import MemoryConfigEntry, loaded_entry
from .validation import PERSON, ActionSchema

SERVICE_IMPORT: Final = "import"
ATTR_FILE: Final = "file"
ATTR_TEXT: Final = "text"
ATTR_FORMAT: Final = "format"
ATTR_OWNERS: Final = "owners"
ATTR_SOURCE_NAME: Final = "source"
FORMATS: Final = [str(kind) for kind in ImportFormat]
# Owners other tools use for what everyone shares.
_SHARED: Final = frozenset({HOUSEHOLD, "common", "shared", "everyone"})
NOTIFICATION_ID: Final = f"{DOMAIN}_import"

OWNER_TARGET: Final = probatio.Any(HOUSEHOLD, PERSON)
IMPORT_OPTIONS: Final[dict[probatio.Marker, Any]] = {
    probatio.Optional(ATTR_FORMAT): probatio.In(FORMATS),
    probatio.Optional(ATTR_PERSON): OWNER_TARGET,
    probatio.Optional(ATTR_OWNERS, default=dict): {
        probatio.All(str, probatio.Length(max=200)): OWNER_TARGET
    },
    probatio.Optional(ATTR_SOURCE_NAME): probatio.All(
        cv.string, probatio.Length(min=1, max=60)
    ),
    probatio.Optional(ATTR_DRY_RUN, default=False): cv.boolean,
}
IMPORT_SCHEMA: Final = ActionSchema(
    {
        probatio.Exclusive(ATTR_FILE, "from"): cv.string,
        probatio.Exclusive(ATTR_TEXT, "from"): cv.string,
        **IMPORT_OPTIONS,
    }
)


def _refused(key: str, **placeholders: str) -> ServiceValidationError:
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders=placeholders,
    )


def _read_file(config_dir: str, name: str) -> bytes:
    """Read a file inside the configuration folder (executor); refuse others."""
    base = Path(config_dir).resolve()
    path = (base / name).resolve()
    if not path.is_relative_to(base):
        raise _refused("import_file_outside", file=name[:200])
    try:
        if path.stat().st_size > MAX_IMPORT_BYTES:
            size = path.stat().st_size
            raise _refused(
                "import_too_large",
                size=f"{size / 1_048_576:.1f} MB",
                limit=f"{MAX_IMPORT_BYTES // 1_048_576} MB",
            )
        return path.read_bytes()
    except OSError as err:
        raise _refused(
            "import_file_unreadable", file=name[:200], error=err.strerror or str(err)
        ) from err


@callback
def owner_scopes(
    hass: HomeAssistant,
    caller: Caller,
    owners: tuple[str, ...],
    chosen: Mapping[str, str],
    default: str | None,
) -> dict[str, str]:
    """Give each source owner a scope the caller may write to; refuse others.

    In order: the caller's choice for that owner; "household" and other
    tools' shared scopes; a person by entity id or by name (our Markdown
    export's headings); else `default` (the household unless chosen).
    """
    persons = {
        state.name.casefold(): state.entity_id
        for state in hass.states.async_all("person")
    }
    fallback = default or HOUSEHOLD
    scopes: dict[str, str] = {}
    for owner in owners:
        if owner in chosen:
            scope = chosen[owner]
        elif owner.casefold() in _SHARED:
            scope = HOUSEHOLD
        elif owner.startswith("person.") and hass.states.get(owner) is not None:
            scope = owner
        else:
            scope = persons.get(owner.casefold(), fallback)
        if not caller.may_reach(scope):
            raise _refused("person_not_allowed", person=scope)
        scopes[owner] = scope
    return scopes


async def async_import_data(
    hass: HomeAssistant,
    entry: MemoryConfigEntry,
    caller: Caller,
    data: bytes,
    options: Mapping[str, Any],
    *,
    notify: bool,
    report: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Preview (`dry_run`) or import `data`; the action's and the panel's path.

    An import tells how far it is (rows written, of how many) to a
    persistent notification when `notify`, and to `report` (the panel's
    dialog) when given.
    """
    kind = options.get(ATTR_FORMAT)
    try:
        file: ImportFile = await hass.async_add_executor_job(
            lambda: read_import(
                data,
                timezone=dt_util.get_default_time_zone(),
                format=None if kind is None else ImportFormat(kind),
            )
        )
        scopes = owner_scopes(
            hass, caller, file.owners, options[ATTR_OWNERS], options.get(ATTR_PERSON)
        )
        store = entry.runtime_data.store
        if not isinstance(store, MemoryStore):
            # Its rows are planned and written in one SQLite transaction.
            raise HomeAssistantError(
                translation_domain=DOMAIN, translation_key="import_postgresql"
            )
        if options[ATTR_DRY_RUN]:
            plan = await preview_import(store, file, scopes)
            return {"dry_run": True, **plan.as_dict()}
        source = f"import:{options.get(ATTR_SOURCE_NAME) or file.format}"
        progress = _Progress(hass, len(file.entries)) if notify else None
        listeners = [step for step in (progress, report) if step is not None]

        def step(done: int, total: int) -> None:
            for listener in listeners:
                listener(done, total)

        result = await run_import(
            store,
            file,
            scopes,
            source_name=source,
            user_id=caller.user_id,
            progress=step if listeners else None,
        )
    except StoreError as err:
        if notify:
            persistent_notification.async_dismiss(hass, NOTIFICATION_ID)
        raise store_error(err) from err
    LOGGER.debug(
        "Imported %d memories (%s), superseded %d",
        len(result.ids),
        file.format,
        len(result.superseded),
    )
    if progress is not None:
        progress.done(len(result.ids), result.plan.duplicates)
    return {
        "dry_run": False,
        **result.plan.as_dict(),
        "imported": len(result.ids),
        "superseded": len(result.superseded),
    }


class _Progress:
    """The import's persistent notification: how far it is, then what it did."""

    def __init__(self, hass: HomeAssistant, total: int) -> None:
        self._hass = hass
        self._total = total
        self._show(f"Importing {total} memories…")

    def _show(self, message: str) -> None:
        persistent_notification.async_create(
            self._hass,
            message,
            title="Assist Memory import",
            notification_id=NOTIFICATION_ID,
        )

    def __call__(self, done: int, total: int) -> None:
        self._show(f"Importing memories: {done} of {total} written.")

    def done(self, imported: int, duplicates: int) -> None:
        self._show(f"Imported {imported} memories; {duplicates} were already there.")


async def _async_import(call: ServiceCall) -> ServiceResponse:
    entry = loaded_entry(call.hass)
    caller = await async_caller(call.hass, call)
    data = call.data
    if ATTR_FILE in data:
        # A file of the configuration folder may hold anything (secrets.yaml):
        # only whom the actions let reach every scope may read one in.
        if not caller.unrestricted:
            raise _refused("import_file_admin")
        raw = await call.hass.async_add_executor_job(
            _read_file, call.hass.config.config_dir, data[ATTR_FILE]
        )
    elif ATTR_TEXT in data:
        raw = data[ATTR_TEXT].encode()
    else:
        raise _refused("import_needs_source")
    return await async_import_data(
        call.hass, entry, caller, raw, data, notify=not data[ATTR_DRY_RUN]
    )


IMPORT_SERVICE: Final = (SERVICE_IMPORT, _async_import, IMPORT_SCHEMA)
