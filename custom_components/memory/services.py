"""The `memory.*` actions for automations, scripts and Developer tools.

Each action serves a caller within their reach (`access.py`): a memory or
message outside it is reported as unknown, so its existence does not leak.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Final, cast

from homeassistant.core import (
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    SupportsResponse,
    callback,
)
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.util import dt as dt_util
import probatio

from .access import Caller, async_caller, async_shown_memories
from .const import (
    ATTR_CONTENT,
    ATTR_CONVERSATION,
    ATTR_CONVERSATION_ID,
    ATTR_DRY_RUN,
    ATTR_EVERYTHING,
    ATTR_EXPIRES_AT,
    ATTR_EXPIRES_IN,
    ATTR_ID,
    ATTR_IDS,
    ATTR_LANGUAGE,
    ATTR_LIMIT,
    ATTR_MIN_SCORE,
    ATTR_PERSON,
    ATTR_PURGE,
    ATTR_QUERY,
    ATTR_RECENCY_DAYS,
    ATTR_SINCE,
    ATTR_SOURCE,
    ATTR_STATUS,
    ATTR_TAGS,
    ATTR_TYPE,
    ATTR_TYPES,
    CONF_MIN_SCORE,
    CONF_SEARCH_LIMIT,
    DEFAULT_MIN_SCORE,
    DEFAULT_SEARCH_LIMIT,
    DOMAIN,
)
from .digestion import BATCH
from .embedding import async_query_vector
from .engine import (
    HOUSEHOLD,
    MAX_SEARCH_LIMIT,
    MemoryItem,
    MemoryType,
    MessageQuery,
    NewMemory,
    Origin,
    SearchHit,
    SearchQuery,
    Source,
    StoreError,
)
from .engine.digestion import DigestState
from .engine.exchange import memory_scopes
from .engine.postgres import AnyStore
from .errors import store_error, translated_errors
from .export import async_export, audience
from .import_action import IMPORT_SERVICE
from .runtime import MemoryConfigEntry, loaded_entry
from .validation import (
    DAYS,
    DURATION,
    LANGUAGE,
    MAX_IDS,
    PERSON,
    ROW_ID,
    ActionSchema,
    check_ids,
    moment,
)

SERVICE_ADD = "add"
SERVICE_SEARCH = "search"
SERVICE_FORGET = "forget"
SERVICE_GET = "get"
SERVICE_DIGEST = "digest"
SERVICE_EXPORT = "export"
SERVICE_PROFILE = "profile"

# What `memory.search` and `memory.forget` look at.
SOURCE_MEMORIES = "memories"
SOURCE_CONVERSATIONS = "conversations"
SOURCE_BOTH = "both"
SOURCES = (SOURCE_MEMORIES, SOURCE_CONVERSATIONS, SOURCE_BOTH)

STATUSES = ("active", "archived", "superseded", "any")
TYPES = [str(kind) for kind in MemoryType]

_SEARCH_FIELDS: dict[probatio.Marker, Any] = {
    probatio.Optional(ATTR_QUERY, default=""): cv.string,
    probatio.Optional(ATTR_PERSON): PERSON,
    probatio.Optional(ATTR_TYPES): probatio.All(cv.ensure_list, [probatio.In(TYPES)]),
    probatio.Optional(ATTR_TAGS): probatio.All(cv.ensure_list, [cv.string]),
    probatio.Optional(ATTR_STATUS, default="active"): probatio.In(STATUSES),
    probatio.Exclusive(ATTR_SINCE, "since"): moment,
    probatio.Exclusive(ATTR_RECENCY_DAYS, "since"): DAYS,
    probatio.Optional(ATTR_LIMIT): probatio.All(
        probatio.Coerce(int), probatio.Range(min=1, max=MAX_SEARCH_LIMIT)
    ),
    probatio.Optional(ATTR_MIN_SCORE): probatio.All(
        probatio.Coerce(float), probatio.Range(min=0, max=1)
    ),
    probatio.Optional(ATTR_SOURCE, default=SOURCE_MEMORIES): probatio.In(SOURCES),
    probatio.Optional(ATTR_LANGUAGE): LANGUAGE,
}

ADD_SCHEMA = ActionSchema(
    {
        probatio.Required(ATTR_CONTENT): cv.string,
        probatio.Optional(ATTR_TYPE, default=str(MemoryType.FACT)): probatio.In(TYPES),
        probatio.Optional(ATTR_TAGS, default=list): probatio.All(
            cv.ensure_list, [cv.string]
        ),
        probatio.Optional(ATTR_PERSON): PERSON,
        probatio.Exclusive(ATTR_EXPIRES_AT, "expires"): moment,
        probatio.Exclusive(ATTR_EXPIRES_IN, "expires"): DURATION,
        probatio.Optional(ATTR_LANGUAGE): LANGUAGE,
    }
)
SEARCH_SCHEMA = ActionSchema(_SEARCH_FIELDS)
FORGET_SCHEMA = ActionSchema(
    {
        probatio.Exclusive(ATTR_IDS, "target"): probatio.All(
            cv.ensure_list, probatio.Length(min=1, max=MAX_IDS), [ROW_ID]
        ),
        **_SEARCH_FIELDS,
        probatio.Optional(ATTR_DRY_RUN, default=False): cv.boolean,
        probatio.Optional(ATTR_PURGE, default=False): cv.boolean,
    }
)
GET_SCHEMA = ActionSchema({probatio.Required(ATTR_ID): ROW_ID})
DIGEST_SCHEMA: Final = ActionSchema(
    {
        probatio.Exclusive(ATTR_CONVERSATION_ID, "target"): cv.string,
        probatio.Exclusive(ATTR_CONVERSATION, "target"): ROW_ID,
    }
)
EXPORT_SCHEMA: Final = ActionSchema(
    {
        probatio.Optional(ATTR_PERSON): PERSON,
        probatio.Optional(ATTR_EVERYTHING, default=False): cv.boolean,
    }
)
PROFILE_SCHEMA: Final = ActionSchema({probatio.Optional(ATTR_PERSON): PERSON})


def person_scope(caller: Caller, person: str | None) -> str:
    """Return the scope for an explicit person; refuse someone else's."""
    if person is None:
        return HOUSEHOLD
    if not caller.may_reach(person):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="person_not_allowed",
            translation_placeholders={"person": person},
        )
    return person


def _unknown(ids: list[int]) -> ServiceValidationError:
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key="unknown_memory",
        translation_placeholders={"ids": ", ".join(map(str, ids))},
    )


async def reachable_items(
    store: AnyStore, caller: Caller, ids: list[int]
) -> dict[int, MemoryItem]:
    """Items by id; any missing or out-of-reach id raises as unknown."""
    items = await store.get_many(ids)
    missing = [i for i in ids if i not in items or not caller.may_reach(items[i].scope)]
    if missing:
        raise _unknown(sorted(set(missing)))
    return items


def _search_query(
    call: ServiceCall, caller: Caller, options: dict[str, Any]
) -> SearchQuery:
    data = call.data
    person = data.get(ATTR_PERSON)
    scopes = (
        (HOUSEHOLD, person_scope(caller, person))
        if person is not None
        else caller.reachable()
    )
    # `since` is in UTC already (validation.moment).
    since: datetime | None = data.get(ATTR_SINCE)
    if ATTR_RECENCY_DAYS in data:
        since = dt_util.utcnow() - timedelta(days=data[ATTR_RECENCY_DAYS])
    return SearchQuery(
        text=data[ATTR_QUERY],
        scopes=scopes,
        types=tuple(MemoryType(kind) for kind in data.get(ATTR_TYPES, ())) or None,
        tags=tuple(data.get(ATTR_TAGS, ())),
        status=data[ATTR_STATUS],
        since=since,
        limit=data.get(
            ATTR_LIMIT, options.get(CONF_SEARCH_LIMIT, DEFAULT_SEARCH_LIMIT)
        ),
        min_score=data.get(
            ATTR_MIN_SCORE, options.get(CONF_MIN_SCORE, DEFAULT_MIN_SCORE)
        ),
        language=data.get(ATTR_LANGUAGE),
    )


async def _async_add(call: ServiceCall) -> ServiceResponse:
    entry = loaded_entry(call.hass)
    caller = await async_caller(call.hass, call)
    return await async_add_memory(entry, caller, call.data, call.context.user_id)


async def async_add_memory(
    entry: MemoryConfigEntry,
    caller: Caller,
    data: Mapping[str, Any],
    user_id: str | None,
) -> dict[str, Any]:
    """Add a memory (data as `ADD_SCHEMA` leaves it); the action's and the panel's."""
    # `expires_at` is in UTC already (validation.moment).
    expires_at: datetime | None = data.get(ATTR_EXPIRES_AT)
    if ATTR_EXPIRES_IN in data:
        expires_at = dt_util.utcnow() + data[ATTR_EXPIRES_IN]
    memory = NewMemory(
        content=data[ATTR_CONTENT],
        type=MemoryType(data[ATTR_TYPE]),
        scope=person_scope(caller, data.get(ATTR_PERSON)),
        tags=tuple(data[ATTR_TAGS]),
        expires_at=expires_at,
        language=data.get(ATTR_LANGUAGE),
        source=Source(origin=Origin.ACTION, user_id=user_id),
    )
    result = await entry.runtime_data.store.add(memory)
    return {"id": result.item.id, "created": result.created}


async def async_find_memories(
    entry: MemoryConfigEntry, caller: Caller, query: SearchQuery
) -> list[SearchHit]:
    """Search memories for a caller: by meaning too when a query vector comes.

    `memory.search` and the panel's `memory/browse` both search here, so a
    memory is found, ranked and redacted the same way for both.
    """
    # None (keyword-only) while the provider is down, slow or rebuilding.
    if (
        vector := await async_query_vector(entry.runtime_data.embedding, query.text)
    ) is not None:
        query = replace(query, vector=vector)
    hits = await entry.runtime_data.store.search(query)
    return caller.found(hits, query.text, query.language)


def _message_query(query: SearchQuery) -> MessageQuery:
    """Make the conversation-log part of a search (types, tags, status: memories)."""
    return MessageQuery(
        text=query.text,
        scopes=query.scopes,
        since=query.since,
        limit=query.limit,
        min_score=query.min_score,
        language=query.language,
    )


async def _async_search(call: ServiceCall) -> ServiceResponse:
    entry = loaded_entry(call.hass)
    caller = await async_caller(call.hass, call)
    query = _search_query(call, caller, dict(entry.options))
    source = call.data[ATTR_SOURCE]
    if source != SOURCE_MEMORIES:
        # What was said before this call, not only what capture wrote since.
        await entry.runtime_data.capture.async_flush()
    response: dict[str, Any] = {}
    if source != SOURCE_CONVERSATIONS:
        hits = await async_find_memories(entry, caller, query)
        response["memories"] = [hit.as_dict() for hit in hits]
    if source != SOURCE_MEMORIES:
        messages = _message_query(query)
        # Embedded once per call (with `both`, the memories' vector comes
        # back from the queue's cache); None while the messages are
        # re-embedded or the provider is down: keywords only.
        if (
            vector := await async_query_vector(
                entry.runtime_data.embedding, query.text, messages=True
            )
        ) is not None:
            messages = replace(messages, vector=vector)
        found = await entry.runtime_data.conversations.search(messages)
        response["messages"] = [
            replace(hit, message=caller.shown(hit.message)).as_dict() for hit in found
        ]
    return response


async def _async_forget(call: ServiceCall) -> ServiceResponse:
    entry = loaded_entry(call.hass)
    caller = await async_caller(call.hass, call)
    data = call.data
    source = data[ATTR_SOURCE]
    if ATTR_IDS not in data and not data[ATTR_QUERY].strip():
        raise ServiceValidationError(
            translation_domain=DOMAIN, translation_key="forget_needs_target"
        )
    if source != SOURCE_MEMORIES:
        # Messages have no archive: forgetting one erases it.
        if not data[ATTR_PURGE] and not data[ATTR_DRY_RUN]:
            raise ServiceValidationError(
                translation_domain=DOMAIN, translation_key="messages_need_purge"
            )
        if ATTR_IDS in data and source == SOURCE_BOTH:
            raise ServiceValidationError(
                translation_domain=DOMAIN, translation_key="ids_need_one_source"
            )
        await entry.runtime_data.capture.async_flush()
    check_ids(data.get(ATTR_IDS, ()))
    response: dict[str, Any] = {
        "dry_run": data[ATTR_DRY_RUN],
        "purged": data[ATTR_PURGE] and not data[ATTR_DRY_RUN],
    }
    if source != SOURCE_CONVERSATIONS:
        response["memories"] = await _forget_memories(call, entry, caller)
    if source != SOURCE_MEMORIES:
        response["messages"] = await _forget_messages(call, entry, caller)
    return response


async def _forget_memories(
    call: ServiceCall, entry: MemoryConfigEntry, caller: Caller
) -> list[dict[str, Any]]:
    store = entry.runtime_data.store
    data = call.data
    if ATTR_IDS in data:
        items = await reachable_items(store, caller, data[ATTR_IDS])
        chosen = [items[i] for i in data[ATTR_IDS]]
    else:
        query = _search_query(call, caller, dict(entry.options))
        found = caller.found(await store.search(query), query.text, query.language)
        chosen = [hit.item for hit in found]
    ids = list(dict.fromkeys(item.id for item in chosen))
    if not data[ATTR_DRY_RUN]:
        await store.forget(ids, purge=data[ATTR_PURGE])
    return [
        {"id": item.id, "content": caller.shown(item).content, "scope": item.scope}
        for item in {item.id: item for item in chosen}.values()
    ]


async def _forget_messages(
    call: ServiceCall, entry: MemoryConfigEntry, caller: Caller
) -> list[dict[str, Any]]:
    """Erase conversation messages (and every copy of their text)."""
    log = entry.runtime_data.conversations
    data = call.data
    if ATTR_IDS in data:
        found = await log.get_messages(data[ATTR_IDS])
        missing = [
            i
            for i in data[ATTR_IDS]
            if i not in found or not caller.may_reach(found[i].scope)
        ]
        if missing:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="unknown_message",
                translation_placeholders={
                    "ids": ", ".join(map(str, sorted(set(missing))))
                },
            )
        chosen = [found[i] for i in dict.fromkeys(data[ATTR_IDS])]
    else:
        query = _message_query(_search_query(call, caller, dict(entry.options)))
        chosen = [hit.message for hit in await log.search(query)]
    if not data[ATTR_DRY_RUN]:
        await log.purge([message.id for message in chosen])
    return [
        {
            "id": message.id,
            "conversation_id": message.conversation_id,
            "role": str(message.role),
            "content": caller.shown(message).content,
            "scope": message.scope,
        }
        for message in chosen
    ]


async def _async_get(call: ServiceCall) -> ServiceResponse:
    entry = loaded_entry(call.hass)
    caller = await async_caller(call.hass, call)
    item_id: int = call.data[ATTR_ID]
    check_ids([item_id])
    items = await reachable_items(entry.runtime_data.store, caller, [item_id])
    log = entry.runtime_data.conversations
    [item] = await async_shown_memories(caller, log, [items[item_id]])
    return cast("ServiceResponse", item.as_dict())


async def _async_digest(call: ServiceCall) -> ServiceResponse:
    """Digest one conversation, or every waiting one the caller may reach, now."""
    return await async_digest_now(
        loaded_entry(call.hass),
        await async_caller(call.hass, call),
        call.data,
    )


async def async_digest_now(
    entry: MemoryConfigEntry, caller: Caller, data: Mapping[str, Any]
) -> dict[str, Any]:
    """Digest a conversation row (`conversation`), a conversation id's rows, or all.

    The action's and the panel's path: only conversations the caller, or the
    household, spoke in; another speaker's memories are not shown.
    """
    digestion = entry.runtime_data.digestion
    check_ids([data[ATTR_CONVERSATION]] if ATTR_CONVERSATION in data else [])
    # What was said before this call, not only what capture wrote since.
    await entry.runtime_data.capture.async_flush()
    if ATTR_CONVERSATION in data:
        found = await digestion.queue.get(data[ATTR_CONVERSATION])
        targets = [found] if found is not None else []
    elif ATTR_CONVERSATION_ID in data:
        targets = await digestion.queue.find(data[ATTR_CONVERSATION_ID])
    else:
        targets = await digestion.queue.waiting(limit=BATCH * 5)
    # A conversation is the caller's when they, or the household, spoke in it.
    speakers: Mapping[int, tuple[str, ...]] = await digestion.queue.speakers(
        [row.id for row in targets]
    )
    reachable = [
        row
        for row in targets
        if any(caller.may_reach(s) for s in speakers.get(row.id, (row.scope,)))
    ]
    named = ATTR_CONVERSATION in data or ATTR_CONVERSATION_ID in data
    if not reachable and named:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="unknown_conversation",
            translation_placeholders={
                "conversation": str(
                    data.get(ATTR_CONVERSATION) or data.get(ATTR_CONVERSATION_ID)
                )
            },
        )
    results = await digestion.async_digest(
        [row.id for row in reachable], waiting_only=not named
    )
    # Another speaker's memories in a shared conversation are not shown.
    shown = [result.as_dict(caller.may_reach) for result in results]
    totals: dict[str, Any] = {
        "added": sum(len(r["added"]) for r in shown),
        "updated": sum(len(r["updated"]) for r in shown),
        "superseded": sum(len(r["superseded"]) for r in shown),
        "duplicates": sum(len(r["duplicates"]) for r in shown),
        "skipped": sum(r.state == DigestState.SKIPPED for r in results),
        "pending": sum(r.state == DigestState.PENDING for r in results),
    }
    totals["conversations"] = shown
    return totals


async def _async_export(call: ServiceCall) -> ServiceResponse:
    entry = loaded_entry(call.hass)
    caller = await async_caller(call.hass, call)
    target = audience(
        call.hass,
        caller,
        person=call.data.get(ATTR_PERSON),
        everything=call.data[ATTR_EVERYTHING],
    )
    # What was said before this call, not only what capture wrote since.
    await entry.runtime_data.capture.async_flush()
    return await async_export(call.hass, entry, target)


async def _async_profile(call: ServiceCall) -> ServiceResponse:
    entry = loaded_entry(call.hass)
    caller = await async_caller(call.hass, call)
    return await async_refresh_profiles(entry, caller, call.data.get(ATTR_PERSON))


async def async_refresh_profiles(
    entry: MemoryConfigEntry, caller: Caller, person: str | None
) -> dict[str, Any]:
    """Refresh one scope's profile, or every reachable one's (action and panel)."""
    if person is not None and not caller.may_reach(person):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="person_not_allowed",
            translation_placeholders={"person": person},
        )
    try:
        if person is not None:
            scopes = [person]
        else:
            reach = caller.reachable()
            scopes = [
                scope
                for scope in await memory_scopes(entry.runtime_data.store)
                if reach is None or scope in reach
            ]
        results = await entry.runtime_data.profiles.async_refresh(
            scopes, retry_now=True
        )
    except StoreError as err:
        raise store_error(err) from err
    return {"profiles": [result.as_dict() for result in results]}


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register the actions (once per Home Assistant start)."""
    for name, handler, schema, supports in (
        (SERVICE_ADD, _async_add, ADD_SCHEMA, SupportsResponse.OPTIONAL),
        (SERVICE_SEARCH, _async_search, SEARCH_SCHEMA, SupportsResponse.ONLY),
        (SERVICE_FORGET, _async_forget, FORGET_SCHEMA, SupportsResponse.OPTIONAL),
        (SERVICE_GET, _async_get, GET_SCHEMA, SupportsResponse.ONLY),
        (SERVICE_DIGEST, _async_digest, DIGEST_SCHEMA, SupportsResponse.OPTIONAL),
        (SERVICE_EXPORT, _async_export, EXPORT_SCHEMA, SupportsResponse.OPTIONAL),
        (SERVICE_PROFILE, _async_profile, PROFILE_SCHEMA, SupportsResponse.OPTIONAL),
        (*IMPORT_SERVICE, SupportsResponse.OPTIONAL),
    ):
        hass.services.async_register(
            DOMAIN,
            name,
            translated_errors(handler),
            schema=schema,
            supports_response=supports,
        )
