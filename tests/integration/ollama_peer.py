"""Home Assistant's own `ollama` agent set up on a scripted Ollama server.

`OllamaPeer` (`tests/ollama_server.py`) is an aiohttp application on
127.0.0.1 that speaks the part of Ollama's HTTP API Home Assistant's
`ollama` integration uses and records every chat request, so a test reads
the system prompt the agent's LLM really received.

`async_setup_ollama_agent` sets up the real `ollama` integration (config
entry and conversation subentry, as its config flow makes them) with the
Assist and Memory APIs selected; `say` runs one turn through it the way
Assist does.
"""

from __future__ import annotations

from dataclasses import dataclass

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.ollama_server import MODEL, OllamaPeer

__all__ = ["MODEL", "OllamaAgent", "OllamaPeer", "async_setup_ollama_agent"]


@dataclass
class OllamaAgent:
    """The `ollama` conversation entity set up on a peer."""

    entity_id: str
    entry: MockConfigEntry
    peer: OllamaPeer

    async def say(
        self,
        hass: HomeAssistant,
        text: str,
        *,
        context: Context | None = None,
        conversation_id: str | None = None,
        device_id: str | None = None,
        language: str | None = None,
    ) -> conversation.ConversationResult:
        """One turn, as Assist (or a voice satellite) runs it."""
        return await conversation.async_converse(
            hass,
            text,
            conversation_id,
            context or Context(),
            language=language,
            agent_id=self.entity_id,
            device_id=device_id,
        )

    @property
    def last_prompt(self) -> str:
        """The system prompt of the last chat request."""
        return self.peer.system_prompts[-1]


async def async_setup_ollama_agent(
    hass: HomeAssistant, peer: OllamaPeer
) -> OllamaAgent:
    """Set up Home Assistant's `ollama` integration on the peer, with Assist and Memory."""
    assert await async_setup_component(hass, "homeassistant", {})
    entry = MockConfigEntry(
        domain="ollama",
        title="Ollama",
        version=3,
        minor_version=3,
        data={"url": peer.url},
        subentries_data=[
            ConfigSubentryData(
                data={
                    "model": MODEL,
                    "prompt": "You are a household assistant.",
                    "llm_hass_api": ["assist", "memory"],
                    "max_history": 20,
                    "num_ctx": 8192,
                    "keep_alive": -1,
                    "think": False,
                },
                subentry_type="conversation",
                title="Ollama Conversation",
                unique_id=None,
            )
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    [registered] = [
        found
        for found in er.async_entries_for_config_entry(
            er.async_get(hass), entry.entry_id
        )
        if found.domain == "conversation"
    ]
    return OllamaAgent(entity_id=registered.entity_id, entry=entry, peer=peer)
