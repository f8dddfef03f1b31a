"""Set-up, reconfigure and reauth flows (the options flow is `options_flow.py`).

Set-up first asks where memories are kept (`storage_flow.StorageFlow`, the
base class, also moves them on reconfigure), then offers the embedding
providers in a menu: the built-in model
(downloaded with progress), a server (URL and key, then a model from the list
the server gives, checked with a real embedding), or keyword search in one
click, which needs nothing outside Home Assistant.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from homeassistant.config_entries import (
    SOURCE_RECONFIGURE,
    ConfigEntryState,
    ConfigFlowResult,
)
from homeassistant.const import CONF_API_KEY, CONF_URL
from homeassistant.core import callback
from homeassistant.helpers.selector import (
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
    CONF_DIMENSIONS,
    CONF_MODEL,
    CONF_MODEL_FOLDER,
    CONF_PROVIDER,
    DOMAIN,
    LOGGER,
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
from .engine.embedding import (
    HTTP_PROVIDERS,
    MODEL_SPECS,
    OPENAI_DEFAULT_URL,
    CannotConnectError,
    InvalidAuthError,
    InvalidSettingError,
    ModelFilesError,
    ModelInfo,
    ModelSpec,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
    count_missing,
    default_model_for,
    looks_like_embedding_model,
    probe_dimension,
)
from .options_flow import MemoryOptionsFlow
from .provider_forms import (
    flow_error,
    local_costs,
    local_schema,
    provider_client,
    server_schema,
    shown_url,
    unexpected_error,
)
from .runtime import MemoryConfigEntry
from .storage_flow import StorageFlow

# The built-in model first (recommended), keyword search last (one click).
PROVIDER_MENU = [
    PROVIDER_LOCAL,
    PROVIDER_OLLAMA,
    PROVIDER_OPENAI,
    PROVIDER_GEMINI,
    PROVIDER_KEYWORD,
]
LOADED = ConfigEntryState.LOADED


class MemoryConfigFlow(StorageFlow, domain=DOMAIN):
    """One entry (the manifest says single_config_entry); the provider is chosen here."""

    VERSION = 1
    MINOR_VERSION = 1

    def __init__(self) -> None:
        """Nothing chosen yet."""
        self._data: dict[str, Any] = {}
        self._models: list[ModelInfo] = []
        self._download: asyncio.Task[None] | None = None
        self._spec: ModelSpec | None = None

    # -- choosing a provider ------------------------------------------------

    async def async_step_provider(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Offer the providers: the built-in model first, keyword search last."""
        return self._provider_menu("provider")

    def _provider_menu(self, step_id: str) -> ConfigFlowResult:
        spec = MODEL_SPECS[self._suggested_local_model()]
        return self.async_show_menu(
            step_id=step_id,
            menu_options=PROVIDER_MENU,
            description_placeholders=local_costs(spec),
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
                self._models = await provider_client(self.hass, data).list_models()
            except InvalidSettingError as err:
                errors[err.field] = err.key
            except (
                CannotConnectError,
                InvalidAuthError,
                ProviderTimeoutError,
                ServerError,
            ) as err:
                errors["base"] = flow_error(err)
            except ProviderError:
                self._models = []  # it does not list models: type the name
            except Exception as err:  # noqa: BLE001 - a form error, never HTTP 500
                errors = unexpected_error(err)
            if not errors:
                self._data = data
                return await self.async_step_model()
        return self.async_show_form(
            step_id=provider,
            data_schema=self.add_suggested_values_to_schema(
                server_schema(self.hass, provider),
                user_input or self._current(provider),
            ),
            errors=errors,
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
        return {CONF_URL: shown_url(self.hass, data)}

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
        client = provider_client(self.hass, typed)
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
                kept = provider_client(self.hass, data)
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
                    provider_client(self.hass, data), self._models
                )
            except InvalidSettingError as err:
                errors[err.field] = err.key
            except ProviderError as err:
                errors["base"] = flow_error(err)
            except Exception as err:  # noqa: BLE001 - a form error, never HTTP 500
                errors = unexpected_error(err)
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
            description_placeholders={"url": shown_url(self.hass, self._data)},
        )

    def _current_model(self, provider: str) -> str | None:
        if self.source != SOURCE_RECONFIGURE:
            return None
        data = self._get_reconfigure_entry().data
        return data.get(CONF_MODEL) if data.get(CONF_PROVIDER) == provider else None

    # -- the built-in model --------------------------------------------------

    def _suggested_local_model(self) -> str:
        """Suggest the entry's built-in model when reconfiguring one, else by language.

        Home Assistant's language picks the default: English keeps the small
        English model, every other language gets the multilingual one.
        """
        if self.source == SOURCE_RECONFIGURE:
            data = self._get_reconfigure_entry().data
            if data.get(CONF_PROVIDER) == PROVIDER_LOCAL and (
                data.get(CONF_MODEL) in MODEL_SPECS
            ):
                return str(data[CONF_MODEL])
        return default_model_for(self.hass.config.language)

    async def async_step_local(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Offer the built-in models with their costs; download one, or copy it."""
        suggested = self._suggested_local_model()
        errors: dict[str, str] = {}
        if user_input is not None:
            spec = MODEL_SPECS[str(user_input.get(CONF_MODEL) or suggested)]
            self._spec = spec
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
                local_schema(suggested), user_input
            ),
            errors=errors,
            description_placeholders=local_costs(MODEL_SPECS[suggested]),
        )

    async def async_step_local_download(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Download the weights with progress (a broken download resumes)."""
        spec = self._chosen_spec()
        if self._download is None:
            self._download = self.hass.async_create_task(
                self._async_download(spec), "memory model download"
            )
        if not self._download.done():
            return self.async_show_progress(
                step_id="local_download",
                progress_action="download",
                progress_task=self._download,
                description_placeholders=local_costs(spec),
            )
        download, self._download = self._download, None
        try:
            download.result()
        except (ModelFilesError, OSError) as err:
            LOGGER.warning("Downloading the built-in model failed: %s", err)
            return self.async_show_progress_done(next_step_id="local_failed")
        return self.async_show_progress_done(next_step_id="local_finish")

    def _chosen_spec(self) -> ModelSpec:
        return self._spec or MODEL_SPECS[self._suggested_local_model()]

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
        spec = self._chosen_spec()
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
            self._data = self.reconfigured_data(data)
            return await self.async_step_reconfigure_confirm()
        return self.async_create_entry(
            title="Assist Memory", data=self.setup_data(data)
        )

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
                errors["base"] = flow_error(err)
            except Exception as err:  # noqa: BLE001 - a form error, never HTTP 500
                errors = unexpected_error(err)
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
                "url": shown_url(self.hass, entry.data)
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
