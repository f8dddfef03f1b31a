"""Memory tools for every LLM agent, through the Assist API.

Home Assistant's `llm` integration asks each loaded integration's `llm.py`
for tools when it builds the Assist API, so an agent with only "Assist"
selected gets `memory__search`, `memory__add` and `memory__forget` with no
further set-up. Descriptions are short and concrete for small local models;
results are compact and carry ids, so forget can target what search found.

Privacy: the speaker (a logged-in user, or a satellite) reaches their own
memories and the household's, never another person's, admins included; a
code or password in a memory is "[redacted]" unless the speaker is an
identified person in its scope (`Caller.sees_secrets`).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final, override

from homeassistant.components.conversation.chat_log import current_chat_log
from homeassistant.components.llm import LLMTools
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import config_validation as cv, llm
from homeassistant.util import dt as dt_util
from homeassistant.util.json import JsonObjectType, JsonValueType
import probatio

from .access import Caller, speaker
from .const import (
    CONF_MIN_SCORE,
    CONF_SEARCH_LIMIT,
    DEFAULT_MIN_SCORE,
    DEFAULT_SEARCH_LIMIT,
    DOMAIN,
)
from .embedding import async_query_vector
from .engine import (
    HOUSEHOLD,
    MemoryItem,
    MemoryType,
    NewMemory,
    Origin,
    SearchQuery,
    Source,
)
from .engine.text import fence_safe
from .errors import translated_store_errors
from .runtime import MemoryConfigEntry, loaded_entry

MAX_TOOL_RESULTS: Final = 10
# Types a conversation may add; summaries and profiles are digestion's.
TOOL_TYPES: Final = ("fact", "preference", "instruction", "event", "other")
PERSONAL = "personal"

# Tool names get an API prefix when an agent has several APIs, so the prompt
# and descriptions name the tools by what they do.
TOOLS_PROMPT: Final = (
    "You have a long-term memory of what the household told you. Search it "
    "when the user asks about something they may have told you before; add to "
    "it only when they ask you to remember something; forget only when they "
    "ask you to."
)


def _error(key: str, **placeholders: str) -> HomeAssistantError:
    return HomeAssistantError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders=placeholders or None,
    )


def _compact(item: MemoryItem, caller: Caller) -> dict[str, Any]:
    """Put a memory in few tokens: id and text, and only labels that matter.

    The text is `fence_safe`, as in every prompt: one line, nothing hidden.
    """
    result: dict[str, Any] = {"id": item.id, "text": fence_safe(item.content)}
    if item.scope != HOUSEHOLD and item.scope in caller.persons:
        result[PERSONAL] = True
    if item.type == MemoryType.EVENT:
        result["date"] = item.created_at.date().isoformat()
    return result


class MemoryTool(llm.Tool):
    """Checks arguments and finds the loaded entry and the speaker."""

    integration = DOMAIN

    @override
    async def async_call(
        self,
        hass: HomeAssistant,
        tool_input: llm.ToolInput,
        llm_context: llm.LLMContext,
    ) -> llm.ToolResult:
        """Validate the arguments, then run the tool for the speaker."""
        try:
            args = self.parameters(tool_input.tool_args)
        except probatio.Invalid as err:
            raise _error("tool_invalid_arguments", error=str(err)) from err
        entry = loaded_entry(hass)
        caller = speaker(hass, entry, llm_context)
        # A full disk, a vanished file: the same words as the actions.
        with translated_store_errors():
            data = await self._async_run(hass, entry, caller, args, llm_context)
        return llm.ToolResult(data=data)

    async def _async_run(
        self,
        hass: HomeAssistant,
        entry: MemoryConfigEntry,
        caller: Caller,
        args: dict[str, Any],
        llm_context: llm.LLMContext,
    ) -> JsonObjectType:
        raise NotImplementedError


class SearchTool(MemoryTool):
    """Find memories by what the user is asking about."""

    name = f"{DOMAIN}__search"
    title = "Search memories"
    description = (
        "Search the long-term memory: facts, preferences, plans and events the "
        "household told you earlier. Use it when the user asks about something "
        "they may have told you before. Returns matching memories with their id."
    )
    parameters = probatio.Schema(
        {
            probatio.Required(
                "query",
                description="A few keywords of what to look for, e.g. 'Mia allergy'.",
            ): cv.string,
            probatio.Optional(
                "limit", description="How many memories at most (default 5)."
            ): probatio.All(
                probatio.Coerce(int), probatio.Range(min=1, max=MAX_TOOL_RESULTS)
            ),
        }
    )
    annotations = llm.ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )

    @override
    async def _async_run(
        self,
        hass: HomeAssistant,
        entry: MemoryConfigEntry,
        caller: Caller,
        args: dict[str, Any],
        llm_context: llm.LLMContext,
    ) -> JsonObjectType:
        options = entry.options
        limit = args.get(
            "limit",
            min(options.get(CONF_SEARCH_LIMIT, DEFAULT_SEARCH_LIMIT), MAX_TOOL_RESULTS),
        )
        query = SearchQuery(
            text=args["query"],
            scopes=caller.reachable(),
            limit=int(limit),
            min_score=float(options.get(CONF_MIN_SCORE, DEFAULT_MIN_SCORE)),
            vector=await async_query_vector(
                entry.runtime_data.embedding, args["query"]
            ),
            # The words are analysed in the language of the conversation.
            language=llm_context.language,
        )
        hits = await entry.runtime_data.store.search(query)
        return {
            "memories": [
                _compact(hit.item, caller)
                for hit in caller.found(hits, args["query"], llm_context.language)
            ]
        }


class AddTool(MemoryTool):
    """Remember something the user asked to be remembered."""

    name = f"{DOMAIN}__add"
    title = "Remember"
    description = (
        "Save something to long-term memory when the user asks you to remember "
        "it. Saving the same thing twice keeps one copy."
    )
    parameters = probatio.Schema(
        {
            probatio.Required(
                "content",
                description=(
                    "One short sentence that makes sense on its own, naming "
                    "who or what it is about, e.g. 'Mia is allergic to nuts.'"
                ),
            ): cv.string,
            probatio.Optional(
                "type",
                default="fact",
                description=(
                    "fact (default), preference (likes and dislikes), instruction "
                    "(how the user wants things done), event (something that "
                    "happened or is planned), or other."
                ),
            ): probatio.In(TOOL_TYPES),
            probatio.Optional(
                "scope",
                default=PERSONAL,
                description=(
                    "personal (default): only for the person speaking. household: "
                    "shared with everyone at home, for facts about the home or "
                    "the family."
                ),
            ): probatio.In((PERSONAL, HOUSEHOLD)),
            probatio.Optional(
                "expires_in_days",
                description="Only for temporary things: forget it after this many days.",
            ): probatio.All(probatio.Coerce(float), probatio.Range(min=0.01, max=3650)),
        }
    )
    # Adding twice keeps one copy; nothing is overwritten or lost.
    annotations = llm.ToolAnnotations(
        read_only=False, destructive=False, idempotent=True, open_world=False
    )

    @override
    async def _async_run(
        self,
        hass: HomeAssistant,
        entry: MemoryConfigEntry,
        caller: Caller,
        args: dict[str, Any],
        llm_context: llm.LLMContext,
    ) -> JsonObjectType:
        scope = caller.personal_scope if args["scope"] == PERSONAL else HOUSEHOLD
        expires_at = None
        if "expires_in_days" in args:
            expires_at = dt_util.utcnow() + timedelta(days=args["expires_in_days"])
        chat_log = current_chat_log.get()
        conversation_id = chat_log.conversation_id if chat_log else None
        agent_id = (
            entry.runtime_data.capture.agent_id(conversation_id)
            if conversation_id
            else None
        )
        result = await entry.runtime_data.store.add(
            NewMemory(
                content=args["content"],
                type=MemoryType(args["type"]),
                scope=scope,
                expires_at=expires_at,
                language=llm_context.language,
                source=Source(
                    origin=Origin.TOOL,
                    conversation_id=conversation_id,
                    agent_id=agent_id or llm_context.platform,
                    device_id=llm_context.device_id,
                    user_id=llm_context.context.user_id
                    if llm_context.context
                    else None,
                ),
            )
        )
        return {
            "id": result.item.id,
            "saved": result.created,
            "scope": HOUSEHOLD if result.item.scope == HOUSEHOLD else PERSONAL,
        }


class ForgetTool(MemoryTool):
    """Forget memories the user asked to be forgotten."""

    name = f"{DOMAIN}__forget"
    title = "Forget memories"
    description = (
        "Forget memories when the user asks you to. Pass the ids from a memory "
        "search or from the memory notes (#12 is id 12); search first if you "
        "do not know the id."
    )
    parameters = probatio.Schema(
        {
            probatio.Required(
                "ids", description="Ids of the memories to forget, e.g. [12]."
            ): probatio.All(
                cv.ensure_list,
                probatio.Length(min=1, max=MAX_TOOL_RESULTS),
                [probatio.All(probatio.Coerce(int), probatio.Range(min=1))],
            ),
        }
    )
    # Archives (the action can still restore or purge), and a second call
    # changes nothing more; but to the agent the memory is gone.
    annotations = llm.ToolAnnotations(
        read_only=False, destructive=True, idempotent=True, open_world=False
    )

    @override
    async def _async_run(
        self,
        hass: HomeAssistant,
        entry: MemoryConfigEntry,
        caller: Caller,
        args: dict[str, Any],
        llm_context: llm.LLMContext,
    ) -> JsonObjectType:
        store = entry.runtime_data.store
        ids: list[int] = list(dict.fromkeys(args["ids"]))
        items = await store.get_many(ids)
        # Someone else's memory is reported as unknown: its existence stays private.
        missing = [
            i for i in ids if i not in items or not caller.may_reach(items[i].scope)
        ]
        if missing:
            raise _error("unknown_memory", ids=", ".join(map(str, missing)))
        await store.forget(ids)
        forgotten: list[JsonValueType] = [*ids]
        return {"forgotten": forgotten}


TOOLS: Final[tuple[llm.Tool, ...]] = (SearchTool(), AddTool(), ForgetTool())


@callback
def async_get_tools(
    hass: HomeAssistant, llm_context: llm.LLMContext, api_id: str
) -> LLMTools | None:
    """Give the Assist API the memory tools while Assist Memory is loaded."""
    if api_id != llm.LLM_API_ASSIST or not hass.config_entries.async_loaded_entries(
        DOMAIN
    ):
        return None
    return LLMTools(tools=list(TOOLS), prompt=TOOLS_PROMPT)
