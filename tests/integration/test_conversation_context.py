"""Recall across a conversation, through a real agent: Home Assistant's `ollama`.

The `ollama` integration runs on a scripted Ollama server (`ollama_peer.py`)
with the Assist and Memory APIs selected; each test reads the system prompt
the server received. Follow-ups, memories that stay and the "Earlier" part,
their options and counters, and who may see which earlier conversation.
"""

from __future__ import annotations

from datetime import timedelta
import re
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import Context, HomeAssistant
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.memory.const import (
    CONF_RECALL_EARLIER_HOURS,
    CONF_RECALL_FOLLOW_UPS,
    CONF_RECALL_KEEP,
)
from custom_components.memory.engine import (
    HOUSEHOLD,
    MemoryType,
    NewMemory,
    Origin,
    Source,
)
from custom_components.memory.engine.recall.turn import FENCE_CLOSE, FENCE_OPEN

from . import add
from .assist import ANNA, BEN, Household
from .ollama_peer import OllamaAgent

KITCHEN = "kitchen-satellite"
HALL = "hall-satellite"

GUEST_ROOM = "The guest room heating should stay at 19 degrees"
LIVING_ROOM = "The living room heating is set to 21 degrees in winter"
HOSE = "The garden hose goes into the shed in winter"
WIFI = "The wifi password is written under the router"


def notes(prompt: str) -> list[str]:
    """Return the lines of the memory block of a system prompt."""
    if FENCE_OPEN not in prompt:
        return []
    return prompt.split(FENCE_OPEN, 1)[1].split(FENCE_CLOSE, 1)[0].strip().splitlines()


def shown_ids(prompt: str) -> list[int]:
    """Return the memory ids in the block, in order."""
    return [int(n) for line in notes(prompt) for n in re.findall(r"^#(\d+) ", line)]


def earlier(prompt: str) -> list[str]:
    """Return the "Earlier" lines of the block."""
    return [line for line in notes(prompt) if line.startswith("Earlier")]


async def set_options(
    hass: HomeAssistant, entry: MockConfigEntry, **options: Any
) -> None:
    """Change options the way the options flow stores them."""
    hass.config_entries.async_update_entry(entry, options={**entry.options, **options})
    await hass.async_block_till_done()


async def household_memories(hass: HomeAssistant) -> dict[str, int]:
    """Add the household's memories; their ids by text."""
    return {
        text: await add(hass, text) for text in (GUEST_ROOM, LIVING_ROOM, HOSE, WIFI)
    }


async def test_a_follow_up_finds_what_it_refers_to(
    hass: HomeAssistant, ollama: OllamaAgent, init_integration: MockConfigEntry
) -> None:
    """'And in winter?' after the guest room: the living room heating, not the hose."""
    ids = await household_memories(hass)
    first = await ollama.say(hass, "How warm should the guest room be?")
    assert shown_ids(ollama.last_prompt) == [ids[GUEST_ROOM]]
    await ollama.say(hass, "And in winter?", conversation_id=first.conversation_id)
    shown = shown_ids(ollama.last_prompt)
    # The heating in winter comes first, the hose (also "in winter") after it.
    assert shown[0] == ids[LIVING_ROOM]
    assert shown.index(ids[HOSE]) > 0
    # The guest room memory stays, once, with its id.
    assert shown.count(ids[GUEST_ROOM]) == 1
    usage = init_integration.runtime_data.usage.data
    assert usage.recall_follow_ups_today == 1
    latency = hass.states.get("sensor.assist_memory_recall_latency")
    assert latency is not None
    assert latency.attributes["follow_ups_today"] == 1

    # Off: "winter" is searched alone, and the hose, shorter, comes first.
    await set_options(hass, init_integration, **{CONF_RECALL_FOLLOW_UPS: False})
    again = await ollama.say(hass, "How warm should the guest room be?")
    await ollama.say(hass, "And in winter?", conversation_id=again.conversation_id)
    assert shown_ids(ollama.last_prompt)[0] == ids[HOSE]
    assert usage.recall_follow_ups_today == 1


async def test_a_memory_stays_while_the_conversation_carries_on(
    hass: HomeAssistant, ollama: OllamaAgent, init_integration: MockConfigEntry
) -> None:
    """The guest room memory stays on the follow-up; a new subject drops it."""
    ids = await household_memories(hass)
    await set_options(hass, init_integration, **{CONF_RECALL_FOLLOW_UPS: False})
    first = await ollama.say(hass, "How warm should the guest room be?")
    talk = first.conversation_id
    await ollama.say(hass, "And in winter?", conversation_id=talk)
    shown = shown_ids(ollama.last_prompt)
    assert shown.count(ids[GUEST_ROOM]) == 1
    assert f"#{ids[GUEST_ROOM]} {GUEST_ROOM}" in notes(ollama.last_prompt)
    assert init_integration.runtime_data.usage.data.recall_kept_today == 1
    # A new subject: the heating notes go.
    await ollama.say(hass, "Where is the wifi password written?", conversation_id=talk)
    assert shown_ids(ollama.last_prompt) == [ids[WIFI]]

    # Off: a memory is there only when the turn's own search finds it.
    await set_options(hass, init_integration, **{CONF_RECALL_KEEP: False})
    second = await ollama.say(hass, "How warm should the guest room be?")
    await ollama.say(hass, "And in winter?", conversation_id=second.conversation_id)
    assert ids[GUEST_ROOM] not in shown_ids(ollama.last_prompt)
    assert init_integration.runtime_data.usage.data.recall_kept_today == 1


async def anna_talked(
    hass: HomeAssistant,
    ollama: OllamaAgent,
    entry: MockConfigEntry,
    context: Context,
    text: str,
    **kwargs: Any,
) -> str:
    """One turn of an earlier conversation, written to the log; its id."""
    result = await ollama.say(hass, text, context=context, **kwargs)
    await entry.runtime_data.capture.async_flush()
    assert result.conversation_id is not None
    return result.conversation_id


async def later(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, minutes: int
) -> None:
    """Let time pass: Home Assistant drops the idle chat sessions."""
    freezer.tick(timedelta(minutes=minutes))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()


async def test_a_new_conversation_starts_with_earlier(
    hass: HomeAssistant,
    ollama: OllamaAgent,
    init_integration: MockConfigEntry,
    household: Household,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Anna's conversation of 20 minutes ago opens her next one; Ben's never does."""
    anna = household.context("anna")
    ben = household.context("ben")
    talked = await anna_talked(
        hass, ollama, init_integration, anna, "Set the guest room to 19 degrees"
    )
    await anna_talked(
        hass, ollama, init_integration, ben, "Plan the surprise party for Anna"
    )
    await later(hass, freezer, 20)
    await ollama.say(hass, "Good morning", context=anna)
    [line] = earlier(ollama.last_prompt)
    assert line.startswith("Earlier, 20 minutes ago: ")
    assert "user: Set the guest room to 19 degrees" in line
    assert "surprise party" not in ollama.last_prompt
    assert init_integration.runtime_data.usage.data.recall_earlier_today == 1

    # Once digestion wrote its summary, the summary stands for it, in German
    # when the turn is German.
    await init_integration.runtime_data.store.add(
        NewMemory(
            content="Anna asked to keep the guest room at 19 degrees.",
            type=MemoryType.SUMMARY,
            scope=ANNA,
            source=Source(origin=Origin.DIGESTION, conversation_id=talked),
        )
    )
    await later(hass, freezer, 40)
    await ollama.say(hass, "Guten Morgen", context=anna, language="de")
    lines = earlier(ollama.last_prompt)
    assert lines[-1] == (
        "Earlier, vor 1 Stunde: Anna asked to keep the guest room at 19 degrees."
    )
    # The next turn of that conversation has no Earlier part.
    result = await ollama.say(hass, "Danke", context=anna, language="de")
    await ollama.say(
        hass, "Und sonst?", context=anna, conversation_id=result.conversation_id
    )
    assert earlier(ollama.last_prompt) == []

    # Ben sees none of Anna's.
    await ollama.say(hass, "Good morning", context=ben)
    assert all("guest room" not in line for line in earlier(ollama.last_prompt))

    # Off, or past the window.
    await set_options(hass, init_integration, **{CONF_RECALL_EARLIER_HOURS: 0})
    await ollama.say(hass, "Good morning", context=anna)
    assert earlier(ollama.last_prompt) == []
    await set_options(hass, init_integration, **{CONF_RECALL_EARLIER_HOURS: 1})
    await later(hass, freezer, 120)
    await ollama.say(hass, "Good morning", context=anna)
    assert earlier(ollama.last_prompt) == []


async def test_a_satellite_sees_only_its_own_household_talks(
    hass: HomeAssistant,
    ollama: OllamaAgent,
    init_integration: MockConfigEntry,
    household: Household,
    freezer: FrozenDateTimeFactory,
) -> None:
    """The kitchen satellite's Earlier holds the kitchen's talks: no hall, no person."""
    entry = init_integration
    await anna_talked(
        hass, ollama, entry, Context(), "Start the dishwasher", device_id=KITCHEN
    )
    await anna_talked(
        hass, ollama, entry, Context(), "Open the garage door", device_id=HALL
    )
    await anna_talked(
        hass, ollama, entry, household.context("anna"), "My diary note for today"
    )
    await later(hass, freezer, 10)
    await ollama.say(hass, "Hello", device_id=KITCHEN)
    lines = earlier(ollama.last_prompt)
    assert len(lines) == 1
    assert "dishwasher" in lines[0]
    assert "garage" not in ollama.last_prompt
    assert "diary" not in ollama.last_prompt
    # A turn with neither a device nor a user has no Earlier part.
    await ollama.say(hass, "Hello")
    assert earlier(ollama.last_prompt) == []
    # Anna (identified) sees her own, not the satellites' household talks.
    await ollama.say(hass, "Hello", context=household.context("anna"))
    [line] = earlier(ollama.last_prompt)
    assert "diary" in line


async def test_a_code_said_at_a_satellite_is_redacted_in_earlier(
    hass: HomeAssistant,
    ollama: OllamaAgent,
    init_integration: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Nobody is identified at the satellite: the code it heard is not repeated."""
    await anna_talked(
        hass,
        ollama,
        init_integration,
        Context(),
        "The garage door code is 7731",
        device_id=KITCHEN,
    )
    await later(hass, freezer, 5)
    await ollama.say(hass, "Hello", device_id=KITCHEN)
    [line] = earlier(ollama.last_prompt)
    assert "7731" not in line
    assert "[redacted]" in line
    assert HOUSEHOLD  # the talk was the household's
    assert BEN not in line
