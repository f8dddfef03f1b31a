"""Diagnostic sensors: how many memories there are and how big the database is."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorEntityDescription,
    SensorStateClass,
)
from homeassistant.const import (
    PERCENTAGE,
    EntityCategory,
    UnitOfInformation,
    UnitOfTime,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util import dt as dt_util

from .const import DOMAIN
from .coordinator import MemoryStatsCoordinator
from .embedding import EmbeddingCoordinator
from .engine import StoreStats
from .entity import MemoryEntity
from .runtime import MemoryConfigEntry
from .usage import Usage, UsageTracker

# Updates are pushed by the coordinator; nothing here does I/O.
PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class MemorySensorDescription(SensorEntityDescription):
    """A sensor read off the store statistics."""

    value_fn: Callable[[StoreStats], int]
    attributes_fn: Callable[[StoreStats], Mapping[str, Any]] | None = None


# The archived count is history a household rarely needs: disabled by default.
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
        entity_registry_enabled_default=False,
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


@dataclass(frozen=True, kw_only=True)
class UsageSensorDescription(SensorEntityDescription):
    """A sensor read off the recall and capture counters."""

    value_fn: Callable[[Usage], float | None]
    attributes_fn: Callable[[Usage], Mapping[str, Any]] | None = None


# Daily counters are TOTAL_INCREASING: the reset at midnight starts a new cycle.
# What recall costs (its tokens, last turn and today), its latency and the AI
# Task calls today are enabled by default: the product promises token usage.
# The other daily counters are for tuning and are enabled in the entity settings.
USAGE_SENSORS: tuple[UsageSensorDescription, ...] = (
    UsageSensorDescription(
        key="recall_tokens",
        translation_key="recall_tokens",
        state_class=SensorStateClass.MEASUREMENT,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda usage: usage.last_recall_tokens,
    ),
    UsageSensorDescription(
        key="recall_tokens_today",
        translation_key="recall_tokens_today",
        state_class=SensorStateClass.TOTAL_INCREASING,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda usage: usage.recall_tokens_today,
    ),
    UsageSensorDescription(
        key="recall_latency",
        translation_key="recall_latency",
        device_class=SensorDeviceClass.DURATION,
        native_unit_of_measurement=UnitOfTime.MILLISECONDS,
        suggested_display_precision=1,
        state_class=SensorStateClass.MEASUREMENT,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda usage: usage.last_recall_latency_ms,
        attributes_fn=lambda usage: {
            "failures_today": usage.recall_failures_today,
            "last_failure": usage.last_recall_failure,
            # Turns today that a part of recall across a conversation
            # contributed to (engine/recall/turn.py).
            "follow_ups_today": usage.recall_follow_ups_today,
            "kept_today": usage.recall_kept_today,
            "earlier_today": usage.recall_earlier_today,
        },
    ),
    UsageSensorDescription(
        key="memories_recalled_today",
        translation_key="memories_recalled_today",
        entity_registry_enabled_default=False,
        state_class=SensorStateClass.TOTAL_INCREASING,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda usage: usage.memories_recalled_today,
    ),
    UsageSensorDescription(
        key="conversations_captured_today",
        translation_key="conversations_captured_today",
        entity_registry_enabled_default=False,
        state_class=SensorStateClass.TOTAL_INCREASING,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda usage: usage.conversations_today,
    ),
    # Digestion (digestion.py) and the AI Task calls it and profiles make.
    UsageSensorDescription(
        key="ai_task_calls_today",
        translation_key="ai_task_calls_today",
        state_class=SensorStateClass.TOTAL_INCREASING,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda usage: usage.ai_task_calls_today,
    ),
    UsageSensorDescription(
        key="memories_added_today",
        translation_key="memories_added_today",
        entity_registry_enabled_default=False,
        state_class=SensorStateClass.TOTAL_INCREASING,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda usage: usage.memories_added_today,
    ),
    UsageSensorDescription(
        key="memories_updated_today",
        translation_key="memories_updated_today",
        entity_registry_enabled_default=False,
        state_class=SensorStateClass.TOTAL_INCREASING,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda usage: usage.memories_updated_today,
    ),
    UsageSensorDescription(
        key="memories_superseded_today",
        translation_key="memories_superseded_today",
        entity_registry_enabled_default=False,
        state_class=SensorStateClass.TOTAL_INCREASING,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=lambda usage: usage.memories_superseded_today,
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
    async_add_entities(
        UsageSensor(entry, entry.runtime_data.usage, description)
        for description in USAGE_SENSORS
    )
    async_add_entities(
        [
            DigestionWaitingSensor(entry),
            LastDigestionSensor(entry, entry.runtime_data.usage),
        ]
    )
    if (embedding := entry.runtime_data.embedding) is not None:
        async_add_entities([EmbeddingProgressSensor(embedding.coordinator)])


class MemorySensor(MemoryEntity[MemoryStatsCoordinator], SensorEntity):
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


class EmbeddingProgressSensor(MemoryEntity[EmbeddingCoordinator], SensorEntity):
    """Share of memories and messages embedded by the current model.

    Below 100 while a rebuild (of either) keeps search keyword-only.
    """

    _attr_translation_key = "embedding_progress"
    _attr_native_unit_of_measurement = PERCENTAGE
    _attr_state_class = SensorStateClass.MEASUREMENT
    _attr_entity_category = EntityCategory.DIAGNOSTIC
    _attr_suggested_display_precision = 0

    def __init__(self, coordinator: EmbeddingCoordinator) -> None:
        """Bind to the embedding status."""
        super().__init__(coordinator, "embedding_progress")

    @property
    def native_value(self) -> float:
        """Jobs done (embedded or given up) out of all, in percent."""
        return self.coordinator.data.queue.progress

    @property
    def extra_state_attributes(self) -> Mapping[str, Any]:
        """Counts by state, and whether a rebuild keeps search keyword-only.

        The unprefixed names count memories (as they always did).
        """
        queue = self.coordinator.data.queue
        return {
            "pending": queue.pending,
            "embedded": queue.ready,
            "failed": queue.failed,
            "rebuilding": queue.rebuilding,
            "messages_pending": queue.messages_pending,
            "messages_embedded": queue.messages_ready,
            "messages_failed": queue.messages_failed,
            "messages_rebuilding": queue.messages_rebuilding,
        }


class UsageSensor(SensorEntity):
    """A recall or capture counter, pushed by the usage tracker."""

    _attr_has_entity_name = True
    _attr_should_poll = False
    entity_description: UsageSensorDescription

    def __init__(
        self,
        entry: MemoryConfigEntry,
        usage: UsageTracker,
        description: UsageSensorDescription,
    ) -> None:
        """Put the counter on the entry's service device."""
        self.entity_description = description
        self._usage = usage
        self._attr_unique_id = f"{entry.entry_id}_{description.key}"
        self._attr_device_info = DeviceInfo(identifiers={(DOMAIN, entry.entry_id)})

    async def async_added_to_hass(self) -> None:
        """Follow the counters."""
        self.async_on_remove(self._usage.add_listener(self.async_write_ha_state))

    @property
    def native_value(self) -> float | None:
        """The counter's current value (None before the first recall)."""
        return self.entity_description.value_fn(self._usage.data)

    @property
    def extra_state_attributes(self) -> Mapping[str, Any] | None:
        """Failure counts (never content)."""
        if self.entity_description.attributes_fn is None:
            return None
        return self.entity_description.attributes_fn(self._usage.data)


class DigestionWaitingSensor(SensorEntity):
    """Conversations waiting for digestion, and why the last attempt failed."""

    _attr_has_entity_name = True
    _attr_should_poll = False
    _attr_translation_key = "conversations_waiting"
    _attr_state_class = SensorStateClass.MEASUREMENT
    _attr_entity_category = EntityCategory.DIAGNOSTIC

    def __init__(self, entry: MemoryConfigEntry) -> None:
        """Put the count on the entry's service device."""
        self._digestion = entry.runtime_data.digestion
        self._usage = entry.runtime_data.usage
        self._attr_unique_id = f"{entry.entry_id}_conversations_waiting"
        self._attr_device_info = DeviceInfo(identifiers={(DOMAIN, entry.entry_id)})

    async def async_added_to_hass(self) -> None:
        """Follow the queue and the counters."""
        self.async_on_remove(self._digestion.add_listener(self.async_write_ha_state))
        self.async_on_remove(self._usage.add_listener(self.async_write_ha_state))

    @property
    def native_value(self) -> int:
        """How many conversations are not digested yet."""
        return self._digestion.waiting

    @property
    def extra_state_attributes(self) -> Mapping[str, Any]:
        """Failures and their kind (never content), and whether AI Task is missing."""
        usage = self._usage.data
        return {
            "ai_task_unavailable": self._digestion.unavailable,
            "failures_today": usage.digestion_failures_today,
            "last_error": usage.last_digestion_error,
            "last_error_at": usage.last_digestion_error_at,
        }


class LastDigestionSensor(SensorEntity):
    """When a conversation was last digested."""

    _attr_has_entity_name = True
    _attr_should_poll = False
    _attr_translation_key = "last_digestion"
    _attr_device_class = SensorDeviceClass.TIMESTAMP
    _attr_entity_category = EntityCategory.DIAGNOSTIC

    def __init__(self, entry: MemoryConfigEntry, usage: UsageTracker) -> None:
        """Put the time on the entry's service device."""
        self._usage = usage
        self._attr_unique_id = f"{entry.entry_id}_last_digestion"
        self._attr_device_info = DeviceInfo(identifiers={(DOMAIN, entry.entry_id)})

    async def async_added_to_hass(self) -> None:
        """Follow the counters."""
        self.async_on_remove(self._usage.add_listener(self.async_write_ha_state))

    @property
    def native_value(self) -> datetime | None:
        """The time, or None before the first digestion."""
        last = self._usage.data.last_digestion
        return dt_util.parse_datetime(last) if last else None
