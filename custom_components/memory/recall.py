"""Automatic recall: the "Memory" LLM API puts relevant memories in the prompt.

On every turn of an agent that has the Memory API selected, Home Assistant
asks the API for an instance while the chat log being built is in the
`current_chat_log` context variable; its last user message is what was just
said, the ones before it the conversation so far. Recall gathers who is
speaking, the options and the one query embedding, and the engine builds the
block (`engine/recall/turn.py`): the memories the utterance finds (with the
conversation's recent turns when it is a follow-up), the memories that stay
from earlier turns, and on a conversation's first turn what the same
speaker said in the last hours. Within a token budget, above a relevance
floor, fenced and labelled as data, never as instructions.

The Memory API has no tools: an API cannot see the others an agent selected,
so the memory tools come once, through the Assist API (`llm.py`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
import time
from typing import Final, override

from homeassistant.components.conversation.chat_log import UserContent, current_chat_log
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
from homeassistant.util import dt as dt_util

from .access import scope_label, speaker
from .const import (
    CONF_RECALL_BUDGET,
    CONF_RECALL_EARLIER_HOURS,
    CONF_RECALL_FOLLOW_UPS,
    CONF_RECALL_KEEP,
    CONF_RECALL_MIN_SCORE,
    DEFAULT_RECALL_BUDGET,
    DEFAULT_RECALL_EARLIER_HOURS,
    DEFAULT_RECALL_FOLLOW_UPS,
    DEFAULT_RECALL_KEEP,
    DEFAULT_RECALL_MIN_SCORE,
    DOMAIN,
    LLM_API_NAME,
    LOGGER,
)
from .embedding import async_query_vector
from .engine.recall import (
    FENCE_CLOSE,
    FENCE_OPEN,
    NOTHING,
    PROMPT_HEADER,
    RECALL_CANDIDATES,
    ConversationStates,
    Recalled,
    RecallSettings,
    Speaker,
    Turn,
    recall_turn,
    render,
)
from .runtime import MemoryConfigEntry

__all__ = [
    "FENCE_CLOSE",
    "FENCE_OPEN",
    "NOTHING",
    "PROMPT_HEADER",
    "RECALL_CANDIDATES",
    "Recalled",
    "render",
]

# A recall that takes longer is dropped (the turn goes on without it). Room
# for a query embedding, which the embedding provider bounds at 2 s.
RECALL_TIMEOUT: Final = 3.0


def said_so_far() -> tuple[str | None, list[str], str | None]:
    """Return this turn's words, the earlier user turns, and the conversation id.

    From the chat log being built; the earlier turns newest first.
    """
    chat_log = current_chat_log.get()
    if chat_log is None:
        return None, [], None
    said = [
        content.content
        for content in chat_log.content
        if isinstance(content, UserContent)
    ]
    if not said:
        return None, [], chat_log.conversation_id
    return said[-1], said[-2::-1], chat_log.conversation_id


def current_utterance() -> str | None:
    """Return what was just said: the last user message of the chat log."""
    return said_so_far()[0]


def recall_settings(entry: MemoryConfigEntry) -> RecallSettings:
    """Return the entry's recall options."""
    options = entry.options
    return RecallSettings(
        budget=int(options.get(CONF_RECALL_BUDGET, DEFAULT_RECALL_BUDGET)),
        min_score=float(options.get(CONF_RECALL_MIN_SCORE, DEFAULT_RECALL_MIN_SCORE)),
        follow_ups=bool(options.get(CONF_RECALL_FOLLOW_UPS, DEFAULT_RECALL_FOLLOW_UPS)),
        keep=bool(options.get(CONF_RECALL_KEEP, DEFAULT_RECALL_KEEP)),
        earlier=timedelta(
            hours=float(
                options.get(CONF_RECALL_EARLIER_HOURS, DEFAULT_RECALL_EARLIER_HOURS)
            )
        ),
    )


async def _async_recall(
    hass: HomeAssistant,
    entry: MemoryConfigEntry,
    llm_context: llm.LLMContext,
    settings: RecallSettings,
    states: ConversationStates,
) -> Recalled:
    caller = speaker(hass, entry, llm_context)
    utterance, earlier, conversation_id = said_so_far()
    utterance = (utterance or "").strip()
    vector = None
    if utterance:
        # The one query embedding: None (keyword-only) without an embedding
        # provider, or while it is down, slow or rebuilding.
        vector = await async_query_vector(entry.runtime_data.embedding, utterance)
    return await recall_turn(
        entry.runtime_data.store,
        Turn(
            utterance=utterance,
            earlier=earlier,
            vector=vector,
            # Analysed in the language of the turn (Assist passes it).
            language=llm_context.language,
            conversation_id=conversation_id,
            now=dt_util.utcnow(),
        ),
        Speaker(
            scopes=caller.reachable() or (),
            person=caller.persons[0] if caller.persons else None,
            device_id=llm_context.device_id,
            user_id=llm_context.context.user_id if llm_context.context else None,
            # Codes only for an identified person in the memory's scope.
            redact=not caller.persons,
            found=caller.found,
            shown=caller.shown,
            label=scope_label(hass),
        ),
        states.get(conversation_id),
        settings,
    )


async def async_recall_prompt(
    hass: HomeAssistant, entry: MemoryConfigEntry, llm_context: llm.LLMContext
) -> str:
    """Return this turn's memory prompt; "" when nothing relevant, or on failure.

    Never raises: a failed recall is counted and logged at debug level, and
    the conversation goes on without it.
    """
    settings = recall_settings(entry)
    if settings.budget <= 0:
        return ""
    usage = entry.runtime_data.usage
    started = time.perf_counter()
    try:
        async with asyncio.timeout(RECALL_TIMEOUT):
            recalled = await _async_recall(
                hass, entry, llm_context, settings, entry.runtime_data.recall_states
            )
    except Exception as err:  # noqa: BLE001 - recall must never break a turn
        LOGGER.debug("Recall failed; the conversation goes on without it: %r", err)
        usage.record_failure(latency_ms=(time.perf_counter() - started) * 1000)
        return ""
    usage.record_recall(
        tokens=recalled.tokens,
        memories=len(recalled.ids),
        latency_ms=(time.perf_counter() - started) * 1000,
        parts=recalled.parts,
    )
    if recalled.ids:
        _ = entry.async_create_background_task(
            hass,
            entry.runtime_data.store.mark_recalled(recalled.ids),
            "memory mark recalled",
        )
    return recalled.prompt


@dataclass(slots=True, kw_only=True)
class MemoryAPI(llm.API):
    """Recall only (no tools): select it with Assist for recall and tools."""

    entry: MemoryConfigEntry

    @override
    async def async_get_api_instance(
        self, llm_context: llm.LLMContext
    ) -> llm.APIInstance:
        """Recall for this turn; the prompt is empty when nothing is relevant."""
        return llm.APIInstance(
            api=self,
            api_prompt=await async_recall_prompt(self.hass, self.entry, llm_context),
            llm_context=llm_context,
            tools=[],
        )


def memory_api(hass: HomeAssistant, entry: MemoryConfigEntry) -> MemoryAPI:
    """Make the Memory API of the loaded entry, to register with Home Assistant."""
    return MemoryAPI(hass=hass, id=DOMAIN, name=LLM_API_NAME, entry=entry)
