"""Tests for the Home Assistant side of Assist Memory."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import (
    SOURCE_RECONFIGURE,
    SOURCE_USER,
    ConfigEntry,
    ConfigEntryState,
    ConfigFlowResult,
)
from homeassistant.const import CONF_URL
from homeassistant.core import Context, HomeAssistant, ServiceResponse, State
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.memory.const import (
    BACKEND_SQLITE,
    CONF_DIMENSIONS,
    CONF_MODEL,
    CONF_PROVIDER,
    DOMAIN,
)
from custom_components.memory.coordinator import REFRESH_COOLDOWN


async def start_setup(hass: HomeAssistant) -> ConfigFlowResult:
    """Start set-up and keep memories in SQLite: the provider menu comes next."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": SOURCE_USER}
    )
    assert result["step_id"] == "user"
    return await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": BACKEND_SQLITE}
    )


async def start_reconfigure(
    hass: HomeAssistant, entry: ConfigEntry
) -> ConfigFlowResult:
    """Start reconfigure and choose the embedding provider: its menu comes next."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": SOURCE_RECONFIGURE, "entry_id": entry.entry_id}
    )
    assert result["step_id"] == "reconfigure"
    return await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "provider"}
    )


async def call(
    hass: HomeAssistant,
    service: str,
    data: dict[str, Any] | None = None,
    *,
    context: Context | None = None,
) -> dict[str, Any]:
    """Call a `memory.*` action the way a script does and return its response."""
    response: ServiceResponse = await hass.services.async_call(
        DOMAIN,
        service,
        data or {},
        blocking=True,
        return_response=True,
        context=context,
    )
    assert response is not None
    return dict(response)


async def add(
    hass: HomeAssistant, content: str, *, context: Context | None = None, **data: Any
) -> int:
    """Add a memory and return its id."""
    response = await call(hass, "add", {"content": content, **data}, context=context)
    item_id = response["id"]
    assert isinstance(item_id, int)
    return item_id


async def search_ids(
    hass: HomeAssistant, *, context: Context | None = None, **data: Any
) -> list[int]:
    """Ids that `memory.search` returns, best first."""
    response = await call(hass, "search", data, context=context)
    return [hit["id"] for hit in response["memories"]]


def entity_state(hass: HomeAssistant, entity_id: str) -> State:
    """Return the state of an entity that must exist."""
    state = hass.states.get(entity_id)
    assert state is not None, f"{entity_id} has no state"
    return state


def entry_state(entry: ConfigEntry) -> ConfigEntryState:
    """Read an entry's state afresh (type checkers keep an earlier narrowing)."""
    return entry.state


async def settle(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """Let the sensors' refresh cooldown pass, so the next write is pushed at once.

    A refresh held back by the cooldown runs when it ends and starts another
    cooldown; a few rounds leave the debouncer idle. Refreshes in flight finish
    first: a cooldown that ends during one is dropped as already served. So
    does background work the ticks start (conversation retention's hourly
    run): its commit, landing after the last round, would start a refresh
    and a cooldown that holds back the next write's.
    """
    for _ in range(5):
        await hass.async_block_till_done(wait_background_tasks=True)
        freezer.tick(REFRESH_COOLDOWN + timedelta(seconds=1))
        async_fire_time_changed(hass)
        await hass.async_block_till_done(wait_background_tasks=True)


async def setup_embedding_entry(hass: HomeAssistant, url: str) -> MockConfigEntry:
    """Set up Assist Memory on an Ollama-speaking embedding server's small model."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Assist Memory",
        data={
            CONF_PROVIDER: "ollama",
            CONF_URL: url,
            CONF_MODEL: "embed-small",
            CONF_DIMENSIONS: 32,
        },
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return entry
