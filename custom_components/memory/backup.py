"""Backup platform: the database is copied consistent, not mid-write."""

from __future__ import annotations

from homeassistant.core import HomeAssistant

from .const import DOMAIN
from .runtime import MemoryConfigEntry


def _loaded(hass: HomeAssistant) -> list[MemoryConfigEntry]:
    return hass.config_entries.async_loaded_entries(DOMAIN)


async def async_pre_backup(hass: HomeAssistant) -> None:
    """Checkpoint the write-ahead log into the file and hold writes."""
    for entry in _loaded(hass):
        await entry.runtime_data.store.pause_writes()


async def async_post_backup(hass: HomeAssistant) -> None:
    """Let writes continue."""
    for entry in _loaded(hass):
        entry.runtime_data.store.resume_writes()
