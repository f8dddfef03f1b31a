"""Who is speaking, and which scopes and secrets they may reach.

Privacy: a call made by a non-admin user reads, searches and forgets only
household memories and those of the person linked to that user; a memory
outside that reach is reported as unknown, so its existence does not leak.
Calls with no user (automations, scripts) and admins reach every scope.
The same rules apply to kept conversation messages (`source`). Assist (the
LLM tools, recall and capture) uses `async_assistant_caller` instead, which
never reaches another person's memories, admins included. Codes, PINs and
passwords are shown only to an identified person in the text's scope
(`Caller.sees_secrets`); anyone else reads "[redacted]" in their place.
Where a memory came from (user, conversation, agent, device, message) is
shown only to one who may read that conversation (`async_shown_memories`):
a conversation id is a key to Home Assistant's chat history of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from homeassistant.auth.models import User
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, ServiceCall, callback
from homeassistant.exceptions import UnknownUser
from homeassistant.helpers import llm

from .const import CONF_SATELLITE_PERSONS
from .engine import HOUSEHOLD, MemoryItem, SearchHit, Signal, Source, StoredMessage
from .engine.languages import language_code
from .engine.postgres import AnyConversationLog
from .engine.privacy import found_without_secrets, redacted


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling, and so which scopes they may reach."""

    unrestricted: bool
    persons: tuple[str, ...]
    # The Home Assistant user calling, if any: what they said is theirs to see.
    user_id: str | None = None

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

    def found(
        self, hits: Iterable[SearchHit], query: str, language: str | None = None
    ) -> list[SearchHit]:
        """Return memories a search found as this caller may read them (`shown`).

        A memory redacted for them that only its secret's words found (not
        its other words, nor its meaning) is left out: a code guessed at the
        door finds nothing, whether the guess is right or wrong. The words
        are those of each memory's language and of the query's `language`
        (the search's; None: the memory's alone).
        """
        kept: list[SearchHit] = []
        for hit in hits:
            item = self.shown(hit.item)
            if (
                item is hit.item
                or Signal.SEMANTIC in hit.matched
                or found_without_secrets(
                    query,
                    hit.item.content,
                    language_code(hit.item.language or language),
                    query_language=language,
                )
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
    return caller_for_user(hass, user)


@callback
def caller_for_user(hass: HomeAssistant, user: User) -> Caller:
    """Return a logged-in user's reach: an admin's is everything, else household and own.

    The actions (`async_caller`) and the panel's websocket commands both
    resolve their user here.
    """
    return Caller(
        unrestricted=user.is_admin,
        persons=async_user_persons(hass, user.id),
        user_id=user.id,
    )


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
    return Caller(unrestricted=False, persons=persons, user_id=user_id)


async def async_readable_source(
    caller: Caller,
    log: AnyConversationLog,
    item: MemoryItem,
    readable: dict[int, bool] | None = None,
) -> tuple[int, int | None] | None:
    """Return the conversation row and message a memory came from, if in reach.

    In reach: still kept, the caller's reach spoke in it (the panel opens
    it), and the message it came from is one the caller may read (not the
    words of someone who carried on a household conversation). Otherwise
    None, whether there is no such conversation or it is someone else's:
    the two look the same. `readable` remembers the rows already asked about.
    """
    source = await log.source_of(item)
    if source is None:
        return None
    row, message = source
    readable = {} if readable is None else readable
    if row not in readable:
        readable[row] = await log.entry(row, caller.reachable()) is not None
    if not readable[row]:
        return None
    if message is not None and not caller.unrestricted:
        said = (await log.get_messages([message])).get(message)
        if said is None or not caller.may_reach(said.scope):
            return None
    return source


async def async_shown_memories(
    caller: Caller, log: AnyConversationLog, items: Iterable[MemoryItem]
) -> list[MemoryItem]:
    """Return memories as this caller may read them: `Caller.shown`, and a source.

    Where each came from (user, conversation, agent, device, message) is
    shown to whom it reaches everything, to the user it came from, and to
    one who may read its conversation (`async_readable_source`); anyone
    else reads only its kind of origin ("from a conversation").
    """
    readable: dict[int, bool] = {}
    shown: list[MemoryItem] = []
    for item in items:
        bare = Source(origin=item.source.origin)
        sourced = (
            caller.unrestricted
            or (item.source == bare and item.message_id is None)
            or (caller.user_id is not None and item.source.user_id == caller.user_id)
            or await async_readable_source(caller, log, item, readable) is not None
        )
        kept = item if sourced else replace(item, source=bare, message_id=None)
        shown.append(caller.shown(kept))
    return shown


def speaker(
    hass: HomeAssistant, entry: ConfigEntry, llm_context: llm.LLMContext
) -> Caller:
    """Who is speaking: a logged-in user, or a (possibly mapped) satellite."""
    user_id = llm_context.context.user_id if llm_context.context else None
    return async_assistant_caller(
        hass,
        user_id,
        llm_context.device_id,
        entry.options.get(CONF_SATELLITE_PERSONS, {}),
    )


def scope_label(hass: HomeAssistant) -> Callable[[str], str]:
    """Name a scope: "household", or the person's friendly name."""

    def label(scope: str) -> str:
        if scope == HOUSEHOLD:
            return HOUSEHOLD
        state = hass.states.get(scope)
        return state.name if state is not None else scope.partition(".")[2]

    return label
