"""A real AI Task entity whose answers a test scripts.

`ScriptedAITask` is an `AITaskEntity` set up through a mock integration's
`ai_task` platform, the way `ollama` or `openai_conversation` provide one:
Home Assistant's `ai_task.async_generate_data` reaches it with a real chat
log. Each call is recorded (task name, instructions, structure); the answer
is the next scripted one (structured `data`, or an exception to raise), else
what `responder` makes of the task.

Use the `ai_task` fixture (tests/conftest.py), or `async_setup_ai_task` for
an entity that is not the preferred one.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
import json
from typing import Any

from homeassistant.components import ai_task
from homeassistant.components.ai_task.const import DATA_PREFERENCES
from homeassistant.components.conversation import AssistantContent, ChatLog
from homeassistant.config_entries import ConfigEntry, ConfigFlow
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.entity_platform import AddEntitiesCallback
from homeassistant.setup import async_setup_component
import probatio
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockModule,
    MockPlatform,
    mock_config_flow,
    mock_integration,
    mock_platform,
)

AI_TASK_DOMAIN = "memory_test_llm"
AI_TASK_ENTITY_ID = "ai_task.test_llm"

# A scripted answer: the structured data to return, an exception to raise, or
# a future to wait for (the call hangs until the test sets its result).
type Answer = dict[str, Any] | Any | BaseException | asyncio.Future[Any]


@dataclass(frozen=True, slots=True)
class AITaskCall:
    """What one call asked for."""

    task_name: str
    instructions: str
    structure: probatio.Schema | None


class AITaskConfigFlow(ConfigFlow):
    """The test LLM integration's (unused) config flow."""

    VERSION = 1


class ScriptedAITask(ai_task.AITaskEntity):
    """Answers with what the test scripted; records every call."""

    _attr_name = "Test LLM"
    _attr_unique_id = "test-llm"
    _attr_supported_features = ai_task.AITaskEntityFeature.GENERATE_DATA

    def __init__(self) -> None:
        """No answers scripted yet: a call without one raises."""
        self.answers: deque[Answer] = deque()
        self.responder: Callable[[ai_task.GenDataTask], Answer] | None = None
        self.calls: list[AITaskCall] = []
        # Set at every call: a test can wait for a call made in the background.
        self.called = asyncio.Event()

    def answer(self, *answers: Answer) -> None:
        """Queue answers for the next calls, in order."""
        self.answers.extend(answers)

    @property
    def last(self) -> AITaskCall:
        """The last call received."""
        return self.calls[-1]

    def calls_named(self, task_name: str) -> list[AITaskCall]:
        """Return the calls received for one task name."""
        return [call for call in self.calls if call.task_name == task_name]

    async def _async_generate_data(
        self, task: ai_task.GenDataTask, chat_log: ChatLog
    ) -> ai_task.GenDataTaskResult:
        self.calls.append(AITaskCall(task.name, task.instructions, task.structure))
        self.called.set()
        if self.answers:
            answer = self.answers.popleft()
        elif self.responder is not None:
            answer = self.responder(task)
        else:
            raise HomeAssistantError("No answer scripted for this AI Task call")
        if isinstance(answer, asyncio.Future):
            answer = await answer
        if isinstance(answer, BaseException):
            raise answer
        # As LLM integrations do: the answer is added to the task's chat log.
        chat_log.async_add_assistant_content_without_tools(
            AssistantContent(self.entity_id or "", json.dumps(answer, default=str))
        )
        return ai_task.GenDataTaskResult(
            conversation_id=chat_log.conversation_id, data=answer
        )


@contextmanager
def ai_task_config_flow() -> Iterator[None]:
    """Register the test LLM integration's config flow while a test runs."""
    with mock_config_flow(AI_TASK_DOMAIN, AITaskConfigFlow):
        yield


async def async_setup_ai_task(
    hass: HomeAssistant, *, preferred: bool = True
) -> ScriptedAITask:
    """Set up AI Task and the scripted entity; optionally make it preferred.

    Call inside `ai_task_config_flow()`.
    """
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, ai_task.DOMAIN, {})
    entity = ScriptedAITask()

    async def setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        await hass.config_entries.async_forward_entry_setups(entry, [Platform.AI_TASK])
        return True

    async def unload_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        return await hass.config_entries.async_unload_platforms(
            entry, [Platform.AI_TASK]
        )

    async def setup_platform(
        hass: HomeAssistant,
        entry: ConfigEntry,
        async_add_entities: AddEntitiesCallback,
    ) -> None:
        async_add_entities([entity])

    mock_integration(
        hass,
        MockModule(
            AI_TASK_DOMAIN,
            async_setup_entry=setup_entry,
            async_unload_entry=unload_entry,
        ),
    )
    mock_platform(hass, f"{AI_TASK_DOMAIN}.config_flow")
    mock_platform(
        hass,
        f"{AI_TASK_DOMAIN}.{ai_task.DOMAIN}",
        MockPlatform(async_setup_entry=setup_platform),
    )
    entry = MockConfigEntry(domain=AI_TASK_DOMAIN)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entity.entity_id == AI_TASK_ENTITY_ID
    if preferred:
        set_preferred(hass, AI_TASK_ENTITY_ID)
    return entity


def set_preferred(hass: HomeAssistant, entity_id: str | None) -> None:
    """Set (or clear) Home Assistant's preferred AI Task entity for data."""
    hass.data[DATA_PREFERENCES].async_set_preferences(gen_data_entity_id=entity_id)
