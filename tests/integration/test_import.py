"""`memory.import`: memories from other tools, previewed, all or nothing."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
import json
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.memory.engine import (
    HOUSEHOLD,
    MemoryItem,
    MemoryStore,
    NewMemory,
    Origin,
    Source,
)
from custom_components.memory.engine.exchange.export_json import every_memory

from . import add, call, search_ids
from .assist import ANNA, BEN, Household

DATA = Path(__file__).parent.parent / "engine" / "data" / "imports"


def store_of(entry: MockConfigEntry) -> MemoryStore:
    """Return the entry's memory store."""
    store: MemoryStore = entry.runtime_data.store
    return store


async def refused(hass: HomeAssistant, data: dict[str, Any], **kw: Any) -> Any:
    """Call `memory.import`, expect a refusal; return its translation."""
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "import", data, **kw)
    return err.value


async def notifications(
    hass: HomeAssistant, hass_ws_client: WebSocketGenerator
) -> list[dict[str, Any]]:
    """Return the persistent notifications, as the frontend reads them."""
    assert await async_setup_component(hass, "persistent_notification", {})
    client = await hass_ws_client()
    await client.send_json_auto_id({"type": "persistent_notification/get"})
    answer = await client.receive_json()
    notes: list[dict[str, Any]] = answer["result"]
    return notes


async def test_round_trip(
    hass: HomeAssistant, init_integration: MockConfigEntry, household: Household
) -> None:
    """Export everything, erase it all, import the export: the same memories."""
    store = store_of(init_integration)
    await add(hass, "Bins go out on Thursday", tags=["bins", "chores"])
    lyon = await add(hass, "Anna lives in Lyon", person=ANNA)
    await store.supersede(
        lyon,
        NewMemory(
            content="Anna lives in Paris",
            scope=ANNA,
            source=Source(origin=Origin.ACTION),
            tags=("home",),
        ),
    )
    await add(
        hass, "Dentist on Friday", person=BEN, type="event", expires_in={"days": 7}
    )
    forgotten = await add(hass, "An old household fact")
    await call(hass, "forget", {"ids": [forgotten]})
    exported = await call(hass, "export", {"everything": True})
    json_path = Path(exported["paths"][1])
    assert json_path.name == "memories.json"
    text = json_path.read_text()
    before = await every_memory(store, None)
    await store.forget([item.id for item in before], purge=True)

    response = await call(hass, "import", {"text": text})
    assert response["imported"] == len(before) == 5
    assert response["owners"] == {HOUSEHOLD: HOUSEHOLD, ANNA: ANNA, BEN: BEN}
    after = await every_memory(store, None)
    new_id = {old.id: new.id for old, new in zip(before, after, strict=True)}

    def moved(item: MemoryItem) -> MemoryItem:
        return replace(
            item,
            id=new_id[item.id],
            superseded_by=None
            if item.superseded_by is None
            else new_id[item.superseded_by],
            source=Source(origin=Origin.IMPORT, agent_id="import:assist_memory"),
        )

    assert after == [moved(item) for item in before]


async def test_preview_then_import(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """A dry run counts and stores nothing; the import then stores, and says so."""
    await add(hass, "Prefers answers in metric units")
    text = (DATA / "chatgpt_memories.txt").read_text()
    preview = await call(hass, "import", {"text": text, "dry_run": True})
    assert preview == {
        "dry_run": True,
        "format": "lines",
        "total": 5,
        "new": 4,
        "duplicates": 1,
        "supersedes": 0,
        "history": 0,
        "secrets": 1,
        "by_scope": {HOUSEHOLD: 4},
        "owners": {"": HOUSEHOLD},
    }
    assert await search_ids(hass, query="gelatine") == []
    assert await notifications(hass, hass_ws_client) == []
    done = await call(hass, "import", {"text": text, "source": "chatgpt"})
    assert (done["imported"], done["duplicates"]) == (4, 1)
    [found] = await search_ids(hass, query="gelatine")
    item = await call(hass, "get", {"id": found})
    assert item["source"]["origin"] == "import"
    assert item["source"]["agent_id"] == "import:chatgpt"
    [note] = await notifications(hass, hass_ws_client)
    assert note["message"] == "Imported 4 memories; 1 were already there."


async def test_owners_and_reach(
    hass: HomeAssistant, init_integration: MockConfigEntry, household: Household
) -> None:
    """Owners map to persons; nobody imports where `memory.add` would refuse."""
    text = (DATA / "mem0_get_all.json").read_text()
    anna = household.context("anna")
    err = await refused(hass, {"text": text, "owners": {"bob": BEN}}, context=anna)
    assert err.translation_key == "person_not_allowed"
    response = await call(
        hass,
        "import",
        {"text": text, "owners": {"alice": ANNA}, "dry_run": True},
        context=anna,
    )
    assert response["owners"] == {"alice": ANNA, "bob": HOUSEHOLD}
    # Our Markdown export names persons: the names find them.
    markdown = (
        "# Memory\n\nActive memories exported 2026-03-14 10:00: 2.\n\n"
        "## Ben\n\n### Facts\n\n- Plays chess (\\#3, 2026-01-02)\n"
    )
    err = await refused(hass, {"text": markdown}, context=anna)
    assert err.translation_placeholders == {"person": BEN}
    done = await call(
        hass, "import", {"text": markdown}, context=household.context("ben")
    )
    assert done["by_scope"] == {BEN: 1}


async def test_file_in_the_config_folder(
    hass: HomeAssistant, init_integration: MockConfigEntry, household: Household
) -> None:
    """Admins read a file of the configuration folder; nothing outside it."""
    folder = Path(hass.config.path("imports"))
    folder.mkdir()
    (folder / "home_agent.memories").write_bytes(
        (DATA / "home_agent.memories").read_bytes()
    )
    response = await call(hass, "import", {"file": "imports/home_agent.memories"})
    assert (response["format"], response["imported"]) == ("home_agent", 2)
    err = await refused(hass, {"file": "../outside.txt"})
    assert err.translation_key == "import_file_outside"
    err = await refused(hass, {"file": "imports/missing.txt"})
    assert err.translation_key == "import_file_unreadable"
    err = await refused(
        hass, {"file": "imports/home_agent.memories"}, context=household.context("anna")
    )
    assert err.translation_key == "import_file_admin"
    err = await refused(hass, {})
    assert err.translation_key == "import_needs_source"
    # A 50 MB file is refused before it is read.
    (folder / "big.txt").write_bytes(b"A memory of some words\n" * 2_300_000)
    err = await refused(hass, {"file": "imports/big.txt"})
    assert err.translation_key == "import_too_large"


async def test_bad_files_store_nothing(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """Each bad file names its line or entry; nothing at all is stored."""
    store = store_of(init_integration)
    cases = [
        ({"text": (DATA / "truncated.json").read_text()}, "import_malformed"),
        ({"text": "A fine memory\n" + "x" * 1_048_576}, "import_entry_invalid"),
        ({"text": (DATA / "no_content.csv").read_text()}, "import_no_content_column"),
        ({"text": "a,b\n", "format": "csv"}, "import_no_content_column"),
    ]
    for data, key in cases:
        err = await refused(hass, data)
        assert err.translation_key == key, data
    err = await refused(hass, {"text": "A fine memory\n" + "x" * 1_048_576})
    assert err.translation_placeholders["where"] == "line 2"
    assert "line 2" in str(err)
    assert (await store.stats()).by_status == {}
    folder = Path(hass.config.path("imports"))
    folder.mkdir()
    (folder / "latin1.txt").write_bytes((DATA / "latin1.txt").read_bytes())
    err = await refused(hass, {"file": "imports/latin1.txt"})
    assert (err.translation_key, err.translation_placeholders) == (
        "import_encoding",
        {"where": "line 1"},
    )


async def test_original_times_kept(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """Creation times of the source are kept (CSV dates in the household's zone)."""
    await call(hass, "import", {"text": (DATA / "memories.csv").read_text()})
    [found] = await search_ids(hass, query="ficus")
    item = await call(hass, "get", {"id": found})
    created = dt_util.parse_datetime(item["created_at"])
    assert created is not None
    local = created.astimezone(dt_util.get_default_time_zone())
    assert (local.date().isoformat(), local.hour) == ("2025-06-01", 0)
    assert item["tags"] == ["plants", "garden"]
    assert json.dumps(item)  # serialisable as the action answers
    assert timedelta(0) < dt_util.utcnow() - created
