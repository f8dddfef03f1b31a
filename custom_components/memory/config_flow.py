"""Set-up and options flows.

Keyword search needs nothing outside Home Assistant, so set-up is one
confirmation; embedding providers add their own steps.
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigFlow, ConfigFlowResult, OptionsFlow
from homeassistant.core import callback
from homeassistant.helpers.selector import (
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
)
import probatio

from .const import (
    CONF_MIN_SCORE,
    CONF_PROVIDER,
    CONF_SEARCH_LIMIT,
    DEFAULT_MIN_SCORE,
    DEFAULT_SEARCH_LIMIT,
    DOMAIN,
    PROVIDER_KEYWORD,
)
from .coordinator import MemoryConfigEntry
from .engine import MAX_SEARCH_LIMIT


class MemoryConfigFlow(ConfigFlow, domain=DOMAIN):
    """One entry (the manifest says single_config_entry)."""

    VERSION = 1
    MINOR_VERSION = 1

    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Confirm keyword-only memory, which works without any other service."""
        if user_input is not None:
            return self.async_create_entry(
                title="Assist Memory", data={CONF_PROVIDER: PROVIDER_KEYWORD}
            )
        return self.async_show_form(step_id="user")

    @staticmethod
    @callback
    def async_get_options_flow(
        config_entry: MemoryConfigEntry,  # noqa: ARG004 - fixed signature
    ) -> MemoryOptionsFlow:
        """Search defaults live in the options."""
        return MemoryOptionsFlow()


class MemoryOptionsFlow(OptionsFlow):
    """Defaults that `memory.search` uses when a call does not say."""

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the result limit and minimum score."""
        if user_input is not None:
            return self.async_create_entry(
                data={
                    CONF_SEARCH_LIMIT: int(user_input[CONF_SEARCH_LIMIT]),
                    CONF_MIN_SCORE: float(user_input[CONF_MIN_SCORE]),
                }
            )
        options = self.config_entry.options
        schema = probatio.Schema(
            {
                probatio.Required(
                    CONF_SEARCH_LIMIT,
                    default=options.get(CONF_SEARCH_LIMIT, DEFAULT_SEARCH_LIMIT),
                ): NumberSelector(
                    NumberSelectorConfig(
                        min=1, max=MAX_SEARCH_LIMIT, step=1, mode=NumberSelectorMode.BOX
                    )
                ),
                probatio.Required(
                    CONF_MIN_SCORE,
                    default=options.get(CONF_MIN_SCORE, DEFAULT_MIN_SCORE),
                ): NumberSelector(
                    NumberSelectorConfig(
                        min=0, max=1, step=0.05, mode=NumberSelectorMode.SLIDER
                    )
                ),
            }
        )
        return self.async_show_form(step_id="init", data_schema=schema)
