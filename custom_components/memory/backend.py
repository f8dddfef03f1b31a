"""Which storage backend an entry uses, and PostgreSQL's driver (#26).

SQLite in the config folder is the default and needs nothing more. A
PostgreSQL server needs asyncpg, which is not in the manifest's
requirements (most homes never use it): `async_install_driver` installs it
the first time the config flow or set-up needs it, as Home Assistant
installs an integration's requirements.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.requirements import async_process_requirements

from .const import BACKEND_POSTGRESQL, BACKEND_SQLITE, CONF_BACKEND, DOMAIN

# asyncpg: native asyncio, LISTEN/NOTIFY for the other instances' writes,
# and cp314 wheels for manylinux and musllinux on x86_64 and aarch64 (Home
# Assistant OS). The same pin as requirements_test.txt.
POSTGRES_REQUIREMENTS: Final = ["asyncpg==0.32.0"]


def entry_backend(data: Mapping[str, Any]) -> str:
    """Return the backend an entry's data names: SQLite unless it says PostgreSQL."""
    return str(data.get(CONF_BACKEND, BACKEND_SQLITE))


def uses_postgresql(data: Mapping[str, Any]) -> bool:
    """Whether an entry's memories live on a PostgreSQL server."""
    return entry_backend(data) == BACKEND_POSTGRESQL


async def async_install_driver(hass: HomeAssistant) -> None:
    """Install asyncpg; raises `RequirementsNotFound` if it cannot be."""
    await async_process_requirements(
        hass, DOMAIN, POSTGRES_REQUIREMENTS, is_built_in=False
    )
