"""Backup platform: the database is copied consistent, not mid-write.

On SQLite the database file is in the config folder: writes wait while the
backup copies it. A Home Assistant backup cannot contain a PostgreSQL
database, so before each backup the full export (`memory/export/`, with
`memories.json`, every memory with its history, which `memory.import`
reads back) is written into the config folder for the backup to hold.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError

from .const import DOMAIN, LOGGER
from .engine import MemoryStore
from .export import Audience, async_export, export_folder
from .runtime import MemoryConfigEntry


def _loaded(hass: HomeAssistant) -> list[MemoryConfigEntry]:
    return hass.config_entries.async_loaded_entries(DOMAIN)


async def async_pre_backup(hass: HomeAssistant) -> None:
    """SQLite: checkpoint the write-ahead log and hold writes; PostgreSQL: export."""
    for entry in _loaded(hass):
        store = entry.runtime_data.store
        if isinstance(store, MemoryStore):
            await store.pause_writes()
            continue
        try:
            await async_export(
                hass, entry, Audience(scopes=None, folder=export_folder(hass))
            )
        except HomeAssistantError as err:
            # The backup goes on without the memories; the next one retries.
            LOGGER.warning(
                "The memories on PostgreSQL could not be exported for the backup: %s",
                err,
            )


async def async_post_backup(hass: HomeAssistant) -> None:
    """Let writes continue (SQLite; PostgreSQL never held them)."""
    for entry in _loaded(hass):
        store = entry.runtime_data.store
        if isinstance(store, MemoryStore):
            store.resume_writes()
