"""Profiles: a short portrait of the household and of each person.

Recall puts the newest active `profile` memory of each scope it may reach
into every prompt (the "USER.md" of other assistants). `ProfileKeeper`
distils it through the household's AI Task from that scope's own active
memories only (a person's profile never reads another's memories, the
household's reads household memories), at most `PROFILE_MAX_TOKENS`
tokens, with secrets redacted before the call and after it (the prompt and
the answer's cleaning: `engine/digestion/profile_prompt.py`). It runs daily
and when `PROFILE_CHANGES` memories of a scope changed since its profile;
it makes no call when nothing changed. A new profile supersedes the old one
with a link (`memory.search` with status `any` shows the history). A call
that fails leaves the old profile in place; the scope is tried again at the
next trigger, not before `RETRY_DELAY` (or the hourly cap's end).

A profile follows the language of its scope's memories: it is asked for,
and stored, in the language most of them are written in (a memory of no
known language counts as the store's default, Home Assistant's).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Final

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.event import async_call_later, async_track_time_change
from homeassistant.util import dt as dt_util
import probatio

from .access import scope_label
from .ai_task import AITaskClient, AITaskError, AITaskRateLimited
from .const import LOGGER
from .engine import (
    DATABASE_ERRORS,
    HOUSEHOLD,
    MemoryItem,
    MemoryType,
    NewMemory,
    Origin,
    Source,
)
from .engine.digestion import (
    clean_profile,
    notes_language,
    pick_notes,
    profile_instructions,
)
from .engine.exchange import active_memories, changed_since, memory_scopes
from .engine.languages import language_name
from .engine.postgres import AnyStore
from .worker import BackgroundWorker

# Memories of a scope changed since its profile that make a new one now,
# rather than at the daily refresh.
PROFILE_CHANGES: Final = 10
# Store changes are looked at this long after the first (a burst: one look).
CHECK_DELAY: Final = timedelta(minutes=2)
# A scope whose profile call failed waits this long before the next try.
RETRY_DELAY: Final = timedelta(minutes=30)
# Local time of the daily refresh (hour, minute).
DAILY_AT: Final = (4, 20)
# What a profile is distilled from: not summaries, not earlier profiles.
SOURCE_TYPES: Final = (
    MemoryType.INSTRUCTION,
    MemoryType.PREFERENCE,
    MemoryType.FACT,
    MemoryType.EVENT,
    MemoryType.OTHER,
)
TASK_NAME: Final = "Assist Memory profile"
PROFILE_TOPIC: Final = "profile"
# Extra keys an LLM adds are dropped, not a failure.
STRUCTURE: Final = probatio.Schema(
    {probatio.Required("profile"): str}, extra=probatio.REMOVE_EXTRA
)


class ProfileStatus(StrEnum):
    """What a refresh did for one scope."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    REMOVED = "removed"
    WAITING = "waiting"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ProfileResult:
    """The outcome for one scope; `profile_id` is its active profile, if any.

    `error` says why a refresh failed: the AI Task error's translation key
    (`ai_task_not_configured`, `ai_task_rate_limited`, ...) or
    `empty_answer`.
    """

    scope: str
    status: ProfileStatus
    profile_id: int | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Serialise for the action response."""
        result: dict[str, Any] = {
            "scope": self.scope,
            "status": str(self.status),
            "id": self.profile_id,
        }
        if self.error is not None:
            result["error"] = self.error
        return result


class _NoProfileError(Exception):
    """The AI Task gave no usable profile; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ProfileKeeper(BackgroundWorker):
    """Keeps each scope's profile current through the AI Task."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: ConfigEntry,
        store: AnyStore,
        ai_task: AITaskClient,
    ) -> None:
        """Nothing runs until `async_start`."""
        super().__init__()
        self._hass = hass
        self._entry = entry
        self._store = store
        self._ai_task = ai_task
        self._lock = asyncio.Lock()
        self._check_later: CALLBACK_TYPE | None = None
        # When each scope was last distilled (this run), and may be tried again.
        self._distilled_at: dict[str, datetime] = {}
        self._retry_at: dict[str, datetime] = {}
        self.running: asyncio.Task[None] | None = None

    @callback
    def async_start(self) -> None:
        """Listen to store changes and refresh daily."""
        hour, minute = DAILY_AT
        self._hold(
            self._store.add_listener(self._store_changed),
            async_track_time_change(
                self._hass, self._daily, hour=hour, minute=minute, second=0
            ),
        )

    async def async_stop(self) -> None:
        """Stop listening and cancel a refresh in flight (the old profile stays)."""
        self._release()
        if self._check_later is not None:
            self._check_later()
            self._check_later = None
        if (running := self.running) is not None and not running.done():
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running

    @callback
    def _store_changed(self) -> None:
        if self._check_later is None and self.subscribed:
            self._check_later = async_call_later(
                self._hass, CHECK_DELAY, self._check_changes
            )

    @callback
    def _check_changes(self, _now: datetime) -> None:
        self._check_later = None
        self._start(PROFILE_CHANGES)

    @callback
    def _daily(self, _now: datetime) -> None:
        self._start(1)

    def _start(self, threshold: int) -> None:
        if self.running is not None and not self.running.done():
            return
        self.running = self._entry.async_create_background_task(
            self._hass, self._refresh_all(threshold), "memory profile refresh"
        )

    async def _refresh_all(self, threshold: int) -> None:
        try:
            await self.async_refresh(threshold=threshold)
        except DATABASE_ERRORS as err:
            # Retried at the next trigger; the old profiles stay meanwhile.
            LOGGER.warning("Profiles could not be refreshed: %s", err)

    async def async_refresh(
        self,
        scopes: Sequence[str] | None = None,
        *,
        threshold: int = 1,
        retry_now: bool = False,
    ) -> list[ProfileResult]:
        """Refresh the profiles of `scopes` (None: every scope with memories).

        A scope is distilled when at least `threshold` of its memories changed
        since its profile (or it has none yet). `retry_now` ignores the wait
        after a failure (an explicit request).
        """
        async with self._lock:
            store = self._store
            if scopes is None:
                scopes = await memory_scopes(store)
            return [
                await self._refresh(scope, threshold, retry_now=retry_now)
                for scope in scopes
            ]

    async def _refresh(
        self, scope: str, threshold: int, *, retry_now: bool
    ) -> ProfileResult:
        store = self._store
        started = dt_util.utcnow()
        profiles = await active_memories(
            store, (scope,), types=(MemoryType.PROFILE,), now=started
        )
        current = max(profiles, key=lambda i: (i.created_at, i.id), default=None)
        current_id = current.id if current is not None else None
        since = None if current is None else current.created_at
        if (distilled := self._distilled_at.get(scope)) is not None:
            since = distilled if since is None else max(since, distilled)
        # Counted before anything is loaded: this runs after every burst of writes.
        if await changed_since(store, scope, since, types=SOURCE_TYPES) < threshold:
            return ProfileResult(scope, ProfileStatus.UNCHANGED, current_id)
        notes = await active_memories(store, (scope,), types=SOURCE_TYPES, now=started)
        if not notes:
            # Nothing left to describe: our profile goes too (archived). One
            # a person or an action wrote stays: it is theirs to forget.
            ours = [p.id for p in profiles if p.source.origin == Origin.DIGESTION]
            if not ours:
                return ProfileResult(scope, ProfileStatus.UNCHANGED, current_id)
            await store.forget(ours)
            return ProfileResult(scope, ProfileStatus.REMOVED)
        retry_at = self._retry_at.get(scope)
        if retry_at is not None and started < retry_at and not retry_now:
            return ProfileResult(scope, ProfileStatus.WAITING, current_id)
        language = notes_language(
            Counter(item.language for item in notes), store.language
        )
        try:
            text = await self._distil(scope, notes, started, language)
        except _NoProfileError as err:
            return ProfileResult(scope, ProfileStatus.FAILED, current_id, err.reason)
        self._distilled_at[scope] = started
        self._retry_at.pop(scope, None)
        return await self._save_profile(scope, text, current, profiles, language)

    async def _save_profile(
        self,
        scope: str,
        text: str,
        current: MemoryItem | None,
        profiles: Sequence[MemoryItem],
        language: str,
    ) -> ProfileResult:
        """Keep a new profile text (in `language`): added, or superseding."""
        store = self._store
        if current is not None and text == current.content:
            return ProfileResult(scope, ProfileStatus.UNCHANGED, current.id)
        new = NewMemory(
            content=text,
            type=MemoryType.PROFILE,
            scope=scope,
            topic=PROFILE_TOPIC,
            source=Source(origin=Origin.DIGESTION),
            language=language,
        )
        if current is None:
            added = await store.add(new)
            if not added.created:
                # The same words as a memory of the scope: that one says it.
                return ProfileResult(scope, ProfileStatus.UNCHANGED)
            return ProfileResult(scope, ProfileStatus.CREATED, added.item.id)
        others = [item.id for item in profiles if item.id != current.id]
        item, _old = await store.supersede(current.id, new, also=others)
        return ProfileResult(scope, ProfileStatus.UPDATED, item.id)

    async def _distil(
        self,
        scope: str,
        notes: Sequence[MemoryItem],
        started: datetime,
        language: str,
    ) -> str:
        """Ask the AI Task; on failure raise `_NoProfileError` and wait before a retry.

        The profile is asked for in `language` ("de").
        """
        label = scope_label(self._hass)
        prompt = profile_instructions(
            label(scope),
            scope == HOUSEHOLD,
            pick_notes(notes),
            language_name(language),
        )
        try:
            data = await self._ai_task.async_generate(
                task_name=TASK_NAME, instructions=prompt, structure=STRUCTURE
            )
        except AITaskRateLimited as err:
            self._retry_at[scope] = err.retry_at
            LOGGER.debug("Profile of %s waits for the AI Task hourly cap", scope)
            raise _NoProfileError(
                err.translation_key or "ai_task_rate_limited"
            ) from err
        except AITaskError as err:
            self._retry_at[scope] = started + RETRY_DELAY
            LOGGER.debug("Profile of %s not refreshed: %r", scope, err)
            raise _NoProfileError(err.translation_key or "ai_task_failed") from err
        text = clean_profile(str(data["profile"]))
        if not text:
            self._retry_at[scope] = started + RETRY_DELAY
            LOGGER.debug("Profile of %s: the AI Task answered nothing usable", scope)
            raise _NoProfileError("empty_answer")
        return text
