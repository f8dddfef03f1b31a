"""bench/digestion.py through a running Home Assistant's AI Task, over its REST API.

The bench's `--home-assistant` mode calls `ai_task.generate_data` with a
long-lived token and the answer's structure as selectors: Home Assistant
must accept that structure, hand the product's prompt to the AI Task
entity, and the bench must score the data that comes back.
"""

from __future__ import annotations

from typing import Any

from aiohttp import ClientSession
from homeassistant.components.ai_task import GenDataTask
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from bench.digestion import DATA, load, run, select, totals
from bench.digestion_clients import HomeAssistantClient, selector_structure
from custom_components.memory.digestion import EXTRACT_TASK
from custom_components.memory.engine.digestion.extraction import MEMORY_TYPES
from tests.test_digestion_bench import find_part, right

from .ai_task_agent import ScriptedAITask


async def test_the_bench_through_an_ai_task_entity(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    hass_access_token: str,
    ai_task: ScriptedAITask,
) -> None:
    """Home Assistant takes the structure; the entity gets the product's prompt."""
    assert await async_setup_component(hass, "api", {})
    url = str((await hass_client()).make_url("")).rstrip("/")

    def respond(task: GenDataTask) -> dict[str, Any]:
        row, speaker = find_part(task.instructions)
        return {"memories": right(row, speaker), "summary": ""}

    ai_task.responder = respond
    rows = select(load(DATA, ["de", "en"]), 2)
    async with ClientSession() as session:
        client = HomeAssistantClient(
            session,
            url,
            hass_access_token,
            structure=selector_structure(MEMORY_TYPES),
            task_name=EXTRACT_TASK,
        )
        scores = await run(client, rows)
    result = totals(scores)
    assert (result.conversations, result.failed, result.unreadable) == (4, 0, 0)
    assert result.precision == result.recall == result.scope_accuracy == 1
    assert result.language_fidelity == 1
    assert result.prompt_tokens is None  # the action reports no tokens
    assert len(ai_task.calls) == result.calls
    call = ai_task.calls[0]
    assert call.task_name == EXTRACT_TASK
    assert "<conversation>" in call.instructions
    assert call.structure is not None
