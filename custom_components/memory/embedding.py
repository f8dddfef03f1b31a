"""Embedding providers in Home Assistant: the worker, its health and its entities.

The engine's `EmbeddingQueue` does the work; this module builds its provider
from the entry (over Home Assistant's shared aiohttp session), runs it as a
background task woken by store changes and Home Assistant timers, pushes its
status to the connectivity and progress entities, starts reauthentication
when the provider refuses the key, keeps a repair issue while the
provider has been down for 30 minutes, and one while the worker's measure
says the model reads Home Assistant's language poorly.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import CONF_API_KEY, CONF_URL
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryNotReady
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.event import async_call_later
from homeassistant.helpers.update_coordinator import DataUpdateCoordinator
from homeassistant.requirements import RequirementsNotFound, async_process_requirements
from homeassistant.util import dt as dt_util

from .availability import outage_level
from .const import (
    CONF_DIMENSIONS,
    CONF_MODEL,
    CONF_PROVIDER,
    DATABASE_FOLDER,
    DOMAIN,
    ISSUE_DIMENSION_CHANGED,
    ISSUE_MODEL_READS_POORLY,
    ISSUE_PROVIDER_UNAVAILABLE,
    LOGGER,
    MODELS_FOLDER,
    PROVIDER_DOWN_ISSUE_SECONDS,
    PROVIDER_LOCAL,
)
from .engine import DATABASE_ERRORS
from .engine.embedding import (
    HF_BASE_URL,
    HTTP_PROVIDERS,
    MODEL_SPECS,
    PROCESS_INSTANCE,
    CircuitBreaker,
    DimensionChangedError,
    EmbeddingProvider,
    EmbeddingQueue,
    InvalidAuthError,
    LocalProvider,
    ModelSpec,
    ProgressCallback,
    QueueStatus,
    download_model,
    install_from_folder,
    model_key,
)
from .engine.languages import language_code, language_name
from .engine.models import Vector
from .engine.postgres import AnyStore, PostgresStore
from .worker import BackgroundWorker

# Where the built-in model's files come from (Hugging Face's file layout).
MODEL_BASE_URL = HF_BASE_URL
# The built-in encoder's tokenizer, installed on demand like sqlite-vec.
LOCAL_REQUIREMENTS = ["tokenizers==0.23.3"]
# After an unexpected database error the worker tries again this much later.
_WORKER_RETRY_SECONDS = 60.0


def store_model(data: Any) -> str | None:
    """Name the model the store files vectors under; None for keyword search."""
    if data.get(CONF_PROVIDER) in HTTP_PROVIDERS or (
        data.get(CONF_PROVIDER) == PROVIDER_LOCAL
    ):
        return model_key(data[CONF_PROVIDER], data[CONF_MODEL], data[CONF_DIMENSIONS])
    return None


def models_folder(hass: HomeAssistant) -> Path:
    """`<config>/memory/models`: in the config folder, outside the database."""
    return Path(hass.config.path(DATABASE_FOLDER, MODELS_FOLDER))


def local_model_folder(hass: HomeAssistant, spec: ModelSpec) -> Path:
    """One folder per model and revision."""
    return models_folder(hass) / spec.folder_name


async def async_download_local_model(
    hass: HomeAssistant, spec: ModelSpec, progress: ProgressCallback
) -> Path:
    """Fetch the built-in model's files (resuming a broken download)."""
    return await download_model(
        spec,
        local_model_folder(hass, spec),
        async_get_clientsession(hass),
        base_url=MODEL_BASE_URL,
        progress=progress,
    )


async def async_install_local_model(
    hass: HomeAssistant, spec: ModelSpec, source: Path
) -> Path:
    """Copy the built-in model from a local folder, checking every file.

    For homes without internet access: the files can come from a USB stick or
    a share; nothing is downloaded.
    """
    target = local_model_folder(hass, spec)
    await hass.async_add_executor_job(install_from_folder, spec, source, target)
    return target


async def async_local_requirements(hass: HomeAssistant) -> None:
    """Install the tokenizer library; raises `RequirementsNotFound` if it cannot be."""
    await async_process_requirements(
        hass, DOMAIN, LOCAL_REQUIREMENTS, is_built_in=False
    )


async def async_local_provider(hass: HomeAssistant, model: str) -> LocalProvider:
    """Build the built-in model's provider; weights load on the first text."""
    await async_local_requirements(hass)

    def _load() -> tuple[type[Any], type[Exception]]:
        from .engine.embedding import BertEncoder, EncoderError  # noqa: PLC0415

        return BertEncoder, EncoderError

    encoder_class, failure = await hass.async_add_import_executor_job(_load)
    spec = MODEL_SPECS[model]
    encoder = encoder_class(local_model_folder(hass, spec), spec)
    return LocalProvider(encoder, model=model, failure=failure)


async def async_build_provider(
    hass: HomeAssistant, data: Any
) -> EmbeddingProvider | None:
    """Build the provider an entry's data describes; None for keyword search."""
    kind = data.get(CONF_PROVIDER)
    if kind == PROVIDER_LOCAL:
        return await async_local_provider(hass, data[CONF_MODEL])
    if kind not in HTTP_PROVIDERS:
        return None
    return HTTP_PROVIDERS[kind].factory(
        async_get_clientsession(hass),
        model=data[CONF_MODEL],
        url=data.get(CONF_URL),
        api_key=data.get(CONF_API_KEY),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingStatus:
    """What the entities and diagnostics show (counts and states only)."""

    provider: str
    model: str
    connected: bool
    queue: QueueStatus
    error: str | None = None
    down_since: datetime | None = None


class EmbeddingCoordinator(DataUpdateCoordinator[EmbeddingStatus]):
    """Holds the latest status; the worker pushes it, nothing polls."""

    config_entry: ConfigEntry

    def __init__(
        self, hass: HomeAssistant, entry: ConfigEntry, runtime: EmbeddingRuntime
    ) -> None:
        """No update interval: the worker and the breaker push changes."""
        super().__init__(
            hass,
            LOGGER,
            config_entry=entry,
            name=f"{DOMAIN} embedding",
            update_interval=None,
            always_update=False,
        )
        self.runtime = runtime

    async def _async_update_data(self) -> EmbeddingStatus:
        return await self.runtime.async_status()


class EmbeddingRuntime(BackgroundWorker):
    """The queue and breaker of one loaded entry, and the task that drives them."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: ConfigEntry,
        store: AnyStore,
        provider: EmbeddingProvider,
    ) -> None:
        """Bind everything; `async_start` queues work, `start_worker` runs it."""
        super().__init__()
        self.hass = hass
        self.entry = entry
        self.provider = provider
        self._store = store
        model = store_model(entry.data)
        assert model is not None  # noqa: S101 - only built for a provider

        def clock() -> float:
            return dt_util.utcnow().timestamp()

        self._clock = clock
        self.breaker = CircuitBreaker(clock)
        self.queue = EmbeddingQueue(
            store,
            provider,
            model,
            dimensions=entry.data[CONF_DIMENSIONS],
            breaker=self.breaker,
            clock=clock,
            # On PostgreSQL, claims in the store's name: this Home Assistant's
            # (stable across restarts), so jobs it held are its own again.
            instance=(
                store.instance if isinstance(store, PostgresStore) else PROCESS_INSTANCE
            ),
        )
        self.coordinator = EmbeddingCoordinator(hass, entry, self)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._timer: CALLBACK_TYPE | None = None
        self._issue_timer: CALLBACK_TYPE | None = None
        # The trust of the last measure of Home Assistant's language acted on.
        self._reading_trust: float | None = None

    @property
    def label(self) -> str:
        """Provider and model, for messages."""
        return f"{self.entry.data[CONF_PROVIDER]} {self.entry.data[CONF_MODEL]}"

    async def async_start(self) -> None:
        """Queue memories and messages without vectors; read the first status."""
        await self.queue.start()
        self._hold(
            self.breaker.add_listener(self._breaker_changed),
            self.queue.store.add_listener(self.wake),
        )
        await self.coordinator.async_refresh()

    @callback
    def start_worker(self) -> None:
        """Run the worker until the entry unloads."""
        self._task = self.entry.async_create_background_task(
            self.hass, self._run(), "memory embedding worker"
        )

    async def async_stop(self) -> None:
        """Stop the worker before the store closes; release the provider."""
        self._release()
        self._cancel_timers()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.queue.close()

    def _cancel_timers(self) -> None:
        for timer in (self._timer, self._issue_timer):
            if timer is not None:
                timer()
        self._timer = self._issue_timer = None

    @callback
    def wake(self) -> None:
        """Look for work now (a memory was added, a timer fired)."""
        self._wake.set()

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            delay: float | None
            try:
                delay = await self.queue.run_once()
                counts = await self.queue.status()
            except DATABASE_ERRORS as err:
                LOGGER.log(
                    outage_level(self._store),
                    "Embedding work failed, retrying later: %s",
                    err,
                )
                delay = _WORKER_RETRY_SECONDS
                # The entities show as unavailable until the next good pass.
                self.coordinator.async_set_update_error(err)
            else:
                # Health read now: a search may have opened the breaker meanwhile.
                self.coordinator.async_set_updated_data(self._status(counts))
                self._reading_issue()
            if delay == 0:
                continue
            if delay is not None:
                self._schedule(delay)
            await self._wake.wait()

    @callback
    def _schedule(self, delay: float) -> None:
        if self._timer is not None:
            self._timer()

        @callback
        def _fire(_now: datetime) -> None:
            self._timer = None
            self.wake()

        self._timer = async_call_later(self.hass, delay, _fire)

    @callback
    def _reading_issue(self) -> None:
        """Keep a repair issue while the model reads Home Assistant's language poorly.

        Decided by the worker's measure of that language (`vectors.Readings`),
        once it exists; a model that reads it well removes the issue.
        """
        language = language_code(self._store.language)
        reading = next(
            (r for r in self.queue.store.readings.measured() if r.language == language),
            None,
        )
        if reading is None or reading.trust == self._reading_trust:
            return
        self._reading_trust = reading.trust
        if reading.trust >= 1:
            ir.async_delete_issue(self.hass, DOMAIN, ISSUE_MODEL_READS_POORLY)
            return
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            ISSUE_MODEL_READS_POORLY,
            is_fixable=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=ISSUE_MODEL_READS_POORLY,
            translation_placeholders={
                "model": self.label,
                "language": language_name(language),
                "score": f"{reading.reciprocal_rank:.2f}",
            },
        )

    async def async_status(self) -> EmbeddingStatus:
        """Read the current counts and health."""
        return self._status(await self.queue.status())

    def _status(self, counts: QueueStatus) -> EmbeddingStatus:
        error = self.breaker.last_error
        since = self.breaker.down_since
        return EmbeddingStatus(
            provider=self.entry.data[CONF_PROVIDER],
            model=self.entry.data[CONF_MODEL],
            connected=self.breaker.closed,
            queue=counts,
            error=None if error is None else error.key,
            down_since=None if since is None else dt_util.utc_from_timestamp(since),
        )

    @callback
    def _breaker_changed(self) -> None:
        """Health changed: entities, reauth, repair issues, the next probe."""
        if self.coordinator.data is not None:
            self.coordinator.async_set_updated_data(
                self._status(self.coordinator.data.queue)
            )
        if self.breaker.closed:
            self._provider_recovered()
        else:
            self._provider_failed()
        self.wake()

    @callback
    def _provider_failed(self) -> None:
        error = self.breaker.last_error
        if self.breaker.failures == 1:
            LOGGER.warning(
                "Embedding provider %s is not answering (%s); searching by "
                "keywords until it recovers",
                self.label,
                None if error is None else error.key,
            )
        if isinstance(error, InvalidAuthError):
            self.entry.async_start_reauth(self.hass)
        if isinstance(error, DimensionChangedError):
            ir.async_create_issue(
                self.hass,
                DOMAIN,
                ISSUE_DIMENSION_CHANGED,
                is_fixable=False,
                severity=ir.IssueSeverity.ERROR,
                translation_key=ISSUE_DIMENSION_CHANGED,
                translation_placeholders={
                    "model": self.label,
                    "expected": error.placeholders.get("expected", "?"),
                    "got": error.placeholders.get("got", "?"),
                },
            )
        if self._issue_timer is None and self.breaker.down_since is not None:
            elapsed = self._clock() - self.breaker.down_since
            self._issue_timer = async_call_later(
                self.hass,
                max(PROVIDER_DOWN_ISSUE_SECONDS - elapsed, 0.0),
                self._raise_unavailable_issue,
            )

    @callback
    def _raise_unavailable_issue(self, _now: datetime) -> None:
        self._issue_timer = None
        error = self.breaker.last_error
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            ISSUE_PROVIDER_UNAVAILABLE,
            is_fixable=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=ISSUE_PROVIDER_UNAVAILABLE,
            translation_placeholders={
                "provider": self.label,
                "error": "" if error is None else str(error),
            },
        )

    @callback
    def _provider_recovered(self) -> None:
        if self._issue_timer is not None:
            self._issue_timer()
            self._issue_timer = None
        for issue in (ISSUE_PROVIDER_UNAVAILABLE, ISSUE_DIMENSION_CHANGED):
            ir.async_delete_issue(self.hass, DOMAIN, issue)
        LOGGER.info("Embedding provider %s answers again", self.label)

    async def async_diagnostics(self) -> dict[str, Any]:
        """Describe provider, model, health and counts: never a key, URL or text."""
        status = await self.async_status()
        return {
            "provider": status.provider,
            "model": status.model,
            "store_model": self.queue.model,
            "dimensions": self.queue.dimensions,
            "connected": status.connected,
            "error": status.error,
            "failures": self.breaker.failures,
            "down_since": None
            if status.down_since is None
            else status.down_since.isoformat(),
            "rebuilding": status.queue.rebuilding,
            "jobs": {
                "pending": status.queue.pending,
                "ready": status.queue.ready,
                "error": status.queue.failed,
            },
            "messages": {
                "rebuilding": status.queue.messages_rebuilding,
                "pending": status.queue.messages_pending,
                "ready": status.queue.messages_ready,
                "error": status.queue.messages_failed,
            },
            # How well the model reads each language measured so far, and
            # the share of their weight its vectors keep (`vectors.Readings`).
            "reading": {
                reading.language: {
                    "reciprocal_rank": round(reading.reciprocal_rank, 3),
                    "trust": round(reading.trust, 3),
                }
                for reading in self.queue.store.readings.measured()
            },
        }


async def async_setup_embedding(
    hass: HomeAssistant, entry: ConfigEntry, store: AnyStore
) -> EmbeddingRuntime | None:
    """Build the runtime of an entry with a provider, and queue pending work."""
    try:
        provider = await async_build_provider(hass, entry.data)
    except RequirementsNotFound as err:
        raise ConfigEntryNotReady(
            translation_domain=DOMAIN,
            translation_key="local_model_unavailable",
            translation_placeholders={"error": str(err)},
        ) from err
    if provider is None:
        # Keyword search only: no model to read the language poorly.
        ir.async_delete_issue(hass, DOMAIN, ISSUE_MODEL_READS_POORLY)
        return None
    runtime = EmbeddingRuntime(hass, entry, store, provider)
    await runtime.async_start()
    return runtime


async def async_query_vector(
    runtime: EmbeddingRuntime | None, text: str, *, messages: bool = False
) -> Vector | None:
    """Embed a search query; None means search by keywords only.

    For memories, or with `messages` for the conversation log (each is None
    while its own collection is being re-embedded). Never slower than the
    breaker allows: at most `QUERY_TIMEOUT` seconds once, then immediate
    while the provider is down; the same text asked again (memories, then
    messages) is served from the queue's cache. For `memory.search` and
    automatic recall. A code or password in the query is "[redacted]"
    before it is sent or cached (`EmbeddingQueue.query_vector`).
    """
    if runtime is None:
        return None
    return await runtime.queue.query_vector(text, messages=messages)
