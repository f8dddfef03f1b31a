"""A real conversation agent for the Assist tests, and the people who talk to it.

`RecordingAgent` is a `ConversationEntity` set up through a test platform the
way an LLM integration is: every turn it calls
`chat_log.async_provide_llm_data` with its APIs, records the system prompt
and tool names Home Assistant gave it, optionally calls tools (streamed, as
LLM integrations do) and records what they returned, and replies.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from homeassistant.auth.const import GROUP_ID_ADMIN, GROUP_ID_USER
from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntry, ConfigFlow
from homeassistant.const import Platform
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockModule,
    MockUser,
    mock_integration,
    mock_platform,
    setup_test_component_platform,
)

from custom_components.memory.recall import FENCE_CLOSE, FENCE_OPEN

AGENT_ID = "conversation.test_agent"
ANNA = "person.anna"
BEN = "person.ben"


class AgentConfigFlow(ConfigFlow):
    """The test agent integration's (unused) config flow."""

    VERSION = 1


class RecordingAgent(conversation.ConversationEntity):
    """Records what each turn got from Home Assistant; replies and calls tools."""

    _attr_name = "Test agent"
    _attr_unique_id = "test-agent"

    def __init__(self) -> None:
        """Start with the Assist and Memory APIs selected."""
        self.llm_api: list[str] | None = ["assist", "memory"]
        self.prompts: list[str] = []
        self.tools: list[list[str]] = []
        self.llm_apis: list[llm.APIInstance | None] = []
        self.tool_calls: list[llm.ToolInput] = []
        self.tool_results: list[llm.ToolResult] = []
        self.reply = "OK."

    @property
    def supported_languages(self) -> Literal["*"]:
        """Any language."""
        return "*"

    async def _async_handle_message(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> conversation.ConversationResult:
        await chat_log.async_provide_llm_data(
            user_input.as_llm_context("test"),
            self.llm_api,
            "You are a test agent.",
            user_input.extra_system_prompt,
        )
        system = chat_log.content[0]
        assert isinstance(system, conversation.SystemContent)
        self.prompts.append(system.content)
        self.llm_apis.append(chat_log.llm_api)
        self.tools.append(
            [tool.name for tool in chat_log.llm_api.tools] if chat_log.llm_api else []
        )
        calls, self.tool_calls = self.tool_calls, []

        async def stream() -> AsyncIterator[conversation.AssistantContentDeltaDict]:
            if calls:
                yield {"role": "assistant"}
                yield {"tool_calls": calls}
            yield {"role": "assistant", "content": self.reply}

        async for content in chat_log.async_add_delta_content_stream(
            self.entity_id, stream()
        ):
            if isinstance(content, conversation.ToolResultContent):
                self.tool_results.append(content.result)
        return conversation.async_get_result_from_chat_log(user_input, chat_log)

    @property
    def last_prompt(self) -> str:
        """The system prompt of the last turn."""
        return self.prompts[-1]


def recalled(prompt: str) -> str:
    """Cut the fenced memory notes out of a prompt ("" when there are none)."""
    if FENCE_OPEN not in prompt:
        return ""
    start = prompt.index(FENCE_OPEN)
    return prompt[start : prompt.index(FENCE_CLOSE, start) + len(FENCE_CLOSE)]


async def async_setup_agent(hass: HomeAssistant) -> RecordingAgent:
    """Set up Home Assistant's conversation integration and the test agent."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    agent = RecordingAgent()

    async def setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        await hass.config_entries.async_forward_entry_setups(
            entry, [Platform.CONVERSATION]
        )
        return True

    async def unload_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        return await hass.config_entries.async_unload_platforms(
            entry, [Platform.CONVERSATION]
        )

    mock_integration(
        hass,
        MockModule(
            "test", async_setup_entry=setup_entry, async_unload_entry=unload_entry
        ),
    )
    mock_platform(hass, "test.config_flow")
    setup_test_component_platform(hass, "conversation", [agent], from_config_entry=True)
    entry = MockConfigEntry(domain="test")
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert agent.entity_id == AGENT_ID
    return agent


@dataclass
class Household:
    """Anna (a user) and Ben (an admin), each linked to a person."""

    anna: MockUser
    ben: MockUser

    def context(self, who: str) -> Context:
        """Make a fresh context for `anna` or `ben`."""
        user = self.anna if who == "anna" else self.ben
        return Context(user_id=user.id)


async def async_setup_household(hass: HomeAssistant) -> Household:
    """Create the users and their person states (the person's `user_id`)."""
    user_group = await hass.auth.async_get_group(GROUP_ID_USER)
    admin_group = await hass.auth.async_get_group(GROUP_ID_ADMIN)
    assert user_group is not None
    assert admin_group is not None
    anna = MockUser(name="Anna", groups=[user_group]).add_to_hass(hass)
    ben = MockUser(name="Ben", groups=[admin_group]).add_to_hass(hass)
    for entity_id, name, user in ((ANNA, "Anna", anna), (BEN, "Ben", ben)):
        hass.states.async_set(
            entity_id, "home", {"user_id": user.id, "friendly_name": name}
        )
    return Household(anna=anna, ben=ben)


async def async_add_person(hass: HomeAssistant, name: str) -> Context:
    """Add a non-admin user linked to `person.<name>`; return their context."""
    group = await hass.auth.async_get_group(GROUP_ID_USER)
    assert group is not None
    user = MockUser(name=name, groups=[group]).add_to_hass(hass)
    hass.states.async_set(
        f"person.{name.lower()}", "home", {"user_id": user.id, "friendly_name": name}
    )
    return Context(user_id=user.id)


async def converse(
    hass: HomeAssistant,
    text: str,
    *,
    context: Context | None = None,
    conversation_id: str | None = None,
    device_id: str | None = None,
    satellite_id: str | None = None,
    language: str | None = None,
) -> conversation.ConversationResult:
    """One turn with the test agent, as Assist (or a satellite) runs it.

    `language` None: Home Assistant's configured one, as Assist does.
    """
    return await conversation.async_converse(
        hass,
        text,
        conversation_id,
        context or Context(),
        language=language,
        agent_id=AGENT_ID,
        device_id=device_id,
        satellite_id=satellite_id,
    )


def speech(result: conversation.ConversationResult) -> Any:
    """Return what the agent said."""
    return result.response.speech["plain"]["speech"]
