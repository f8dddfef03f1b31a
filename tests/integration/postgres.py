"""Assist Memory set up on a real PostgreSQL server, for the integration tests.

`setup_postgres_entry` sets an entry up the way Home Assistant does, its
data naming the server (`postgres_database`'s URL); `rows` reads the
server directly, so a test sees what is really stored there.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import asyncpg
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.memory.const import (
    BACKEND_POSTGRESQL,
    CONF_BACKEND,
    CONF_DB_URL,
    CONF_PROVIDER,
    DOMAIN,
    PROVIDER_KEYWORD,
)


def postgres_entry(url: str) -> MockConfigEntry:
    """Return a keyword-only entry whose memories live on the server at `url`."""
    return MockConfigEntry(
        domain=DOMAIN,
        title="Assist Memory",
        data={
            CONF_PROVIDER: PROVIDER_KEYWORD,
            CONF_BACKEND: BACKEND_POSTGRESQL,
            CONF_DB_URL: url,
        },
    )


async def setup_postgres_entry(hass: HomeAssistant, url: str) -> MockConfigEntry:
    """Add and set up an entry on the server at `url`; it must load."""
    entry = postgres_entry(url)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return entry


async def rows(url: str, query: str, *args: Any) -> list[dict[str, Any]]:
    """Run `query` on the server, on a connection of its own; return the rows."""
    connection = await asyncpg.connect(url)
    try:
        return [dict(row) for row in await connection.fetch(query, *args)]
    finally:
        await connection.close()


def password(url: str) -> str:
    """Return the URL's password (the test server always has one)."""
    secret = urlsplit(url).password
    assert secret, "the test server's URL has no password"
    return secret
