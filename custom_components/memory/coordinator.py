"""The store's statistics, pushed to the sensors when the store changes."""

from __future__ import annotations

from datetime import timedelta

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.debounce import Debouncer
from homeassistant.helpers.update_coordinator import DataUpdateCoordinator, UpdateFailed

from .const import DOMAIN, LOGGER
from .engine import StoreError, StoreStats
from .engine.postgres import AnyStore

# Bursts of writes (a bulk import) refresh the sensors once a second at most.
REFRESH_COOLDOWN = timedelta(seconds=1)


class MemoryStatsCoordinator(DataUpdateCoordinator[StoreStats]):
    """Counts and sizes, refreshed when the store changes rather than polled."""

    config_entry: ConfigEntry

    def __init__(
        self, hass: HomeAssistant, entry: ConfigEntry, store: AnyStore
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
