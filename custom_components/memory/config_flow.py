"""Set-up, reconfigure, reauth and options flows.

Set-up offers the embedding providers in a menu: the built-in model
(downloaded with progress), a server (URL and key, then a model from the list
the server gives, checked with a real embedding), or keyword search in one
click, which needs nothing outside Home Assistant.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
import math
from pathlib import Path
from typing import Any

from homeassistant.config_entries import (
    SOURCE_RECONFIGURE,
    ConfigEntryState,
    ConfigFlow,
    ConfigFlowResult,
    OptionsFlow,
)
from homeassistant.const import CONF_API_KEY, CONF_URL
from homeassistant.core import HomeAssistant, callback
from homeassistant.data_entry_flow import section
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.selector import (
    BooleanSelector,
    DeviceSelector,
    DeviceSelectorConfig,
    EntityFilterSelectorConfig,
    EntitySelector,
    EntitySelectorConfig,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
from homeassistant.requirements import RequirementsNotFound
import probatio

from .const import (
    CONF_AI_TASK_ENTITY,
    CONF_AI_TASK_MAX_CALLS_PER_HOUR,
    CONF_CONVERSATION_RETENTION_DAYS,
    CONF_DIGEST_IDLE_MINUTES,
    CONF_DIGEST_MIN_USER_WORDS,
    CONF_DIGEST_SKIP_AGENTS,
    CONF_DIGEST_SKIP_DEVICES,
    CONF_DIGESTION,
    CONF_DIMENSIONS,
    CONF_MIN_SCORE,
    CONF_MODEL,
    CONF_MODEL_FOLDER,
    CONF_PROVIDER,
    CONF_RECALL_BUDGET,
    CONF_RECALL_MIN_SCORE,
    CONF_SATELLITE_PERSONS,
    CONF_SEARCH_LIMIT,
    DEFAULT_AI_TASK_MAX_CALLS_PER_HOUR,
    DEFAULT_CONVERSATION_RETENTION_DAYS,
    DEFAULT_DIGEST_IDLE_MINUTES,
    DEFAULT_DIGEST_MIN_USER_WORDS,
    DEFAULT_MIN_SCORE,
    DEFAULT_RECALL_BUDGET,
    DEFAULT_RECALL_MIN_SCORE,
    DEFAULT_SEARCH_LIMIT,
    DOMAIN,
    LOGGER,
    MAX_CONVERSATION_RETENTION_DAYS,
    MAX_DIGEST_IDLE_MINUTES,
    MAX_RECALL_BUDGET,
    PROVIDER_GEMINI,
    PROVIDER_KEYWORD,
    PROVIDER_LOCAL,
    PROVIDER_OLLAMA,
    PROVIDER_OPENAI,
)
from .embedding import (
    async_build_provider,
    async_download_local_model,
    async_install_local_model,
    async_local_requirements,
    store_model,
)
from .engine import MAX_SEARCH_LIMIT
from .engine.embedding_jobs import count_missing
from .engine.model_files import DEFAULT_MODEL, MODEL_SPECS, ModelFilesError, ModelSpec
from .engine.providers import (
    HTTP_PROVIDERS,
    OPENAI_DEFAULT_URL,
    CannotConnectError,
    HttpProvider,
    InvalidAuthError,
    InvalidSettingError,
    ModelInfo,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
    looks_like_embedding_model,
    probe_dimension,
)
from .runtime import MemoryConfigEntry

# The built-in model first (recommended), keyword search last (one click).
PROVIDER_MENU = [
    PROVIDER_LOCAL,
    PROVIDER_OLLAMA,
    PROVIDER_OPENAI,
    PROVIDER_GEMINI,
    PROVIDER_KEYWORD,
]
# Errors a form shows, each with a translated message; others read as these.
FLOW_ERRORS = {
    "cannot_connect",
    "invalid_auth",
    "model_not_found",
    "not_an_embedding_model",
    "timeout",
    "invalid_response",
    "dimensions_out_of_range",
}
LOADED = ConfigEntryState.LOADED
# Resident memory of the loaded built-in model (bench: about 60 MB of weights
# and activations, 30 MB for the tokenizer library).
LOCAL_MEMORY_MB = 100


def _flow_error(err: ProviderError) -> str:
    return err.key if err.key in FLOW_ERRORS else "cannot_connect"


def _unexpected(err: Exception) -> dict[str, str]:
    """Report a failure nothing names (a bug): on the form, and its type in the log.

    The traceback goes to DEBUG only: a library's message may repeat a URL
    with its password.
    """
    LOGGER.error("Unexpected error checking the provider: %s", type(err).__name__)
    LOGGER.debug("Unexpected error checking the provider", exc_info=err)
    return {"base": "unknown"}


def _client(hass: HomeAssistant, data: Mapping[str, Any]) -> HttpProvider:
    """Build the HTTP provider `data` describes (its default model if none is chosen)."""
    kind = HTTP_PROVIDERS[data[CONF_PROVIDER]]
    return kind.factory(
        async_get_clientsession(hass),
        model=str(data[CONF_MODEL]) if CONF_MODEL in data else kind.default_model,
        url=data.get(CONF_URL) or kind.default_url,
        api_key=data.get(CONF_API_KEY),
    )


def _shown_url(hass: HomeAssistant, data: Mapping[str, Any]) -> str:
    """Show an entry's URL as forms do: normalized, without a password."""
    return _client(hass, data).url


def _local_costs(spec: ModelSpec) -> dict[str, str]:
    return {
        "model": spec.key,
        "size": str(round(spec.total_size / 1_000_000)),
        "memory": str(LOCAL_MEMORY_MB),
    }


def _known_urls(hass: HomeAssistant) -> list[str]:
    """Ollama servers Home Assistant's Ollama integration already uses."""
    return list(
        dict.fromkeys(
            str(entry.data[CONF_URL]).rstrip("/")
            for entry in hass.config_entries.async_entries("ollama")
            if entry.data.get(CONF_URL)
        )
    )


class MemoryConfigFlow(ConfigFlow, domain=DOMAIN):
    """One entry (the manifest says single_config_entry); the provider is chosen here."""

    VERSION = 1
    MINOR_VERSION = 1

    def __init__(self) -> None:
        """Nothing chosen yet."""
        self._data: dict[str, Any] = {}
        self._models: list[ModelInfo] = []
        self._download: asyncio.Task[None] | None = None

    # -- choosing a provider ------------------------------------------------

    async def async_step_user(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Offer the providers: the built-in model first, keyword search last."""
        return self._provider_menu("user")

    async def async_step_reconfigure(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Change provider or model; memories are re-embedded in the background."""
        return self._provider_menu("reconfigure")

    def _provider_menu(self, step_id: str) -> ConfigFlowResult:
        spec = MODEL_SPECS[DEFAULT_MODEL]
        return self.async_show_menu(
            step_id=step_id,
            menu_options=PROVIDER_MENU,
            description_placeholders=_local_costs(spec),
        )

    async def async_step_keyword(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Create a keyword-only entry: nothing to ask."""
        return await self._async_finish({CONF_PROVIDER: PROVIDER_KEYWORD})

    async def async_step_ollama(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask where the Ollama server is."""
        return await self._async_step_server(PROVIDER_OLLAMA, user_input)

    async def async_step_openai(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask where an OpenAI-compatible server is (OpenAI, llama.cpp, LocalAI, vLLM, LM Studio)."""
        return await self._async_step_server(PROVIDER_OPENAI, user_input)

    async def async_step_gemini(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for Google Gemini's API key."""
        return await self._async_step_server(PROVIDER_GEMINI, user_input)

    async def _async_step_server(
        self, provider: str, user_input: dict[str, Any] | None
    ) -> ConfigFlowResult:
        """Ask for URL and key; check them by listing the server's models."""
        errors: dict[str, str] = {}
        if user_input is not None:
            data: dict[str, Any] = {}
            try:
                data = self._server_data(provider, user_input)
                self._models = await _client(self.hass, data).list_models()
            except InvalidSettingError as err:
                errors[err.field] = err.key
            except (
                CannotConnectError,
                InvalidAuthError,
                ProviderTimeoutError,
                ServerError,
            ) as err:
                errors["base"] = _flow_error(err)
            except ProviderError:
                self._models = []  # it does not list models: type the name
            except Exception as err:  # noqa: BLE001 - a form error, never HTTP 500
                errors = _unexpected(err)
            if not errors:
                self._data = data
                return await self.async_step_model()
        return self.async_show_form(
            step_id=provider,
            data_schema=self.add_suggested_values_to_schema(
                self._server_schema(provider), user_input or self._current(provider)
            ),
            errors=errors,
        )

    def _server_schema(self, provider: str) -> probatio.Schema:
        url_field: Any = TextSelector(TextSelectorConfig(type=TextSelectorType.URL))
        known = _known_urls(self.hass) if provider == PROVIDER_OLLAMA else []
        if known:
            url_field = SelectSelector(
                SelectSelectorConfig(
                    options=known, custom_value=True, mode=SelectSelectorMode.DROPDOWN
                )
            )
        return probatio.Schema(
            {
                probatio.Required(
                    CONF_URL,
                    default=(known or [HTTP_PROVIDERS[provider].default_url])[0],
                ): url_field,
                probatio.Optional(CONF_API_KEY): TextSelector(
                    TextSelectorConfig(type=TextSelectorType.PASSWORD)
                ),
            }
        )

    def _current(self, provider: str) -> dict[str, Any]:
        """Suggest the entry's URL when reconfiguring the same provider.

        Never its key, nor a password in its URL: the URL is suggested
        without one, and submitting it unchanged (without a key) keeps it.
        """
        if self.source != SOURCE_RECONFIGURE:
            return {}
        data = self._get_reconfigure_entry().data
        if data.get(CONF_PROVIDER) != provider or CONF_URL not in data:
            return {}
        return {CONF_URL: _shown_url(self.hass, data)}

    def _server_data(self, provider: str, user_input: dict[str, Any]) -> dict[str, Any]:
        """Collect provider, URL and key; an empty key reuses one Home Assistant knows.

        Raises:
            InvalidSettingError: the URL or key cannot be used; nothing was sent.

        """
        typed = {
            CONF_PROVIDER: provider,
            CONF_URL: user_input.get(CONF_URL),
            CONF_API_KEY: str(user_input.get(CONF_API_KEY) or "").strip() or None,
        }
        client = _client(self.hass, typed)
        if client.invalid is not None:
            raise client.invalid
        key = typed[CONF_API_KEY]
        url = client.entry_url
        if url == client.url and not key:  # a typed key replaces a kept password
            url = self._kept_credentials(provider, client.url)
        data: dict[str, Any] = {CONF_PROVIDER: provider, CONF_URL: url}
        if url != client.url:  # basic auth (the client refused it beside a key)
            return data
        if key := key or self._known_key(provider, client.url):
            data[CONF_API_KEY] = key
        return data

    def _kept_credentials(self, provider: str, url: str) -> str:
        """Keep the entry's URL with its password, when reconfiguring to the same server."""
        if self.source == SOURCE_RECONFIGURE:
            data = self._get_reconfigure_entry().data
            if data.get(CONF_PROVIDER) == provider and CONF_URL in data:
                kept = _client(self.hass, data)
                if kept.invalid is None and kept.url == url:
                    return kept.entry_url
        return url

    def _known_key(self, provider: str, url: str) -> str | None:
        """Find a key the entry, or an Ollama / OpenAI / Gemini entry, already has."""
        candidates: list[Mapping[str, Any]] = []
        if self.source == SOURCE_RECONFIGURE:
            candidates.append(self._get_reconfigure_entry().data)
        if provider == PROVIDER_OLLAMA:
            candidates.extend(
                e.data for e in self.hass.config_entries.async_entries("ollama")
            )
        elif provider == PROVIDER_OPENAI and url == OPENAI_DEFAULT_URL:
            candidates.extend(
                {CONF_PROVIDER: provider, CONF_URL: url, **e.data}
                for e in self.hass.config_entries.async_entries("openai_conversation")
            )
        elif provider == PROVIDER_GEMINI:
            candidates.extend(
                {CONF_PROVIDER: provider, CONF_URL: url, **e.data}
                for e in self.hass.config_entries.async_entries(
                    "google_generative_ai_conversation"
                )
            )
        for data in candidates:
            same_url = str(data.get(CONF_URL, "")).rstrip("/") == url
            if data.get(CONF_PROVIDER, provider) == provider and same_url:
                if key := data.get(CONF_API_KEY):
                    return str(key)
        return None

    async def async_step_model(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Pick a model the server lists (or type one); check it with a real embedding."""
        errors: dict[str, str] = {}
        if user_input is not None:
            data = {**self._data, CONF_MODEL: str(user_input[CONF_MODEL]).strip()}
            try:
                dimensions = await probe_dimension(
                    _client(self.hass, data), self._models
                )
            except InvalidSettingError as err:
                errors[err.field] = err.key
            except ProviderError as err:
                errors["base"] = _flow_error(err)
            except Exception as err:  # noqa: BLE001 - a form error, never HTTP 500
                errors = _unexpected(err)
            else:
                return await self._async_finish({**data, CONF_DIMENSIONS: dimensions})
        provider = self._data[CONF_PROVIDER]
        names = [info.name for info in self._models]
        suggested = self._current_model(provider) or next(
            (name for name in names if looks_like_embedding_model(name)),
            HTTP_PROVIDERS[provider].default_model,
        )
        field: Any = TextSelector()
        if names:
            field = SelectSelector(
                SelectSelectorConfig(
                    options=names, custom_value=True, mode=SelectSelectorMode.DROPDOWN
                )
            )
        schema = probatio.Schema({probatio.Required(CONF_MODEL): field})
        return self.async_show_form(
            step_id="model",
            data_schema=self.add_suggested_values_to_schema(
                schema, user_input or {CONF_MODEL: suggested}
            ),
            errors=errors,
            description_placeholders={"url": _shown_url(self.hass, self._data)},
        )

    def _current_model(self, provider: str) -> str | None:
        if self.source != SOURCE_RECONFIGURE:
            return None
        data = self._get_reconfigure_entry().data
        return data.get(CONF_MODEL) if data.get(CONF_PROVIDER) == provider else None

    # -- the built-in model --------------------------------------------------

    async def async_step_local(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Say what the built-in model costs; download it, or copy it from a folder."""
        spec = MODEL_SPECS[DEFAULT_MODEL]
        errors: dict[str, str] = {}
        if user_input is not None:
            try:
                await async_local_requirements(self.hass)
            except RequirementsNotFound:
                return self.async_abort(reason="local_unavailable")
            folder = user_input.get(CONF_MODEL_FOLDER, "").strip()
            if not folder:
                return await self.async_step_local_download()
            try:
                await async_install_local_model(self.hass, spec, Path(folder))
            except (ModelFilesError, OSError, ValueError) as err:
                # ValueError: a path the system cannot name (NUL).
                LOGGER.warning("The model folder cannot be used: %s", err)
                errors[CONF_MODEL_FOLDER] = "model_folder_invalid"
            else:
                return await self.async_step_local_finish()
        return self.async_show_form(
            step_id="local",
            data_schema=self.add_suggested_values_to_schema(
                probatio.Schema({probatio.Optional(CONF_MODEL_FOLDER): TextSelector()}),
                user_input,
            ),
            errors=errors,
            description_placeholders=_local_costs(spec),
        )

    async def async_step_local_download(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Download the weights with progress (a broken download resumes)."""
        spec = MODEL_SPECS[DEFAULT_MODEL]
        if self._download is None:
            self._download = self.hass.async_create_task(
                self._async_download(spec), "memory model download"
            )
        if not self._download.done():
            return self.async_show_progress(
                step_id="local_download",
                progress_action="download",
                progress_task=self._download,
                description_placeholders=_local_costs(spec),
            )
        download, self._download = self._download, None
        try:
            download.result()
        except (ModelFilesError, OSError) as err:
            LOGGER.warning("Downloading the built-in model failed: %s", err)
            return self.async_show_progress_done(next_step_id="local_failed")
        return self.async_show_progress_done(next_step_id="local_finish")

    async def _async_download(self, spec: ModelSpec) -> None:
        await async_download_local_model(
            self.hass,
            spec,
            lambda progress: self.async_update_progress(progress.fraction),
        )

    async def async_step_local_failed(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Offer to try again after a failed download (what arrived is kept)."""
        if user_input is not None:
            return await self.async_step_local_download()
        return self.async_show_form(
            step_id="local_failed", errors={"base": "download_failed"}
        )

    async def async_step_local_finish(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Use the downloaded model; its files matched their pinned checksums."""
        spec = MODEL_SPECS[DEFAULT_MODEL]
        return await self._async_finish(
            {
                CONF_PROVIDER: PROVIDER_LOCAL,
                CONF_MODEL: spec.key,
                CONF_DIMENSIONS: spec.dims,
            }
        )

    # -- finishing -------------------------------------------------------------

    async def _async_finish(self, data: dict[str, Any]) -> ConfigFlowResult:
        if self.source == SOURCE_RECONFIGURE:
            self._data = data
            return await self.async_step_reconfigure_confirm()
        return self.async_create_entry(title="Assist Memory", data=data)

    async def async_step_reconfigure_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Say how many memories and messages will be re-embedded, then rebuild."""
        entry = self._get_reconfigure_entry()
        model = store_model(self._data)
        if user_input is not None or model is None or entry.state is not LOADED:
            return self.async_update_reload_and_abort(entry, data=self._data)
        store = entry.runtime_data.store
        count = await count_missing(store, model)
        messages = await count_missing(store, model, messages=True)
        return self.async_show_form(
            step_id="reconfigure_confirm",
            description_placeholders={
                "count": str(count),
                "messages": str(messages),
                "model": f"{self._data[CONF_PROVIDER]} {self._data[CONF_MODEL]}",
            },
        )

    # -- reauthentication -------------------------------------------------------

    async def async_step_reauth(
        self,
        entry_data: Mapping[str, Any],  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Start when the provider refuses the API key."""
        return await self.async_step_reauth_confirm()

    async def async_step_reauth_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for a new key and check it with a real embedding."""
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            data = dict(entry.data)
            data.pop(CONF_API_KEY, None)
            if key := str(user_input.get(CONF_API_KEY) or "").strip():
                data[CONF_API_KEY] = key
            try:
                client = await async_build_provider(self.hass, data)
                assert client is not None  # noqa: S101 - only providers reauthenticate
                await probe_dimension(client)
            except InvalidSettingError as err:
                # The form has the key only: the URL's faults go on the form.
                errors[CONF_API_KEY if err.field == CONF_API_KEY else "base"] = err.key
            except ProviderError as err:
                errors["base"] = _flow_error(err)
            except Exception as err:  # noqa: BLE001 - a form error, never HTTP 500
                errors = _unexpected(err)
            else:
                return self.async_update_reload_and_abort(entry, data=data)
        return self.async_show_form(
            step_id="reauth_confirm",
            data_schema=probatio.Schema(
                {
                    probatio.Optional(CONF_API_KEY): TextSelector(
                        TextSelectorConfig(type=TextSelectorType.PASSWORD)
                    )
                }
            ),
            errors=errors,
            description_placeholders={
                "provider": entry.data[CONF_PROVIDER],
                "url": _shown_url(self.hass, entry.data)
                if CONF_URL in entry.data
                else "",
            },
        )

    @staticmethod
    @callback
    def async_get_options_flow(
        config_entry: MemoryConfigEntry,  # noqa: ARG004 - fixed signature
    ) -> MemoryOptionsFlow:
        """Search defaults live in the options."""
        return MemoryOptionsFlow()


# Options flow, satellites step: a device, a person, mappings to remove.
CONF_SATELLITE = "satellite"
CONF_PERSON = "person"
CONF_REMOVE = "remove"
SATELLITE_DOMAIN = "assist_satellite"
# Options flow, init step: digestion's fields, in a collapsed section.
DIGESTION_SECTION = "digestion_options"
MAX_AI_TASK_CALLS_PER_HOUR = 1000
MAX_DIGEST_MIN_USER_WORDS = 200
# The numbers of each form; NaN passes a number selector's range check.
INIT_NUMBERS = (
    CONF_SEARCH_LIMIT,
    CONF_MIN_SCORE,
    CONF_RECALL_BUDGET,
    CONF_RECALL_MIN_SCORE,
    CONF_CONVERSATION_RETENTION_DAYS,
)
DIGESTION_NUMBERS = (
    CONF_AI_TASK_MAX_CALLS_PER_HOUR,
    CONF_DIGEST_IDLE_MINUTES,
    CONF_DIGEST_MIN_USER_WORDS,
)


def _not_finite(
    values: Mapping[str, Any], keys: tuple[str, ...], field: str | None = None
) -> dict[str, str]:
    """Form errors for numbers that are NaN (on `field`, else on their own field)."""
    return {
        field or key: "invalid_number"
        for key in keys
        if key in values and not math.isfinite(float(values[key]))
    }


class MemoryOptionsFlow(OptionsFlow):
    """Search defaults, Assist recall, conversation keeping, satellites."""

    def __init__(self) -> None:
        """Options collected over the steps."""
        self._options: dict[str, Any] = {}

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for search defaults, the recall budget and floor, and retention."""
        options = self.config_entry.options
        errors: dict[str, str] = {}
        if user_input is not None:
            errors = _not_finite(user_input, INIT_NUMBERS) | _not_finite(
                user_input.get(DIGESTION_SECTION, {}), DIGESTION_NUMBERS, "base"
            )
        if user_input is not None and not errors:
            self._options = {
                **options,
                CONF_SEARCH_LIMIT: int(user_input[CONF_SEARCH_LIMIT]),
                CONF_MIN_SCORE: float(user_input[CONF_MIN_SCORE]),
                CONF_RECALL_BUDGET: int(user_input[CONF_RECALL_BUDGET]),
                CONF_RECALL_MIN_SCORE: float(user_input[CONF_RECALL_MIN_SCORE]),
                CONF_CONVERSATION_RETENTION_DAYS: int(
                    user_input[CONF_CONVERSATION_RETENTION_DAYS]
                ),
                **self._digestion_options(user_input.get(DIGESTION_SECTION, {})),
            }
            if self._satellites() or options.get(CONF_SATELLITE_PERSONS):
                return await self.async_step_satellites()
            return self.async_create_entry(data=self._options)

        def number(key: str, default: float, config: NumberSelectorConfig) -> Any:
            return {
                probatio.Required(key, default=options.get(key, default)): (
                    NumberSelector(config)
                )
            }

        box = NumberSelectorMode.BOX
        slider = NumberSelectorMode.SLIDER
        schema = probatio.Schema(
            {
                **number(
                    CONF_SEARCH_LIMIT,
                    DEFAULT_SEARCH_LIMIT,
                    NumberSelectorConfig(min=1, max=MAX_SEARCH_LIMIT, step=1, mode=box),
                ),
                **number(
                    CONF_MIN_SCORE,
                    DEFAULT_MIN_SCORE,
                    NumberSelectorConfig(min=0, max=1, step=0.05, mode=slider),
                ),
                **number(
                    CONF_RECALL_BUDGET,
                    DEFAULT_RECALL_BUDGET,
                    NumberSelectorConfig(
                        min=0, max=MAX_RECALL_BUDGET, step=10, mode=box
                    ),
                ),
                **number(
                    CONF_RECALL_MIN_SCORE,
                    DEFAULT_RECALL_MIN_SCORE,
                    NumberSelectorConfig(min=0, max=1, step=0.05, mode=slider),
                ),
                **number(
                    CONF_CONVERSATION_RETENTION_DAYS,
                    DEFAULT_CONVERSATION_RETENTION_DAYS,
                    NumberSelectorConfig(
                        min=0,
                        max=MAX_CONVERSATION_RETENTION_DAYS,
                        step=1,
                        mode=box,
                        unit_of_measurement="d",
                    ),
                ),
                probatio.Optional(DIGESTION_SECTION, default={}): section(
                    self._digestion_schema(), {"collapsed": True}
                ),
            }
        )
        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(schema, user_input or {}),
            errors=errors,
        )

    def _digestion_schema(self) -> probatio.Schema:
        """Digestion: on/off, the AI Task entity and its cap, triggers, opt-outs."""
        options = self.config_entry.options

        def number(key: str, default: int, low: int, high: int, unit: str) -> Any:
            return {
                probatio.Required(key, default=options.get(key, default)): (
                    NumberSelector(
                        NumberSelectorConfig(
                            min=low,
                            max=high,
                            step=1,
                            mode=NumberSelectorMode.BOX,
                            unit_of_measurement=unit,
                        )
                    )
                )
            }

        return probatio.Schema(
            {
                probatio.Required(
                    CONF_DIGESTION, default=options.get(CONF_DIGESTION, True)
                ): BooleanSelector(),
                # Empty: Home Assistant's preferred AI Task entity.
                probatio.Optional(
                    CONF_AI_TASK_ENTITY,
                    description={
                        "suggested_value": options.get(CONF_AI_TASK_ENTITY) or None
                    },
                ): EntitySelector(EntitySelectorConfig(domain="ai_task")),
                **number(
                    CONF_AI_TASK_MAX_CALLS_PER_HOUR,
                    DEFAULT_AI_TASK_MAX_CALLS_PER_HOUR,
                    1,
                    MAX_AI_TASK_CALLS_PER_HOUR,
                    "calls",
                ),
                **number(
                    CONF_DIGEST_IDLE_MINUTES,
                    DEFAULT_DIGEST_IDLE_MINUTES,
                    0,
                    MAX_DIGEST_IDLE_MINUTES,
                    "min",
                ),
                **number(
                    CONF_DIGEST_MIN_USER_WORDS,
                    DEFAULT_DIGEST_MIN_USER_WORDS,
                    0,
                    MAX_DIGEST_MIN_USER_WORDS,
                    "words",
                ),
                probatio.Required(
                    CONF_DIGEST_SKIP_AGENTS,
                    default=list(options.get(CONF_DIGEST_SKIP_AGENTS, [])),
                ): EntitySelector(
                    EntitySelectorConfig(domain="conversation", multiple=True)
                ),
                probatio.Required(
                    CONF_DIGEST_SKIP_DEVICES,
                    default=list(options.get(CONF_DIGEST_SKIP_DEVICES, [])),
                ): DeviceSelector(
                    DeviceSelectorConfig(
                        entity=[EntityFilterSelectorConfig(domain=SATELLITE_DOMAIN)],
                        multiple=True,
                    )
                ),
            }
        )

    def _digestion_options(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Flatten the section into options, with ints where counts belong."""
        values = self._digestion_schema()(dict(values))
        return {
            CONF_DIGESTION: bool(values[CONF_DIGESTION]),
            CONF_AI_TASK_ENTITY: values.get(CONF_AI_TASK_ENTITY) or "",
            CONF_AI_TASK_MAX_CALLS_PER_HOUR: int(
                values[CONF_AI_TASK_MAX_CALLS_PER_HOUR]
            ),
            CONF_DIGEST_IDLE_MINUTES: int(values[CONF_DIGEST_IDLE_MINUTES]),
            CONF_DIGEST_MIN_USER_WORDS: int(values[CONF_DIGEST_MIN_USER_WORDS]),
            CONF_DIGEST_SKIP_AGENTS: list(values[CONF_DIGEST_SKIP_AGENTS]),
            CONF_DIGEST_SKIP_DEVICES: list(values[CONF_DIGEST_SKIP_DEVICES]),
        }

    async def async_step_satellites(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Map a voice satellite to a person, or drop mappings."""
        mapping: dict[str, str] = dict(self._options.get(CONF_SATELLITE_PERSONS, {}))
        errors: dict[str, str] = {}
        if user_input is not None:
            satellite = user_input.get(CONF_SATELLITE)
            person = user_input.get(CONF_PERSON)
            if bool(satellite) != bool(person):
                errors["base"] = "satellite_needs_person"
            elif satellite and satellite not in self._satellites():
                errors[CONF_SATELLITE] = "satellite_unknown"
            else:
                for device_id in user_input.get(CONF_REMOVE, []):
                    mapping.pop(device_id, None)
                if satellite and person:
                    mapping[satellite] = person
                return self.async_create_entry(
                    data={**self._options, CONF_SATELLITE_PERSONS: mapping}
                )
        schema: dict[probatio.Marker, Any] = {
            probatio.Optional(CONF_SATELLITE): DeviceSelector(
                DeviceSelectorConfig(
                    entity=[EntityFilterSelectorConfig(domain=SATELLITE_DOMAIN)]
                )
            ),
            probatio.Optional(CONF_PERSON): EntitySelector(
                EntitySelectorConfig(domain="person")
            ),
        }
        labels = {
            device_id: f"{self._device_name(device_id)} → {self._person_name(person)}"
            for device_id, person in mapping.items()
        }
        if mapping:
            schema[probatio.Optional(CONF_REMOVE)] = SelectSelector(
                SelectSelectorConfig(
                    options=[
                        SelectOptionDict(value=device_id, label=label)
                        for device_id, label in labels.items()
                    ],
                    multiple=True,
                )
            )
        return self.async_show_form(
            step_id="satellites",
            data_schema=probatio.Schema(schema),
            errors=errors,
            description_placeholders={
                "mappings": "\n".join(f"- {label}" for label in labels.values()) or "-"
            },
        )

    def _satellites(self) -> set[str]:
        """Devices that have a voice satellite entity."""
        return {
            entity.device_id
            for entity in er.async_get(self.hass).entities.values()
            if entity.domain == SATELLITE_DOMAIN and entity.device_id is not None
        }

    def _device_name(self, device_id: str) -> str:
        device = dr.async_get(self.hass).async_get(device_id)
        if device is None:
            return device_id
        return device.name_by_user or device.name or device_id

    def _person_name(self, person: str) -> str:
        state = self.hass.states.get(person)
        return state.name if state is not None else person
