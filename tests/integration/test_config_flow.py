"""Tests for the Assist Memory config and options flows."""

from __future__ import annotations

from homeassistant.config_entries import SOURCE_USER, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType, InvalidData
import probatio
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.memory.const import (
    BACKEND_SQLITE,
    CONF_BACKEND,
    CONF_CONVERSATION_RETENTION_DAYS,
    CONF_MIN_SCORE,
    CONF_PROVIDER,
    CONF_RECALL_BUDGET,
    CONF_RECALL_EARLIER_HOURS,
    CONF_RECALL_FOLLOW_UPS,
    CONF_RECALL_KEEP,
    CONF_RECALL_MIN_SCORE,
    CONF_SATELLITE_PERSONS,
    CONF_SEARCH_LIMIT,
    DEFAULT_MIN_SCORE,
    DEFAULT_RECALL_EARLIER_HOURS,
    DEFAULT_SEARCH_LIMIT,
    DOMAIN,
    MAX_RECALL_EARLIER_HOURS,
    PROVIDER_KEYWORD,
)

from . import add, call, search_ids, start_setup


def _default(schema: probatio.Schema | None, key: str) -> object:
    """Return the default a form field shows."""
    assert schema is not None
    for marker in schema.schema:
        if marker == key:
            return marker.default()
    raise AssertionError(f"{key} is not in the form")


async def test_user_flow_keyword(hass: HomeAssistant) -> None:
    """Keyword search is one click from the menu and needs nothing else."""
    result = await start_setup(hass)
    assert result["type"] is FlowResultType.MENU
    assert result["step_id"] == "provider"
    assert PROVIDER_KEYWORD in result["menu_options"]

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": PROVIDER_KEYWORD}
    )
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Assist Memory"
    assert result["data"] == {
        CONF_BACKEND: BACKEND_SQLITE,
        CONF_PROVIDER: PROVIDER_KEYWORD,
    }
    assert result["options"] == {}
    entry = result["result"]
    assert entry.state is ConfigEntryState.LOADED
    assert entry.runtime_data.store.model is None
    assert len(hass.config_entries.async_entries(DOMAIN)) == 1


async def test_single_instance(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry
) -> None:
    """A second entry is refused: there is one database per Home Assistant."""
    mock_config_entry.add_to_hass(hass)

    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": SOURCE_USER}
    )

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "single_instance_allowed"
    assert len(hass.config_entries.async_entries(DOMAIN)) == 1


async def test_options_flow(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """The options set the defaults `memory.search` uses when a call does not say."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
    for word in words:
        await add(hass, f"garden {word}")
    # Without options, the built-in default limit applies.
    assert len(await search_ids(hass, query="garden")) == DEFAULT_SEARCH_LIMIT

    result = await hass.config_entries.options.async_init(init_integration.entry_id)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "init"
    schema = result["data_schema"]
    assert _default(schema, CONF_SEARCH_LIMIT) == DEFAULT_SEARCH_LIMIT
    assert _default(schema, CONF_MIN_SCORE) == DEFAULT_MIN_SCORE

    # The number selector hands over floats; the options keep an int limit.
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_SEARCH_LIMIT: 2.0, CONF_MIN_SCORE: 0.8}
    )
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert init_integration.options[CONF_SEARCH_LIMIT] == 2
    assert isinstance(init_integration.options[CONF_SEARCH_LIMIT], int)
    assert init_integration.options[CONF_MIN_SCORE] == 0.8

    # The limit default is applied...
    assert len(await search_ids(hass, query="garden")) == 2
    # ...and so is the minimum score: "garden alpha" and the others match only
    # half of the query, and score below 0.8.
    roses = await add(hass, "garden roses")
    response = await call(hass, "search", {"query": "garden roses"})
    assert [hit["id"] for hit in response["memories"]] == [roses]
    assert all(hit["score"] >= 0.8 for hit in response["memories"])
    # A call's own values still win over the options.
    wide = await search_ids(hass, query="garden roses", limit=10, min_score=0)
    assert len(wide) == len(words) + 1

    # Reopening the form shows the stored values.
    result = await hass.config_entries.options.async_init(init_integration.entry_id)
    assert _default(result["data_schema"], CONF_SEARCH_LIMIT) == 2
    assert _default(result["data_schema"], CONF_MIN_SCORE) == 0.8


async def test_options_for_recall_across_a_conversation(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """Follow-ups, kept memories and Earlier are on by default and switch off."""
    result = await hass.config_entries.options.async_init(init_integration.entry_id)
    schema = result["data_schema"]
    assert _default(schema, CONF_RECALL_FOLLOW_UPS) is True
    assert _default(schema, CONF_RECALL_KEEP) is True
    assert _default(schema, CONF_RECALL_EARLIER_HOURS) == DEFAULT_RECALL_EARLIER_HOURS
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            CONF_RECALL_FOLLOW_UPS: False,
            CONF_RECALL_KEEP: False,
            CONF_RECALL_EARLIER_HOURS: 3.0,
        },
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    options = init_integration.options
    assert options[CONF_RECALL_FOLLOW_UPS] is False
    assert options[CONF_RECALL_KEEP] is False
    assert options[CONF_RECALL_EARLIER_HOURS] == 3
    assert isinstance(options[CONF_RECALL_EARLIER_HOURS], int)
    # Beyond two days, or NaN, is refused.
    result = await hass.config_entries.options.async_init(init_integration.entry_id)
    with pytest.raises(InvalidData):
        await hass.config_entries.options.async_configure(
            result["flow_id"], {CONF_RECALL_EARLIER_HOURS: MAX_RECALL_EARLIER_HOURS + 1}
        )
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_RECALL_EARLIER_HOURS: float("nan")}
    )
    assert result["errors"] == {CONF_RECALL_EARLIER_HOURS: "invalid_number"}


async def test_options_mapping_of_a_removed_satellite(hass: HomeAssistant) -> None:
    """A mapping whose satellite device is gone is shown by id and can be removed."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Assist Memory",
        data={CONF_PROVIDER: PROVIDER_KEYWORD},
        options={CONF_SATELLITE_PERSONS: {"gone-device": "person.anna"}},
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()

    result = await hass.config_entries.options.async_init(entry.entry_id)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            CONF_SEARCH_LIMIT: DEFAULT_SEARCH_LIMIT,
            CONF_MIN_SCORE: DEFAULT_MIN_SCORE,
            CONF_RECALL_BUDGET: 300,
            CONF_RECALL_MIN_SCORE: 0.5,
            CONF_CONVERSATION_RETENTION_DAYS: 30,
        },
    )
    assert result["step_id"] == "satellites"
    # Neither the device nor the person exists any more: ids stand in for names.
    assert result["description_placeholders"] == {
        "mappings": "- gone-device → person.anna"
    }
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"remove": ["gone-device"]}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options[CONF_SATELLITE_PERSONS] == {}
