"""The storage backend in the set-up flow: this Home Assistant or a server (#26).

Real PostgreSQL servers (`postgres_url`, `postgres_database`): each problem
`check_server` names is made for real and gives its own translated error,
the password never shown; SQLite comes first; a system where asyncpg cannot
be installed is told so. Moving an entry is in test_config_flow_storage.
"""

from __future__ import annotations

import logging
from unittest.mock import patch

from homeassistant.config_entries import ConfigEntryState, ConfigFlowResult
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.requirements import RequirementsNotFound
import pytest

from custom_components.memory.const import (
    BACKEND_POSTGRESQL,
    BACKEND_SQLITE,
    CONF_BACKEND,
    CONF_DB_URL,
    CONF_PROVIDER,
    DOMAIN,
    PROVIDER_KEYWORD,
)
from custom_components.memory.engine.postgres import redact_url
from tests.postgres_server import (
    START_TIMEOUT,
    database_url,
    fresh_database,
    role_url,
    unique_name,
)

from .test_config_flow_storage import SECRET, _admin, _no_secret, _role

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT),
]


async def _postgresql_step(hass: HomeAssistant) -> ConfigFlowResult:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": "user"}
    )
    assert result["type"] is FlowResultType.MENU
    assert result["menu_options"] == [BACKEND_SQLITE, BACKEND_POSTGRESQL]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": BACKEND_POSTGRESQL}
    )
    assert result["step_id"] == "postgresql"
    return result


async def _closed_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_each_server_problem_has_its_error(
    hass: HomeAssistant,
    postgres_url: str,
    postgres_database: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each problem check_server names is its own translated error; then set-up runs.

    The role may connect but not create tables (public belongs to the owner
    since PostgreSQL 15): the entry is made and its set-up fails, translated.
    """
    caplog.set_level(logging.DEBUG)
    result = await _postgresql_step(hass)
    flow_id = result["flow_id"]
    role = await _role(postgres_url)
    host = f"127.0.0.1:{await _closed_port()}"
    async with (
        fresh_database(postgres_url, vector=False) as no_vector,
        fresh_database(postgres_url, vector=False) as no_pgvector,
    ):
        await _admin(
            postgres_url,
            f"ALTER DATABASE {no_pgvector.rpartition('/')[2]}"
            " SET extension_control_path = '/nonexistent'",
        )
        cases = {
            f"mysql://memory:{SECRET}@127.0.0.1/memory": "pg_invalid_url",
            f"postgresql://memory:{SECRET}@{host}/memory": "pg_cannot_connect",
            role_url(postgres_database, role, "wrong-" + SECRET): "pg_invalid_auth",
            database_url(postgres_url, unique_name("missing")): "pg_unknown_database",
            role_url(no_vector, role, SECRET): "pg_vector_not_permitted",
            no_pgvector: "pg_vector_unavailable",
        }
        answers = []
        for url, error in cases.items():
            result = await hass.config_entries.flow.async_configure(
                flow_id, {CONF_DB_URL: url}
            )
            answers.append(result)
            assert result["type"] is FlowResultType.FORM, url
            assert result["errors"] == {"base": error}, redact_url(url)

    url = role_url(postgres_database, role, SECRET)
    result = await hass.config_entries.flow.async_configure(flow_id, {CONF_DB_URL: url})
    assert result["type"] is FlowResultType.MENU
    assert result["step_id"] == "provider"
    result = await hass.config_entries.flow.async_configure(
        flow_id, {"next_step_id": PROVIDER_KEYWORD}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    # This role may not create tables in public: set-up says so, translated.
    entry = result["result"]
    assert entry.state is ConfigEntryState.SETUP_ERROR
    assert entry.error_reason_translation_key == "postgresql_no_access"
    placeholders = entry.error_reason_translation_placeholders or {}
    assert "permission denied for schema public" in placeholders["error"]
    assert placeholders["server"] == redact_url(url)
    assert result["data"] == {
        CONF_BACKEND: BACKEND_POSTGRESQL,
        CONF_DB_URL: url,
        CONF_PROVIDER: PROVIDER_KEYWORD,
    }
    _no_secret(
        *answers, {k: v for k, v in result.items() if k != "data"}, caplog=caplog
    )


async def test_setup_on_sqlite_records_it(hass: HomeAssistant) -> None:
    """SQLite (this Home Assistant) comes first; its entry says so."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": "user"}
    )
    assert result["menu_options"] == [BACKEND_SQLITE, BACKEND_POSTGRESQL]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": BACKEND_SQLITE}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": PROVIDER_KEYWORD}
    )
    assert result["data"] == {CONF_BACKEND: BACKEND_SQLITE, CONF_PROVIDER: "keyword"}


async def test_the_driver_cannot_be_installed(hass: HomeAssistant) -> None:
    """A system without asyncpg wheels: the flow says so instead of failing."""
    result = await _postgresql_step(hass)
    with patch(
        "custom_components.memory.storage_flow.async_install_driver",
        side_effect=RequirementsNotFound(DOMAIN, ["asyncpg"]),
    ):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_DB_URL: "postgresql://u@127.0.0.1/x"}
        )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "driver_unavailable"
