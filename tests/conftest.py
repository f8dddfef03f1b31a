"""Fixtures shared by the Assist Memory tests.

The pytest-homeassistant-custom-component plugin (hass, MockConfigEntry,
snapshot, ...) is loaded through its pytest11 entry point.
"""

from collections.abc import AsyncIterator
from datetime import timedelta
import gc
from pathlib import Path

import aiosqlite
from homeassistant.config_entries import RELOAD_AFTER_UPDATE_DELAY
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
    mock_config_flow,
)
from pytest_homeassistant_custom_component.syrupy import HomeAssistantSnapshotExtension
from syrupy.assertion import SnapshotAssertion

from custom_components.memory.const import CONF_PROVIDER, DOMAIN, PROVIDER_KEYWORD
from tests.provider_servers import FakeEmbeddingServer

from .integration.ai_task_agent import (
    ScriptedAITask,
    ai_task_config_flow,
    async_setup_ai_task,
)
from .integration.assist import (
    AgentConfigFlow,
    Household,
    RecordingAgent,
    async_setup_agent,
    async_setup_household,
)
from .integration.ollama_peer import OllamaAgent, OllamaPeer, async_setup_ollama_agent

# postgres_url and postgres_database: a real PostgreSQL server with pgvector.
pytest_plugins = ["tests.postgres_server"]


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(request: pytest.FixtureRequest) -> None:
    """Let every test that runs Home Assistant load custom_components/memory.

    Engine tests do not use hass, and do not pay for starting it.
    """
    if "hass" in request.fixturenames:
        request.getfixturevalue("enable_custom_integrations")


@pytest.fixture(autouse=True)
def isolated_config_dir(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Give each Home Assistant test its own config folder.

    The harness's default folder lives inside the installed package, so a
    database written there would leak from one test into the next.
    """
    if "hass" in request.fixturenames:
        hass: HomeAssistant = request.getfixturevalue("hass")
        hass.config.config_dir = str(tmp_path / "config")


@pytest.fixture
def mock_config_entry() -> MockConfigEntry:
    """Return an Assist Memory entry on keyword-only search."""
    return MockConfigEntry(
        domain=DOMAIN,
        title="Assist Memory",
        data={CONF_PROVIDER: PROVIDER_KEYWORD},
        entry_id="01JMEMORYENTRY0000000000000",
    )


@pytest.fixture
async def init_integration(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry
) -> MockConfigEntry:
    """Set up the integration the way Home Assistant does."""
    mock_config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    return mock_config_entry


@pytest.fixture
async def enabled_sensors(
    hass: HomeAssistant,
    entity_registry: er.EntityRegistry,
    init_integration: MockConfigEntry,
) -> MockConfigEntry:
    """Assist Memory loaded with the sensors it disables by default enabled.

    Done as a user does it: enable them in the entity registry, and let Home
    Assistant reload the entry once its delay has passed.
    """
    disabled = [
        entry.entity_id
        for entry in er.async_entries_for_config_entry(
            entity_registry, init_integration.entry_id
        )
        if entry.disabled_by is er.RegistryEntryDisabler.INTEGRATION
    ]
    assert disabled, "nothing is disabled by default"
    for entity_id in disabled:
        entity_registry.async_update_entity(entity_id, disabled_by=None)
    async_fire_time_changed(
        hass, dt_util.utcnow() + timedelta(seconds=RELOAD_AFTER_UPDATE_DELAY + 1)
    )
    await hass.async_block_till_done()
    assert all(hass.states.get(entity_id) for entity_id in disabled)
    return init_integration


@pytest.fixture
def database_file(hass: HomeAssistant) -> Path:
    """Where the integration keeps its database in this test's config folder."""
    return Path(hass.config.path("memory", "memory.db"))


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """Serialise Home Assistant objects, and keep files in `snapshots/` like core.

    The harness defines the same fixture, but syrupy's own plugin registers
    after it and would win without this override.
    """
    return snapshot.use_extension(HomeAssistantSnapshotExtension)


@pytest.fixture
async def embedding_server(socket_enabled: None) -> AsyncIterator[FakeEmbeddingServer]:
    """Run a local server speaking Ollama's, OpenAI's and Gemini's embedding APIs."""
    server = FakeEmbeddingServer()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def assist_agent(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> AsyncIterator[RecordingAgent]:
    """Assist Memory loaded, and a conversation agent using the Assist and Memory APIs."""
    with mock_config_flow("test", AgentConfigFlow):
        yield await async_setup_agent(hass)


@pytest.fixture
async def ollama(
    hass: HomeAssistant, init_integration: MockConfigEntry, socket_enabled: None
) -> AsyncIterator[OllamaAgent]:
    """Assist Memory, and Home Assistant's `ollama` agent on a scripted Ollama server."""
    peer = OllamaPeer()
    await peer.start()
    yield await async_setup_ollama_agent(hass, peer)
    await peer.stop()


@pytest.fixture
async def ai_task(hass: HomeAssistant) -> AsyncIterator[ScriptedAITask]:
    """Set up a scripted AI Task entity, Home Assistant's preferred one.

    Request it before `init_integration` so Assist Memory finds it at set-up.
    """
    with ai_task_config_flow():
        yield await async_setup_ai_task(hass)


@pytest.fixture
async def household(hass: HomeAssistant) -> Household:
    """Anna (a user) and Ben (an admin), each linked to a person entity."""
    return await async_setup_household(hass)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop aiosqlite worker threads that a failed test left running.

    They are not daemon threads: one left running keeps pytest (and CI) from
    exiting after the report. Tests that leak one fail on their own (the
    harness's lingering-thread check); this only lets the run end.
    """
    for obj in gc.get_objects():
        if isinstance(obj, aiosqlite.Connection) and obj._running:
            obj.stop()
