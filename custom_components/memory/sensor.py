"""Diagnostic sensors: how many memories there are and how big the database is."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorEntityDescription,
    SensorStateClass,
)
from homeassistant.const import EntityCategory, UnitOfInformation
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .coordinator import MemoryConfigEntry, MemoryStatsCoordinator
from .engine import StoreStats
from .entity import MemoryEntity

# Updates are pushed by the coordinator; nothing here does I/O.
PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class MemorySensorDescription(SensorEntityDescription):
    """A sensor read off the store statistics."""

    value_fn: Callable[[StoreStats], int]
    attributes_fn: Callable[[StoreStats], Mapping[str, Any]] | None = None


SENSORS: tuple[MemorySensorDescription, ...] = (
    MemorySensorDescription(
        key="active_memories",
        translation_key="active_memories",
        state_class=SensorStateClass.MEASUREMENT,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda stats: stats.active,
        attributes_fn=lambda stats: {
            "by_type": dict(sorted(stats.active_by_type.items())),
            "by_scope": dict(sorted(stats.active_by_scope.items())),
        },
    ),
    MemorySensorDescription(
        key="archived_memories",
        translation_key="archived_memories",
        state_class=SensorStateClass.MEASUREMENT,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda stats: stats.archived,
    ),
    MemorySensorDescription(
        key="database_size",
        translation_key="database_size",
        device_class=SensorDeviceClass.DATA_SIZE,
        native_unit_of_measurement=UnitOfInformation.BYTES,
        suggested_unit_of_measurement=UnitOfInformation.MEBIBYTES,
        suggested_display_precision=2,
        state_class=SensorStateClass.MEASUREMENT,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda stats: stats.database_bytes,
    ),
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: MemoryConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One sensor per description."""
    coordinator = entry.runtime_data.coordinator
    async_add_entities(
        MemorySensor(coordinator, description) for description in SENSORS
    )


class MemorySensor(MemoryEntity, SensorEntity):
    """A statistic of the memory store."""

    entity_description: MemorySensorDescription

    def __init__(
        self,
        coordinator: MemoryStatsCoordinator,
        description: MemorySensorDescription,
    ) -> None:
        """Bind the description."""
        super().__init__(coordinator, description.key)
        self.entity_description = description

    @property
    def native_value(self) -> int:
        """The statistic's current value."""
        return self.entity_description.value_fn(self.coordinator.data)

    @property
    def extra_state_attributes(self) -> Mapping[str, Any] | None:
        """Breakdowns (counts only, never content)."""
        if self.entity_description.attributes_fn is None:
            return None
        return self.entity_description.attributes_fn(self.coordinator.data)
