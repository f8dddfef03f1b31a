"""The household's LLM, through Home Assistant's AI Task, under an hourly cap.

Digestion, its consolidation questions and profiles all ask for structured
data here. Every call counts against `CONF_AI_TASK_MAX_CALLS_PER_HOUR` over a
sliding hour kept with the usage counters (so a restart does not reset it),
and as one of the "AI Task calls today". The answer is checked against the
structure asked for: a malformed answer is a failure like any other.

The AI Task runs in a chat log of its own; `in_ai_task_call` tells capture
that the conversation being announced is ours, not the household's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.util import dt as dt_util
import probatio

from .const import (
    CONF_AI_TASK_ENTITY,
    CONF_AI_TASK_MAX_CALLS_PER_HOUR,
    DEFAULT_AI_TASK_MAX_CALLS_PER_HOUR,
    DOMAIN,
    LOGGER,
)

if TYPE_CHECKING:
    from .usage import UsageTracker

AI_TASK_DOMAIN: Final = "ai_task"
# The sliding window of the hourly cap (seconds).
WINDOW_SECONDS: Final = 3600.0
# An AI Task that has not answered in this long has failed (seconds).
CALL_TIMEOUT_SECONDS: Final = 180.0

_IN_CALL: ContextVar[bool] = ContextVar("memory_ai_task_call", default=False)


def in_ai_task_call() -> bool:
    """Whether the code running now is one of our AI Task calls."""
    return _IN_CALL.get()


@contextmanager
def _marked() -> Iterator[None]:
    token = _IN_CALL.set(True)
    try:
        yield
    finally:
        _IN_CALL.reset(token)


class AITaskError(HomeAssistantError):
    """An AI Task call did not give an answer."""


class AITaskUnavailable(AITaskError):  # noqa: N818 - the interface's name
    """No AI Task entity is configured or preferred, or it is missing."""


class AITaskRateLimited(AITaskError):  # noqa: N818
    """The hourly cap is reached; try again at `retry_at`."""

    def __init__(self, retry_at: datetime) -> None:
        """Say when the oldest call of the hour leaves the window."""
        super().__init__(
            translation_domain=DOMAIN,
            translation_key="ai_task_rate_limited",
            translation_placeholders={"retry_at": retry_at.isoformat()},
        )
        self.retry_at = retry_at


class AITaskFailed(AITaskError):  # noqa: N818
    """The call raised, timed out, or its data did not match the structure."""


class AITaskClient:
    """Asks the configured (or preferred) AI Task entity for structured data."""

    def __init__(
        self, hass: HomeAssistant, entry: ConfigEntry, usage: UsageTracker
    ) -> None:
        """Count calls in `usage`, which keeps the sliding hour."""
        self._hass = hass
        self._entry = entry
        self._usage = usage

    @property
    def max_calls_per_hour(self) -> int:
        """The cap from the options."""
        return int(
            self._entry.options.get(
                CONF_AI_TASK_MAX_CALLS_PER_HOUR, DEFAULT_AI_TASK_MAX_CALLS_PER_HOUR
            )
        )

    def entity_id(self) -> str | None:
        """Return the entity the options name, else Home Assistant's preferred one."""
        if configured := self._entry.options.get(CONF_AI_TASK_ENTITY):
            return str(configured)
        if AI_TASK_DOMAIN not in self._hass.config.components:
            # Not set up: no preferred entity. Importing it now would load
            # camera's requirements in the event loop (or fail without them).
            return None
        # Imported here: ai_task is an after-dependency, loaded by now.
        from homeassistant.components.ai_task.const import DATA_PREFERENCES  # noqa: PLC0415

        preferences = self._hass.data.get(DATA_PREFERENCES)
        return None if preferences is None else preferences.gen_data_entity_id

    def retry_at(self) -> datetime | None:
        """When the next call is allowed, or None if it is allowed now."""
        now = dt_util.utcnow().timestamp()
        calls = self._usage.ai_task_calls_since(now - WINDOW_SECONDS)
        limit = self.max_calls_per_hour
        if len(calls) < limit:
            return None
        # The call that must leave the window before another fits.
        oldest = calls[len(calls) - limit] if limit > 0 else now
        return dt_util.utc_from_timestamp(oldest + WINDOW_SECONDS)

    def _check_entity(self) -> str:
        entity_id = self.entity_id()
        if entity_id is None:
            raise AITaskUnavailable(
                translation_domain=DOMAIN, translation_key="ai_task_not_configured"
            )
        state = self._hass.states.get(entity_id)
        if (
            AI_TASK_DOMAIN not in self._hass.config.components
            or state is None
            or state.state == STATE_UNAVAILABLE
        ):
            raise AITaskUnavailable(
                translation_domain=DOMAIN,
                translation_key="ai_task_unavailable",
                translation_placeholders={"entity_id": entity_id},
            )
        return entity_id

    async def async_generate(
        self,
        *,
        task_name: str,
        instructions: str,
        structure: probatio.Schema,
        prepare: Callable[[Any], Any] | None = None,
    ) -> dict[str, Any]:
        """Ask for data shaped like `structure` (a mapping); counts as one call.

        `prepare` reads what an entity returned as it came (text, a bare
        list: `engine.model_json`) before the structure checks it.

        Raises AITaskUnavailable, AITaskRateLimited or AITaskFailed.
        """
        entity_id = self._check_entity()
        if (retry_at := self.retry_at()) is not None:
            raise AITaskRateLimited(retry_at)
        # Counted before the call: a failed call costs the household as much.
        self._usage.record_ai_task_call(dt_util.utcnow().timestamp())
        from homeassistant.components.ai_task import async_generate_data  # noqa: PLC0415

        try:
            with _marked():
                async with asyncio.timeout(CALL_TIMEOUT_SECONDS):
                    result = await async_generate_data(
                        self._hass,
                        task_name=task_name,
                        entity_id=entity_id,
                        instructions=instructions,
                        structure=structure,
                    )
        except TimeoutError as err:
            raise self._failed(task_name, "timeout") from err
        except HomeAssistantError as err:
            raise self._failed(task_name, type(err).__name__) from err
        except Exception as err:  # any integration may answer
            raise self._failed(task_name, type(err).__name__) from err
        try:
            answer = result.data if prepare is None else prepare(result.data)
            data: dict[str, Any] = structure(answer)
        except probatio.Invalid as err:
            raise self._failed(task_name, "malformed") from err
        return data

    def _failed(self, task_name: str, reason: str) -> AITaskFailed:
        # The reason is an error class, never the prompt or the answer.
        LOGGER.debug("AI Task %s failed: %s", task_name, reason)
        return AITaskFailed(
            translation_domain=DOMAIN,
            translation_key="ai_task_failed",
            translation_placeholders={"reason": reason},
        )
