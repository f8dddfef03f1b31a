"""Assist Memory set up on a real PostgreSQL server, through Home Assistant.

Actions, Assist's recall, the sensors, the panel's browse, reload, removal,
diagnostics and the backup hooks on `postgres_database`; and a server that
is not there, or never answers: the entry waits in SETUP_RETRY (Home
Assistant retries by itself), quickly, and no log line holds the password.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import json
import logging
from pathlib import Path
import socket
import time

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import instance_id
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    mock_config_flow,
)
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import (
    ClientSessionGenerator,
    WebSocketGenerator,
)

from custom_components.memory import backend, backup
from custom_components.memory.const import (
    CONF_DIMENSIONS,
    CONF_MODEL,
    CONF_PROVIDER,
    DOMAIN,
)
from custom_components.memory.engine.embedding.secret_recheck import VERSION_SETTING
from custom_components.memory.engine.postgres import PostgresStore, redact_url
from custom_components.memory.engine.privacy.secrets import DETECTOR_VERSION
from custom_components.memory.export import export_folder
from tests.provider_servers import FakeEmbeddingServer

from . import add, call, entity_state, entry_state, search_ids, settle
from .assist import AgentConfigFlow, async_setup_agent, converse, recalled
from .postgres import password, postgres_entry, rows, setup_postgres_entry
from .test_providers import embedding_until

pytestmark = pytest.mark.usefixtures("socket_enabled")

ACTIVE = "sensor.assist_memory_active_memories"


@pytest.fixture
async def entry(
    hass: HomeAssistant, postgres_database: str, caplog: pytest.LogCaptureFixture
) -> AsyncIterator[MockConfigEntry]:
    """Assist Memory loaded on a fresh PostgreSQL database, logged at DEBUG.

    Unloaded before the database is dropped (a running Home Assistant
    keeps its store open until it stops).
    """
    caplog.set_level(logging.DEBUG)
    loaded = await setup_postgres_entry(hass, postgres_database)
    yield loaded
    await hass.async_block_till_done()
    if loaded.state is ConfigEntryState.LOADED:
        assert await hass.config_entries.async_unload(loaded.entry_id)


def assert_no_password(caplog: pytest.LogCaptureFixture, url: str) -> None:
    """No log line, at any level, holds the URL's password."""
    secret = password(url)
    assert caplog.records, "nothing was logged"
    assert not [r for r in caplog.records if secret in r.getMessage()]


async def test_actions_write_to_the_server(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    postgres_database: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Add, search, get and forget work, and the rows are in PostgreSQL."""
    assert isinstance(entry.runtime_data.store, PostgresStore)
    nuts = await add(hass, "Mia is allergic to nuts")
    bins = await add(hass, "The bins go out on Thursday")

    assert await search_ids(hass, query="allergic nuts") == [nuts]
    assert (await call(hass, "get", {"id": bins}))["content"] == (
        "The bins go out on Thursday"
    )
    assert (await call(hass, "add", {"content": "Mia is allergic to nuts"}))[
        "created"
    ] is False
    await call(hass, "forget", {"ids": [bins]})

    stored = await rows(
        postgres_database, "SELECT id, content, status FROM memories ORDER BY id"
    )
    assert stored == [
        {"id": nuts, "content": "Mia is allergic to nuts", "status": "active"},
        {"id": bins, "content": "The bins go out on Thursday", "status": "archived"},
    ]
    assert await search_ids(hass, query="bins") == []
    assert_no_password(caplog, postgres_database)


async def test_assist_recalls_from_the_server(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """An agent using the Memory API gets the memory in its prompt."""
    with mock_config_flow("test", AgentConfigFlow):
        agent = await async_setup_agent(hass)
    await add(hass, "Mia is allergic to nuts")
    await add(hass, "The bins go out on Thursday")

    await converse(hass, "What is Mia allergic to?")

    notes = recalled(agent.last_prompt)
    assert "Mia is allergic to nuts" in notes
    assert "bins" not in notes


async def test_the_sensors_count_and_the_panel_browses(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
    freezer: FrozenDateTimeFactory,
) -> None:
    """The memory-count sensor follows a write; the panel pages the memories."""
    await settle(hass, freezer)
    assert entity_state(hass, ACTIVE).state == "0"
    first = await add(hass, "Mia is allergic to nuts")
    # Past the cooldown of a refresh that a start-up write may have begun.
    await settle(hass, freezer)
    assert entity_state(hass, ACTIVE).state == "1"
    second = await add(hass, "The bins go out on Thursday")

    client = await hass_ws_client(hass)
    await client.send_json_auto_id({"type": "memory/browse", "limit": 1})
    reply = await client.receive_json()
    assert reply["success"], reply
    page = reply["result"]
    assert page["total"] == 2
    assert [memory["id"] for memory in page["memories"]] == [second]
    await client.send_json_auto_id(
        {"type": "memory/browse", "limit": 1, "cursor": page["cursor"]}
    )
    rest = (await client.receive_json())["result"]
    assert [memory["id"] for memory in rest["memories"]] == [first]


async def test_reload_keeps_everything_and_removal_leaves_the_server(
    hass: HomeAssistant, entry: MockConfigEntry, postgres_database: str
) -> None:
    """Reloading reads the same memories back; removing never drops the server's."""
    nuts = await add(hass, "Mia is allergic to nuts")
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry_state(entry) is ConfigEntryState.LOADED
    assert await search_ids(hass, query="nuts") == [nuts]
    assert not (Path(hass.config.path("memory", "memory.db"))).exists()

    assert await hass.config_entries.async_remove(entry.entry_id)
    await hass.async_block_till_done()

    stored = await rows(postgres_database, "SELECT content FROM memories")
    assert stored == [{"content": "Mia is allergic to nuts"}]


async def test_diagnostics_name_the_server_without_its_password(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    postgres_database: str,
    hass_client: ClientSessionGenerator,
) -> None:
    """The server by its redacted URL and versions; no SQLite integrity check."""
    await add(hass, "Mia is allergic to nuts")

    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, entry)

    store = diagnostics["store"]
    entry_data = diagnostics["entry"]
    assert isinstance(store, dict)
    assert isinstance(entry_data, dict)
    assert store["backend"] == "postgresql"
    assert store["server"] == redact_url(postgres_database)
    assert "***" in store["server"]
    assert store["server_problem"] == "ok"
    assert str(store["server_version"]).startswith("18")
    assert store["vector_version"]
    assert store["memories_by_status"] == {"active": 1}
    assert "integrity" not in diagnostics
    assert entry_data["data"] == {**entry.data, "db_url": "**REDACTED**"}
    assert password(postgres_database) not in json.dumps(diagnostics)


async def test_a_backup_holds_the_export_instead(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """A backup cannot hold the server: the full export is written for it."""
    await add(hass, "Mia is allergic to nuts")

    await backup.async_pre_backup(hass)
    # Writes never wait for a backup on PostgreSQL.
    during = await add(hass, "The holiday is decided: Lisbon in May")
    await backup.async_post_backup(hass)

    exported = await hass.async_add_executor_job(
        (export_folder(hass) / "memories.json").read_text
    )
    assert "Mia is allergic to nuts" in exported
    assert await search_ids(hass, query="Lisbon") == [during]


async def test_embeddings_are_claimed_in_this_home_assistants_name(
    hass: HomeAssistant,
    postgres_database: str,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """The queue claims as the store, named after the instance id; vectors land."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        data={
            **postgres_entry(postgres_database).data,
            CONF_PROVIDER: "ollama",
            CONF_URL: embedding_server.url,
            CONF_MODEL: "embed-small",
            CONF_DIMENSIONS: 32,
        },
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    store = entry.runtime_data.store
    assert isinstance(store, PostgresStore)
    name = f"ha-{await instance_id.async_get(hass)}"
    assert store.instance == runtime.queue.instance == name

    nuts = await add(hass, "Mia is allergic to nuts")

    async def embedded() -> bool:
        return bool((await runtime.queue.status()).ready == 1)

    await embedding_until(hass, entry, embedded)
    assert await rows(postgres_database, "SELECT memory_id FROM memory_vectors") == [
        {"memory_id": nuts}
    ]
    # The secret recheck ran after set-up, as on SQLite (PostgresStore has
    # no re-analysis of search terms yet).
    version = [{"value": DETECTOR_VERSION}]
    query = "SELECT value FROM store_settings WHERE name = $1"
    for _ in range(200):
        await hass.async_block_till_done()
        if await rows(postgres_database, query, VERSION_SETTING) == version:
            break
        await asyncio.sleep(0.05)
    assert await rows(postgres_database, query, VERSION_SETTING) == version
    assert await hass.config_entries.async_unload(entry.entry_id)


async def test_an_import_says_it_needs_sqlite(
    hass: HomeAssistant, entry: MockConfigEntry, postgres_database: str
) -> None:
    """Importing into PostgreSQL is refused, translated; nothing is stored."""
    with pytest.raises(HomeAssistantError) as raised:
        await call(hass, "import", {"text": "- Mia is allergic to nuts"})

    assert raised.value.translation_key == "import_postgresql"
    assert "Reconfigure" in str(raised.value)
    assert await rows(postgres_database, "SELECT id FROM memories") == []


async def test_a_backup_goes_on_when_the_export_cannot_be_written(
    hass: HomeAssistant, entry: MockConfigEntry, caplog: pytest.LogCaptureFixture
) -> None:
    """The export folder is a file: the backup is not stopped, a warning says why."""
    await add(hass, "Mia is allergic to nuts")
    folder = export_folder(hass)
    await hass.async_add_executor_job(folder.parent.mkdir, 0o755, True, True)
    await hass.async_add_executor_job(folder.write_text, "not a folder")

    await backup.async_pre_backup(hass)
    await backup.async_post_backup(hass)

    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        "could not be exported for the backup" in r.getMessage() for r in warnings
    )
    assert not any("Mia" in r.getMessage() for r in warnings)


async def test_a_database_too_new_is_an_error(
    hass: HomeAssistant, postgres_database: str
) -> None:
    """A schema newer than this code: set-up fails for good, the data untouched."""
    entry = await setup_postgres_entry(hass, postgres_database)
    assert await hass.config_entries.async_unload(entry.entry_id)
    await rows(postgres_database, "UPDATE memory_schema SET version = 999")

    assert not await hass.config_entries.async_setup(entry.entry_id)

    assert entry_state(entry) is ConfigEntryState.SETUP_ERROR
    assert entry.error_reason_translation_key == "postgresql_too_new"
    assert await rows(postgres_database, "SELECT version FROM memory_schema") == [
        {"version": 999}
    ]


def closed_port() -> int:
    """Return a local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
async def silent_port() -> AsyncIterator[int]:
    """Listen on a local port that accepts connections and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def accept(
        _reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        held.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    for writer in held:
        writer.close()
    server.close()
    await server.wait_closed()


async def _set_up_unreachable(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture, url: str
) -> MockConfigEntry:
    """Set up on `url`: it must wait in SETUP_RETRY within 5 s, the URL hidden."""
    caplog.set_level(logging.DEBUG)
    entry = postgres_entry(url)
    entry.add_to_hass(hass)
    started = time.monotonic()
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert time.monotonic() - started < 5
    assert entry_state(entry) is ConfigEntryState.SETUP_RETRY
    assert entry.error_reason_translation_key == "postgresql_unavailable"
    placeholders = entry.error_reason_translation_placeholders or {}
    assert placeholders["server"] == redact_url(url)
    assert "s3cret-word" not in json.dumps(placeholders)
    assert "s3cret-word" not in caplog.text
    return entry


async def test_a_closed_port_waits_for_the_server(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    """Nothing listens: Home Assistant retries; the password is never logged."""
    url = f"postgresql://memory:s3cret-word@127.0.0.1:{closed_port()}/memory"
    entry = await _set_up_unreachable(hass, caplog, url)
    assert (
        "Cannot reach PostgreSQL"
        in (entry.error_reason_translation_placeholders or {})["error"]
    )


async def test_a_server_that_never_answers_does_not_block_start_up(
    hass: HomeAssistant,
    caplog: pytest.LogCaptureFixture,
    silent_port: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A listener that never answers: set-up gives up after `OPEN_TIMEOUT`."""
    monkeypatch.setattr(backend, "OPEN_TIMEOUT", 0.5)
    url = f"postgresql://memory:s3cret-word@127.0.0.1:{silent_port}/memory"
    entry = await _set_up_unreachable(hass, caplog, url)
    assert (entry.error_reason_translation_placeholders or {})["error"] == (
        "no answer within 0.5 s"
    )
