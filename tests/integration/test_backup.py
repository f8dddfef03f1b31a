"""The backup platform pauses writes around a backup and folds the WAL in."""

import asyncio
from pathlib import Path

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.memory import backup
from custom_components.memory.backend import database_path


async def _add(hass: HomeAssistant, content: str) -> None:
    await hass.services.async_call(
        "memory", "add", {"content": content}, blocking=True, return_response=True
    )


async def test_backup_pauses_writes_and_checkpoints(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """During a backup the WAL is empty and a write waits until it ends."""
    await _add(hass, "The guest room heating stays at 19 degrees")
    wal = Path(f"{database_path(hass)}-wal")

    await backup.async_pre_backup(hass)
    assert wal.stat().st_size == 0
    pending = hass.async_create_task(_add(hass, "Holiday decided: Lisbon in May"))
    await asyncio.sleep(0.05)
    assert not pending.done()
    assert wal.stat().st_size == 0

    await backup.async_post_backup(hass)
    await pending
    response = await hass.services.async_call(
        "memory", "search", {"query": "Lisbon"}, blocking=True, return_response=True
    )
    assert response is not None
    memories = response["memories"]
    assert isinstance(memories, list)
    assert [hit["content"] for hit in memories if isinstance(hit, dict)] == [
        "Holiday decided: Lisbon in May"
    ]
