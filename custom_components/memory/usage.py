"""Recall and capture counters behind the usage sensors.

The daily counters are kept in Home Assistant's storage, so a restart does
not reset them, and start again from zero at local midnight. Counts only:
never any memory or message content.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.event import async_track_time_change
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from .const import DOMAIN

STORAGE_VERSION: Final = 1
STORAGE_KEY: Final = f"{DOMAIN}.usage"
# Counters change on every turn: write them at most this often (seconds).
SAVE_DELAY: Final = 30


def _today() -> str:
    return dt_util.now().date().isoformat()


@dataclass(slots=True, kw_only=True)
class Usage:
    """The counters as stored; `day` is the local date the daily ones count."""

    day: str
    recall_tokens_today: int = 0
    memories_recalled_today: int = 0
    recall_failures_today: int = 0
    conversations_today: int = 0
    last_recall_tokens: int | None = None
    last_recall_latency_ms: float | None = None
    last_recall_failure: str | None = None
    # Turns whose block a follow-up search, a memory that stayed, or the
    # "Earlier" part contributed to.
    recall_follow_ups_today: int = 0
    recall_kept_today: int = 0
    recall_earlier_today: int = 0
    # Digestion (digestion.py) and every AI Task call (ai_task.py).
    ai_task_calls_today: int = 0
    # Times (epoch s) of the calls of the last hour: the hourly cap's window.
    ai_task_call_times: list[float] = field(default_factory=list)
    memories_added_today: int = 0
    memories_updated_today: int = 0
    memories_superseded_today: int = 0
    digestion_failures_today: int = 0
    last_digestion: str | None = None
    # The kind of the last failure (an error class, never content), and when.
    last_digestion_error: str | None = None
    last_digestion_error_at: str | None = None


class UsageTracker:
    """Counts what recall injects and what capture keeps; tells the sensors."""

    def __init__(self, hass: HomeAssistant) -> None:
        """Nothing is read until `async_load`."""
        self._hass = hass
        self._storage: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, STORAGE_KEY)
        self.data = Usage(day=_today())
        self._listeners: list[Callable[[], None]] = []

    async def async_load(self) -> None:
        """Restore the counters of the last run, dropping a past day's."""
        stored = await self._storage.async_load()
        if stored:
            fields = set(Usage.__dataclass_fields__)
            self.data = Usage(**{k: v for k, v in stored.items() if k in fields})
        self._roll()

    @callback
    def async_start(self) -> CALLBACK_TYPE:
        """Reset the daily counters at local midnight; returns the remover."""
        return async_track_time_change(
            self._hass, self._midnight, hour=0, minute=0, second=0
        )

    @callback
    def _midnight(self, _now: object) -> None:
        if self._roll():
            self._changed()

    def _roll(self) -> bool:
        """Start a new day if the date changed; True when it did."""
        today = _today()
        if self.data.day == today:
            return False
        self.data.day = today
        self.data.recall_tokens_today = 0
        self.data.memories_recalled_today = 0
        self.data.recall_failures_today = 0
        self.data.conversations_today = 0
        self.data.recall_follow_ups_today = 0
        self.data.recall_kept_today = 0
        self.data.recall_earlier_today = 0
        self.data.ai_task_calls_today = 0
        self.data.memories_added_today = 0
        self.data.memories_updated_today = 0
        self.data.memories_superseded_today = 0
        self.data.digestion_failures_today = 0
        return True

    @callback
    def add_listener(self, listener: Callable[[], None]) -> CALLBACK_TYPE:
        """Call `listener` after every change; returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self) -> None:
        self._storage.async_delay_save(lambda: asdict(self.data), SAVE_DELAY)
        for listener in list(self._listeners):
            listener()

    @callback
    def record_recall(
        self,
        *,
        tokens: int,
        memories: int,
        latency_ms: float,
        parts: Collection[str] = (),
    ) -> None:
        """Count one recall that put `tokens` (estimated) into a prompt.

        `parts` names what contributed a line (`turn_recall.PART_*`): the
        turns a follow-up search, a memory that stayed, or "Earlier" did.
        """
        self._roll()
        self.data.last_recall_tokens = tokens
        self.data.last_recall_latency_ms = round(latency_ms, 2)
        self.data.recall_tokens_today += tokens
        self.data.memories_recalled_today += memories
        self.data.recall_follow_ups_today += "follow_up" in parts
        self.data.recall_kept_today += "kept" in parts
        self.data.recall_earlier_today += "earlier" in parts
        self._changed()

    @callback
    def record_failure(self, *, latency_ms: float) -> None:
        """Count a recall that failed; the conversation went on without it."""
        self._roll()
        self.data.last_recall_tokens = 0
        self.data.last_recall_latency_ms = round(latency_ms, 2)
        self.data.recall_failures_today += 1
        self.data.last_recall_failure = dt_util.utcnow().isoformat()
        self._changed()

    @callback
    def record_conversation(self) -> None:
        """Count a conversation whose first messages were kept."""
        self._roll()
        self.data.conversations_today += 1
        self._changed()

    def ai_task_calls_since(self, since: float) -> list[float]:
        """Return the times of the AI Task calls made after `since` (epoch s), oldest first."""
        return [t for t in self.data.ai_task_call_times if t > since]

    @callback
    def record_ai_task_call(self, when: float) -> None:
        """Count one AI Task call made at `when` (epoch s)."""
        self._roll()
        # Only the last hour matters for the cap (see ai_task.py).
        self.data.ai_task_call_times = [*self.ai_task_calls_since(when - 3600), when]
        self.data.ai_task_calls_today += 1
        self._changed()

    @callback
    def record_digestion(self, *, added: int, updated: int, superseded: int) -> None:
        """Count what digesting one conversation changed."""
        self._roll()
        self.data.memories_added_today += added
        self.data.memories_updated_today += updated
        self.data.memories_superseded_today += superseded
        self.data.last_digestion = dt_util.utcnow().isoformat()
        self._changed()

    @callback
    def record_digestion_failure(self, error: str) -> None:
        """Count a digestion that failed; `error` names its kind, no content."""
        self._roll()
        self.data.digestion_failures_today += 1
        self.data.last_digestion_error = error
        self.data.last_digestion_error_at = dt_util.utcnow().isoformat()
        self._changed()

    async def async_save(self) -> None:
        """Write the counters now (on unload; Home Assistant's stop flushes too)."""
        await self._storage.async_save(asdict(self.data))


async def async_remove_usage(hass: HomeAssistant) -> None:
    """Delete the stored counters with the integration."""
    await Store[dict[str, Any]](hass, STORAGE_VERSION, STORAGE_KEY).async_remove()
