"""Conversation capture: every Assist conversation is kept for later digestion.

Subscribes to Home Assistant's chat logs and keeps each user, assistant and
tool message, with the conversation id, agent, user, device and time, in the
conversation log of the memory database (`engine/conversations/log.py`).

Home Assistant announces most messages, but not every one: an assistant
reply added to a new chat log comes with no event. So capture remembers the
live chat log of each conversation and reads it again on later events, on a
short poll while a conversation is live, and when it ends; messages are
de-duplicated by role, time and text.

Who is speaking decides the scope every message carries (a person, or the
household): the user and device come from the conversation's input (its
trace) or the LLM context of the turn. A conversation's messages are written
only once that is known, so a private conversation is never stored as the
household's, even for a moment. When someone else continues a conversation,
the messages said so far keep their speaker and the conversation stays with
whoever started it.

Every message also keeps the language its turn was spoken in (the
conversation input's, or the LLM context's): keyword search analyses it in
that language, and digestion writes its memories in it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from homeassistant.components.conversation.chat_log import (
    DATA_CHAT_LOGS,
    ChatLog,
    async_subscribe_chat_logs,
    current_chat_log,
)
from homeassistant.components.conversation.const import ChatLogEventType

# Private, but the only way to learn who spoke to an agent that has no LLM
# API (the built-in agent): the trace holds the conversation's input.
from homeassistant.components.conversation.trace import _current_trace
from homeassistant.config_entries import ConfigEntry
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import CALLBACK_TYPE, Event, HomeAssistant, callback
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.event import async_call_later, async_track_time_interval
from homeassistant.helpers.json import json_dumps
from homeassistant.util import dt as dt_util

from .access import async_assistant_caller
from .ai_task import in_ai_task_call
from .const import (
    CONF_CONVERSATION_RETENTION_DAYS,
    CONF_SATELLITE_PERSONS,
    DEFAULT_CONVERSATION_RETENTION_DAYS,
    LOGGER,
)
from .engine import (
    DATABASE_ERRORS,
    HOUSEHOLD,
    ConversationInfo,
    MessageRole,
    NewMessage,
)
from .engine.postgres import AnyConversationLog
from .usage import UsageTracker
from .worker import BackgroundWorker

# Messages of a turn are written together this long after the first one.
FLUSH_DELAY: Final = 1.0
# How often live chat logs are read again for replies that came without an
# event (seconds); only while a conversation is live.
POLL_INTERVAL: Final = 5.0
RETENTION_INTERVAL: Final = timedelta(hours=1)

type _Key = tuple[str, str, str]
# (user id, device id, agent id) of whoever is speaking.
type _Speaker = tuple[str | None, str | None, str | None]
# Who is speaking, and the language of their turn ('' when not said).
type _Turn = tuple[_Speaker, str]


@dataclass(slots=True)
class _SeenMessage:
    """A message as seen, before the speaker's scope is stamped on it."""

    role: MessageRole
    content: str
    created_at: datetime
    data: str = ""
    tool_name: str | None = None
    tool_call_id: str | None = None
    agent_id: str | None = None
    # Who said it, once settled (see `_Conversation.freeze`).
    speaker: _Speaker | None = None
    scope: str | None = None
    # The language of the turn it was seen in ('' until one is known).
    language: str = ""


@dataclass(slots=True)
class _Conversation:
    """What capture knows about one live conversation."""

    conversation_id: str
    started_at: datetime
    key: int | None = None
    agent_id: str | None = None
    user_id: str | None = None
    device_id: str | None = None
    scope: str = HOUSEHOLD
    # The language of the latest turn (Assist's tag, e.g. "de-DE"; '' unknown).
    language: str = ""
    identified: bool = False
    replied: bool = False
    # The last message seen is not a reply yet: read the chat log again soon.
    awaiting: bool = False
    ended_at: datetime | None = None
    trace_id: str | None = None
    chat_log: ChatLog | None = None
    seen: set[_Key] = field(default_factory=set)
    pending: list[_SeenMessage] = field(default_factory=list)
    dirty: bool = False

    def info(self) -> ConversationInfo:
        # A conversation is stored as its first speaker's; whoever continues
        # it speaks in their own messages (the log keeps the row's speaker).
        first = self.stamp(self.pending[0]) if self.pending else None
        return ConversationInfo(
            conversation_id=self.conversation_id,
            started_at=self.started_at,
            scope=first.scope if first else self.scope,
            agent_id=self.agent_id,
            user_id=first.user_id if first else self.user_id,
            device_id=first.device_id if first else self.device_id,
            ended_at=self.ended_at,
        )

    def freeze(self) -> None:
        """Settle who said the pending messages, before someone else speaks."""
        for raw in self.pending:
            if raw.scope is None:
                raw.scope = self.scope
                raw.speaker = (self.user_id, self.device_id, self.agent_id)

    def stamp(self, raw: _SeenMessage) -> NewMessage:
        user_id, device_id, agent_id = raw.speaker or (
            self.user_id,
            self.device_id,
            self.agent_id,
        )
        return NewMessage(
            role=raw.role,
            content=raw.content,
            created_at=raw.created_at,
            scope=raw.scope or self.scope,
            data=raw.data,
            tool_name=raw.tool_name,
            tool_call_id=raw.tool_call_id,
            agent_id=raw.agent_id or agent_id,
            user_id=user_id,
            device_id=device_id,
            language=raw.language or self.language,
        )


def _language(value: Any) -> str:
    """Return a turn's language tag as given ("de", "de-DE"); '' when none."""
    return value.strip() if isinstance(value, str) else ""


def _json(value: Any) -> str:
    try:
        return json_dumps(value)
    except TypeError, ValueError:
        return json_dumps(str(value))


def _seen_message(content: dict[str, Any]) -> tuple[_Key, _SeenMessage] | None:
    """Turn a chat log content dict into a message; None for system prompts."""
    role = content.get("role")
    created = content.get("created")
    if not isinstance(created, datetime):
        created = dt_util.utcnow()
    text = content.get("content") or ""
    raw: _SeenMessage
    if role == "user":
        attachments = content.get("attachments")
        raw = _SeenMessage(
            MessageRole.USER, text, created, _json(attachments) if attachments else ""
        )
    elif role == "assistant":
        calls = content.get("tool_calls")
        raw = _SeenMessage(
            MessageRole.ASSISTANT,
            text,
            created,
            _json(calls) if calls else "",
            agent_id=content.get("agent_id"),
        )
    elif role == "tool_result":
        result = content.get("result")
        if result is None:
            result = {"data": content.get("tool_result")}
        raw = _SeenMessage(
            MessageRole.TOOL_RESULT,
            "",
            created,
            _json(result),
            tool_name=content.get("tool_name"),
            tool_call_id=content.get("tool_call_id"),
            agent_id=content.get("agent_id"),
        )
    else:
        return None
    key = (str(role), created.isoformat(), raw.tool_call_id or text or raw.data)
    return key, raw


class ConversationCapture(BackgroundWorker):
    """Keeps every Assist conversation in the conversation log."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: ConfigEntry,
        log: AnyConversationLog,
        usage: UsageTracker,
        on_ended: Callable[[], None],
    ) -> None:
        """Nothing is subscribed until `async_start`.

        `on_ended` is told when a conversation that ended has been written
        (digestion schedules itself).
        """
        super().__init__()
        self._hass = hass
        self._entry = entry
        self._log = log
        self._usage = usage
        self._conversations: dict[str, _Conversation] = {}
        self._stop_listener: CALLBACK_TYPE | None = None
        self._flush_timer: CALLBACK_TYPE | None = None
        self._poll_timer: CALLBACK_TYPE | None = None
        # One flush at a time; a caller waits for the one under way, then
        # writes what came since (so it returns only once its messages are in).
        self._flush_lock = asyncio.Lock()
        # Content older than this was captured by a previous run (a reload).
        self._since = dt_util.utcnow()
        self._on_ended = on_ended
        self._ai_task_chats: set[str] = set()

    # -- life cycle ---------------------------------------------------------

    async def async_start(self) -> None:
        """End what a restart cut off, apply retention, then subscribe."""
        self._since = dt_util.utcnow()
        try:
            await self._log.close_open()
        except DATABASE_ERRORS as err:
            LOGGER.warning("Could not end the conversations of the last run: %s", err)
        await self.async_apply_retention()
        self._hold(
            async_subscribe_chat_logs(self._hass, self._on_event),
            async_track_time_interval(
                self._hass, self._retention_tick, RETENTION_INTERVAL
            ),
        )
        self._stop_listener = self._hass.bus.async_listen_once(
            EVENT_HOMEASSISTANT_STOP, self._on_stop
        )

    async def async_stop(self) -> None:
        """Unsubscribe and write everything captured (unload)."""
        self.async_unsubscribe()
        await self.async_flush(final=True)

    @callback
    def async_unsubscribe(self) -> None:
        """Stop listening and cancel timers; safe to call twice."""
        self._release()
        if self._stop_listener is not None:
            self._stop_listener()
            self._stop_listener = None
        self._cancel_timers()

    async def _on_stop(self, _event: Event) -> None:
        """Write everything before Home Assistant stops (entries stay loaded)."""
        self._stop_listener = None  # fired once: nothing to remove any more
        self._cancel_timers()
        await self.async_flush(final=True)

    def _cancel_timers(self) -> None:
        for timer in (self._flush_timer, self._poll_timer):
            if timer is not None:
                timer()
        self._flush_timer = self._poll_timer = None

    @property
    def enabled(self) -> bool:
        """Whether conversations are kept (retention above zero days)."""
        return self._retention_days() > 0

    def _retention_days(self) -> float:
        return float(
            self._entry.options.get(
                CONF_CONVERSATION_RETENTION_DAYS, DEFAULT_CONVERSATION_RETENTION_DAYS
            )
        )

    async def _retention_tick(self, _now: datetime) -> None:
        await self.async_apply_retention()

    async def async_apply_retention(self) -> int:
        """Erase messages older than the retention (all of them at zero days)."""
        days = self._retention_days()
        # At 0 days everything goes, including what was said this instant.
        cutoff = dt_util.utcnow() - timedelta(days=days or -1)
        try:
            erased = await self._log.purge_before(cutoff)
        except DATABASE_ERRORS as err:
            LOGGER.warning("Could not apply conversation retention: %s", err)
            return 0
        if erased:
            LOGGER.debug("Conversation retention erased %s messages", erased)
        return erased

    def agent_id(self, conversation_id: str) -> str | None:
        """Return the agent of a live conversation, when known."""
        conversation = self._conversations.get(conversation_id)
        return conversation.agent_id if conversation else None

    # -- events -------------------------------------------------------------

    @callback
    def _on_event(
        self, conversation_id: str, event_type: ChatLogEventType, data: dict[str, Any]
    ) -> None:
        """Take in a chat log event; never raises into the conversation."""
        if not self.enabled or self._is_ai_task_chat(conversation_id, event_type):
            return
        try:
            self._record_event(conversation_id, event_type, data)
        except Exception as err:  # noqa: BLE001 - capture must not break a turn
            LOGGER.debug("Could not capture a chat log event: %r", err)

    def _is_ai_task_chat(
        self, conversation_id: str, event_type: ChatLogEventType
    ) -> bool:
        """Whether this is the chat of one of our own AI Task calls.

        Those are not the household's conversations (and digesting them would
        loop). A timer set during such a call runs in its context too, so the
        context alone only marks conversations that are not known yet.
        """
        if conversation_id in self._ai_task_chats:
            if event_type == ChatLogEventType.DELETED:
                self._ai_task_chats.discard(conversation_id)
            return True
        if in_ai_task_call() and conversation_id not in self._conversations:
            if event_type != ChatLogEventType.DELETED:
                self._ai_task_chats.add(conversation_id)
            return True
        return False

    def _record_event(
        self, conversation_id: str, event_type: ChatLogEventType, data: dict[str, Any]
    ) -> None:
        conversation = self._conversations.get(conversation_id)
        if conversation is None:
            if event_type == ChatLogEventType.DELETED:
                return
            started = data.get("chat_log", {}).get("created") or dt_util.utcnow()
            conversation = _Conversation(conversation_id, started)
            self._conversations[conversation_id] = conversation
        # First what an earlier turn left in the chat log without an event.
        self._sync(conversation)
        self._identify(conversation)
        if event_type == ChatLogEventType.CONTENT_ADDED:
            self._observe(conversation, data["content"])
        elif "chat_log" in data:
            for content in data["chat_log"].get("content", ()):
                self._observe(conversation, content)
        if (live := self._live_chat_log(conversation_id)) is not None:
            conversation.chat_log = live
            self._sync(conversation)
        if event_type == ChatLogEventType.DELETED:
            conversation.ended_at = dt_util.utcnow()
            conversation.dirty = True
            conversation.chat_log = None
        self._schedule_flush()

    def _live_chat_log(self, conversation_id: str) -> ChatLog | None:
        chat_log = current_chat_log.get()
        if chat_log is not None and chat_log.conversation_id == conversation_id:
            return chat_log
        return self._hass.data.get(DATA_CHAT_LOGS, {}).get(conversation_id)

    def _sync(self, conversation: _Conversation) -> None:
        if conversation.chat_log is not None:
            for content in conversation.chat_log.content:
                self._observe(conversation, content.as_dict())

    def _observe(self, conversation: _Conversation, content: dict[str, Any]) -> None:
        if (made := _seen_message(content)) is None:
            return
        key, raw = made
        if key in conversation.seen:
            return
        conversation.seen.add(key)
        if raw.created_at < self._since:
            return  # captured before a reload
        raw.language = conversation.language
        conversation.awaiting = raw.role != MessageRole.ASSISTANT
        if raw.role == MessageRole.ASSISTANT:
            conversation.replied = True
            if conversation.agent_id is None:
                conversation.agent_id = raw.agent_id
        conversation.pending.append(raw)

    def _identify(self, conversation: _Conversation) -> None:
        """Learn who is speaking, and in which language, from the turn.

        From the turn's input (its trace), else its LLM context.
        """
        turn = self._from_trace(conversation) or self._from_llm_context(conversation)
        if turn is None:
            return
        (user_id, device_id, agent_id), language = turn
        if language:
            conversation.language = language
        scope = async_assistant_caller(
            self._hass,
            user_id,
            device_id,
            self._entry.options.get(CONF_SATELLITE_PERSONS, {}),
        ).personal_scope
        agent_id = agent_id or conversation.agent_id
        known = (conversation.user_id, conversation.device_id, conversation.agent_id)
        if conversation.identified and known == (user_id, device_id, agent_id):
            return
        if conversation.identified:
            conversation.freeze()  # the last speaker's messages stay theirs
        conversation.identified = True
        conversation.user_id = user_id
        conversation.device_id = device_id
        conversation.agent_id = agent_id
        conversation.scope = scope
        conversation.dirty = True

    def _from_trace(self, conversation: _Conversation) -> _Turn | None:
        """Read the input of the turn being processed (`async_converse`)."""
        trace = _current_trace.get()
        if trace is None or trace.trace_id == conversation.trace_id:
            return None
        events = trace.as_dict()["events"]
        data: dict[str, Any] = (events[0].get("data") or {}) if events else {}
        if data.get("conversation_id") not in (None, conversation.conversation_id):
            return None  # another conversation's turn (an agent calling an agent)
        conversation.trace_id = trace.trace_id
        context = data.get("context")
        device_id = data.get("device_id") or self._satellite_device(
            data.get("satellite_id")
        )
        speaker = (getattr(context, "user_id", None), device_id, data.get("agent_id"))
        return speaker, _language(data.get("language"))

    def _from_llm_context(self, conversation: _Conversation) -> _Turn | None:
        """Read the LLM context an agent gave its chat log this turn."""
        if conversation.trace_id is not None:
            return None  # the input already said it
        live = self._live_chat_log(conversation.conversation_id)
        if live is None or live.llm_api is None:
            return None
        llm_context = live.llm_api.llm_context
        user_id = llm_context.context.user_id if llm_context.context else None
        return (user_id, llm_context.device_id, None), _language(llm_context.language)

    def _satellite_device(self, satellite_id: str | None) -> str | None:
        if satellite_id is None:
            return None
        entity = er.async_get(self._hass).async_get(satellite_id)
        return entity.device_id if entity is not None else None

    # -- writing ------------------------------------------------------------

    @callback
    def _schedule_flush(self) -> None:
        if self._flush_timer is None:
            self._flush_timer = async_call_later(
                self._hass, FLUSH_DELAY, self._flush_due
            )
        if self._poll_timer is None and self._awaiting():
            self._poll_timer = async_call_later(self._hass, POLL_INTERVAL, self._poll)

    def _awaiting(self) -> bool:
        return any(
            c.awaiting and c.ended_at is None for c in self._conversations.values()
        )

    async def _flush_due(self, _now: datetime) -> None:
        self._flush_timer = None
        await self.async_flush()

    async def _poll(self, _now: datetime) -> None:
        self._poll_timer = None
        await self.async_flush()
        if self._awaiting() and self._poll_timer is None:
            self._poll_timer = async_call_later(self._hass, POLL_INTERVAL, self._poll)

    async def async_flush(self, *, final: bool = False) -> None:
        """Write pending messages of conversations whose speaker is known.

        Returns once everything seen before the call is written (or failed
        to be, which is logged and tried again later). With `final` (unload,
        stop), everything is written with what is known.
        """
        async with self._flush_lock:
            await self._flush(final=final)

    async def _flush(self, *, final: bool) -> None:
        for conversation in self._conversations.values():
            self._sync(conversation)
        batch: list[tuple[_Conversation, int]] = []
        for conversation in self._conversations.values():
            ready = (
                conversation.identified
                or conversation.replied
                or conversation.ended_at is not None
                or final
            )
            has_news = conversation.pending or (
                conversation.dirty and conversation.key is not None
            )
            if ready and has_news:
                batch.append((conversation, len(conversation.pending)))
        if batch:
            try:
                keys = await self._log.save(
                    [
                        (
                            conversation.key,
                            conversation.info(),
                            [conversation.stamp(raw) for raw in conversation.pending],
                        )
                        for conversation, _taken in batch
                    ]
                )
            except DATABASE_ERRORS as err:
                # Kept in memory and tried again with the next messages.
                LOGGER.warning("Could not save conversation messages: %s", err)
                return
            for (conversation, taken), key in zip(batch, keys, strict=True):
                if conversation.key is None:
                    self._usage.record_conversation()
                conversation.key = key
                del conversation.pending[:taken]
                conversation.dirty = False
        ended = False
        for conversation_id, conversation in list(self._conversations.items()):
            if conversation.ended_at is not None and not conversation.pending:
                del self._conversations[conversation_id]
                ended = True
        if ended:
            self._on_ended()
