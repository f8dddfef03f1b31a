"""Base entity: every Assist Memory entity belongs to one service device."""

from __future__ import annotations

from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.update_coordinator import CoordinatorEntity

from .const import DOMAIN
from .coordinator import MemoryStatsCoordinator


class MemoryEntity(CoordinatorEntity[MemoryStatsCoordinator]):
    """Names and device come from the entry; state from the coordinator."""

    _attr_has_entity_name = True

    def __init__(self, coordinator: MemoryStatsCoordinator, key: str) -> None:
        """Give the entity a stable unique id under the entry's device."""
        super().__init__(coordinator)
        entry = coordinator.config_entry
        self._attr_unique_id = f"{entry.entry_id}_{key}"
        self._attr_device_info = DeviceInfo(
            identifiers={(DOMAIN, entry.entry_id)},
            name=entry.title,
            entry_type=DeviceEntryType.SERVICE,
            manufacturer="Assist Memory",
        )
