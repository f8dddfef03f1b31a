"""The config flow's storage steps: where memories are kept, and moving them (#26).

`StorageFlow` is the base of `config_flow.MemoryConfigFlow`. Set-up starts
with a menu: this Home Assistant (SQLite, the default) or a PostgreSQL
server, whose URL (as the recorder's `db_url`) is checked with
`check_server` before the provider menu; each problem has its own
translated error saying what is missing and how to add it. Reconfigure
offers the provider steps or the storage step, which checks a new server
the same way and then moves the memories with progress (`move.async_move`)
or, when the PostgreSQL database holds memories already, offers to use
them instead (how a second Home Assistant joins a shared memory).

A stored password is never shown: the storage form shows the entry's URL
as `redact_url` does (a move between two PostgreSQL servers is not offered:
move to SQLite first), and the provider steps keep `backend`/`db_url`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from homeassistant.config_entries import ConfigFlow, ConfigFlowResult
from homeassistant.data_entry_flow import AbortFlow
from homeassistant.helpers.selector import (
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
)
from homeassistant.requirements import RequirementsNotFound
import probatio

from .backend import async_install_driver, entry_backend
from .const import BACKEND_POSTGRESQL, BACKEND_SQLITE, CONF_BACKEND, CONF_DB_URL, LOGGER
from .engine.postgres import check_server, redact_url
from .move import MoveResult, async_move, async_target_holds_memories, move_error

# The storage step's choices (its selector's options), this Home Assistant first.
BACKENDS = [BACKEND_SQLITE, BACKEND_POSTGRESQL]
EXAMPLE_URL = "postgresql://user:password@host:5432/memory"


def _url_schema() -> probatio.Schema:
    return probatio.Schema({probatio.Required(CONF_DB_URL): TextSelector()})


def _storage_schema() -> probatio.Schema:
    return probatio.Schema(
        {
            probatio.Required(CONF_BACKEND, default=BACKEND_SQLITE): SelectSelector(
                SelectSelectorConfig(
                    options=BACKENDS,
                    translation_key="backend",
                    mode=SelectSelectorMode.LIST,
                )
            ),
            probatio.Optional(CONF_DB_URL): TextSelector(),
        }
    )


class StorageFlow(ConfigFlow):
    """The storage steps; `async_step_provider` (the subclass's) follows set-up."""

    _storage: dict[str, Any] | None = None
    _move_url: str | None
    _move_copy: bool
    _move_task: asyncio.Task[MoveResult] | None = None
    _moved: MoveResult | None = None

    async def async_step_provider(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Offer the embedding providers (the subclass shows them)."""
        raise NotImplementedError

    def setup_data(self, data: dict[str, Any]) -> dict[str, Any]:
        """Return a new entry's data: the storage chosen, then the provider's keys."""
        return {**(self._storage or {}), **data}

    def reconfigured_data(self, data: dict[str, Any]) -> dict[str, Any]:
        """Return provider data for a reconfigured entry, keeping where its memories are."""
        kept = self._get_reconfigure_entry().data
        return {
            **data,
            **{k: kept[k] for k in (CONF_BACKEND, CONF_DB_URL) if k in kept},
        }

    # -- set-up ---------------------------------------------------------------

    async def async_step_user(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Ask where memories are kept: this Home Assistant first."""
        self._storage = {}
        return self.async_show_menu(step_id="user", menu_options=BACKENDS)

    async def async_step_sqlite(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Keep memories in the configuration folder (entries without a backend do)."""
        self._storage = {CONF_BACKEND: BACKEND_SQLITE}
        return await self.async_step_provider()

    async def async_step_postgresql(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the server's URL and check it before the providers."""
        errors: dict[str, str] = {}
        if user_input is not None:
            url = str(user_input.get(CONF_DB_URL) or "").strip()
            if (error := await self._check(url)) is not None:
                errors["base"] = error
            else:
                self._storage = {CONF_BACKEND: BACKEND_POSTGRESQL, CONF_DB_URL: url}
                return await self.async_step_provider()
        return self.async_show_form(
            step_id="postgresql",
            data_schema=_url_schema(),
            errors=errors,
            description_placeholders={"example": EXAMPLE_URL},
        )

    async def _check(self, url: str) -> str | None:
        """Check a server URL; name the form error, None when it can be used.

        Raises:
            AbortFlow: asyncpg cannot be installed on this system.

        """
        try:
            await async_install_driver(self.hass)
        except RequirementsNotFound as err:
            raise AbortFlow("driver_unavailable") from err
        check = await check_server(url)
        if check.ok:
            return None
        LOGGER.debug("%s cannot be used: %s", redact_url(url), check.message)
        return f"pg_{check.problem}"

    # -- reconfigure ------------------------------------------------------------

    async def async_step_reconfigure(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Change the embedding provider, or where memories are kept."""
        return self.async_show_menu(
            step_id="reconfigure", menu_options=["provider", "storage"]
        )

    async def async_step_storage(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Choose the other backend; check a server; then move (or use what is there)."""
        entry = self._get_reconfigure_entry()
        current = entry_backend(entry.data)
        stored = str(entry.data.get(CONF_DB_URL) or "")
        errors: dict[str, str] = {}
        if user_input is not None:
            backend = str(user_input.get(CONF_BACKEND) or BACKEND_SQLITE)
            url = str(user_input.get(CONF_DB_URL) or "").strip()
            if backend == current:
                errors["base"] = "storage_unchanged"
            elif backend == BACKEND_SQLITE:
                return await self._async_start_move(None, copy=True)
            elif (error := await self._check(url)) is not None:
                errors["base"] = error
            elif await self._holds_memories(url, errors):
                self._move_url = url
                return await self.async_step_storage_existing()
            elif not errors:
                return await self._async_start_move(url, copy=True)
        suggested = {CONF_BACKEND: current}
        if stored:
            suggested[CONF_DB_URL] = redact_url(stored)
        return self.async_show_form(
            step_id="storage",
            data_schema=self.add_suggested_values_to_schema(
                _storage_schema(), suggested
            ),
            errors=errors,
            description_placeholders={"example": EXAMPLE_URL},
        )

    async def _holds_memories(self, url: str, errors: dict[str, str]) -> bool:
        try:
            return await async_target_holds_memories(url)
        except Exception as err:  # noqa: BLE001 - a form error, never HTTP 500
            LOGGER.debug("Reading %s failed: %s", redact_url(url), type(err).__name__)
            errors["base"] = "pg_no_access"
            return False

    async def async_step_storage_existing(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Offer the memories already in the database (no copy), or go back."""
        return self.async_show_menu(
            step_id="storage_existing",
            menu_options=["storage_use_existing", "storage"],
        )

    async def async_step_storage_use_existing(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Use the memories the database holds; this one's stay in its file."""
        return await self._async_start_move(self._move_url, copy=False)

    async def _async_start_move(
        self, url: str | None, *, copy: bool
    ) -> ConfigFlowResult:
        self._move_url = url
        self._move_copy = copy
        self._move_task = None
        return await self.async_step_move()

    async def async_step_move(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Copy with progress: the entry is unloaded meanwhile and loaded after."""
        entry = self._get_reconfigure_entry()
        if self._move_task is None:
            self._move_task = self.hass.async_create_task(
                async_move(self.hass, entry, self._move_url, copy=self._move_copy),
                "memory move",
            )
        if not self._move_task.done():
            target = redact_url(self._move_url) if self._move_url else "SQLite"
            return self.async_show_progress(
                step_id="move",
                progress_action="move",
                progress_task=self._move_task,
                description_placeholders={"target": target},
            )
        self._moved = self._move_task.result()
        return self.async_show_progress_done(next_step_id="move_done")

    async def async_step_move_done(
        self,
        user_input: dict[str, Any] | None = None,  # noqa: ARG002 - fixed signature
    ) -> ConfigFlowResult:
        """Say what was moved and what was kept, or why nothing was."""
        moved = self._moved or MoveResult()
        if moved.error is not None:
            reason, placeholders = move_error(moved.error)
            return self.async_abort(
                reason=reason, description_placeholders=placeholders
            )
        if not self._move_copy:
            return self.async_abort(reason="storage_joined")
        reason = "moved_kept_sqlite" if self._move_url else "moved_kept_postgresql"
        placeholders = dict(moved.counts)
        if moved.set_aside is not None:
            reason += "_aside"
            placeholders["aside"] = moved.set_aside.name
        return self.async_abort(reason=reason, description_placeholders=placeholders)
