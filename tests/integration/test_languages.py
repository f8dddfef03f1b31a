"""Keyword search in the household's language, through Home Assistant."""

from __future__ import annotations

from pathlib import Path

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.engine.store.test_migrations import build_database

from . import add, call, search_ids
from .assist import RecordingAgent, converse, recalled


async def test_upgrade_reanalyses_in_the_background(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry, database_file: Path
) -> None:
    """Memories of an older version become searchable once set-up is done."""
    database_file.parent.mkdir(parents=True)
    build_database(database_file, 6)
    mock_config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)

    assert await search_ids(hass, query="spare key") == [1]
    assert await search_ids(hass, query="tea") == [2]
    assert (await call(hass, "get", {"id": 1}))["language"] == "en"
    store = mock_config_entry.runtime_data.store
    assert await store.pending_analysis() == 0


async def test_memories_keep_their_language(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry
) -> None:
    """Home Assistant's language is the default; an action may name another."""
    hass.config.language = "de"
    mock_config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    german = await add(hass, "Leo feiert seinen Geburtstag am Samstag")
    english = await add(hass, "The boiler is serviced every May", language="en-GB")
    assert (await call(hass, "get", {"id": german}))["language"] == "de"
    assert (await call(hass, "get", {"id": english}))["language"] == "en"
    # Each is found in its own language's inflections.
    assert await search_ids(hass, query="Geburtstags") == [german]
    assert await search_ids(hass, query="boilers serviced", language="en") == [english]


@pytest.mark.parametrize("language", ["", "german language", "d", "de-" + "x" * 9, 7])
async def test_a_bad_language_is_refused(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry, language: object
) -> None:
    """A language that is no language tag is refused before anything is stored."""
    mock_config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    with pytest.raises(ServiceValidationError):
        await call(hass, "add", {"content": "Bins on Thursday", "language": language})
    with pytest.raises(ServiceValidationError):
        await call(hass, "search", {"query": "bins", "language": language})
    assert await search_ids(hass, query="bins") == []


async def test_recall_in_the_language_of_the_turn(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
) -> None:
    """A German turn's words are analysed in German: inflections find the memory."""
    swimming = await add(
        hass, "Mia hat dienstags Schwimmunterricht im Hallenbad", language="de"
    )
    await add(hass, "The bins go out on Thursday")

    # Analysed as English, "Hallenbädern" (dative plural) keeps its ending.
    await converse(hass, "Fahren wir zu den Hallenbädern?", language="en")
    assert f"#{swimming}" not in recalled(assist_agent.last_prompt)

    await converse(hass, "Fahren wir zu den Hallenbädern?", language="de")
    notes = recalled(assist_agent.last_prompt)
    assert f"#{swimming} Mia hat dienstags Schwimmunterricht" in notes
    assert await search_ids(hass, query="Hallenbädern", language="de") == [swimming]
    assert await search_ids(hass, query="Hallenbädern") == []
