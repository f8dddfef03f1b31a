"""The README's quick start, through Home Assistant's own `ollama` agent.

Step 3 ticks Assist and Memory for the agent (`ollama_peer.py` sets up the
real `ollama` integration so), step 4 says "Remember that Mia is allergic to
nuts": the model (a scripted Ollama server) calls the memory tool Home
Assistant offered it, Home Assistant runs it, and the memory is stored.
Step 5 asks in a new conversation, and the memory is in the prompt the
model receives. With Home Assistant's own agent nothing is remembered: it
has no LLM, so neither tools nor recall reach it.
"""

from __future__ import annotations

import json

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import intent
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.ollama_server import ToolCall

from . import call, search_ids
from .assist import recalled
from .ollama_peer import OllamaAgent

SAID = "Remember that Mia is allergic to nuts"
MEMORY = "Mia is allergic to nuts"


async def test_a_first_memory_by_voice(
    hass: HomeAssistant, ollama: OllamaAgent
) -> None:
    """Said once, stored by the agent's tool call, recalled in a new conversation."""
    ollama.peer.replies.extend(
        [ToolCall("memory__add", {"content": MEMORY}), "I'll remember that."]
    )
    said = await ollama.say(hass, SAID)
    assert said.response.speech["plain"]["speech"] == "I'll remember that."
    # The model was offered the tool, called it, and got its result back.
    offered = [tool["function"]["name"] for tool in ollama.peer.requests[0]["tools"]]
    assert "assist__memory__add" in offered
    answered = ollama.peer.requests[1]["messages"][-1]
    assert answered["role"] == "tool"
    assert json.loads(answered["content"])["data"]["saved"] is True
    [stored] = await search_ids(hass, query="nuts")
    assert (await call(hass, "get", {"id": stored}))["content"] == MEMORY

    # A new conversation (no conversation id): the memory is in the prompt.
    await ollama.say(hass, "What is Mia allergic to?")
    assert f"#{stored} {MEMORY}" in recalled(ollama.last_prompt)


async def test_home_assistants_own_agent_remembers_nothing(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """The default agent has no LLM: it does not understand, and nothing is stored."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    result = await conversation.async_converse(
        hass,
        SAID,
        None,
        Context(),
        language="en",
        agent_id="conversation.home_assistant",
    )
    assert result.response.response_type == intent.IntentResponseType.ERROR
    assert await search_ids(hass, query="nuts") == []
