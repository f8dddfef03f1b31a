"""Digestion reads the answers small local models really give.

An AI Task entity that hands back the model's text (a reasoning block, a
Markdown fence, a bare list of memories) instead of parsed data still gives
memories, read by `engine.model_json` before the structure checks them; an
answer with no JSON in it is a failure like any other, and nothing is stored.
"""

from __future__ import annotations

from contextlib import closing
import json
import sqlite3
from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.memory.ai_task import AITaskClient
from custom_components.memory.digestion import EXTRACTION
from custom_components.memory.engine.digestion.answers import extraction_answer

from . import call
from .ai_task_agent import ScriptedAITask
from .assist import Household, RecordingAgent, converse

FACT = {
    "content": "Anna is allergic to nuts",
    "type": "fact",
    "about": "Anna",
    "confidence": 0.9,
    "message_id": None,
    "topic": "allergy",
    "replaces": [],
}


def stored(hass: HomeAssistant) -> list[tuple[str, str]]:
    """Type and content of every active memory in the database file."""
    with closing(sqlite3.connect(hass.config.path("memory", "memory.db"))) as conn:
        return conn.execute(
            "SELECT type, content FROM memories WHERE status = 'active' ORDER BY id"
        ).fetchall()


@pytest.mark.parametrize(
    ("answer", "summary"),
    [
        pytest.param(
            "<think>Anna has an allergy; that is durable.</think>\n```json\n"
            + json.dumps({"memories": [FACT], "summary": "Anna on food."})
            + "\n```\nLet me know if you need more.",
            "Anna on food.",
            id="text: think block, fence, prose",
        ),
        pytest.param(repr([FACT]), None, id="text: a bare list, single quotes"),
        pytest.param([FACT], None, id="data: a bare list"),
    ],
)
async def test_answers_as_small_models_give_them(
    hass: HomeAssistant,
    ai_task: ScriptedAITask,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
    answer: Any,
    summary: str | None,
) -> None:
    """The memory is stored; a list's missing summary stores no summary."""
    result = await converse(
        hass,
        "Remember that I am allergic to nuts, it is serious",
        context=household.context("anna"),
    )
    await init_integration.runtime_data.capture.async_flush()
    ai_task.answer(answer)
    response = await call(hass, "digest", {"conversation_id": result.conversation_id})
    assert response["added"] == 1
    expected = [("fact", "Anna is allergic to nuts")]
    if summary is not None:
        expected.append(("summary", summary))
    assert stored(hass) == expected


async def test_an_answer_without_json_fails_and_stores_nothing(
    hass: HomeAssistant,
    ai_task: ScriptedAITask,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
) -> None:
    """Prose alone is malformed: the conversation waits for another try."""
    result = await converse(
        hass,
        "Remember that I am allergic to nuts, it is serious",
        context=household.context("anna"),
    )
    await init_integration.runtime_data.capture.async_flush()
    ai_task.answer("<think>{'memories': []}</think>I could not find anything.")
    response = await call(hass, "digest", {"conversation_id": result.conversation_id})
    [conversation] = response["conversations"]
    assert (conversation["state"], conversation["reason"]) == ("pending", "malformed")
    assert stored(hass) == []


async def test_without_prepare_text_is_malformed(
    hass: HomeAssistant, ai_task: ScriptedAITask, init_integration: MockConfigEntry
) -> None:
    """Only a caller that says how to read text gets it read (profiles do not)."""
    client: AITaskClient = init_integration.runtime_data.ai_task
    text = json.dumps({"memories": [FACT], "summary": ""})
    ai_task.answer(text, text)
    with pytest.raises(Exception, match="malformed"):
        await client.async_generate(
            task_name="t", instructions="i", structure=EXTRACTION
        )
    data = await client.async_generate(
        task_name="t", instructions="i", structure=EXTRACTION, prepare=extraction_answer
    )
    assert data["memories"][0]["content"] == FACT["content"]
