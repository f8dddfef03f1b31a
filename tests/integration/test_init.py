"""Tests for setting up, reloading and removing Assist Memory."""

from __future__ import annotations

from datetime import timedelta
import logging
from pathlib import Path
import random
import re
import sqlite3
import threading
from typing import Any
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant import loader
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
    async_test_home_assistant,
)
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.memory.const import (
    CONF_DIMENSIONS,
    CONF_MODEL,
    CONF_PROVIDER,
    DOMAIN,
    EXPIRE_INTERVAL_SECONDS,
    PROVIDER_KEYWORD,
)
from custom_components.memory.engine import (
    DatabaseUnavailableError,
    MemoryStore,
    StoreError,
)
from custom_components.memory.repairs import async_create_fix_flow
from custom_components.memory.vector_backend import async_vector_backend_available
from tests.provider_servers import FakeEmbeddingServer

from . import add, call, entity_state, entry_state, search_ids, settle

GARBAGE = random.Random(1).randbytes(64 * 1024)


def _files(folder: Path) -> dict[str, bytes]:
    """Every file in the database folder with its bytes."""
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def _schema_version_and_tables(database: Path) -> tuple[int, set[str]]:
    conn = sqlite3.connect(database)
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    finally:
        conn.close()
    return version, tables


@pytest.fixture
def corrupt_database(database_file: Path) -> bytes:
    """Write random bytes where the database belongs."""
    database_file.parent.mkdir(parents=True)
    database_file.write_bytes(GARBAGE)
    return GARBAGE


@pytest.fixture
def future_database(database_file: Path) -> bytes:
    """Write a database of a schema version this code does not know."""
    database_file.parent.mkdir(parents=True)
    conn = sqlite3.connect(database_file)
    try:
        conn.execute("CREATE TABLE future (x)")
        conn.execute("INSERT INTO future VALUES ('kept')")
        conn.execute("PRAGMA user_version = 99")
        conn.commit()
    finally:
        conn.close()
    return database_file.read_bytes()


@pytest.fixture
def blocked_folder(database_file: Path) -> Path:
    """Put a regular file where the database folder should be created."""
    database_file.parent.parent.mkdir(parents=True, exist_ok=True)
    database_file.parent.write_text("not a folder")
    return database_file.parent


async def test_load_unload(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry, database_file: Path
) -> None:
    """The entry opens the database on set-up and closes it on unload."""
    mock_config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    assert mock_config_entry.state is ConfigEntryState.LOADED
    store = mock_config_entry.runtime_data.store
    assert store.path == database_file
    assert await hass.async_add_executor_job(database_file.is_file)
    assert store.database._writer is not None
    assert store.database._reader is not None

    assert await hass.config_entries.async_unload(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    assert entry_state(mock_config_entry) is ConfigEntryState.NOT_LOADED
    # Both connections (each an aiosqlite thread) are closed, and the harness
    # fails any test that leaves a thread, task or timer behind.
    assert store.database._writer is None
    assert store.database._reader is None
    assert store.database._listeners == []


async def test_unload_right_after_write(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A statistics refresh in flight finishes before the store closes."""
    await add(hass, "Mia is allergic to nuts")
    store = init_integration.runtime_data.store

    assert await hass.config_entries.async_unload(init_integration.entry_id)
    await hass.async_block_till_done()

    assert store.database._reader is None
    assert [
        r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING
    ] == []


async def test_reload_keeps_memories(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """A reload reopens the same database."""
    item_id = await add(hass, "The spare key is under the blue pot")
    old_store = init_integration.runtime_data.store

    assert await hass.config_entries.async_reload(init_integration.entry_id)
    await hass.async_block_till_done()

    assert init_integration.state is ConfigEntryState.LOADED
    assert init_integration.runtime_data.store is not old_store
    assert old_store.database._writer is None
    assert await search_ids(hass, query="spare key") == [item_id]


async def test_restart_keeps_memories(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry
) -> None:
    """Memories outlive an unload and a new Home Assistant on the same folder."""
    mock_config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    ids = [
        await add(hass, "Mia is allergic to nuts", tags=["health"]),
        await add(hass, "Bins go out on Thursday", type="instruction"),
        await add(hass, "Anna likes tea", person="person.anna"),
        await add(hass, "The old wifi password was hunter2"),
    ]
    await call(hass, "forget", {"ids": [ids[-1]]})
    before = [await call(hass, "get", {"id": item_id}) for item_id in ids]

    assert await hass.config_entries.async_unload(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    assert [await call(hass, "get", {"id": item_id}) for item_id in ids] == before
    # Unloading closed it cleanly: the header and schema were checked, not
    # every page.
    last_check = mock_config_entry.runtime_data.store.last_check
    assert last_check is not None
    assert last_check.kind == "quick"

    # A second Home Assistant process on the same configuration folder.
    assert await hass.config_entries.async_unload(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    async with async_test_home_assistant(config_dir=hass.config.config_dir) as hass2:
        hass2.data.pop(loader.DATA_CUSTOM_COMPONENTS)
        entry2 = MockConfigEntry(domain=DOMAIN, data={CONF_PROVIDER: PROVIDER_KEYWORD})
        entry2.add_to_hass(hass2)
        assert await hass2.config_entries.async_setup(entry2.entry_id)
        await hass2.async_block_till_done()

        after = [await call(hass2, "get", {"id": item_id}) for item_id in ids]
        assert after == before
        assert await search_ids(hass2, query="nuts") == [ids[0]]
        assert await search_ids(hass2, query="wifi password") == []
        assert await search_ids(hass2, query="wifi", status="archived") == [ids[-1]]
        assert (await call(hass2, "add", {"content": "Mia is allergic to nuts"}))[
            "created"
        ] is False

        assert await hass2.config_entries.async_unload(entry2.entry_id)
        await hass2.async_block_till_done()
        await hass2.async_stop(force=True)


async def test_corrupt_database(
    hass: HomeAssistant,
    mock_config_entry: MockConfigEntry,
    database_file: Path,
    corrupt_database: bytes,
) -> None:
    """A damaged file fails set-up with a clear error and is left untouched."""
    mock_config_entry.add_to_hass(hass)

    assert not await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    assert mock_config_entry.state is ConfigEntryState.SETUP_ERROR
    assert mock_config_entry.error_reason_translation_key == "database_corrupt"
    assert mock_config_entry.error_reason_translation_placeholders == {
        "path": str(database_file)
    }
    assert mock_config_entry.reason is not None
    assert "damaged" in mock_config_entry.reason
    files = await hass.async_add_executor_job(_files, database_file.parent)
    assert files == {"memory.db": corrupt_database}


def _damage_pages(database: Path, first: int, count: int) -> None:
    """Write random bytes over `count` pages of a real database, in place."""
    with database.open("r+b") as file:
        file.seek(first * 4096)
        file.write(random.Random(3).randbytes(count * 4096))


async def _fix_issue(
    hass: HomeAssistant, hass_client: ClientSessionGenerator, issue_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Start the issue's fix flow over HTTP as the frontend does; submit it."""
    client = await hass_client()
    response = await client.post(
        "/api/repairs/issues/fix", json={"handler": DOMAIN, "issue_id": issue_id}
    )
    assert response.status == 200
    form: dict[str, Any] = await response.json()
    response = await client.post(f"/api/repairs/issues/fix/{form['flow_id']}")
    assert response.status == 200
    return form, await response.json()


async def test_damaged_database_repair(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    mock_config_entry: MockConfigEntry,
    database_file: Path,
) -> None:
    """A damaged database raises a fixable issue; fixing it moves it aside."""
    assert await async_setup_component(hass, "repairs", {})
    mock_config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    for number in range(300):
        await add(hass, f"Memory number {number} " + "with some padding " * 20)
    assert await hass.config_entries.async_unload(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    _damage_pages(database_file, 30, 8)
    damaged = database_file.read_bytes()

    assert not await hass.config_entries.async_reload(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    assert mock_config_entry.state is ConfigEntryState.SETUP_ERROR
    issue = ir.async_get(hass).async_get_issue(DOMAIN, "database_corrupt")
    assert issue is not None
    assert issue.is_fixable
    assert issue.translation_placeholders == {"path": str(database_file)}
    # Nothing is touched until the user confirms.
    assert database_file.read_bytes() == damaged

    today = dt_util.now().strftime("%Y-%m-%d")
    form, result = await _fix_issue(hass, hass_client, "database_corrupt")
    await hass.async_block_till_done()

    assert form["type"] == "form"
    assert form["step_id"] == "confirm"
    assert form["description_placeholders"] == {"path": str(database_file)}
    assert result["type"] == "create_entry"
    assert entry_state(mock_config_entry) is ConfigEntryState.LOADED
    assert ir.async_get(hass).async_get_issue(DOMAIN, "database_corrupt") is None
    files = await hass.async_add_executor_job(_files, database_file.parent)
    moved = [name for name in files if name.startswith("memory.db.corrupt-")]
    assert len(moved) == 1
    assert re.fullmatch(rf"memory\.db\.corrupt-{today}T\d\d-\d\d-\d\d", moved[0])
    assert files[moved[0]] == damaged
    assert await search_ids(hass, query="number") == []
    item_id = await add(hass, "A fresh start")
    assert await search_ids(hass, query="fresh") == [item_id]


async def test_damaged_database_fix_flow_after_recovery(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    mock_config_entry: MockConfigEntry,
    database_file: Path,
    corrupt_database: bytes,
) -> None:
    """A database that opens meanwhile (restored) is not moved by a stale flow."""
    assert await async_setup_component(hass, "repairs", {})
    mock_config_entry.add_to_hass(hass)
    assert not await hass.config_entries.async_setup(mock_config_entry.entry_id)
    client = await hass_client()
    response = await client.post(
        "/api/repairs/issues/fix",
        json={"handler": DOMAIN, "issue_id": "database_corrupt"},
    )
    form = await response.json()
    # Restored from a backup by hand, then loaded.
    database_file.unlink()
    assert await hass.config_entries.async_reload(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    assert ir.async_get(hass).async_get_issue(DOMAIN, "database_corrupt") is None

    response = await client.post(f"/api/repairs/issues/fix/{form['flow_id']}")
    result = await response.json()

    assert result["type"] == "abort"
    assert result["reason"] == "not_damaged"
    files = await hass.async_add_executor_job(_files, database_file.parent)
    assert not [name for name in files if "corrupt" in name]


async def test_no_fix_flow_for_other_issues(hass: HomeAssistant) -> None:
    """Only the damaged database has a fix flow."""
    with pytest.raises(ValueError, match="no fix flow"):
        await async_create_fix_flow(hass, "provider_unavailable", None)


async def test_database_too_new(
    hass: HomeAssistant,
    mock_config_entry: MockConfigEntry,
    database_file: Path,
    future_database: bytes,
) -> None:
    """A database from a newer version is refused, neither migrated nor changed."""
    mock_config_entry.add_to_hass(hass)

    assert not await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    assert mock_config_entry.state is ConfigEntryState.SETUP_ERROR
    assert mock_config_entry.error_reason_translation_key == "database_too_new"
    assert mock_config_entry.error_reason_translation_placeholders == {
        "path": str(database_file),
        "version": "99",
    }
    files = await hass.async_add_executor_job(_files, database_file.parent)
    assert files == {"memory.db": future_database}
    version, tables = await hass.async_add_executor_job(
        _schema_version_and_tables, database_file
    )
    assert version == 99
    assert tables == {"future"}


async def test_database_folder_unavailable(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry, blocked_folder: Path
) -> None:
    """A folder that cannot be created is retried later, not reported as damage."""
    mock_config_entry.add_to_hass(hass)

    assert not await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    assert mock_config_entry.state is ConfigEntryState.SETUP_RETRY
    assert mock_config_entry.error_reason_translation_key == "database_unavailable"
    assert await hass.async_add_executor_job(blocked_folder.read_text) == (
        "not a folder"
    )


async def test_first_refresh_failure(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry
) -> None:
    """If the first statistics read fails, set-up is retried and the store closed."""
    mock_config_entry.add_to_hass(hass)
    with patch(
        "custom_components.memory.engine.memory_store.MemoryStore.stats",
        side_effect=StoreError("disk I/O error"),
    ):
        assert not await hass.config_entries.async_setup(mock_config_entry.entry_id)
        await hass.async_block_till_done()

    assert mock_config_entry.state is ConfigEntryState.SETUP_RETRY
    assert mock_config_entry.error_reason_translation_key == "stats_failed"
    # No open connection is left behind: the harness checks for its threads.


async def test_remove_entry_deletes_database(
    hass: HomeAssistant, init_integration: MockConfigEntry, database_file: Path
) -> None:
    """Removing the integration deletes the database and its side files."""
    await add(hass, "Mia is allergic to nuts")
    folder = database_file.parent
    names = await hass.async_add_executor_job(
        lambda: {p.name for p in folder.iterdir()}
    )
    assert "memory.db" in names

    await hass.config_entries.async_remove(init_integration.entry_id)
    await hass.async_block_till_done()

    assert init_integration.state is ConfigEntryState.NOT_LOADED
    assert await hass.async_add_executor_job(lambda: list(folder.iterdir())) == []


async def test_expiry_timer(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    enabled_sensors: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """The periodic timer archives a memory once its expiry time has passed."""
    short = await add(hass, "The plumber comes today", expires_in={"hours": 1})
    lasting = await add(hass, "The plumber is called Luigi", expires_in={"days": 7})
    await add(hass, "Mia is allergic to nuts")
    # Sensor refreshes are debounced by a second.
    await settle(hass, freezer)
    assert entity_state(hass, "sensor.assist_memory_active_memories").state == "3"

    # Before the expiry time nothing changes.
    freezer.tick(timedelta(seconds=EXPIRE_INTERVAL_SECONDS))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert (await call(hass, "get", {"id": short}))["status"] == "active"

    freezer.tick(timedelta(hours=1))
    async_fire_time_changed(hass)
    # The interval job runs as a background task.
    await hass.async_block_till_done(wait_background_tasks=True)

    expired = await call(hass, "get", {"id": short})
    assert expired["status"] == "archived"
    assert expired["valid_to"] == expired["expires_at"]
    assert (await call(hass, "get", {"id": lasting}))["status"] == "active"
    assert await search_ids(hass, query="plumber") == [lasting]
    # The change is pushed to the sensors.
    await settle(hass, freezer)
    assert entity_state(hass, "sensor.assist_memory_active_memories").state == "2"
    assert entity_state(hass, "sensor.assist_memory_archived_memories").state == "1"


async def test_expired_at_startup(
    hass: HomeAssistant,
    enabled_sensors: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Memories that expired while Home Assistant was down are archived at start."""
    mock_config_entry = enabled_sensors
    item_id = await add(hass, "The plumber comes today", expires_in={"hours": 1})
    assert await hass.config_entries.async_unload(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    freezer.tick(timedelta(hours=2))
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    assert (await call(hass, "get", {"id": item_id}))["status"] == "archived"
    await settle(hass, freezer)
    assert entity_state(hass, "sensor.assist_memory_archived_memories").state == "1"


async def test_vector_backend_available(
    hass: HomeAssistant, hass_storage: dict[str, Any]
) -> None:
    """No sqlite-vec: an earlier version's remembered failed install is forgotten."""
    hass_storage[f"{DOMAIN}.vector_backend"] = {
        "version": 1,
        "minor_version": 1,
        "key": f"{DOMAIN}.vector_backend",
        "data": {"failed": {"requirement": "sqlite-vec==0.1.9"}},
    }
    assert await async_vector_backend_available(hass) is False
    assert f"{DOMAIN}.vector_backend" not in hass_storage
    assert await async_vector_backend_available(hass) is False


async def test_model_entry_uses_the_numpy_index(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """An entry with an embedding model searches the numpy index; nothing installs."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        data={
            CONF_PROVIDER: "ollama",
            CONF_URL: embedding_server.url,
            CONF_MODEL: "embed-small",
            CONF_DIMENSIONS: 32,
        },
    )
    entry.add_to_hass(hass)
    with patch(
        "homeassistant.requirements.RequirementsManager.async_process_requirements"
    ) as process:
        assert await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()

    process.assert_not_called()
    assert entry.state is ConfigEntryState.LOADED
    assert entry.runtime_data.store.model is not None
    assert entry.runtime_data.store.vector_backend == "numpy"
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    store = diagnostics["store"]
    assert isinstance(store, dict)
    assert store["vector_backend"] == "numpy"
    assert store["active_model"] == entry.runtime_data.store.model


async def test_keyword_entry_uses_the_numpy_index(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry
) -> None:
    """Keyword-only search: the same backend name in the diagnostics."""
    mock_config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    assert mock_config_entry.runtime_data.store.vector_backend == "numpy"


async def test_stop_closes_the_database(hass: HomeAssistant) -> None:
    """Home Assistant does not unload entries when it stops; the store closes anyway."""
    async with async_test_home_assistant(config_dir=hass.config.config_dir) as hass2:
        hass2.data.pop(loader.DATA_CUSTOM_COMPONENTS)
        entry2 = MockConfigEntry(domain=DOMAIN, data={CONF_PROVIDER: PROVIDER_KEYWORD})
        entry2.add_to_hass(hass2)
        assert await hass2.config_entries.async_setup(entry2.entry_id)
        await hass2.async_block_till_done()
        item_id = await add(hass2, "The holiday is decided: Lisbon in May")
        store = entry2.runtime_data.store

        await hass2.async_stop(force=True)

        assert entry2.state is ConfigEntryState.LOADED  # never unloaded
        with pytest.raises(DatabaseUnavailableError):
            _ = store.reader
        assert not [
            thread
            for thread in threading.enumerate()
            if "_connection_worker_thread" in thread.name
        ]

    reopened = MemoryStore(store.path)
    await reopened.open()
    try:
        # Stopping is a clean close: the next start reads only the header.
        assert reopened.last_check is not None
        assert reopened.last_check.kind == "quick"
        item = await reopened.get(item_id)
        assert item is not None
        assert item.content == "The holiday is decided: Lisbon in May"
    finally:
        await reopened.close()
