"""Assist Memory: long-term memory for Home Assistant's Assist agents."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

from homeassistant.const import EVENT_HOMEASSISTANT_FINAL_WRITE, Platform
from homeassistant.core import CALLBACK_TYPE, Event, HomeAssistant, callback
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.event import async_track_time_interval
from homeassistant.helpers.llm import async_register_api
from homeassistant.helpers.typing import ConfigType

from .ai_task import AITaskClient
from .availability import async_watch_availability, outage_level
from .backend import async_open_store, database_path, uses_postgresql
from .capture import ConversationCapture
from .const import DOMAIN, EXPIRE_INTERVAL_SECONDS, LOGGER
from .coordinator import MemoryStatsCoordinator
from .digestion import Digestion
from .embedding import async_setup_embedding
from .engine import DATABASE_ERRORS, MemoryStore
from .engine.postgres import AnyStore, conversation_log
from .engine.store import remove_database
from .export import async_remove_exports, async_rewrite_exports
from .panel import async_register_panel, async_remove_panel
from .profile import ProfileKeeper
from .reanalysis import async_reanalyse
from .recall import memory_api
from .runtime import MemoryConfigEntry, MemoryData
from .services import async_setup_services
from .usage import UsageTracker, async_remove_usage
from .vector_backend import async_remove_vector_backend
from .websocket_api import async_setup_websocket_api

PLATFORMS: list[Platform] = [Platform.BINARY_SENSOR, Platform.SENSOR]

CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the actions once, whether or not an entry loads."""
    async_setup_services(hass)
    async_setup_websocket_api(hass)
    return True


def _track_expiry(hass: HomeAssistant, store: AnyStore) -> CALLBACK_TYPE:
    """Expire due memories every EXPIRE_INTERVAL_SECONDS; return the stop.

    A database away (a PostgreSQL server down, a disk failing) fails the
    pass, not the job: the next one expires what is left.
    """

    async def _expire(_now: object) -> None:
        try:
            await store.expire_due()
        except DATABASE_ERRORS as err:
            LOGGER.log(outage_level(store), "Expiring memories failed: %s", err)

    return async_track_time_interval(
        hass,
        _expire,
        timedelta(seconds=EXPIRE_INTERVAL_SECONDS),
        cancel_on_shutdown=True,
    )


async def async_setup_entry(hass: HomeAssistant, entry: MemoryConfigEntry) -> bool:
    """Open the database, then start the sensors."""
    store = await async_open_store(hass, entry)
    coordinator = MemoryStatsCoordinator(hass, entry, store)
    background: list[asyncio.Task[int]] = []

    async def _close() -> None:
        # Re-analysis stops between batches; a statistics refresh still in
        # flight must finish before its connection closes under it.
        for task in background:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await coordinator.async_shutdown()
        await store.close()

    entry.async_on_unload(_close)
    # PostgreSQL: a repair issue while the server is away (not SQLite).
    async_watch_availability(hass, entry, store)
    await coordinator.async_config_entry_first_refresh()
    entry.async_on_unload(store.add_listener(coordinator.async_store_changed))
    # Queues memories without vectors; its worker starts once platforms are up.
    embedding = await async_setup_embedding(hass, entry, store)
    if embedding is not None:
        entry.async_on_unload(embedding.async_stop)
    # Assist: recall and capture counters, and the conversation log.
    usage = UsageTracker(hass)
    await usage.async_load()
    stop_midnight = usage.async_start()
    entry.async_on_unload(stop_midnight)
    conversations = conversation_log(store)
    # Digestion: ended conversations (capture tells it) become memories
    # through AI Task.
    ai_task = AITaskClient(hass, entry, usage)
    digestion = Digestion(hass, entry, store, conversations, ai_task, usage, embedding)
    capture = ConversationCapture(
        hass, entry, conversations, usage, on_ended=digestion.async_schedule
    )
    entry.runtime_data = MemoryData(
        store=store,
        coordinator=coordinator,
        conversations=conversations,
        capture=capture,
        usage=usage,
        ai_task=ai_task,
        digestion=digestion,
        profiles=ProfileKeeper(hass, entry, store, ai_task),
        embedding=embedding,
    )
    entry.async_on_unload(capture.async_unsubscribe)

    async def _rewrite_exports(scopes: frozenset[str]) -> None:
        await async_rewrite_exports(hass, entry, scopes)

    # Before retention first runs: what is erased leaves the exports too.
    entry.async_on_unload(store.add_erase_listener(_rewrite_exports))
    await capture.async_start()
    # Recall for agents that select "Memory"; the tools come through llm.py.
    entry.async_on_unload(async_register_api(hass, memory_api(hass, entry)))

    await store.expire_due()
    entry.async_on_unload(_track_expiry(hass, store))
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    if isinstance(store, MemoryStore):
        # Not before: it holds writes (start-up's expiry, the first refresh)
        # while it reads every vector; searches use keywords meanwhile.
        # PostgreSQL loads its index in `open`.
        _load = entry.async_create_task(hass, store.load_index(), "memory vector index")
    # Rows stored under older analysers get their search terms redone (SQLite);
    # vectors of a newly detected secret are made again (both).
    background.append(
        entry.async_create_background_task(
            hass, async_reanalyse(store), "memory search terms"
        )
    )
    if embedding is not None:
        embedding.start_worker()
    entry.async_on_unload(digestion.async_stop)
    await digestion.async_start()
    entry.runtime_data.profiles.async_start()

    # Home Assistant does not unload entries when it stops: without this the
    # database threads outlive the event loop and stopping takes 10 s longer.
    final_write: list[CALLBACK_TYPE] = []

    async def _on_final_write(_event: Event) -> None:
        final_write.clear()  # fired once: nothing left to remove
        stop_midnight()
        await _async_stop_writers(entry)
        await _close()

    final_write.append(
        hass.bus.async_listen_once(EVENT_HOMEASSISTANT_FINAL_WRITE, _on_final_write)
    )

    @callback
    def _forget_final_write() -> None:
        while final_write:
            final_write.pop()()

    entry.async_on_unload(_forget_final_write)

    # The Memory panel, where the frontend runs (every user; the websocket
    # API filters what each sees).
    if await async_register_panel(hass):

        @callback
        def _remove_panel() -> None:
            async_remove_panel(hass)

        entry.async_on_unload(_remove_panel)
    return True


async def _async_stop_writers(entry: MemoryConfigEntry) -> None:
    """Stop everything that writes, in the order the store needs (`workers`)."""
    for worker in entry.runtime_data.workers:
        await worker.async_stop()
    # Before the store closes: the counters.
    await entry.runtime_data.usage.async_save()


async def async_unload_entry(hass: HomeAssistant, entry: MemoryConfigEntry) -> bool:
    """Stop the writers and the sensors; the store closes via `async_on_unload`."""
    await _async_stop_writers(entry)
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)


async def async_remove_entry(hass: HomeAssistant, entry: MemoryConfigEntry) -> None:
    """Delete the database and its exports with the integration, as the README warns.

    On PostgreSQL the server's data stays: other Home Assistants may share
    it, and its owner drops it. Only this Home Assistant's exports and
    usage counters go.
    """
    if not uses_postgresql(entry.data):
        await hass.async_add_executor_job(remove_database, database_path(hass))
    await async_remove_exports(hass)
    await async_remove_usage(hass)
    await async_remove_vector_backend(hass)
