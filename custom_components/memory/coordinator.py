"""Runtime data of a config entry: the store and its pushed statistics."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers.debounce import Debouncer
from homeassistant.helpers.update_coordinator import DataUpdateCoordinator, UpdateFailed

from .const import DOMAIN, LOGGER
from .engine import ConversationLog, MemoryStore, StoreError, StoreStats

if TYPE_CHECKING:
    from .ai_task import AITaskClient
    from .capture import ConversationCapture
    from .digestion import Digestion
    from .embedding import EmbeddingRuntime
    from .profile import ProfileKeeper
    from .usage import UsageTracker

# Bursts of writes (a bulk import) refresh the sensors once a second at most.
REFRESH_COOLDOWN = timedelta(seconds=1)

type MemoryConfigEntry = ConfigEntry[MemoryData]


@dataclass(slots=True)
class MemoryData:
    """What a loaded entry holds; platforms and actions reach it from the entry."""

    store: MemoryStore
    coordinator: MemoryStatsCoordinator
    # Assist: the conversation log, its capture, and recall/capture counters.
    conversations: ConversationLog
    capture: ConversationCapture
    usage: UsageTracker
    # Digestion: the household's LLM through AI Task, and the pipeline that
    # turns ended conversations into memories.
    ai_task: AITaskClient
    digestion: Digestion
    # Each scope's profile, distilled through AI Task.
    profiles: ProfileKeeper
    # The embedding worker and breaker; None on keyword-only search.
    embedding: EmbeddingRuntime | None = None


class MemoryStatsCoordinator(DataUpdateCoordinator[StoreStats]):
    """Counts and sizes, refreshed when the store changes rather than polled."""

    config_entry: MemoryConfigEntry

    def __init__(
        self, hass: HomeAssistant, entry: MemoryConfigEntry, store: MemoryStore
    ) -> None:
        """No update interval: the store's change listener drives refreshes."""
        super().__init__(
            hass,
            LOGGER,
            config_entry=entry,
            name=DOMAIN,
            update_interval=None,
            always_update=False,
            request_refresh_debouncer=Debouncer(
                hass,
                LOGGER,
                cooldown=REFRESH_COOLDOWN.total_seconds(),
                immediate=True,
            ),
        )
        self.store = store
        # Set by every committed write, cleared when a read begins: a write
        # that lands during a read may be missing from it.
        self._stale = False

    async def _async_update_data(self) -> StoreStats:
        self._stale = False
        try:
            return await self.store.stats()
        except StoreError as err:
            raise UpdateFailed(
                translation_domain=DOMAIN,
                translation_key="stats_failed",
                translation_placeholders={"error": str(err)},
            ) from err

    async def async_shutdown(self) -> None:
        """Stop refreshing, and wait for a refresh in flight to finish."""
        await super().async_shutdown()
        async with self._debounced_refresh.async_lock():
            pass

    @callback
    def _async_refresh_finished(self) -> None:
        """Refresh again (after the cooldown) if a write landed during the read.

        The debouncer drops a call whose cooldown ends while a refresh runs,
        as if that refresh served it; one that read before the write did not.
        Called while the refresh still holds the debouncer's lock, so this
        only marks a call due when the cooldown after this refresh ends.
        """
        if self._stale:
            self._debounced_refresh.async_schedule_call()

    @callback
    def async_store_changed(self) -> None:
        """Schedule a debounced refresh after a committed write."""
        self._stale = True
        _ = self.config_entry.async_create_task(
            self.hass, self.async_request_refresh(), "memory stats refresh"
        )


def loaded_entry(hass: HomeAssistant) -> MemoryConfigEntry:
    """Return the single loaded entry; a translated validation error without one.

    The call itself is fine but cannot be served now (set-up failed, or the
    entry is disabled or unloaded): the caller has something to fix, not a
    crash to report.
    """
    entries: list[MemoryConfigEntry] = hass.config_entries.async_loaded_entries(DOMAIN)
    if not entries:
        raise ServiceValidationError(
            translation_domain=DOMAIN, translation_key="not_loaded"
        )
    return entries[0]
