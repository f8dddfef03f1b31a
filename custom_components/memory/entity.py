"""Base entity: every Assist Memory entity belongs to one service device."""

from __future__ import annotations

from typing import Any

from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.update_coordinator import (
    CoordinatorEntity,
    DataUpdateCoordinator,
)

from .const import DOMAIN


class MemoryEntity[CoordinatorT: DataUpdateCoordinator[Any]](
    CoordinatorEntity[CoordinatorT]
):
    """Names and device come from the entry; state from the coordinator.

    Generic over the coordinator: the store's statistics and the embedding
    provider's state feed entities on the same device.
    """

    _attr_has_entity_name = True

    def __init__(self, coordinator: CoordinatorT, key: str) -> None:
        """Give the entity a stable unique id under the entry's device."""
        super().__init__(coordinator)
        entry = coordinator.config_entry
        assert entry is not None  # noqa: S101 - both coordinators get their entry
        self._attr_unique_id = f"{entry.entry_id}_{key}"
        self._attr_device_info = DeviceInfo(
            identifiers={(DOMAIN, entry.entry_id)},
            name=entry.title,
            entry_type=DeviceEntryType.SERVICE,
            manufacturer="Assist Memory",
        )
