"""Which storage backend an entry uses, its driver, and opening its store (#26).

SQLite in the config folder is the default and needs nothing more
(`database_path`). A PostgreSQL server needs asyncpg, which is not in the
manifest's requirements (most homes never use it): `async_install_driver`
installs it the first time the config flow or set-up needs it, as Home
Assistant installs an integration's requirements. `async_open_store`
opens the store an entry's data names; on PostgreSQL it names the store
after Home Assistant's instance id (embedding-job and digestion claims
survive a restart) and never waits longer than `OPEN_TIMEOUT` for the
server: Home Assistant retries set-up by itself. The server is only ever
named through `redact_url`, never with its password. A role that may
connect but not create or read the tables is a translated set-up error
(`postgresql_no_access`), not a retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryError, ConfigEntryNotReady
from homeassistant.helpers import instance_id
from homeassistant.requirements import RequirementsNotFound, async_process_requirements
from homeassistant.util import dt as dt_util

from .const import (
    BACKEND_POSTGRESQL,
    BACKEND_SQLITE,
    CONF_BACKEND,
    CONF_DB_URL,
    DATABASE_FILE,
    DATABASE_FOLDER,
    DOMAIN,
)
from .embedding import store_model
from .engine import (
    DatabaseCorruptError,
    DatabaseTooNewError,
    DatabaseUnavailableError,
    MemoryStore,
    StoreError,
)
from .engine.postgres import (
    COMMAND_TIMEOUT,
    CONNECT_TIMEOUT,
    AnyStore,
    PostgresStore,
    redact_url,
)
from .repairs import async_clear_database_corrupt, async_raise_database_corrupt
from .vector_backend import async_vector_backend_available

# asyncpg: native asyncio, LISTEN/NOTIFY for the other instances' writes,
# and cp314 wheels for manylinux and musllinux on x86_64 and aarch64 (Home
# Assistant OS). The same pin as requirements_test.txt.
POSTGRES_REQUIREMENTS: Final = ["asyncpg==0.32.0"]

# Longest set-up waits for a PostgreSQL server before Home Assistant retries.
OPEN_TIMEOUT: Final = 10.0
# A loaded store's bounds, `CONNECT_TIMEOUT` (each connection attempt) and
# `COMMAND_TIMEOUT` (each query or wait for a pooled connection), are the
# engine's, imported above: not options, but names of this module that
# tests make short.


def entry_backend(data: Mapping[str, Any]) -> str:
    """Return the backend an entry's data names: SQLite unless it says PostgreSQL."""
    return str(data.get(CONF_BACKEND, BACKEND_SQLITE))


def uses_postgresql(data: Mapping[str, Any]) -> bool:
    """Whether an entry's memories live on a PostgreSQL server."""
    return entry_backend(data) == BACKEND_POSTGRESQL


def database_path(hass: HomeAssistant) -> Path:
    """Where the SQLite database lives: in the config folder, so backups keep it."""
    return Path(hass.config.path(DATABASE_FOLDER, DATABASE_FILE))


async def async_install_driver(hass: HomeAssistant) -> None:
    """Install asyncpg; raises `RequirementsNotFound` if it cannot be."""
    await async_process_requirements(
        hass, DOMAIN, POSTGRES_REQUIREMENTS, is_built_in=False
    )


async def async_instance_name(hass: HomeAssistant) -> str:
    """Name this Home Assistant in a shared database: stable across restarts."""
    return f"ha-{await instance_id.async_get(hass)}"


def _clock() -> float:
    """Home Assistant's clock, which also dates `expires_in` in the actions."""
    return dt_util.utcnow().timestamp()


async def async_open_store(hass: HomeAssistant, entry: ConfigEntry) -> AnyStore:
    """Open the store the entry's data names; raise what set-up should say."""
    if uses_postgresql(entry.data):
        return await _async_open_postgres(hass, entry)
    return await _async_open_sqlite(hass, entry)


async def _async_open_sqlite(hass: HomeAssistant, entry: ConfigEntry) -> MemoryStore:
    """Open the database file; a damaged one raises the repair issue."""
    model = store_model(entry.data)
    backend: Literal["auto", "numpy"] = "numpy"
    if model is not None and await async_vector_backend_available(hass):
        backend = "auto"
    store = MemoryStore(
        database_path(hass),
        model=model,
        vector_backend=backend,
        clock=_clock,
        # Memories and queries without a language of their own are analysed
        # in Home Assistant's.
        language=hass.config.language,
    )
    try:
        await store.open(defer_index=True)
    except (DatabaseCorruptError, DatabaseTooNewError) as err:
        if isinstance(err, DatabaseCorruptError):
            async_raise_database_corrupt(hass, entry.entry_id, store.path)
        raise ConfigEntryError(
            translation_domain=DOMAIN,
            translation_key=err.key,
            translation_placeholders=err.placeholders,
        ) from err
    except (DatabaseUnavailableError, StoreError) as err:
        raise ConfigEntryNotReady(
            translation_domain=DOMAIN,
            translation_key="database_unavailable",
            translation_placeholders={"path": str(store.path), "error": str(err)},
        ) from err
    async_clear_database_corrupt(hass)
    return store


async def _async_open_postgres(
    hass: HomeAssistant, entry: ConfigEntry
) -> PostgresStore:
    """Install the driver, then open the server's store within `OPEN_TIMEOUT`."""
    url = str(entry.data[CONF_DB_URL])
    server = redact_url(url)
    try:
        await async_install_driver(hass)
    except RequirementsNotFound as err:
        raise ConfigEntryNotReady(
            translation_domain=DOMAIN,
            translation_key="postgresql_driver_unavailable",
            translation_placeholders={"error": str(err)},
        ) from err
    store = PostgresStore(
        url,
        model=store_model(entry.data),
        clock=_clock,
        language=hass.config.language,
        instance=await async_instance_name(hass),
        timeout=CONNECT_TIMEOUT,
        command_timeout=COMMAND_TIMEOUT,
    )
    import asyncpg  # noqa: PLC0415 - installed on demand, above

    try:
        async with asyncio.timeout(OPEN_TIMEOUT):
            await store.open()
    except asyncpg.InsufficientPrivilegeError as err:
        # A role that may connect but not make the tables: retrying cannot help.
        await store.close()
        raise ConfigEntryError(
            translation_domain=DOMAIN,
            translation_key="postgresql_no_access",
            translation_placeholders={"server": server, "error": str(err)},
        ) from err
    except DatabaseTooNewError as err:
        raise ConfigEntryError(
            translation_domain=DOMAIN,
            translation_key="postgresql_too_new",
            translation_placeholders={"server": server},
        ) from err
    except (TimeoutError, StoreError, OSError) as err:
        await store.close()
        raise ConfigEntryNotReady(
            translation_domain=DOMAIN,
            translation_key="postgresql_unavailable",
            translation_placeholders={"server": server, "error": _reason(err)},
        ) from err
    return store


def _reason(err: BaseException) -> str:
    """Say why the server could not be used, without its password."""
    if isinstance(err, TimeoutError):
        return f"no answer within {OPEN_TIMEOUT:g} s"
    # check_server's messages name the server without its password already.
    return str(err) if isinstance(err, StoreError) else type(err).__name__
