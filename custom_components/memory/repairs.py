"""Repairs: a way out of a damaged database without the file system.

Set-up raises the `database_corrupt` issue when the database fails its
check; its fix flow, once the user confirms, moves the damaged file (and its
WAL and SHM) aside as `memory.db.corrupt-<date>` — never deleting it — and
reloads the entry, which starts with an empty database. Until then the file
is not touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from homeassistant.components.repairs import RepairsFlow, RepairsFlowResult
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util
import probatio

from .const import DOMAIN, LOGGER
from .engine.store import move_aside

ISSUE_DATABASE_CORRUPT: Final = "database_corrupt"


def async_raise_database_corrupt(
    hass: HomeAssistant, entry_id: str, path: Path
) -> None:
    """Offer the fix flow for the entry whose database at `path` is damaged."""
    ir.async_create_issue(
        hass,
        DOMAIN,
        ISSUE_DATABASE_CORRUPT,
        is_fixable=True,
        is_persistent=False,
        severity=ir.IssueSeverity.ERROR,
        translation_key=ISSUE_DATABASE_CORRUPT,
        translation_placeholders={"path": str(path)},
        data={"entry_id": entry_id, "path": str(path)},
    )


def async_clear_database_corrupt(hass: HomeAssistant) -> None:
    """Withdraw the issue: the database opened."""
    ir.async_delete_issue(hass, DOMAIN, ISSUE_DATABASE_CORRUPT)


class DamagedDatabaseFlow(RepairsFlow):
    """Start with an empty database, keeping the damaged one aside."""

    def __init__(self, entry_id: str, path: Path) -> None:
        """Fix the database at `path` of the entry `entry_id`."""
        self._entry_id = entry_id
        self._path = path

    async def async_step_init(
        self,
        user_input: dict[str, str] | None = None,  # noqa: ARG002 - flow API
    ) -> RepairsFlowResult:
        """Ask before anything is moved."""
        return await self.async_step_confirm()

    async def async_step_confirm(
        self, user_input: dict[str, str] | None = None
    ) -> RepairsFlowResult:
        """Move the damaged file aside and reload, once confirmed."""
        placeholders = {"path": str(self._path)}
        if user_input is None:
            return self.async_show_form(
                step_id="confirm",
                data_schema=probatio.Schema({}),
                description_placeholders=placeholders,
            )
        entry = self.hass.config_entries.async_get_entry(self._entry_id)
        if entry is None or entry.state is ConfigEntryState.LOADED:
            # Removed, or opened meanwhile (restored from a backup).
            return self.async_abort(reason="not_damaged")
        try:
            moved = await self.hass.async_add_executor_job(
                move_aside, self._path, dt_util.now()
            )
        except OSError as err:
            LOGGER.error("Could not move the damaged memory database aside: %s", err)
            return self.async_abort(
                reason="move_failed",
                description_placeholders={**placeholders, "error": str(err.strerror)},
            )
        LOGGER.warning("Moved the damaged memory database aside to %s", moved)
        await self.hass.config_entries.async_reload(self._entry_id)
        return self.async_create_entry(data={})


async def async_create_fix_flow(
    hass: HomeAssistant,
    issue_id: str,
    data: dict[str, str | int | float | None] | None,
) -> RepairsFlow:
    """Create the fix flow of one of this integration's fixable issues."""
    if issue_id != ISSUE_DATABASE_CORRUPT or data is None:
        raise ValueError(f"no fix flow for {issue_id}")
    return DamagedDatabaseFlow(str(data["entry_id"]), Path(str(data["path"])))
