"""The Memory panel's Import dialog: `memory/import_preview` and `memory/import`.

The dialog sends what was pasted (`text`) or the uploaded file's bytes
(`data`, base64: AI Long Term Memory's database is not text) with the
choices of `memory.import` (format, a default person, owners mapped to
scopes, the source's name); both commands run the action's path
(`import_action.async_import_data`), so a preview and an import follow the
same rules and the same reach (`access.caller_for_user`).

`memory/import_progress` is a subscription the dialog holds while it
imports: an import on the same connection tells it how far it is
(`{"done": rows written, "total": rows to write}`, counts only), so a
100,000-memory import shows its progress instead of a still dialog.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from homeassistant.components.websocket_api import async_register_command
from homeassistant.components.websocket_api.connection import ActiveConnection
from homeassistant.components.websocket_api.decorators import (
    async_response,
    websocket_command,
)
from homeassistant.components.websocket_api.messages import event_message
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
import probatio

from .access import caller_for_user
from .const import ATTR_DRY_RUN, DOMAIN
from .errors import translated_store_errors
from .import_action import ATTR_TEXT, IMPORT_OPTIONS, async_import_data
from .runtime import loaded_entry

ATTR_DATA: Final = "data"
# Each connection's progress subscription (its message id), while it holds
# one: Home Assistant calls the subscription's stop when the dialog
# unsubscribes or the connection closes, which removes it.
_LISTENING: Final[dict[ActiveConnection, int]] = {}
_FIELDS: Final[dict[str | probatio.Marker, Any]] = {
    probatio.Exclusive(ATTR_TEXT, "from"): cv.string,
    probatio.Exclusive(ATTR_DATA, "from"): str,
    **{key: value for key, value in IMPORT_OPTIONS.items() if str(key) != ATTR_DRY_RUN},
}


def _payload(msg: dict[str, Any]) -> bytes:
    """Return the bytes to import: the pasted text, or the uploaded file's."""
    if ATTR_TEXT in msg:
        return str(msg[ATTR_TEXT]).encode()
    if ATTR_DATA in msg:
        try:
            return base64.b64decode(msg[ATTR_DATA], validate=True)
        except (binascii.Error, ValueError) as err:
            raise ServiceValidationError(
                translation_domain=DOMAIN, translation_key="import_bad_upload"
            ) from err
    raise ServiceValidationError(
        translation_domain=DOMAIN, translation_key="import_needs_source"
    )


async def _import(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
    *,
    dry_run: bool,
) -> None:
    entry = loaded_entry(hass)
    caller = caller_for_user(hass, connection.user)
    options = {**msg, ATTR_DRY_RUN: dry_run}

    def report(done: int, total: int) -> None:
        if (listener := _LISTENING.get(connection)) is not None:
            connection.send_message(
                event_message(listener, {"done": done, "total": total})
            )

    with translated_store_errors():
        result = await async_import_data(
            hass, entry, caller, _payload(msg), options, notify=False, report=report
        )
    connection.send_result(msg["id"], result)


@websocket_command({probatio.Required("type"): f"{DOMAIN}/import_preview", **_FIELDS})
@async_response
async def ws_import_preview(
    hass: HomeAssistant, connection: ActiveConnection, msg: dict[str, Any]
) -> None:
    """Tell what an import would do: new, duplicates, supersedes, secrets, owners."""
    await _import(hass, connection, msg, dry_run=True)


@websocket_command({probatio.Required("type"): f"{DOMAIN}/import", **_FIELDS})
@async_response
async def ws_import(
    hass: HomeAssistant, connection: ActiveConnection, msg: dict[str, Any]
) -> None:
    """Import, all or nothing, as the preview described."""
    await _import(hass, connection, msg, dry_run=False)


@websocket_command({probatio.Required("type"): f"{DOMAIN}/import_progress"})
@callback
def ws_import_progress(
    hass: HomeAssistant, connection: ActiveConnection, msg: dict[str, Any]
) -> None:
    """Hear how far this connection's imports are, until unsubscribed."""
    _LISTENING[connection] = msg["id"]

    @callback
    def stop() -> None:
        if _LISTENING.get(connection) == msg["id"]:
            del _LISTENING[connection]

    connection.subscriptions[msg["id"]] = stop
    connection.send_result(msg["id"])


@callback
def async_setup_import_commands(hass: HomeAssistant) -> None:
    """Register the Import dialog's commands (once per Home Assistant start)."""
    for command in (ws_import_preview, ws_import, ws_import_progress):
        async_register_command(hass, command)
