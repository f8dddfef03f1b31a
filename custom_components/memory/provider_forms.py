"""The provider forms' parts: errors shown, the server form, and HTTP clients.

What the set-up and reconfigure steps of `config_flow.py` share about an
embedding server: which failures a form names, how a URL is shown (without a
password), the Ollama servers Home Assistant already knows, and the built-in
models: their costs and the form that picks one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.const import CONF_API_KEY, CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.selector import (
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
import probatio

from .const import CONF_MODEL, CONF_MODEL_FOLDER, CONF_PROVIDER, LOGGER, PROVIDER_OLLAMA
from .engine.embedding import (
    HTTP_PROVIDERS,
    MODEL_SPECS,
    HttpProvider,
    ModelSpec,
    ProviderError,
)

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
# Resident memory of each loaded built-in model: the peak RSS `bench/encoder.py`
# measures (65 and 133 MB, docs/benchmarks/encoder.md), with room to spare.
LOCAL_MEMORY_MB = {"all-MiniLM-L6-v2": 100, "multilingual-e5-small": 150}
# The built-in models in the form's order, English first.
LOCAL_MODELS = list(MODEL_SPECS)


def flow_error(err: ProviderError) -> str:
    """Name the form error a provider failure shows (cannot_connect if none)."""
    return err.key if err.key in FLOW_ERRORS else "cannot_connect"


def unexpected_error(err: Exception) -> dict[str, str]:
    """Report a failure nothing names (a bug): on the form, and its type in the log.

    The traceback goes to DEBUG only: a library's message may repeat a URL
    with its password.
    """
    LOGGER.error("Unexpected error checking the provider: %s", type(err).__name__)
    LOGGER.debug("Unexpected error checking the provider", exc_info=err)
    return {"base": "unknown"}


def provider_client(hass: HomeAssistant, data: Mapping[str, Any]) -> HttpProvider:
    """Build the HTTP provider `data` describes (its default model if none is chosen)."""
    kind = HTTP_PROVIDERS[data[CONF_PROVIDER]]
    return kind.factory(
        async_get_clientsession(hass),
        model=str(data[CONF_MODEL]) if CONF_MODEL in data else kind.default_model,
        url=data.get(CONF_URL) or kind.default_url,
        api_key=data.get(CONF_API_KEY),
    )


def shown_url(hass: HomeAssistant, data: Mapping[str, Any]) -> str:
    """Show an entry's URL as forms do: normalized, without a password."""
    return provider_client(hass, data).url


def local_costs(spec: ModelSpec) -> dict[str, str]:
    """Describe what the built-in model costs: its download and its memory."""
    return {
        "model": spec.key,
        "size": str(round(spec.total_size / 1_000_000)),
        "memory": str(LOCAL_MEMORY_MB.get(spec.key, 150)),
    }


def local_schema(suggested: str) -> probatio.Schema:
    """Build the built-in model's form: which model, and an optional folder."""
    return probatio.Schema(
        {
            probatio.Required(CONF_MODEL, default=suggested): SelectSelector(
                SelectSelectorConfig(
                    options=LOCAL_MODELS,
                    translation_key="local_model",
                    mode=SelectSelectorMode.LIST,
                )
            ),
            probatio.Optional(CONF_MODEL_FOLDER): TextSelector(),
        }
    )


def known_urls(hass: HomeAssistant) -> list[str]:
    """Ollama servers Home Assistant's Ollama integration already uses."""
    return list(
        dict.fromkeys(
            str(entry.data[CONF_URL]).rstrip("/")
            for entry in hass.config_entries.async_entries("ollama")
            if entry.data.get(CONF_URL)
        )
    )


def server_schema(hass: HomeAssistant, provider: str) -> probatio.Schema:
    """Build the server form: its URL (known Ollama servers offered), and a key."""
    url_field: Any = TextSelector(TextSelectorConfig(type=TextSelectorType.URL))
    known = known_urls(hass) if provider == PROVIDER_OLLAMA else []
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
