"""The options flow: search defaults, Assist recall, digestion, satellites.

The forms' schemas are built by module functions from the current options;
the flow itself validates, flattens and stores what was submitted.
"""

from __future__ import annotations

from collections.abc import Mapping
import math
from typing import Any

from homeassistant.config_entries import ConfigFlowResult, OptionsFlow
from homeassistant.data_entry_flow import section
from homeassistant.helpers import device_registry as dr, entity_registry as er
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
)
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
    CONF_MIN_SCORE,
    CONF_RECALL_BUDGET,
    CONF_RECALL_EARLIER_HOURS,
    CONF_RECALL_FOLLOW_UPS,
    CONF_RECALL_KEEP,
    CONF_RECALL_MIN_SCORE,
    CONF_SATELLITE_PERSONS,
    CONF_SEARCH_LIMIT,
    DEFAULT_AI_TASK_MAX_CALLS_PER_HOUR,
    DEFAULT_CONVERSATION_RETENTION_DAYS,
    DEFAULT_DIGEST_IDLE_MINUTES,
    DEFAULT_DIGEST_MIN_USER_WORDS,
    DEFAULT_MIN_SCORE,
    DEFAULT_RECALL_BUDGET,
    DEFAULT_RECALL_EARLIER_HOURS,
    DEFAULT_RECALL_FOLLOW_UPS,
    DEFAULT_RECALL_KEEP,
    DEFAULT_RECALL_MIN_SCORE,
    DEFAULT_SEARCH_LIMIT,
    MAX_CONVERSATION_RETENTION_DAYS,
    MAX_DIGEST_IDLE_MINUTES,
    MAX_RECALL_BUDGET,
    MAX_RECALL_EARLIER_HOURS,
)
from .engine import MAX_SEARCH_LIMIT

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
    CONF_RECALL_EARLIER_HOURS,
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


def init_schema(options: Mapping[str, Any]) -> probatio.Schema:
    """Build the first form: search defaults, recall, retention, digestion."""

    def number(key: str, default: float, config: NumberSelectorConfig) -> Any:
        return {
            probatio.Required(key, default=options.get(key, default)): (
                NumberSelector(config)
            )
        }

    box = NumberSelectorMode.BOX
    slider = NumberSelectorMode.SLIDER
    return probatio.Schema(
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
                NumberSelectorConfig(min=0, max=MAX_RECALL_BUDGET, step=10, mode=box),
            ),
            **number(
                CONF_RECALL_MIN_SCORE,
                DEFAULT_RECALL_MIN_SCORE,
                NumberSelectorConfig(min=0, max=1, step=0.05, mode=slider),
            ),
            # Across a conversation (engine/recall/turn.py).
            probatio.Required(
                CONF_RECALL_FOLLOW_UPS,
                default=options.get(CONF_RECALL_FOLLOW_UPS, DEFAULT_RECALL_FOLLOW_UPS),
            ): BooleanSelector(),
            probatio.Required(
                CONF_RECALL_KEEP,
                default=options.get(CONF_RECALL_KEEP, DEFAULT_RECALL_KEEP),
            ): BooleanSelector(),
            **number(
                CONF_RECALL_EARLIER_HOURS,
                DEFAULT_RECALL_EARLIER_HOURS,
                NumberSelectorConfig(
                    min=0,
                    max=MAX_RECALL_EARLIER_HOURS,
                    step=1,
                    mode=box,
                    unit_of_measurement="h",
                ),
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
                digestion_schema(options), {"collapsed": True}
            ),
        }
    )


def digestion_schema(options: Mapping[str, Any]) -> probatio.Schema:
    """Digestion: on/off, the AI Task entity and its cap, triggers, opt-outs."""

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
                CONF_RECALL_FOLLOW_UPS: bool(user_input[CONF_RECALL_FOLLOW_UPS]),
                CONF_RECALL_KEEP: bool(user_input[CONF_RECALL_KEEP]),
                CONF_RECALL_EARLIER_HOURS: int(user_input[CONF_RECALL_EARLIER_HOURS]),
                CONF_CONVERSATION_RETENTION_DAYS: int(
                    user_input[CONF_CONVERSATION_RETENTION_DAYS]
                ),
                **self._digestion_options(user_input.get(DIGESTION_SECTION, {})),
            }
            if self._satellites() or options.get(CONF_SATELLITE_PERSONS):
                return await self.async_step_satellites()
            return self.async_create_entry(data=self._options)

        schema = init_schema(options)
        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(schema, user_input or {}),
            errors=errors,
        )

    def _digestion_options(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Flatten the section into options, with ints where counts belong."""
        values = digestion_schema(self.config_entry.options)(dict(values))
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
