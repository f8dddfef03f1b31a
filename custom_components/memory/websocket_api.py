"""The websocket API of the Memory panel: memories, profiles, health, live changes.

Every command serves the connection's user with the same reach as the
actions (`access.caller_for_user`: a non-admin reads the household's and
their own person's memories, an admin everything) and the same secret
rules (`Caller.shown`, `Caller.found`); a memory outside the reach is
reported as unknown, like `memory.get` does, and where a memory came from
only to one who may read its conversation (`access.async_shown_memories`). A search goes through the same
path as `memory.search` (`services.async_find_memories`). Errors leave
translated (`errors.store_error`); bad input never becomes a server error.
The subscription tells that something changed, never what: the panel asks
again with its own reach.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any, Final

from homeassistant.components.websocket_api import async_register_command
from homeassistant.components.websocket_api.connection import ActiveConnection
from homeassistant.components.websocket_api.decorators import (
    async_response,
    websocket_command,
)
from homeassistant.components.websocket_api.messages import event_message
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.util import dt as dt_util
import probatio

from .access import (
    Caller,
    async_readable_source,
    async_shown_memories,
    caller_for_user,
    scope_label,
)
from .const import (
    ATTR_CONTENT,
    ATTR_EXPIRES_AT,
    ATTR_LANGUAGE,
    ATTR_PERSON,
    ATTR_TAGS,
    ATTR_TYPE,
    DOMAIN,
)
from .embedding import EmbeddingRuntime
from .engine import (
    HOUSEHOLD,
    MAX_SEARCH_LIMIT,
    MemoryItem,
    MemoryType,
    NewMemory,
    Origin,
    SearchQuery,
    Source,
)
from .engine.conversations import ConversationQuery
from .engine.postgres import AnyStore
from .engine.store import BrowseQuery
from .errors import translated_store_errors
from .runtime import MemoryConfigEntry, loaded_entry
from .services import (
    ADD_SCHEMA,
    STATUSES,
    TYPES,
    async_add_memory,
    async_find_memories,
    async_refresh_profiles,
    person_scope,
    reachable_items,
)
from .validation import (
    LANGUAGE,
    MAX_IDS,
    PAGE_FIELDS,
    PERSON,
    ROW_ID,
    check_ids,
    moment,
)
from .websocket_conversations import async_setup_conversation_commands
from .websocket_import import async_setup_import_commands

BROWSE_STATUSES: Final = (*STATUSES, "expiring")
ORDERS: Final = ("relevance", "newest", "recalled")
ORIGINS: Final = [str(origin) for origin in Origin]
# Changes within this many seconds reach a subscriber as one event.
CHANGE_WINDOW_SECONDS: Final = 0.5
# A message's "type" is its command; a memory's type travels as this.
MEMORY_TYPE: Final = "memory_type"


def _caller(hass: HomeAssistant, connection: ActiveConnection) -> Caller:
    return caller_for_user(hass, connection.user)


async def _memories(
    hass: HomeAssistant, caller: Caller, items: Iterable[MemoryItem]
) -> list[dict[str, Any]]:
    """Show memories as the panel does: every field, the owner named.

    Secrets and sources as the caller may read them (`async_shown_memories`).
    """
    label = scope_label(hass)
    log = loaded_entry(hass).runtime_data.conversations
    return [
        {
            **item.as_dict(),
            "owner": label(item.scope),
            "household": item.scope == HOUSEHOLD,
        }
        for item in await _run(async_shown_memories(caller, log, items))
    ]


async def _run[T](call: Awaitable[T]) -> T:
    """Await a store call; a database error leaves translated."""
    with translated_store_errors():
        return await call


async def _reachable(
    hass: HomeAssistant, caller: Caller, ids: list[int]
) -> tuple[AnyStore, dict[int, MemoryItem]]:
    """Return the store and the memories, once each; one out of reach is unknown."""
    store = loaded_entry(hass).runtime_data.store
    unique = list(dict.fromkeys(ids))
    check_ids(unique)
    return store, await _run(reachable_items(store, caller, unique))


def _scopes(caller: Caller, person: str | None) -> tuple[str, ...] | None:
    """Return the scopes to list: the caller's reach, or one person's in it."""
    if person is None:
        return caller.reachable()
    if person == HOUSEHOLD:
        return (HOUSEHOLD,)
    # Someone out of reach gets an empty list, as if they had no memories.
    return (person,) if caller.may_reach(person) else ()


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/browse",
        probatio.Optional("query", default=""): cv.string,
        probatio.Optional("person"): probatio.Any(HOUSEHOLD, PERSON),
        probatio.Optional("types", default=list): [probatio.In(TYPES)],
        probatio.Optional("status", default="active"): probatio.In(BROWSE_STATUSES),
        probatio.Optional("tags", default=list): [cv.string],
        probatio.Optional("origins", default=list): [probatio.In(ORIGINS)],
        probatio.Optional("since"): moment,
        probatio.Optional("until"): moment,
        probatio.Optional("order"): probatio.In(ORDERS),
        **PAGE_FIELDS,
        probatio.Optional(ATTR_LANGUAGE): LANGUAGE,
    }
)
@async_response
async def ws_browse(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """List memories: searched by relevance, or a page newest or most recalled first."""
    entry = loaded_entry(hass)
    caller = _caller(hass, connection)
    scopes = _scopes(caller, msg.get("person"))
    types = tuple(MemoryType(kind) for kind in msg["types"])
    text = msg["query"].strip()
    order = msg.get("order") or ("relevance" if text else "newest")
    origins = tuple(Origin(origin) for origin in msg["origins"])
    expiring = msg["status"] == "expiring"
    if text and order == "relevance":
        hits = await _run(
            async_find_memories(
                entry,
                caller,
                SearchQuery(
                    text=text,
                    scopes=scopes,
                    types=types or None,
                    tags=tuple(msg["tags"]),
                    status="active" if expiring else msg["status"],
                    since=msg.get("since"),
                    limit=msg["limit"],
                    language=msg.get(ATTR_LANGUAGE),
                ),
            )
        )
        # The filters a search has no field for, as browsing applies them.
        until = msg.get("until")
        hits = [
            hit
            for hit in hits
            if (not expiring or hit.item.expires_at is not None)
            and (not origins or hit.item.source.origin in origins)
            and (until is None or hit.item.created_at < until)
        ]
        shown = await _memories(hass, caller, [hit.item for hit in hits])
        connection.send_result(
            msg["id"],
            {
                "memories": [
                    {**memory, "score": round(hit.score, 4)}
                    for memory, hit in zip(shown, hits, strict=True)
                ],
                "total": len(hits),
                "cursor": None,
            },
        )
        return
    page = await _run(
        entry.runtime_data.store.browse(
            BrowseQuery(
                scopes=scopes,
                types=types,
                status=msg["status"],
                tags=tuple(msg["tags"]),
                origins=origins,
                since=msg.get("since"),
                until=msg.get("until"),
                order="recalled" if order == "recalled" else "newest",
                limit=msg["limit"],
                cursor=msg.get("cursor"),
            )
        )
    )
    connection.send_result(
        msg["id"],
        {
            "memories": await _memories(hass, caller, page.items),
            "total": page.total,
            "cursor": page.cursor,
        },
    )


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/get",
        probatio.Required("memory_id"): ROW_ID,
    }
)
@async_response
async def ws_get(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """One memory, with what it superseded and what superseded it (those in reach)."""
    caller = _caller(hass, connection)
    store, items = await _reachable(hass, caller, [msg["memory_id"]])
    item = items[msg["memory_id"]]
    before, after = await _run(store.history(item))
    log = loaded_entry(hass).runtime_data.conversations
    # Someone else's conversation is not theirs to open (nor to be named).
    source = await _run(async_readable_source(caller, log, item))
    older = [memory for memory in before if caller.may_reach(memory.scope)]
    newer = [memory for memory in after if caller.may_reach(memory.scope)]
    shown = await _memories(hass, caller, [item, *older, *newer])
    connection.send_result(
        msg["id"],
        {
            "memory": shown[0],
            # Where it came from, if that conversation is still kept and
            # the user spoke in it, or the household did (the panel opens it
            # with memory/conversation and this memory's id).
            "has_conversation": source is not None,
            "superseded": shown[1 : 1 + len(older)],
            "superseded_by": shown[1 + len(older) :],
        },
    )


_IDS: Final = probatio.All(
    cv.ensure_list, probatio.Length(min=1, max=MAX_IDS), [ROW_ID]
)


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/forget",
        probatio.Required("memory_ids"): _IDS,
        probatio.Optional("purge", default=False): bool,
    }
)
@async_response
async def ws_forget(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """Forget memories (archive, restorable), or with `purge` erase them for good."""
    store, items = await _reachable(hass, _caller(hass, connection), msg["memory_ids"])
    forgotten = await _run(store.forget(list(items), purge=msg["purge"]))
    connection.send_result(msg["id"], {"forgotten": forgotten, "purged": msg["purge"]})


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/restore",
        probatio.Required("memory_ids"): _IDS,
    }
)
@async_response
async def ws_restore(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """Bring forgotten (archived) memories back."""
    store, items = await _reachable(hass, _caller(hass, connection), msg["memory_ids"])
    restored = await _run(store.restore(list(items)))
    connection.send_result(msg["id"], {"restored": restored})


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/add",
        probatio.Required(ATTR_CONTENT): cv.string,
        # "type" names the command: the memory's type is `memory_type`.
        probatio.Optional(MEMORY_TYPE): probatio.In(TYPES),
        probatio.Optional(ATTR_TAGS): [cv.string],
        probatio.Optional(ATTR_PERSON): PERSON,
        probatio.Optional(ATTR_EXPIRES_AT): moment,
    }
)
@async_response
async def ws_add(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """Add a memory, as `memory.add` does (the user's own person, or the household)."""
    entry = loaded_entry(hass)
    caller = _caller(hass, connection)
    fields = {k: v for k, v in msg.items() if k not in ("id", "type", MEMORY_TYPE)}
    if MEMORY_TYPE in msg:
        fields[ATTR_TYPE] = msg[MEMORY_TYPE]
    data = ADD_SCHEMA(fields)
    added = await _run(async_add_memory(entry, caller, data, connection.user.id))
    connection.send_result(msg["id"], added)


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/update",
        probatio.Required("memory_id"): ROW_ID,
        probatio.Optional(ATTR_CONTENT): cv.string,
        probatio.Optional(MEMORY_TYPE): probatio.In(TYPES),
        probatio.Optional(ATTR_TAGS): [cv.string],
        probatio.Optional(ATTR_PERSON): probatio.Any(HOUSEHOLD, PERSON),
        probatio.Optional(ATTR_EXPIRES_AT): probatio.Any(None, moment),
    }
)
@async_response
async def ws_update(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """Correct a memory: type, tags, owner and expiry in place.

    A new wording supersedes it: the old wording stays as its history.
    """
    caller = _caller(hass, connection)
    memory_id: int = msg["memory_id"]
    store, items = await _reachable(hass, caller, [memory_id])
    item = items[memory_id]
    details: dict[str, Any] = {}
    if MEMORY_TYPE in msg:
        details["kind"] = MemoryType(msg[MEMORY_TYPE])
    if ATTR_TAGS in msg:
        details["tags"] = msg[ATTR_TAGS]
    if ATTR_EXPIRES_AT in msg:
        details["expires_at"] = msg[ATTR_EXPIRES_AT]
    if ATTR_PERSON in msg:
        owner = msg[ATTR_PERSON]
        details["scope"] = (
            HOUSEHOLD if owner == HOUSEHOLD else person_scope(caller, owner)
        )
    if details:
        item = await _run(store.update_details(memory_id, **details))
    replaced = None
    content = msg.get(ATTR_CONTENT)
    if content is not None and content.strip() != item.content:
        if caller.shown(item) is not item:
            # They read it with a code hidden: saving would lose the code.
            raise ServiceValidationError(
                translation_domain=DOMAIN, translation_key="edit_redacted"
            )
        item, old = await _run(
            store.supersede(
                memory_id,
                NewMemory(
                    content=content,
                    type=item.type,
                    scope=item.scope,
                    tags=item.tags,
                    expires_at=item.expires_at,
                    language=item.language or None,
                    source=Source(origin=Origin.ACTION, user_id=connection.user.id),
                ),
            )
        )
        replaced = old.id if old.id != item.id else None
    connection.send_result(
        msg["id"],
        {"memory": (await _memories(hass, caller, [item]))[0], "replaced": replaced},
    )


def _embedding_health(embedding: EmbeddingRuntime | None) -> dict[str, Any] | None:
    """Return the embedding sensors' figures: provider, whether it answers, progress."""
    if embedding is None or embedding.coordinator.data is None:
        return None
    status = embedding.coordinator.data
    return {
        "provider": status.provider,
        "model": status.model,
        "connected": status.connected,
        "progress": status.queue.progress,
        "pending": status.queue.pending,
        "failed": status.queue.failed,
    }


@websocket_command({probatio.Required("type"): f"{DOMAIN}/overview"})
@async_response
async def ws_overview(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """Give counts within the user's reach, their profiles, and the system's health."""
    entry = loaded_entry(hass)
    caller = _caller(hass, connection)
    data = entry.runtime_data
    store = data.store
    scopes = caller.reachable()
    counts = {
        status: (
            await _run(store.browse(BrowseQuery(scopes=scopes, status=status, limit=1)))
        ).total
        for status in ("active", "expiring", "archived", "superseded")
    }
    newest = await _run(
        store.search(
            SearchQuery(
                types=(MemoryType.PROFILE,), scopes=scopes, limit=MAX_SEARCH_LIMIT
            )
        )
    )
    profiles = {hit.item.scope: hit.item for hit in reversed(newest)}
    stats = data.coordinator.data
    now = dt_util.utcnow().timestamp()
    connection.send_result(
        msg["id"],
        {
            "counts": counts,
            "profiles": await _memories(
                hass,
                caller,
                sorted(profiles.values(), key=lambda i: i.scope != HOUSEHOLD),
            ),
            # System figures, the same as the sensors show every user; the
            # digestion backlog counts the conversations within reach.
            "health": {
                "database_bytes": stats.database_bytes,
                "vector_backend": stats.vector_backend,
                "model": stats.active_model,
                # Within reach: another person's conversations are not counted.
                "digestion_waiting": await _run(
                    data.conversations.count(
                        ConversationQuery(scopes=scopes, statuses=("waiting", "failed"))
                    )
                ),
                "ai_task_calls_last_hour": len(
                    data.usage.ai_task_calls_since(now - 3600)
                ),
                "ai_task_max_calls_per_hour": data.ai_task.max_calls_per_hour,
                "embedding": _embedding_health(data.embedding),
            },
        },
    )


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/refresh_profile",
        probatio.Optional(ATTR_PERSON): probatio.Any(HOUSEHOLD, PERSON),
    }
)
@async_response
async def ws_refresh_profile(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """Write a scope's profile again now, as `memory.profile` does."""
    entry = loaded_entry(hass)
    caller = _caller(hass, connection)
    result = await async_refresh_profiles(entry, caller, msg.get(ATTR_PERSON))
    connection.send_result(msg["id"], result)


@websocket_command({probatio.Required("type"): f"{DOMAIN}/subscribe"})
@callback
def ws_subscribe(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """Tell the panel when memories changed (never what: it asks again)."""
    entry: MemoryConfigEntry = loaded_entry(hass)
    timer: asyncio.TimerHandle | None = None

    @callback
    def send() -> None:
        nonlocal timer
        timer = None
        connection.send_message(event_message(msg["id"], {"changed": True}))

    @callback
    def changed() -> None:
        # Writes within CHANGE_WINDOW are one event: a re-embedding or a
        # digestion commits batch after batch, and each event makes the
        # panel ask again.
        nonlocal timer
        if timer is None:
            timer = hass.loop.call_later(CHANGE_WINDOW_SECONDS, send)

    stop_listening = entry.runtime_data.store.add_listener(changed)

    @callback
    def remove() -> None:
        stop_listening()
        if timer is not None:
            timer.cancel()

    connection.subscriptions[msg["id"]] = remove
    connection.send_result(msg["id"])


@callback
def async_setup_websocket_api(hass: HomeAssistant) -> None:
    """Register the panel's commands (once per Home Assistant start)."""
    for command in (
        ws_browse,
        ws_get,
        ws_add,
        ws_update,
        ws_forget,
        ws_restore,
        ws_overview,
        ws_refresh_profile,
        ws_subscribe,
    ):
        async_register_command(hass, command)
    async_setup_conversation_commands(hass)
    async_setup_import_commands(hass)
