"""Two Home Assistants sharing one memory on one PostgreSQL database.

The `hass` fixture and a second instance from `async_test_home_assistant`,
each with its own users linked to `person.anna` and `person.ben`, and each
with an entry on the same database. Persons match across instances by
person entity id: a memory stored for `person.anna` in one home is Anna's
in the other, whichever user is linked to `person.anna` there; user ids
never leave their Home Assistant. Two homes that name one person
differently (`person.anna` and `person.anna_2`) keep two scopes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from freezegun.api import FrozenDateTimeFactory
from homeassistant import loader
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import instance_id
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
    mock_config_flow,
)

from custom_components.memory.engine.postgres import PostgresStore

from . import add, call, entity_state, search_ids, settle
from .assist import (
    ANNA,
    AgentConfigFlow,
    RecordingAgent,
    async_add_person,
    async_setup_agent,
    converse,
    recalled,
)
from .postgres import rows, setup_postgres_entry

pytestmark = pytest.mark.usefixtures("socket_enabled")

ACTIVE = "sensor.assist_memory_active_memories"
FACT = "Anna's running shoes are size 39"


class Home:
    """One Home Assistant on the shared database: its entry, agent and people."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: MockConfigEntry,
        agent: RecordingAgent,
        anna: Context,
        ben: Context,
    ) -> None:
        """Hold what a test uses of one home."""
        self.hass = hass
        self.entry = entry
        self.agent = agent
        self.anna = anna
        self.ben = ben

    @property
    def store(self) -> PostgresStore:
        """The entry's store: on PostgreSQL."""
        store = self.entry.runtime_data.store
        assert isinstance(store, PostgresStore)
        return store


async def _home(hass: HomeAssistant, url: str) -> Home:
    """Set up Assist Memory on `url`, a conversation agent, and Anna and Ben.

    Both are ordinary users (admins reach every scope), linked to
    `person.anna` and `person.ben` of this Home Assistant.
    """
    anna = await async_add_person(hass, "Anna")
    ben = await async_add_person(hass, "Ben")
    entry = await setup_postgres_entry(hass, url)
    with mock_config_flow("test", AgentConfigFlow):
        agent = await async_setup_agent(hass)
    return Home(hass, entry, agent, anna, ben)


@pytest.fixture
async def homes(
    hass: HomeAssistant, postgres_database: str, tmp_path: Path
) -> AsyncIterator[tuple[Home, Home]]:
    """Two Home Assistants, each with Assist Memory on `postgres_database`."""
    first = await _home(hass, postgres_database)
    async with async_test_home_assistant(config_dir=str(tmp_path / "second")) as hass2:
        hass2.data.pop(loader.DATA_CUSTOM_COMPONENTS)
        # The harness keeps one storage for every instance: without a new id
        # the second would share the first's name (its own notices ignored).
        await instance_id.async_recreate(hass2)
        second = await _home(hass2, postgres_database)
        assert first.store.instance != second.store.instance
        yield first, second
        for home in (first, second):
            await home.hass.async_block_till_done()
            if home.entry.state is ConfigEntryState.LOADED:
                assert await home.hass.config_entries.async_unload(home.entry.entry_id)
        await hass2.async_stop(force=True)


async def test_annas_memory_follows_her_to_the_other_home(
    homes: tuple[Home, Home],
) -> None:
    """Added for Anna in one home: found for Anna in the other, never for Ben."""
    first, second = homes
    item_id = await add(first.hass, FACT, context=first.anna, person=ANNA)

    assert await search_ids(
        second.hass, query="running shoes", context=second.anna
    ) == [item_id]
    assert (
        await search_ids(second.hass, query="running shoes", context=second.ben) == []
    )

    await converse(second.hass, "What size are my running shoes?", context=second.anna)
    assert FACT in recalled(second.agent.last_prompt)
    await converse(second.hass, "What size are my running shoes?", context=second.ben)
    assert "running shoes" not in recalled(second.agent.last_prompt)


async def test_one_fact_added_in_both_homes_at_once_is_stored_once(
    homes: tuple[Home, Home], postgres_database: str
) -> None:
    """Both adds answer with the one memory; the database holds one row."""
    first, second = homes

    one, two = await asyncio.gather(
        call(first.hass, "add", {"content": "The bins go out on Thursday"}),
        call(second.hass, "add", {"content": "The bins go out on Thursday"}),
    )

    assert one["id"] == two["id"]
    assert sorted([one["created"], two["created"]]) == [False, True]
    stored = await rows(postgres_database, "SELECT id FROM memories")
    assert stored == [{"id": one["id"]}]


async def test_the_other_homes_sensor_follows_a_write(
    homes: tuple[Home, Home], freezer: FrozenDateTimeFactory
) -> None:
    """The second home's count updates when the first writes (LISTEN/NOTIFY)."""
    first, second = homes
    await settle(second.hass, freezer)
    assert entity_state(second.hass, ACTIVE).state == "0"

    await add(first.hass, "The bins go out on Thursday")

    # The notice comes over the network: wait for it, at most ten seconds.
    for _ in range(200):
        await settle(second.hass, freezer)
        if entity_state(second.hass, ACTIVE).state == "1":
            break
        await asyncio.sleep(0.05)
    assert entity_state(second.hass, ACTIVE).state == "1"
