"""Tests for the Assist Memory diagnostics."""

from __future__ import annotations

import json
from unittest.mock import patch

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator
from syrupy.assertion import SnapshotAssertion

from custom_components.memory.const import CONF_MIN_SCORE, CONF_SEARCH_LIMIT

from . import add, call

MARKER = "Quetzalcoatlus"


@pytest.fixture
def mock_config_entry() -> MockConfigEntry:
    """Return an entry with options, and a secret that must be redacted."""
    return MockConfigEntry(
        domain="memory",
        title="Assist Memory",
        data={"provider": "keyword", "api_key": "sk-secret"},
        options={CONF_SEARCH_LIMIT: 7, CONF_MIN_SCORE: 0.25},
        entry_id="01JMEMORYENTRY0000000000000",
    )


async def test_diagnostics(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    init_integration: MockConfigEntry,
    snapshot: SnapshotAssertion,
) -> None:
    """Counts, versions and backend; no memory content and no secrets."""
    await add(hass, f"The {MARKER} flies over the garden", tags=[MARKER.lower()])
    await add(hass, f"Anna saw a {MARKER}", type="event", person="person.anna")
    archived = await add(hass, f"{MARKER} bones are in the museum")
    await call(hass, "forget", {"ids": [archived]})

    with (
        patch(
            "custom_components.memory.engine.store.database.Database.database_bytes",
            return_value=123_456,
        ),
        patch("custom_components.memory.diagnostics.sqlite3.sqlite_version", "3.x"),
    ):
        diagnostics = await get_diagnostics_for_config_entry(
            hass, hass_client, init_integration
        )

    integrity = diagnostics.pop("integrity")
    assert isinstance(integrity, dict)
    # A new database was fully checked at open; diagnostics checks it again.
    for key, kind in (("at_open", "full"), ("now", "full")):
        check = integrity[key]
        assert isinstance(check, dict)
        assert (check["kind"], check["ok"], check["problems"]) == (kind, True, 0)
        assert set(check) == {"kind", "ok", "problems", "at", "seconds"}
    assert diagnostics == snapshot
    dumped = json.dumps(diagnostics)
    assert MARKER.lower() not in dumped.lower()
    assert "person.anna" not in dumped
    assert "sk-secret" not in dumped
