"""The panel's Import dialog commands: a preview, then the import, within reach."""

from __future__ import annotations

import base64
from contextlib import closing
from pathlib import Path
import sqlite3

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.memory.engine import HOUSEHOLD

from . import search_ids
from .assist import ANNA, BEN, Household
from .test_websocket_api import ask, token_for

DATA = Path(__file__).parent.parent / "engine" / "data" / "imports"


def ai_memory_database(tmp_path: Path) -> str:
    """AI Long Term Memory's database, as the upload sends it (base64)."""
    path = tmp_path / "ai_memory.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript((DATA / "ha_ai_memory.sql").read_text())
        conn.commit()
    return base64.b64encode(path.read_bytes()).decode()


async def test_upload_preview_then_import(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
    household: Household,
    tmp_path: Path,
) -> None:
    """Anna uploads a database: the preview maps owners, the import stores."""
    client = await hass_ws_client(hass, await token_for(hass, household.anna))
    data = ai_memory_database(tmp_path)
    preview = await ask(
        client,
        type="memory/import_preview",
        data=data,
        owners={"private:conversation.ollama": ANNA},
    )
    assert preview == {
        "dry_run": True,
        "format": "ha_ai_memory",
        "total": 3,
        "new": 3,
        "duplicates": 0,
        "supersedes": 0,
        "history": 0,
        "secrets": 0,
        "by_scope": {HOUSEHOLD: 2, ANNA: 1},
        "owners": {"common": HOUSEHOLD, "private:conversation.ollama": ANNA},
    }
    assert await search_ids(hass, query="Miso") == []
    # Ben's scope is out of Anna's reach, whatever the dialog sends.
    refused = await ask(
        client,
        type="memory/import",
        data=data,
        owners={"private:conversation.ollama": BEN},
    )
    assert refused["error"]["translation_key"] == "person_not_allowed"
    done = await ask(
        client,
        type="memory/import",
        data=data,
        owners={"private:conversation.ollama": ANNA},
        source="ai_memory",
    )
    assert (done["imported"], done["dry_run"]) == (3, False)
    assert len(await search_ids(hass, query="Miso")) == 1


async def test_pasted_text_and_bad_input(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Pasted lines import; a bad upload or a bad file is a clear error."""
    client = await hass_ws_client(hass)
    done = await ask(client, type="memory/import", text="Likes tea\nHas a dog\n")
    assert done["imported"] == 2
    for message, key in (
        ({"data": "not base64!"}, "import_bad_upload"),
        ({}, "import_needs_source"),
        ({"text": '{"memories": [1'}, "import_malformed"),
    ):
        refused = await ask(client, type="memory/import_preview", **message)
        assert refused["error"]["translation_key"] == key, message


async def test_the_dialog_hears_how_far_its_import_is(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """memory/import_progress: counts while rows are written, on its connection only."""
    client = await hass_ws_client(hass)
    other = await hass_ws_client(hass)
    await client.send_json_auto_id({"type": "memory/import_progress"})
    subscribed = await client.receive_json()
    assert subscribed["success"]
    await other.send_json_auto_id({"type": "memory/import_progress"})
    assert (await other.receive_json())["success"]
    text = "\n".join(
        f"Garden note number {n} for the progress check" for n in range(12_000)
    )
    await client.send_json_auto_id({"type": "memory/import", "text": text})
    steps: list[dict[str, int]] = []
    while (reply := await client.receive_json())["type"] == "event":
        assert reply["id"] == subscribed["id"]
        steps.append(reply["event"])
    assert reply["success"], reply
    assert reply["result"]["imported"] == 12_000
    done = [step["done"] for step in steps]
    assert done == sorted(done) and len(done) >= 2
    assert steps[-1] == {"done": 12_000, "total": 12_000}
    # Another connection's subscription heard nothing: its next reply is its own.
    await other.send_json_auto_id({"type": "memory/browse", "limit": 1})
    assert (await other.receive_json())["type"] == "result"
    # Unsubscribed: the next import says nothing before its result.
    await client.send_json_auto_id(
        {"type": "unsubscribe_events", "subscription": subscribed["id"]}
    )
    assert (await client.receive_json())["success"]
    await client.send_json_auto_id({"type": "memory/import", "text": "Likes tea"})
    reply = await client.receive_json()
    assert reply["type"] == "result" and reply["result"]["imported"] == 1
