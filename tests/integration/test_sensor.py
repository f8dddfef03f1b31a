"""Tests for the Assist Memory sensors."""

from __future__ import annotations

from datetime import timedelta
import threading
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant.const import STATE_UNAVAILABLE, UnitOfInformation
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)
from syrupy.assertion import SnapshotAssertion

from custom_components.memory.coordinator import REFRESH_COOLDOWN
from custom_components.memory.engine import StoreError

from . import add, call, entity_state, settle

ACTIVE = "sensor.assist_memory_active_memories"
ARCHIVED = "sensor.assist_memory_archived_memories"
SIZE = "sensor.assist_memory_database_size"


@pytest.mark.freeze_time("2026-03-14T09:26:53+00:00")
async def test_sensors(
    hass: HomeAssistant,
    entity_registry: er.EntityRegistry,
    snapshot: SnapshotAssertion,
    init_integration: MockConfigEntry,
) -> None:
    """Diagnostic sensors with translated names, on the entry's device.

    Those a household rarely needs are disabled by default (and have no state).
    """
    with patch(
        "custom_components.memory.engine.store.database.Database.database_bytes",
        return_value=3 * 1024 * 1024,
    ):
        assert await hass.config_entries.async_reload(init_integration.entry_id)
        await hass.async_block_till_done()

        # snapshot_platform's snapshots, without requiring a state of a
        # disabled entity.
        entries = er.async_entries_for_config_entry(
            entity_registry, init_integration.entry_id
        )
        assert entries
        for entry in entries:
            assert entry == snapshot(name=f"{entry.entity_id}-entry")
            state = hass.states.get(entry.entity_id)
            if entry.disabled_by is None:
                assert state == snapshot(name=f"{entry.entity_id}-state")
            else:
                assert state is None


async def test_a_fresh_entry_enables_counts_and_token_usage(
    hass: HomeAssistant,
    entity_registry: er.EntityRegistry,
    init_integration: MockConfigEntry,
) -> None:
    """A new installation shows the memory counts and what recall costs.

    Active memories, recall tokens (last turn and today) and the AI Task calls
    today report from the start, next to the health sensors; the counters a
    household rarely needs start disabled (and have no state).
    """
    entries = er.async_entries_for_config_entry(
        entity_registry, init_integration.entry_id
    )
    enabled = {
        entry.entity_id
        for entry in entries
        if entry.domain == "sensor" and entry.disabled_by is None
    }
    disabled = {
        entry.entity_id
        for entry in entries
        if entry.disabled_by is er.RegistryEntryDisabler.INTEGRATION
    }

    assert enabled == {
        ACTIVE,
        "sensor.assist_memory_recall_tokens",
        "sensor.assist_memory_recall_tokens_today",
        "sensor.assist_memory_ai_task_calls_today",
        SIZE,
        "sensor.assist_memory_recall_latency",
        "sensor.assist_memory_conversations_waiting_for_digestion",
        "sensor.assist_memory_last_digestion",
    }
    assert disabled == {
        ARCHIVED,
        "sensor.assist_memory_memories_recalled_today",
        "sensor.assist_memory_conversations_captured_today",
        "sensor.assist_memory_digestion_memories_added_today",
        "sensor.assist_memory_digestion_memories_updated_today",
        "sensor.assist_memory_digestion_memories_superseded_today",
    }
    for entity_id in enabled:
        assert entity_state(hass, entity_id).state != STATE_UNAVAILABLE
    assert entity_state(hass, ACTIVE).state == "0"
    assert entity_state(hass, "sensor.assist_memory_recall_tokens_today").state == "0"
    assert entity_state(hass, "sensor.assist_memory_ai_task_calls_today").state == "0"
    for entity_id in disabled:
        assert hass.states.get(entity_id) is None


async def test_enabled_in_the_registry_reports(
    hass: HomeAssistant,
    enabled_sensors: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """A sensor enabled in the entity registry reports after the reload."""
    await add(hass, "Mia is allergic to nuts")
    await call(hass, "forget", {"query": "nuts"})
    await settle(hass, freezer)

    assert entity_state(hass, ARCHIVED).state == "1"


async def test_counts_follow_writes(
    hass: HomeAssistant,
    enabled_sensors: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Adds and forgets are pushed to the sensors without any polling."""
    await settle(hass, freezer)
    assert entity_state(hass, ACTIVE).state == "0"
    assert entity_state(hass, ACTIVE).attributes["by_type"] == {}
    assert entity_state(hass, ARCHIVED).state == "0"

    first = await add(hass, "Mia is allergic to nuts")
    await hass.async_block_till_done()

    assert entity_state(hass, ACTIVE).state == "1"
    assert entity_state(hass, ACTIVE).attributes["by_type"] == {"fact": 1}
    assert entity_state(hass, ACTIVE).attributes["by_scope"] == {"household": 1}

    await settle(hass, freezer)
    await add(hass, "Anna prefers tea", type="preference", person="person.anna")
    await add(hass, "Ben prefers coffee", type="preference", person="person.ben")
    await add(hass, "Bins go out on Thursday", type="instruction")
    # A burst is coalesced: the sensors catch up once the cooldown ends.
    await settle(hass, freezer)

    state = entity_state(hass, ACTIVE)
    assert state.state == "4"
    assert state.attributes["by_type"] == {
        "fact": 1,
        "instruction": 1,
        "preference": 2,
    }
    assert state.attributes["by_scope"] == {
        "household": 2,
        "person.anna": 1,
        "person.ben": 1,
    }

    await call(hass, "forget", {"ids": [first]})
    await hass.async_block_till_done()

    assert entity_state(hass, ACTIVE).state == "3"
    assert entity_state(hass, ARCHIVED).state == "1"
    assert "fact" not in entity_state(hass, ACTIVE).attributes["by_type"]

    await settle(hass, freezer)
    await call(hass, "forget", {"ids": [first], "purge": True})
    await hass.async_block_till_done()

    assert entity_state(hass, ACTIVE).state == "3"
    assert entity_state(hass, ARCHIVED).state == "0"


async def test_writes_during_a_slow_refresh_are_counted(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """A burst that lands while a slow refresh reads is on the sensors 2 s later.

    The store's read connection is held, for real, in the middle of a refresh:
    its trace hook (SQLite's, on the connection's own thread) waits at the
    statement after the memory counts, the way searches sharing the reader hold
    a refresh in use. The burst commits meanwhile, and the refresh's cooldown
    ends before the refresh does; nothing is written after the burst.
    """
    store = init_integration.runtime_data.store
    await settle(hass, freezer)
    counted = threading.Event()
    release = threading.Event()

    def hold_after_counts(sql: str) -> None:
        if "FROM embeddings" in sql and not release.is_set():
            counted.set()
            release.wait(10)

    await store.reader.set_trace_callback(hold_after_counts)
    try:
        await add(hass, "Mia is allergic to nuts")
        # The refresh this add asked for has counted one memory, and waits.
        assert await hass.async_add_executor_job(counted.wait, 10)
        for text in (
            "Anna prefers tea",
            "Ben prefers coffee",
            "Bins go out on Thursday",
            "The boiler is serviced in May",
        ):
            await add(hass, text)
        freezer.tick(REFRESH_COOLDOWN * 2)
        async_fire_time_changed(hass)
        await hass.async_add_executor_job(release.wait, 0.05)
    finally:
        release.set()
        await store.reader.set_trace_callback(None)
    await hass.async_block_till_done()

    freezer.tick(timedelta(seconds=2))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()

    stats = await store.stats()
    assert stats.by_status["active"] == 5
    assert entity_state(hass, ACTIVE).state == "5"


async def test_reads_do_not_refresh(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """Searches and reads leave the statistics alone."""
    item_id = await add(hass, "Mia is allergic to nuts")
    await hass.async_block_till_done()
    coordinator = init_integration.runtime_data.coordinator

    with patch.object(
        coordinator.store, "stats", wraps=coordinator.store.stats
    ) as stats:
        await call(hass, "search", {"query": "nuts"})
        await call(hass, "get", {"id": item_id})
        await call(hass, "forget", {"query": "nuts", "dry_run": True})
        await hass.async_block_till_done()

    stats.assert_not_called()


async def test_database_size(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """The database size is reported in MiB."""
    state = entity_state(hass, SIZE)

    assert state.attributes["unit_of_measurement"] == UnitOfInformation.MEBIBYTES
    assert float(state.state) > 0
    stats = await init_integration.runtime_data.store.stats()
    assert float(state.state) == pytest.approx(stats.database_bytes / 2**20)


async def test_stats_failure(
    hass: HomeAssistant,
    enabled_sensors: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """A failing statistics read makes the sensors unavailable, then they recover."""
    coordinator = enabled_sensors.runtime_data.coordinator
    await settle(hass, freezer)
    with patch(
        "custom_components.memory.engine.memory_store.MemoryStore.stats",
        side_effect=StoreError("database disk image is malformed"),
    ):
        await add(hass, "Mia is allergic to nuts")
        await hass.async_block_till_done()

        assert not coordinator.last_update_success
        for entity_id in (ACTIVE, ARCHIVED, SIZE):
            assert entity_state(hass, entity_id).state == STATE_UNAVAILABLE

    await settle(hass, freezer)
    await add(hass, "Bins go out on Thursday")
    await hass.async_block_till_done()

    assert coordinator.last_update_success
    assert entity_state(hass, ACTIVE).state == "2"


async def test_closed_store_makes_sensors_unavailable(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """Statistics from a store whose connections are gone fail gracefully."""
    coordinator = init_integration.runtime_data.coordinator
    await init_integration.runtime_data.store.close()

    await coordinator.async_refresh()
    await hass.async_block_till_done()

    assert not coordinator.last_update_success
    assert entity_state(hass, ACTIVE).state == STATE_UNAVAILABLE
