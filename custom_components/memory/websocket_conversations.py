"""The Memory panel's conversation commands: the captured log, by day.

`memory/conversations` pages the conversations the user's reach spoke in
(newest first), each with its speaker, agent, device, digestion state and
how many memories it gave; `memory/conversation` opens one: its messages
within the reach (a code another person said hidden, as everywhere), the
memories it gave, and which message to show first; `memory/digest_conversation`
digests one now (the `memory.digest` path); `memory/erase_conversation`
erases the user's part of one for good. The reach and the secret rules are
the actions' (`access.caller_for_user`, `Caller.shown`): another person's
message, or a conversation only they spoke in, is never sent, nor counted;
a memory from such a conversation opens nothing, as one from no conversation
(`access.async_readable_source`).
"""

from __future__ import annotations

from typing import Any, Final

from homeassistant.components.websocket_api import async_register_command
from homeassistant.components.websocket_api.connection import ActiveConnection
from homeassistant.components.websocket_api.decorators import (
    async_response,
    websocket_command,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import device_registry as dr, entity_registry as er
import probatio

from .access import (
    Caller,
    async_readable_source,
    async_shown_memories,
    caller_for_user,
    scope_label,
)
from .const import ATTR_CONVERSATION, DOMAIN
from .engine import StoredMessage
from .engine.conversations import STATUSES, ConversationEntry, ConversationQuery
from .errors import translated_store_errors
from .runtime import loaded_entry
from .services import async_digest_now, reachable_items
from .validation import PAGE_FIELDS, ROW_ID, check_ids, moment

# Messages a conversation opens with at most (a long one keeps its newest).
MAX_MESSAGES: Final = 500


def _names(hass: HomeAssistant) -> tuple[er.EntityRegistry, dr.DeviceRegistry]:
    return er.async_get(hass), dr.async_get(hass)


def _entry_dict(
    hass: HomeAssistant, entry: ConversationEntry, preview: str, gave: int
) -> dict[str, Any]:
    """Show a conversation as the panel lists it, its agent and device named."""
    entities, devices = _names(hass)
    agent = entities.async_get(entry.agent_id) if entry.agent_id else None
    device = devices.async_get(entry.device_id) if entry.device_id else None
    state = hass.states.get(entry.agent_id) if entry.agent_id else None
    return {
        "id": entry.id,
        "conversation_id": entry.conversation_id,
        "speaker": scope_label(hass)(entry.scope),
        "scope": entry.scope,
        "agent_id": entry.agent_id,
        "agent": (state.name if state else None)
        or (agent.name or agent.original_name if agent else None)
        or entry.agent_id,
        "device": (device.name_by_user or device.name) if device else None,
        "started_at": entry.started_at.isoformat(),
        "updated_at": entry.updated_at.isoformat(),
        "ended_at": entry.ended_at.isoformat() if entry.ended_at else None,
        "status": entry.status,
        "reason": entry.reason,
        "attempts": entry.attempts,
        "retry_at": entry.retry_at.isoformat() if entry.retry_at else None,
        "digested_at": entry.digested_at.isoformat() if entry.digested_at else None,
        "messages": entry.messages,
        "produced": gave,
        "preview": preview,
    }


def _message(message: StoredMessage, caller: Caller, label: Any) -> dict[str, Any]:
    shown = caller.shown(message)
    return {
        "id": shown.id,
        "role": str(shown.role),
        "content": shown.content,
        "tool_name": shown.tool_name,
        "speaker": label(shown.scope),
        "created_at": shown.created_at.isoformat(),
    }


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/conversations",
        probatio.Optional("statuses", default=list): [probatio.In(STATUSES)],
        probatio.Optional("since"): moment,
        probatio.Optional("until"): moment,
        **PAGE_FIELDS,
    }
)
@async_response
async def ws_conversations(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """List a page of the conversations the user's reach spoke in, newest first."""
    runtime = loaded_entry(hass).runtime_data
    caller = caller_for_user(hass, connection.user)
    scopes = caller.reachable()
    log = runtime.conversations
    with translated_store_errors():
        # What was said until now, not only what capture wrote so far.
        await runtime.capture.async_flush()
        page = await log.page(
            ConversationQuery(
                scopes=scopes,
                statuses=tuple(msg["statuses"]),
                since=msg.get("since"),
                until=msg.get("until"),
                limit=msg["limit"],
                cursor=msg.get("cursor"),
            )
        )
        rows = [entry.id for entry in page.items]
        gave = await log.produced(rows, scopes)
        first = await log.get_messages(
            [entry.first_message for entry in page.items if entry.first_message]
        )
    connection.send_result(
        msg["id"],
        {
            "conversations": [
                _entry_dict(
                    hass,
                    entry,
                    caller.shown(first[entry.first_message]).content
                    if entry.first_message in first
                    else "",
                    len(gave.get(entry.id, ())),
                )
                for entry in page.items
            ],
            "total": page.total,
            "cursor": page.cursor,
        },
    )


async def _reachable_entry(
    hass: HomeAssistant, caller: Caller, row: int
) -> ConversationEntry:
    """Return the conversation if the caller's reach spoke in it; else it is unknown."""
    check_ids([row])
    log = loaded_entry(hass).runtime_data.conversations
    with translated_store_errors():
        entry = await log.entry(row, caller.reachable())
    if entry is None:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="unknown_conversation",
            translation_placeholders={"conversation": str(row)},
        )
    return entry


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/conversation",
        probatio.Exclusive(ATTR_CONVERSATION, "which"): ROW_ID,
        # Open the conversation a memory came from, at its message.
        probatio.Exclusive("memory_id", "which"): ROW_ID,
    }
)
@async_response
async def ws_conversation(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """One conversation: its messages within reach, what it gave, where to look."""
    runtime = loaded_entry(hass).runtime_data
    caller = caller_for_user(hass, connection.user)
    log = runtime.conversations
    await runtime.capture.async_flush()
    at: int | None = None
    if "memory_id" in msg:
        check_ids([msg["memory_id"]])
        with translated_store_errors():
            items = await reachable_items(runtime.store, caller, [msg["memory_id"]])
            # One answer whether it came from no conversation kept or from
            # one out of reach: which it is, is not theirs to learn.
            source = await async_readable_source(caller, log, items[msg["memory_id"]])
        if source is None:
            raise ServiceValidationError(
                translation_domain=DOMAIN, translation_key="no_source_conversation"
            )
        row, at = source
    elif ATTR_CONVERSATION in msg:
        row = msg[ATTR_CONVERSATION]
    else:
        raise ServiceValidationError(
            translation_domain=DOMAIN, translation_key="conversation_needed"
        )
    entry = await _reachable_entry(hass, caller, row)
    label = scope_label(hass)
    with translated_store_errors():
        messages = [
            message
            for message in await log.messages(entry.id)
            if caller.may_reach(message.scope)
        ][-MAX_MESSAGES:]
        gave = (await log.produced([entry.id], caller.reachable())).get(entry.id, [])
        memories = await runtime.store.get_many(gave)
        shown = await async_shown_memories(
            caller, log, (memories[i] for i in gave if i in memories)
        )
    if at is not None and not any(message.id == at for message in messages):
        at = None  # another speaker's message, or one erased since
    first = next((m for m in messages if m.role == "user"), None)
    connection.send_result(
        msg["id"],
        {
            "conversation": _entry_dict(
                hass, entry, caller.shown(first).content if first else "", len(gave)
            ),
            "messages": [_message(message, caller, label) for message in messages],
            "memories": [
                {**item.as_dict(), "owner": label(item.scope)} for item in shown
            ],
            "message_id": at,
        },
    )


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/digest_conversation",
        probatio.Required(ATTR_CONVERSATION): ROW_ID,
    }
)
@async_response
async def ws_digest_conversation(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """Digest one conversation now, as `memory.digest` does."""
    entry = loaded_entry(hass)
    caller = caller_for_user(hass, connection.user)
    await _reachable_entry(hass, caller, msg[ATTR_CONVERSATION])
    with translated_store_errors():
        result = await async_digest_now(
            entry, caller, {ATTR_CONVERSATION: msg[ATTR_CONVERSATION]}
        )
    connection.send_result(msg["id"], result)


@websocket_command(
    {
        probatio.Required("type"): f"{DOMAIN}/erase_conversation",
        probatio.Required(ATTR_CONVERSATION): ROW_ID,
    }
)
@async_response
async def ws_erase_conversation(
    hass: HomeAssistant,
    connection: ActiveConnection,
    msg: dict[str, Any],
) -> None:
    """Erase the user's part of a conversation for good (its memories stay)."""
    runtime = loaded_entry(hass).runtime_data
    caller = caller_for_user(hass, connection.user)
    await runtime.capture.async_flush()
    entry = await _reachable_entry(hass, caller, msg[ATTR_CONVERSATION])
    with translated_store_errors():
        erased = await runtime.conversations.erase(entry.id, caller.reachable())
    connection.send_result(msg["id"], {"erased": len(erased)})


@callback
def async_setup_conversation_commands(hass: HomeAssistant) -> None:
    """Register the panel's conversation commands."""
    for command in (
        ws_conversations,
        ws_conversation,
        ws_digest_conversation,
        ws_erase_conversation,
    ):
        async_register_command(hass, command)
