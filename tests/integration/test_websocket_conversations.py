"""The panel's conversation commands: the log by day, one opened, digest now, erase.

Real conversations through a real agent (captured as Assist's are), a
scripted AI Task entity for digestion, and each user's own websocket
connection: the reach comes from who is connected, as in the panel.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from homeassistant.components.ai_task import GenDataTask
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.memory.engine import NewMemory, Origin, Source
from custom_components.memory.engine.digestion.queue import ASSISTANT

from . import call
from .ai_task_agent import ScriptedAITask
from .assist import AGENT_ID, BEN, Household, RecordingAgent, converse
from .test_digestion import answer, memory, transcript
from .test_websocket_api import ask, token_for


async def talk(
    hass: HomeAssistant, entry: MockConfigEntry, household: Household
) -> dict[str, str]:
    """Anna, Ben and the kitchen each say something; return the conversation ids."""
    said = {
        "anna": await converse(
            hass,
            "I am allergic to nuts, please remember that",
            context=household.context("anna"),
        ),
        "ben": await converse(
            hass,
            "I am planning a surprise party for Anna",
            context=household.context("ben"),
        ),
        "kitchen": await converse(hass, "The bins go out on Thursday evening"),
    }
    await entry.runtime_data.capture.async_flush()
    return {who: str(result.conversation_id) for who, result in said.items()}


async def test_conversations_within_reach_with_their_state(
    hass: HomeAssistant,
    ai_task: ScriptedAITask,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Anna lists her own and the household's conversations, never Ben's."""
    ids = await talk(hass, init_integration, household)
    owner = await hass_ws_client(hass)
    everything = await ask(owner, type="memory/conversations")
    assert everything["total"] == 3
    listed = everything["conversations"]
    # Newest first; each with its speaker, agent, state and preview.
    assert [c["conversation_id"] for c in listed] == [
        ids["kitchen"],
        ids["ben"],
        ids["anna"],
    ]
    kitchen = listed[0]
    assert kitchen["speaker"] == "household"
    assert kitchen["status"] == "waiting"
    assert kitchen["preview"] == "The bins go out on Thursday evening"
    assert kitchen["agent_id"] == assist_agent.entity_id
    assert kitchen["agent"]
    assert kitchen["messages"] == 2
    assert listed[1]["speaker"] == "Ben"

    anna = await hass_ws_client(hass, await token_for(hass, household.anna))
    hers = await ask(anna, type="memory/conversations")
    assert hers["total"] == 2
    assert {c["conversation_id"] for c in hers["conversations"]} == {
        ids["anna"],
        ids["kitchen"],
    }
    # The overview's digestion backlog counts hers and the household's only.
    overview = await ask(anna, type="memory/overview")
    assert overview["health"]["digestion_waiting"] == 2
    everyone = await ask(owner, type="memory/overview")
    assert everyone["health"]["digestion_waiting"] == 3
    # Ben's conversation cannot be opened, digested or erased by her.
    ben_row = listed[1]["id"]
    for command in (
        {"type": "memory/conversation", "conversation": ben_row},
        {"type": "memory/digest_conversation", "conversation": ben_row},
        {"type": "memory/erase_conversation", "conversation": ben_row},
    ):
        refused = await ask(anna, **command)
        assert refused["error"]["translation_key"] == "unknown_conversation"
    assert not ai_task.calls
    # Filters: by state, and by start date.
    assert (await ask(owner, type="memory/conversations", statuses=["done"]))[
        "total"
    ] == 0
    later = await ask(owner, type="memory/conversations", since="2999-01-01T00:00:00Z")
    assert later["conversations"] == []
    # A page at a time.
    first = await ask(owner, type="memory/conversations", limit=2)
    rest = await ask(
        owner, type="memory/conversations", limit=2, cursor=first["cursor"]
    )
    assert [c["conversation_id"] for c in rest["conversations"]] == [ids["anna"]]


async def test_digest_now_then_open_a_memory_at_its_message(
    hass: HomeAssistant,
    ai_task: ScriptedAITask,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Digest Anna's conversation from the panel; her memory opens it at her words."""
    await talk(hass, init_integration, household)
    anna = await hass_ws_client(hass, await token_for(hass, household.anna))
    hers = (await ask(anna, type="memory/conversations"))["conversations"]
    [row] = [c["id"] for c in hers if c["speaker"] == "Anna"]
    cited: list[int] = []

    def extract(task: GenDataTask) -> dict[str, Any]:
        [(message_id, _who, _text)] = [
            line for line in transcript(task.instructions) if line[1] != ASSISTANT
        ]
        cited.append(message_id)
        return answer(
            memory("Anna is allergic to nuts", message_id=message_id),
            summary="Anna said she is allergic to nuts.",
        )

    ai_task.responder = extract
    result = await ask(anna, type="memory/digest_conversation", conversation=row)
    assert result["added"] >= 1
    listed = (await ask(anna, type="memory/conversations"))["conversations"]
    [done] = [c for c in listed if c["id"] == row]
    assert done["status"] == "done"
    assert done["produced"] >= 1

    found = await ask(anna, type="memory/browse", query="allergic nuts")
    memory_id = found["memories"][0]["id"]
    got = await ask(anna, type="memory/get", memory_id=memory_id)
    assert got["has_conversation"] is True
    opened = await ask(anna, type="memory/conversation", memory_id=memory_id)
    assert opened["conversation"]["id"] == row
    assert opened["message_id"] == cited[0]
    assert [m["role"] for m in opened["messages"]] == ["user", "assistant"]
    assert opened["messages"][0]["content"] == (
        "I am allergic to nuts, please remember that"
    )
    assert "Anna is allergic to nuts" in [m["content"] for m in opened["memories"]]
    # A memory added by an action came from no conversation.
    added = await ask(anna, type="memory/add", content="The cat is called Miso")
    none = await ask(anna, type="memory/conversation", memory_id=added["id"])
    assert none["error"]["translation_key"] == "no_source_conversation"


async def test_a_skipped_conversation_says_why(
    hass: HomeAssistant,
    ai_task: ScriptedAITask,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """A device command is skipped without an LLM call, and the panel says why."""
    await converse(hass, "Turn on the kitchen light")
    await init_integration.runtime_data.capture.async_flush()
    owner = await hass_ws_client(hass)
    [listed] = (await ask(owner, type="memory/conversations"))["conversations"]
    result = await ask(
        owner, type="memory/digest_conversation", conversation=listed["id"]
    )
    assert result["skipped"] == 1
    [skipped] = (await ask(owner, type="memory/conversations"))["conversations"]
    assert skipped["status"] == "skipped"
    assert skipped["reason"] == "device_commands"
    assert not ai_task.calls


async def test_erase_a_conversation_keeps_its_memories(
    hass: HomeAssistant,
    ai_task: ScriptedAITask,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Erasing removes the messages for good; what was remembered stays."""
    await talk(hass, init_integration, household)
    anna = await hass_ws_client(hass, await token_for(hass, household.anna))
    [row] = [
        c["id"]
        for c in (await ask(anna, type="memory/conversations"))["conversations"]
        if c["speaker"] == "Anna"
    ]
    kept = await ask(anna, type="memory/add", content="Anna is allergic to nuts")
    erased = await ask(anna, type="memory/erase_conversation", conversation=row)
    assert erased == {"erased": 2}
    gone = await ask(anna, type="memory/conversation", conversation=row)
    assert gone["error"]["translation_key"] == "unknown_conversation"
    assert (await ask(anna, type="memory/conversations"))["total"] == 1
    assert (await ask(anna, type="memory/get", memory_id=kept["id"]))["memory"][
        "status"
    ] == "active"


async def test_bad_input_is_an_error_not_a_crash(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Ids beyond 64 bits, a forged cursor, an unknown state: errors, not crashes."""
    client = await hass_ws_client(hass)
    for message in (
        {"type": "memory/conversation", "conversation": 2**70},
        {"type": "memory/conversation"},
        {"type": "memory/conversation", "conversation": 1, "memory_id": 1},
        {"type": "memory/conversations", "cursor": "forged"},
        {"type": "memory/conversations", "statuses": ["lost"]},
        {"type": "memory/conversations", "since": "year 9999"},
        {"type": "memory/erase_conversation", "conversation": -1},
        {"type": "memory/digest_conversation", "conversation": 99},
    ):
        result = await ask(client, **message)
        assert "error" in result, message
        assert result["error"]["code"] != "unknown_error", message


async def test_a_shared_conversation_shows_only_her_part(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Ben carries on Anna's conversation: she never receives his words, nor counts them."""
    started = await converse(
        hass, "Remind me to buy flour", context=household.context("anna")
    )
    await converse(
        hass,
        "My bank PIN is 4711 and I hide presents in the attic",
        context=household.context("ben"),
        conversation_id=started.conversation_id,
    )
    await init_integration.runtime_data.capture.async_flush()
    anna = await hass_ws_client(hass, await token_for(hass, household.anna))
    [listed] = (await ask(anna, type="memory/conversations"))["conversations"]
    assert listed["speaker"] == "Anna"
    assert listed["messages"] == 2
    opened = await ask(anna, type="memory/conversation", conversation=listed["id"])
    contents = [message["content"] for message in opened["messages"]]
    assert contents[0] == "Remind me to buy flour"
    assert len(contents) == 2
    assert not any("attic" in text or "4711" in text for text in contents)
    # The owner reads all of it, each message with its speaker.
    owner = await hass_ws_client(hass)
    whole = await ask(owner, type="memory/conversation", conversation=listed["id"])
    assert [m["speaker"] for m in whole["messages"] if m["role"] == "user"] == [
        "Anna",
        "Ben",
    ]
    # Erasing is hers only: Ben's part stays for him.
    assert (
        await ask(anna, type="memory/erase_conversation", conversation=listed["id"])
    ) == {"erased": 2}
    left = await ask(owner, type="memory/conversation", conversation=listed["id"])
    assert [m["speaker"] for m in left["messages"]] == ["Ben", "Ben"]


async def test_a_memory_from_bens_conversation_names_no_source_to_anna(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Anna (not an admin) reads a household memory Ben's conversation gave.

    She learns that it came from a conversation, never whose, which, where
    or from which message: not over the panel, nor through the actions (a
    conversation id would give her its chat history). Opening it answers as
    for a memory from no conversation. A memory from a conversation she may
    read (the kitchen's) shows its source; the owner sees every source.
    """
    said = await converse(
        hass,
        "The boiler is serviced in October",
        context=household.context("ben"),
        device_id="hall-satellite",
    )
    kitchen = await converse(hass, "The bins go out on Thursday evening")
    await init_integration.runtime_data.capture.async_flush()
    log = init_integration.runtime_data.conversations
    rows = {c.conversation_id: c.id for c in await log.conversations()}
    [spoken, _reply] = await log.messages(rows[said.conversation_id])
    store = init_integration.runtime_data.store
    bens = Source(
        origin=Origin.DIGESTION,
        conversation_id=said.conversation_id,
        agent_id=AGENT_ID,
        device_id="hall-satellite",
        user_id=household.ben.id,
    )
    boiler = (
        await store.add(
            NewMemory(
                content="The boiler is serviced in October",
                source=bens,
                message_id=spoken.id,
            )
        )
    ).item.id
    kitchens = Source(
        origin=Origin.TOOL,
        conversation_id=kitchen.conversation_id,
        device_id="kitchen-satellite",
    )
    bins = (
        await store.add(
            NewMemory(content="The bins go out on Thursday", source=kitchens)
        )
    ).item.id
    # Ben carries on the kitchen's conversation: Anna may open it (the
    # household spoke in it), but what he said there is not hers to trace.
    await converse(
        hass,
        "And the recycling goes out on Friday morning",
        context=household.context("ben"),
        conversation_id=kitchen.conversation_id,
    )
    await init_integration.runtime_data.capture.async_flush()
    [his] = [
        m
        for m in await log.messages(rows[kitchen.conversation_id])
        if m.scope == BEN and m.role == "user"
    ]
    recycling = (
        await store.add(
            NewMemory(
                content="The recycling goes out on Friday",
                source=replace(bens, conversation_id=kitchen.conversation_id),
                message_id=his.id,
            )
        )
    ).item.id
    from_a_conversation = {
        "origin": "digestion",
        "conversation_id": None,
        "agent_id": None,
        "device_id": None,
        "user_id": None,
    }

    anna = await hass_ws_client(hass, await token_for(hass, household.anna))
    got = await ask(anna, type="memory/get", memory_id=boiler)
    assert got["memory"]["source"] == from_a_conversation
    assert got["memory"]["message_id"] is None
    assert got["has_conversation"] is False
    page = await ask(anna, type="memory/browse")
    searched = await ask(anna, type="memory/browse", query="boiler serviced")
    sources = {m["id"]: m["source"] for m in page["memories"]}
    assert sources == {
        boiler: from_a_conversation,
        bins: kitchens.as_dict(),
        recycling: from_a_conversation,
    }
    assert (await ask(anna, type="memory/get", memory_id=bins))["has_conversation"]
    assert not (await ask(anna, type="memory/get", memory_id=recycling))[
        "has_conversation"
    ]
    [hit] = searched["memories"]
    assert (hit["id"], hit["source"]) == (boiler, from_a_conversation)
    # Through the actions, as Anna: the same.
    context = household.context("anna")
    action = await call(hass, "get", {"id": boiler}, context=context)
    assert (action["source"], action["message_id"]) == (from_a_conversation, None)
    assert (await call(hass, "get", {"id": bins}, context=context))["source"] == (
        kitchens.as_dict()
    )

    # One answer for a conversation out of reach and for none at all.
    refused = await ask(anna, type="memory/conversation", memory_id=boiler)
    added = await ask(anna, type="memory/add", content="The cat is called Miso")
    none = await ask(anna, type="memory/conversation", memory_id=added["id"])
    assert refused["error"]["translation_key"] == "no_source_conversation"
    assert refused["error"] == none["error"]
    assert str(rows[said.conversation_id]) not in refused["error"]["message"]
    # What she added herself names her, as ever.
    own = await ask(anna, type="memory/get", memory_id=added["id"])
    assert own["memory"]["source"]["user_id"] == household.anna.id

    owner = await hass_ws_client(hass)
    whole = await ask(owner, type="memory/get", memory_id=boiler)
    assert whole["has_conversation"] is True
    assert whole["memory"]["source"] == bens.as_dict()
    assert whole["memory"]["message_id"] == spoken.id
    opened = await ask(owner, type="memory/conversation", memory_id=boiler)
    assert opened["messages"][opened_index(opened)]["content"] == (
        "The boiler is serviced in October"
    )
    assert (await call(hass, "get", {"id": boiler}))["source"] == bens.as_dict()
    assert (await ask(owner, type="memory/get", memory_id=recycling))[
        "has_conversation"
    ]


def opened_index(opened: dict[str, Any]) -> int:
    """Return the index of the message the conversation opened at."""
    return next(
        i for i, m in enumerate(opened["messages"]) if m["id"] == opened["message_id"]
    )
