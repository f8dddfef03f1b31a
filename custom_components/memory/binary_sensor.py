"""Whether the embedding provider answers (only with a provider set up)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.components.binary_sensor import BinarySensorEntity
from homeassistant.components.binary_sensor.const import BinarySensorDeviceClass
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .embedding import EmbeddingCoordinator
from .entity import MemoryEntity
from .runtime import MemoryConfigEntry

# Updates are pushed by the embedding worker; nothing here does I/O.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: MemoryConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One connectivity sensor when an embedding provider is configured."""
    runtime = entry.runtime_data.embedding
    if runtime is not None:
        async_add_entities([EmbeddingProviderSensor(runtime.coordinator)])


class EmbeddingProviderSensor(MemoryEntity[EmbeddingCoordinator], BinarySensorEntity):
    """On while the provider answers; off while searches use keywords only."""

    _attr_translation_key = "embedding_provider"
    _attr_device_class = BinarySensorDeviceClass.CONNECTIVITY
    _attr_entity_category = EntityCategory.DIAGNOSTIC

    def __init__(self, coordinator: EmbeddingCoordinator) -> None:
        """Bind to the embedding status."""
        super().__init__(coordinator, "embedding_provider")

    @property
    def is_on(self) -> bool:
        """Whether the breaker lets queries through."""
        return self.coordinator.data.connected

    @property
    def extra_state_attributes(self) -> Mapping[str, Any]:
        """Which provider, and why it is down (an error kind, never a key)."""
        data = self.coordinator.data
        return {
            "provider": data.provider,
            "model": data.model,
            "error": data.error,
            "down_since": None
            if data.down_since is None
            else data.down_since.isoformat(),
        }
