"""The `memory.*` actions for automations, scripts and Developer tools.

Privacy: a call made by a non-admin user reads, searches and forgets only
household memories and those of the person linked to that user; a memory
outside that reach is reported as unknown, so its existence does not leak.
Calls with no user (automations, scripts) and admins reach every scope.
The same rules apply to kept conversation messages (`source`). Assist (the
LLM tools and recall) uses `async_assistant_caller` instead, which never
reaches another person's memories, admins included. Codes, PINs and
passwords are shown only to an identified person in the text's scope
(`Caller.sees_secrets`); anyone else reads "[redacted]" in their place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, cast

from homeassistant.core import (
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    SupportsResponse,
    callback,
)
from homeassistant.exceptions import ServiceValidationError, UnknownUser
from homeassistant.helpers import config_validation as cv
from homeassistant.util import dt as dt_util
import probatio

from .const import (
    CONF_MIN_SCORE,
    CONF_SEARCH_LIMIT,
    DEFAULT_MIN_SCORE,
    DEFAULT_SEARCH_LIMIT,
    DOMAIN,
)
from .coordinator import MemoryConfigEntry, loaded_entry
from .embedding import async_query_vector
from .engine import (
    HOUSEHOLD,
    MAX_SEARCH_LIMIT,
    MemoryItem,
    MemoryStore,
    MemoryType,
    MessageQuery,
    NewMemory,
    Origin,
    SearchHit,
    SearchQuery,
    Signal,
    Source,
    StoredMessage,
)
from .engine.secrets import found_without_secrets, redacted
from .errors import translated_errors
from .validation import DAYS, DURATION, PERSON, ROW_ID, check_ids, moment

SERVICE_ADD = "add"
SERVICE_SEARCH = "search"
SERVICE_FORGET = "forget"
SERVICE_GET = "get"

ATTR_CONTENT = "content"
ATTR_TYPE = "type"
ATTR_TAGS = "tags"
ATTR_PERSON = "person"
ATTR_EXPIRES_AT = "expires_at"
ATTR_EXPIRES_IN = "expires_in"
ATTR_QUERY = "query"
ATTR_TYPES = "types"
ATTR_STATUS = "status"
ATTR_SINCE = "since"
ATTR_RECENCY_DAYS = "recency_days"
ATTR_LIMIT = "limit"
ATTR_MIN_SCORE = "min_score"
ATTR_IDS = "ids"
ATTR_ID = "id"
ATTR_DRY_RUN = "dry_run"
ATTR_PURGE = "purge"
ATTR_SOURCE = "source"

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
}

ADD_SCHEMA = probatio.Schema(
    {
        probatio.Required(ATTR_CONTENT): cv.string,
        probatio.Optional(ATTR_TYPE, default=str(MemoryType.FACT)): probatio.In(TYPES),
        probatio.Optional(ATTR_TAGS, default=list): probatio.All(
            cv.ensure_list, [cv.string]
        ),
        probatio.Optional(ATTR_PERSON): PERSON,
        probatio.Exclusive(ATTR_EXPIRES_AT, "expires"): moment,
        probatio.Exclusive(ATTR_EXPIRES_IN, "expires"): DURATION,
    }
)
SEARCH_SCHEMA = probatio.Schema(_SEARCH_FIELDS)
FORGET_SCHEMA = probatio.Schema(
    {
        probatio.Exclusive(ATTR_IDS, "target"): probatio.All(
            cv.ensure_list, probatio.Length(min=1, max=500), [ROW_ID]
        ),
        **_SEARCH_FIELDS,
        probatio.Optional(ATTR_DRY_RUN, default=False): cv.boolean,
        probatio.Optional(ATTR_PURGE, default=False): cv.boolean,
    }
)
GET_SCHEMA = probatio.Schema({probatio.Required(ATTR_ID): ROW_ID})


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling, and so which scopes they may reach."""

    unrestricted: bool
    persons: tuple[str, ...]

    def reachable(self) -> tuple[str, ...] | None:
        """Scopes a search may cover; None means every scope."""
        return None if self.unrestricted else (HOUSEHOLD, *self.persons)

    def may_reach(self, scope: str) -> bool:
        """Whether a memory in `scope` is visible to this caller."""
        return self.unrestricted or scope == HOUSEHOLD or scope in self.persons

    @property
    def personal_scope(self) -> str:
        """Where this caller's own memories go: their person, or the household."""
        return self.persons[0] if self.persons else HOUSEHOLD

    def sees_secrets(self, scope: str) -> bool:
        """Whether codes, PINs and passwords in a text of `scope` are shown as said.

        Only to an identified person in that scope (household texts are in
        the scope of every identified person), and to the actions' admins and
        automations, which reach every scope. A satellite mapped to no person,
        an Assist turn with no user, or a user linked to no person gets the
        text with each value replaced by "[redacted]".
        """
        return self.unrestricted or (bool(self.persons) and self.may_reach(scope))

    def shown[T: (MemoryItem, StoredMessage)](self, said: T) -> T:
        """Return a memory or message as this caller may read it (`sees_secrets`)."""
        if self.sees_secrets(said.scope):
            return said
        text = redacted(said.content)
        return said if text == said.content else replace(said, content=text)

    def found(self, hits: Iterable[SearchHit], query: str) -> list[SearchHit]:
        """Return memories a search found as this caller may read them (`shown`).

        A memory redacted for them that only its secret's words found (not
        its other words, nor its meaning) is left out: a code guessed at the
        door finds nothing, whether the guess is right or wrong.
        """
        kept: list[SearchHit] = []
        for hit in hits:
            item = self.shown(hit.item)
            if (
                item is hit.item
                or Signal.SEMANTIC in hit.matched
                or found_without_secrets(query, hit.item.content)
            ):
                kept.append(replace(hit, item=item))
        return kept


async def async_caller(hass: HomeAssistant, call: ServiceCall) -> Caller:
    """Resolve the calling user to admin rights and linked person entities."""
    user_id = call.context.user_id
    if user_id is None:
        return Caller(unrestricted=True, persons=())
    user = await hass.auth.async_get_user(user_id)
    if user is None:
        raise UnknownUser(context=call.context, user_id=user_id)
    return Caller(unrestricted=user.is_admin, persons=async_user_persons(hass, user_id))


@callback
def async_user_persons(hass: HomeAssistant, user_id: str) -> tuple[str, ...]:
    """Person entities linked to a user (the person's `user_id` attribute)."""
    return tuple(
        state.entity_id
        for state in hass.states.async_all("person")
        if state.attributes.get("user_id") == user_id
    )


@callback
def async_assistant_caller(
    hass: HomeAssistant,
    user_id: str | None,
    device_id: str | None,
    satellite_persons: Mapping[str, str],
) -> Caller:
    """Who is speaking to Assist; never unrestricted, admins included.

    A logged-in user reaches their own person and the household. A voice
    satellite or an automation (no user) reaches the household, plus the
    person the options map the satellite's device to, if any.
    """
    if user_id is not None:
        persons = async_user_persons(hass, user_id)
    elif device_id is not None and device_id in satellite_persons:
        persons = (satellite_persons[device_id],)
    else:
        persons = ()
    return Caller(unrestricted=False, persons=persons)


def _person_scope(caller: Caller, person: str | None) -> str:
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


async def _reachable_items(
    store: MemoryStore, caller: Caller, ids: list[int]
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
        (HOUSEHOLD, _person_scope(caller, person))
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
    )


async def _async_add(call: ServiceCall) -> ServiceResponse:
    entry = loaded_entry(call.hass)
    caller = await async_caller(call.hass, call)
    data = call.data
    # `expires_at` is in UTC already (validation.moment).
    expires_at: datetime | None = data.get(ATTR_EXPIRES_AT)
    if ATTR_EXPIRES_IN in data:
        expires_at = dt_util.utcnow() + data[ATTR_EXPIRES_IN]
    memory = NewMemory(
        content=data[ATTR_CONTENT],
        type=MemoryType(data[ATTR_TYPE]),
        scope=_person_scope(caller, data.get(ATTR_PERSON)),
        tags=tuple(data[ATTR_TAGS]),
        expires_at=expires_at,
        source=Source(origin=Origin.ACTION, user_id=call.context.user_id),
    )
    result = await entry.runtime_data.store.add(memory)
    return {"id": result.item.id, "created": result.created}


def _message_query(query: SearchQuery) -> MessageQuery:
    """Make the conversation-log part of a search (types, tags, status: memories)."""
    return MessageQuery(
        text=query.text,
        scopes=query.scopes,
        since=query.since,
        limit=query.limit,
        min_score=query.min_score,
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
        # None (keyword-only) while the provider is down, slow or rebuilding.
        if (vector := await async_query_vector(entry, query.text)) is not None:
            query = replace(query, vector=vector)
        hits = await entry.runtime_data.store.search(query)
        response["memories"] = [hit.as_dict() for hit in caller.found(hits, query.text)]
    if source != SOURCE_MEMORIES:
        messages = _message_query(query)
        # Embedded once per call (with `both`, the memories' vector comes
        # back from the queue's cache); None while the messages are
        # re-embedded or the provider is down: keywords only.
        if (
            vector := await async_query_vector(entry, query.text, messages=True)
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
        items = await _reachable_items(store, caller, data[ATTR_IDS])
        chosen = [items[i] for i in data[ATTR_IDS]]
    else:
        query = _search_query(call, caller, dict(entry.options))
        found = caller.found(await store.search(query), query.text)
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
    items = await _reachable_items(entry.runtime_data.store, caller, [item_id])
    return cast("ServiceResponse", caller.shown(items[item_id]).as_dict())


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register the actions (once per Home Assistant start)."""
    for name, handler, schema, supports in (
        (SERVICE_ADD, _async_add, ADD_SCHEMA, SupportsResponse.OPTIONAL),
        (SERVICE_SEARCH, _async_search, SEARCH_SCHEMA, SupportsResponse.ONLY),
        (SERVICE_FORGET, _async_forget, FORGET_SCHEMA, SupportsResponse.OPTIONAL),
        (SERVICE_GET, _async_get, GET_SCHEMA, SupportsResponse.ONLY),
    ):
        hass.services.async_register(
            DOMAIN,
            name,
            translated_errors(handler),
            schema=schema,
            supports_response=supports,
        )
