"""Tests for the memory.add, memory.search, memory.forget and memory.get actions."""

from __future__ import annotations

import asyncio
from contextlib import closing
from datetime import timedelta
import logging
from pathlib import Path
import shutil
import sqlite3
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import Context, HomeAssistant, ServiceCall, ServiceResponse
from homeassistant.exceptions import (
    HomeAssistantError,
    ServiceValidationError,
    UnknownUser,
)
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator
from syrupy.assertion import SnapshotAssertion

from custom_components.memory.const import DOMAIN
from custom_components.memory.engine import MemoryStore
from custom_components.memory.errors import translated_errors
from custom_components.memory.runtime import MemoryConfigEntry

from . import add, call, search_ids

FROZEN_TIME = "2026-03-14T09:26:53+00:00"

# One valid call of each action, for checks that hold whatever the call.
ALL_ACTIONS: list[tuple[str, dict[str, Any]]] = [
    ("add", {"content": "Mia is allergic to nuts"}),
    ("search", {"query": "nuts"}),
    ("forget", {"ids": [1]}),
    ("get", {"id": 1}),
    ("digest", {}),
    ("export", {}),
    ("profile", {}),
]


async def _all_ids(hass: HomeAssistant) -> list[int]:
    """Every stored memory, whatever its status, newest first."""
    return await search_ids(hass, status="any", limit=50)


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_add_and_get(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_admin_user: MockUser,
    snapshot: SnapshotAssertion,
) -> None:
    """An added memory comes back from memory.get with every field."""
    admin = MockUser(id="admin-user-id", groups=hass_admin_user.groups).add_to_hass(
        hass
    )
    response = await call(
        hass,
        "add",
        {
            "content": "  Mia is allergic to nuts  ",
            "type": "fact",
            "tags": ["Health", "kids", "health"],
            "expires_in": {"days": 30},
            "person": "person.mia",
        },
        context=Context(user_id=admin.id),
    )
    assert response == {"id": 1, "created": True}

    assert await call(hass, "get", {"id": 1}) == snapshot


async def test_add_same_text_returns_existing(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """The same text (up to case, spacing and end punctuation) is stored once."""
    first = await call(hass, "add", {"content": "Bins go out on Thursday"})
    again = await call(hass, "add", {"content": "  bins go OUT on thursday. "})
    other_scope = await call(
        hass, "add", {"content": "Bins go out on Thursday", "person": "person.anna"}
    )

    assert first == {"id": first["id"], "created": True}
    assert again == {"id": first["id"], "created": False}
    # The same words are a different memory in a person's private scope.
    assert other_scope["created"] is True
    assert other_scope["id"] != first["id"]
    assert len(await _all_ids(hass)) == 2

    # Once the first is forgotten, the text can be remembered anew.
    await call(hass, "forget", {"ids": [first["id"]]})
    renewed = await call(hass, "add", {"content": "Bins go out on Thursday"})
    assert renewed["created"] is True
    assert renewed["id"] not in (first["id"], other_scope["id"])


async def test_add_expires_at(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """An absolute expiry is stored in UTC."""
    item_id = await add(
        hass, "Guests stay until Sunday", expires_at="2030-01-05 12:00:00+02:00"
    )

    item = await call(hass, "get", {"id": item_id})

    assert item["expires_at"] == "2030-01-05T10:00:00+00:00"


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_search_response(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    snapshot: SnapshotAssertion,
) -> None:
    """memory.search returns compact hits, best first."""
    await add(hass, "Mia is allergic to nuts", tags=["health"])
    await add(hass, "Mixed nuts are kept in the top drawer", type="instruction")
    await add(hass, "Ben does not like mushrooms", type="preference")

    assert await call(hass, "search", {"query": "nuts allergy"}) == snapshot(
        name="keyword"
    )
    assert await call(hass, "search", {"query": ""}) == snapshot(name="newest")


async def test_search_filters(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Every filter narrows the results to what it says."""
    freezer.move_to("2026-01-01T08:00:00+00:00")
    old = await add(hass, "The garden hose is in the shed", tags=["garden"])
    freezer.tick(timedelta(days=10))
    anna = await add(
        hass, "Anna waters the garden roses", person="person.anna", type="preference"
    )
    ben = await add(hass, "Ben mows the garden lawn", person="person.ben")
    archived = await add(hass, "The garden gate code is 1234", tags=["garden", "codes"])
    await call(hass, "forget", {"ids": [archived]})
    freezer.tick(timedelta(days=1))

    assert sorted(await search_ids(hass, query="garden")) == [old, anna, ben]
    # person: the household's memories and that person's, not another's.
    assert sorted(await search_ids(hass, query="garden", person="person.anna")) == [
        old,
        anna,
    ]
    assert await search_ids(hass, query="garden", types=["preference"]) == [anna]
    assert await search_ids(hass, query="garden", types="preference") == [anna]
    assert sorted(await search_ids(hass, query="garden", types=["fact", "event"])) == [
        old,
        ben,
    ]
    assert await search_ids(hass, query="garden", tags=["Garden"]) == [old]
    assert sorted(
        await search_ids(hass, query="garden", tags=["garden"], status="any")
    ) == [old, archived]
    assert await search_ids(hass, query="garden", status="archived") == [archived]
    assert await search_ids(hass, query="garden", status="superseded") == []
    assert len(await search_ids(hass, query="garden", status="any")) == 4
    assert sorted(
        await search_ids(hass, query="garden", since="2026-01-05T00:00:00+00:00")
    ) == [anna, ben]
    assert sorted(await search_ids(hass, query="garden", recency_days=3)) == [
        anna,
        ben,
    ]
    assert len(await search_ids(hass, query="garden", limit=2)) == 2
    # "roses" only appears in one memory: the others cover half of the query.
    assert await search_ids(hass, query="garden roses", min_score=0.8) == [anna]
    assert len(await search_ids(hass, query="garden roses", min_score=0)) == 3
    # An empty query or "*" lists the newest first.
    assert await search_ids(hass, query="*") == [ben, anna, old]
    assert await search_ids(hass) == [ben, anna, old]

    with pytest.raises(ServiceValidationError):
        await call(
            hass,
            "search",
            {"query": "garden", "since": "2026-01-05T00:00:00", "recency_days": 3},
        )


async def test_search_tags_match_any(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """A tag filter matches any of the given tags."""
    health = await add(hass, "Mia takes her inhaler at night", tags=["health"])
    school = await add(hass, "Mia has swimming on Tuesday", tags=["school"])
    await add(hass, "Mia likes pancakes")

    assert sorted(await search_ids(hass, query="Mia", tags=["health", "school"])) == [
        health,
        school,
    ]


async def test_forget_by_ids(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """Forgetting by id archives: the memory stays readable but is not recalled."""
    keep = await add(hass, "The wifi is called Hogwarts")
    gone = await add(hass, "The wifi password is alohomora")

    response = await call(hass, "forget", {"ids": [gone, gone]})

    assert response == {
        "dry_run": False,
        "purged": False,
        "memories": [
            {
                "id": gone,
                "content": "The wifi password is alohomora",
                "scope": "household",
            }
        ],
    }
    assert await search_ids(hass, query="wifi") == [keep]
    assert (await call(hass, "get", {"id": gone}))["status"] == "archived"
    assert (await call(hass, "get", {"id": keep}))["status"] == "active"


async def test_forget_by_query(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """A dry run lists what a query would forget and changes nothing."""
    heating = await add(hass, "The guest room heating is broken")
    await add(hass, "The car needs new tyres")

    dry = await call(hass, "forget", {"query": "guest heating", "dry_run": True})

    assert dry == {
        "dry_run": True,
        "purged": False,
        "memories": [
            {
                "id": heating,
                "content": "The guest room heating is broken",
                "scope": "household",
            }
        ],
    }
    assert (await call(hass, "get", {"id": heating}))["status"] == "active"

    done = await call(hass, "forget", {"query": "guest heating"})

    assert done["dry_run"] is False
    assert [item["id"] for item in done["memories"]] == [heating]
    assert (await call(hass, "get", {"id": heating}))["status"] == "archived"
    assert len(await search_ids(hass)) == 1

    # Nothing left to match: an empty result, not an error.
    again = await call(hass, "forget", {"query": "guest heating"})
    assert again["memories"] == []


async def test_forget_purge(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """Purging erases the memory: memory.get no longer knows its id."""
    item_id = await add(hass, "The safe code is 4711")

    response = await call(hass, "forget", {"ids": [item_id], "purge": True})

    assert response["purged"] is True
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "get", {"id": item_id})
    assert err.value.translation_key == "unknown_memory"
    assert err.value.translation_placeholders == {"ids": str(item_id)}
    assert await _all_ids(hass) == []

    # Purging by query works the same way; a dry run never purges.
    other = await add(hass, "The locker code is 1989")
    dry = await call(
        hass, "forget", {"query": "locker code", "purge": True, "dry_run": True}
    )
    assert dry["purged"] is False
    assert await _all_ids(hass) == [other]
    await call(hass, "forget", {"query": "locker code", "purge": True})
    assert await _all_ids(hass) == []


@pytest.mark.parametrize(
    "data",
    [{}, {"query": ""}, {"query": "   "}, {"dry_run": True}],
    ids=["nothing", "empty_query", "blank_query", "dry_run_only"],
)
async def test_forget_needs_target(
    hass: HomeAssistant, init_integration: MockConfigEntry, data: dict[str, Any]
) -> None:
    """Forgetting without ids or a query is refused rather than forgetting all."""
    item_id = await add(hass, "Keep me")

    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "forget", data)

    assert err.value.translation_key == "forget_needs_target"
    assert (await call(hass, "get", {"id": item_id}))["status"] == "active"


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"content": "x" * 2001}, "content_too_long"),
        ({"content": "x" * 1_000_000}, "content_too_long"),
        ({"content": ""}, "empty_content"),
        ({"content": " \n\t "}, "empty_content"),
        ({"content": "ok", "tags": ["no spaces!"]}, "invalid_tag"),
        ({"content": "ok", "tags": ["t" * 41]}, "invalid_tag"),
        ({"content": "ok", "tags": [""]}, "invalid_tag"),
        ({"content": "ok", "tags": [f"tag{i}" for i in range(21)]}, "too_many_tags"),
    ],
    ids=[
        "content_2001",
        "content_1mb",
        "empty",
        "blank",
        "tag_punctuation",
        "tag_41",
        "tag_empty",
        "tags_21",
    ],
)
async def test_add_invalid(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    data: dict[str, Any],
    key: str,
) -> None:
    """Bad content or tags are refused with a translated error; nothing is stored."""
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "add", data)

    assert err.value.translation_domain == DOMAIN
    assert err.value.translation_key == key
    assert await _all_ids(hass) == []


async def test_add_content_limits(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """2,000 characters fit; the placeholders of a refusal say how many."""
    assert (await call(hass, "add", {"content": "y" * 2000}))["created"] is True

    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "add", {"content": "z" * 2001})

    assert err.value.translation_placeholders == {"length": "2001", "limit": "2000"}
    assert "2001" in str(err.value)
    assert "z" * 20 not in str(err.value)


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"content": None},
        {"content": "ok", "type": "bogus"},
        {"content": "ok", "person": "light.kitchen"},
        {"content": "ok", "person": "anna"},
        {"content": "ok", "expires_in": {"hours": -1}},
        {"content": "ok", "expires_in": {"seconds": 0}},
        {"content": "ok", "expires_in": "0:00:00"},
        {"content": "ok", "expires_in": "soon"},
        {"content": "ok", "expires_at": "tomorrow"},
        {
            "content": "ok",
            "expires_at": "2030-01-01T00:00:00+00:00",
            "expires_in": {"days": 1},
        },
        {"content": "ok", "unknown": 1},
    ],
    ids=[
        "no_content",
        "content_none",
        "type",
        "person_domain",
        "person_not_entity",
        "expires_in_negative",
        "expires_in_zero",
        "expires_in_zero_string",
        "expires_in_text",
        "expires_at_text",
        "expires_both",
        "unknown_field",
    ],
)
async def test_add_schema_errors(
    hass: HomeAssistant, init_integration: MockConfigEntry, data: dict[str, Any]
) -> None:
    """What the schema refuses is a translated refusal before anything runs."""
    with pytest.raises(ServiceValidationError):
        await call(hass, "add", data)

    assert await _all_ids(hass) == []


@pytest.mark.parametrize("service", ["search", "forget"])
@pytest.mark.parametrize(
    "data",
    [
        {"limit": 0},
        {"limit": 51},
        {"limit": "many"},
        {"min_score": 1.5},
        {"min_score": -0.1},
        {"status": "bogus"},
        {"types": ["bogus"]},
        {"person": "light.kitchen"},
        {"since": "last week"},
        {"recency_days": 0},
        {"recency_days": -2},
        {"since": "2026-01-01T00:00:00+00:00", "recency_days": 1},
        {"source": "bogus"},
        {"tags": [{"not": "text"}]},
    ],
    ids=[
        "limit_0",
        "limit_51",
        "limit_text",
        "min_score_1.5",
        "min_score_negative",
        "status",
        "types",
        "person",
        "since",
        "recency_zero",
        "recency_negative",
        "since_and_recency",
        "source",
        "tags_not_text",
    ],
)
async def test_search_schema_errors(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    service: str,
    data: dict[str, Any],
) -> None:
    """Search and forget share the filters, and refuse the same bad values."""
    item_id = await add(hass, "The garden hose is in the shed")

    with pytest.raises(ServiceValidationError):
        await call(hass, service, {"query": "garden", **data})

    assert (await call(hass, "get", {"id": item_id}))["status"] == "active"


@pytest.mark.parametrize(
    ("service", "data", "message"),
    [
        ("search", {"limit": 0}, "The action's `limit` must be at least 1"),
        ("search", {"limit": 51}, "The action's `limit` must be at most 50"),
        ("search", {"limit": "many"}, "The action's `limit` must be of type int"),
        (
            "search",
            {"status": "bogus"},
            "The action's `status` must be one of: active, any, archived, superseded",
        ),
        ("add", {"content": "x", "colour": "red"}, "This action has no field `colour`"),
        (
            "forget",
            {"ids": list(range(1, 502))},
            "The action's `ids` must have at most 500 items",
        ),
        (
            "search",
            {"since": "9999-01-01T00:00:00+00:00"},
            "The action's `since` is not valid: the date must be from 1900 to 8999",
        ),
    ],
)
async def test_refusals_have_their_message_over_rest(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    init_integration: MockConfigEntry,
    service: str,
    data: dict[str, Any],
    message: str,
) -> None:
    """A refused call answers HTTP 400 with its translated message, not a bare 400."""
    assert await async_setup_component(hass, "api", {})
    client = await hass_client()
    response = await client.post(
        f"/api/services/{DOMAIN}/{service}?return_response", json=data
    )
    assert response.status == 400
    assert (await response.json())["message"] == message


@pytest.mark.parametrize("service", ["search", "forget"])
@pytest.mark.parametrize("tag", ["no spaces!", "t" * 41, "?"])
async def test_search_invalid_tag(
    hass: HomeAssistant, init_integration: MockConfigEntry, service: str, tag: str
) -> None:
    """A tag filter that could never match is reported, not silently empty."""
    item_id = await add(hass, "The garden hose is in the shed", tags=["garden"])

    with pytest.raises(ServiceValidationError) as err:
        await call(hass, service, {"query": "garden", "tags": [tag]})

    assert err.value.translation_key == "invalid_tag"
    assert (await call(hass, "get", {"id": item_id}))["status"] == "active"


@pytest.mark.parametrize(
    ("service", "data"),
    [
        ("forget", {"ids": [0]}),
        ("forget", {"ids": ["abc"]}),
        ("forget", {"ids": []}),
        ("forget", {"ids": [1], "unknown": True}),
        ("forget", {"ids": [1], "purge": "maybe"}),
        ("forget", {"ids": [1], "dry_run": "maybe"}),
        ("forget", {"ids": [1, "2x"]}),
        ("get", {"id": 0}),
        ("get", {"id": "abc"}),
        ("get", {}),
    ],
    ids=[
        "forget_zero",
        "forget_text",
        "forget_empty",
        "forget_unknown_field",
        "forget_purge_text",
        "forget_dry_run_text",
        "forget_one_bad_id",
        "get_zero",
        "get_text",
        "get_missing",
    ],
)
async def test_id_schema_errors(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    service: str,
    data: dict[str, Any],
) -> None:
    """Ids that cannot be memory ids are refused by the schema."""
    item_id = await add(hass, "The garden hose is in the shed")

    with pytest.raises(ServiceValidationError):
        await call(hass, service, data)

    assert (await call(hass, "get", {"id": item_id}))["status"] == "active"


async def test_unknown_ids(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """An unknown id is reported; with a known one, nothing is forgotten."""
    item_id = await add(hass, "The garden hose is in the shed")

    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "get", {"id": 999})
    assert err.value.translation_key == "unknown_memory"
    assert err.value.translation_placeholders == {"ids": "999"}

    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "forget", {"ids": [item_id, 998, 999, 998]})
    assert err.value.translation_key == "unknown_memory"
    assert err.value.translation_placeholders == {"ids": "998, 999"}
    assert (await call(hass, "get", {"id": item_id}))["status"] == "active"


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"unbalanced',
        "*",
        "garden*",
        "NEAR(garden hose",
        "NEAR(garden hose, 2)",
        "AND OR NOT",
        "garden AND",
        "NOT garden",
        "(garden",
        "garden)",
        "[garden",
        "{content}: garden",
        "content:garden",
        "-garden",
        "^garden",
        "garden + hose",
        "'; DROP TABLE memories; --",
        "\x00",
        "🌱 garden",
        "x" * 5000,
    ],
)
async def test_fts_syntax_never_raises(
    hass: HomeAssistant, init_integration: MockConfigEntry, query: str
) -> None:
    """Query text is searched as words: FTS5 syntax in it is never an error."""
    item_id = await add(hass, "The garden hose is in the shed")

    response = await call(hass, "search", {"query": query})
    dry = await call(hass, "forget", {"query": query, "dry_run": True})

    found = [hit["id"] for hit in response["memories"]]
    assert found in ([], [item_id])
    if "garden" in query:
        assert found == [item_id]
    assert [item["id"] for item in dry["memories"]] in ([], [item_id])
    assert (await call(hass, "get", {"id": item_id}))["status"] == "active"


async def test_not_loaded(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """The actions stay registered but say so, as a validation error, when unloaded."""
    assert await hass.config_entries.async_unload(init_integration.entry_id)
    await hass.async_block_till_done()

    for service, data in ALL_ACTIONS:
        with pytest.raises(ServiceValidationError) as err:
            await call(hass, service, data)
        assert err.value.translation_domain == DOMAIN
        assert err.value.translation_key == "not_loaded", service


async def test_not_set_up(hass: HomeAssistant) -> None:
    """Without any entry, the actions exist and report that nothing is loaded."""
    assert await async_setup_component(hass, DOMAIN, {})

    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "search", {"query": "nuts"})

    assert err.value.translation_key == "not_loaded"


async def test_store_failure(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """A database that fails under a call gives a translated failure, not a crash."""
    item_id = await add(hass, "Mia is allergic to nuts")
    await hass.async_block_till_done()
    await init_integration.runtime_data.store.close()

    for service, data in (
        ("add", {"content": "Ben is allergic to cats"}),
        ("search", {"query": "nuts"}),
        ("forget", {"ids": [item_id]}),
        ("forget", {"query": "nuts"}),
        ("get", {"id": item_id}),
    ):
        with pytest.raises(HomeAssistantError) as err:
            await call(hass, service, data)
        assert not isinstance(err.value, ServiceValidationError)
        assert err.value.translation_key == "store_failed"


async def test_concurrent_calls(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """100 adds and 100 searches at once: every memory is stored, none fails."""
    adds = [
        call(
            hass, "add", {"content": f"Concurrent memory number {i}", "tags": ["load"]}
        )
        for i in range(100)
    ]
    searches = [
        call(hass, "search", {"query": f"concurrent memory {i}"}) for i in range(100)
    ]

    results = await asyncio.gather(*adds, *searches)

    added = results[:100]
    assert all(result["created"] for result in added)
    assert len({result["id"] for result in added}) == 100
    assert all("memories" in result for result in results[100:])
    await hass.async_block_till_done()
    stats = await init_integration.runtime_data.store.stats()
    assert stats.active == 100
    assert len(await search_ids(hass, query="concurrent", limit=50)) == 50


async def test_no_content_in_logs(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Memory content never reaches a log record at INFO or above."""
    marker = "Xylophonicus"
    caplog.set_level(logging.DEBUG)

    item_id = await add(hass, f"The password hint is {marker}", tags=[marker])
    await call(hass, "search", {"query": marker})
    await call(hass, "get", {"id": item_id})
    await call(hass, "forget", {"query": marker, "dry_run": True})
    await call(hass, "forget", {"query": marker})
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "add", {"content": marker * 300})
    assert marker not in str(err.value)
    # A refused tag is named back to the caller, but not logged either.
    with pytest.raises(ServiceValidationError):
        await call(hass, "add", {"content": marker, "tags": [f"{marker}!"]})
    await call(hass, "forget", {"ids": [item_id], "purge": True})
    await hass.async_block_till_done()

    # The capture does see DEBUG records, so a leak would be caught.
    assert any(record.levelno == logging.DEBUG for record in caplog.records)
    leaks = [
        record
        for record in caplog.records
        if record.levelno >= logging.INFO
        and marker.lower() in record.getMessage().lower()
    ]
    assert leaks == []


# -- privacy -------------------------------------------------------------------


@pytest.fixture
async def people(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_admin_user: MockUser,
    hass_read_only_user: MockUser,
) -> dict[str, Context]:
    """Anna (non-admin, person.anna), Ben (non-admin, person.ben), an admin."""
    ben = MockUser(name="Ben").add_to_hass(hass)
    lodger = MockUser(name="Lodger").add_to_hass(hass)
    assert not hass_read_only_user.is_admin
    assert not ben.is_admin
    assert await async_setup_component(
        hass,
        "person",
        {
            "person": [
                {"id": "anna", "name": "Anna", "user_id": hass_read_only_user.id},
                {"id": "ben", "name": "Ben", "user_id": ben.id},
            ]
        },
    )
    await hass.async_block_till_done()
    assert hass.states.get("person.anna") is not None
    return {
        "anna": Context(user_id=hass_read_only_user.id),
        "ben": Context(user_id=ben.id),
        "lodger": Context(user_id=lodger.id),
        "admin": Context(user_id=hass_admin_user.id),
    }


@pytest.fixture
async def private_memories(
    hass: HomeAssistant, people: dict[str, Context]
) -> dict[str, int]:
    """One household memory and one private memory each for Anna and Ben."""
    return {
        "household": await add(hass, "The garden hose is in the shed"),
        "anna": await add(
            hass,
            "Anna hides the garden key",
            context=people["anna"],
            person="person.anna",
        ),
        "ben": await add(
            hass, "Ben buried a garden gift", context=people["ben"], person="person.ben"
        ),
    }


async def test_privacy_add(hass: HomeAssistant, people: dict[str, Context]) -> None:
    """A user adds to their own person and the household, not to someone else's."""
    own = await call(
        hass,
        "add",
        {"content": "Anna likes tea", "person": "person.anna"},
        context=people["anna"],
    )
    household = await call(
        hass, "add", {"content": "We have a cat"}, context=people["anna"]
    )

    assert (await call(hass, "get", {"id": own["id"]}))["scope"] == "person.anna"
    assert (await call(hass, "get", {"id": household["id"]}))["scope"] == "household"
    assert (await call(hass, "get", {"id": own["id"]}))["source"]["user_id"] == (
        people["anna"].user_id
    )
    with pytest.raises(ServiceValidationError) as err:
        await call(
            hass,
            "add",
            {"content": "Ben likes coffee", "person": "person.ben"},
            context=people["anna"],
        )
    assert err.value.translation_key == "person_not_allowed"
    assert err.value.translation_placeholders == {"person": "person.ben"}
    assert len(await _all_ids(hass)) == 2

    # An admin may write to anyone's memories.
    admin = await call(
        hass,
        "add",
        {"content": "Ben likes coffee", "person": "person.ben"},
        context=people["admin"],
    )
    assert admin["created"] is True


async def test_privacy_search(
    hass: HomeAssistant, people: dict[str, Context], private_memories: dict[str, int]
) -> None:
    """A user's searches see the household's memories and their own only."""
    ids = private_memories

    for query in ("garden", "", "Ben buried gift"):
        found = await search_ids(
            hass, query=query, status="any", context=people["anna"]
        )
        assert ids["ben"] not in found
    assert sorted(
        await search_ids(hass, query="garden", context=people["anna"])
    ) == sorted([ids["household"], ids["anna"]])
    assert sorted(
        await search_ids(hass, query="garden", context=people["ben"])
    ) == sorted([ids["household"], ids["ben"]])
    # A user without a person sees the household's memories only.
    assert await search_ids(hass, query="garden", context=people["lodger"]) == [
        ids["household"]
    ]
    # Naming someone else's person is refused, not answered with their memories.
    with pytest.raises(ServiceValidationError) as err:
        await call(
            hass,
            "search",
            {"query": "garden", "person": "person.ben"},
            context=people["anna"],
        )
    assert err.value.translation_key == "person_not_allowed"
    assert sorted(
        await search_ids(
            hass, query="garden", person="person.anna", context=people["anna"]
        )
    ) == sorted([ids["household"], ids["anna"]])

    # An admin, and a call without a user (automations), see everything.
    for context in (people["admin"], None):
        assert sorted(
            await search_ids(hass, query="garden", context=context)
        ) == sorted(ids.values())


async def test_privacy_get_and_forget(
    hass: HomeAssistant, people: dict[str, Context], private_memories: dict[str, int]
) -> None:
    """Another person's memory looks exactly like one that does not exist."""
    ids = private_memories
    anna = people["anna"]

    with pytest.raises(ServiceValidationError) as hidden:
        await call(hass, "get", {"id": ids["ben"]}, context=anna)
    with pytest.raises(ServiceValidationError) as missing:
        await call(hass, "get", {"id": 999}, context=anna)
    assert hidden.value.translation_key == missing.value.translation_key
    assert hidden.value.translation_key == "unknown_memory"
    assert hidden.value.translation_placeholders == {"ids": str(ids["ben"])}

    for data in (
        {"ids": [ids["ben"]]},
        {"ids": [ids["household"], ids["ben"]]},
        {"ids": [ids["ben"]], "purge": True},
    ):
        with pytest.raises(ServiceValidationError) as err:
            await call(hass, "forget", data, context=anna)
        assert err.value.translation_key == "unknown_memory"
        assert err.value.translation_placeholders == {"ids": str(ids["ben"])}

    # Forgetting by query only reaches Anna's and the household's memories.
    dry = await call(hass, "forget", {"query": "garden", "dry_run": True}, context=anna)
    assert sorted(item["id"] for item in dry["memories"]) == sorted(
        [ids["household"], ids["anna"]]
    )
    await call(hass, "forget", {"query": "garden"}, context=anna)

    assert (await call(hass, "get", {"id": ids["ben"]}))["status"] == "active"
    assert (await call(hass, "get", {"id": ids["anna"]}))["status"] == "archived"
    assert (await call(hass, "get", {"id": ids["anna"]}, context=anna))["id"] == ids[
        "anna"
    ]
    # Ben's own and the admin's calls reach Ben's memory.
    assert (await call(hass, "get", {"id": ids["ben"]}, context=people["ben"]))[
        "scope"
    ] == "person.ben"
    await call(hass, "forget", {"ids": [ids["ben"]]}, context=people["admin"])
    assert (await call(hass, "get", {"id": ids["ben"]}))["status"] == "archived"


@pytest.mark.parametrize(
    ("service", "data"),
    [
        ("add", {"content": "Mia is allergic to nuts"}),
        ("search", {"query": "nuts"}),
        ("forget", {"query": "nuts"}),
        ("get", {"id": 1}),
    ],
)
async def test_unknown_user(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    service: str,
    data: dict[str, Any],
) -> None:
    """A call on behalf of a user that does not exist is refused."""
    with pytest.raises(UnknownUser):
        await call(hass, service, data, context=Context(user_id="no-such-user"))

    assert await _all_ids(hass) == []


# -- hostile input -------------------------------------------------------------

# Beyond SQLite's 64-bit integers: binding one raised OverflowError.
BEYOND_SQLITE = [2**63, 2**64, 10**400]


@pytest.mark.parametrize("item_id", BEYOND_SQLITE, ids=["2^63", "2^64", "1e400"])
async def test_ids_beyond_sqlite_range(
    hass: HomeAssistant, init_integration: MockConfigEntry, item_id: int
) -> None:
    """An id no row can have is refused before SQLite sees it; nothing changes."""
    kept = await add(hass, "The garden hose is in the shed")

    for service, data in (
        ("get", {"id": item_id}),
        ("forget", {"ids": [kept, item_id]}),
        ("forget", {"ids": [item_id], "purge": True}),
        ("forget", {"ids": [item_id], "source": "conversations", "purge": True}),
        ("digest", {"conversation": item_id}),
    ):
        with pytest.raises(ServiceValidationError) as err:
            await call(hass, service, data)
        assert err.value.translation_domain == DOMAIN
        assert err.value.translation_key == "id_out_of_range", service
        assert err.value.translation_placeholders == {"max": str(2**63 - 1)}

    assert (await call(hass, "get", {"id": kept}))["status"] == "active"
    # The largest id SQLite can hold is merely unknown.
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "get", {"id": 2**63 - 1})
    assert err.value.translation_key == "unknown_memory"


@pytest.mark.parametrize(
    ("service", "data"),
    [
        ("add", {"expires_in": {"days": 10**9}}),
        ("add", {"expires_in": {"days": 36_501}}),
        ("add", {"expires_in": {"hours": 1e300}}),
        ("add", {"expires_in": {"hours": float("inf")}}),
        ("add", {"expires_in": 1e300}),
        ("add", {"expires_in": "inf"}),
        ("add", {"expires_in": 2**64}),
        ("add", {"expires_at": "0001-01-01T00:00:00+14:00"}),
        ("add", {"expires_at": "9999-12-31T23:59:59-14:00"}),
        ("add", {"expires_at": "9000-01-01T00:00:00+00:00"}),
        ("add", {"expires_at": "1899-12-31T23:59:59+00:00"}),
        ("add", {"person": 3}),
        ("add", {"person": 1e300}),
        ("search", {"since": "0001-01-01T00:00:00+14:00"}),
        ("search", {"since": "9999-12-31T23:59:59-14:00"}),
        ("search", {"recency_days": 10_000_000}),
        ("search", {"recency_days": 1e30}),
        ("search", {"recency_days": 36_500.5}),
        ("search", {"recency_days": float("inf")}),
        ("search", {"recency_days": "nan"}),
        ("search", {"person": 3}),
        ("forget", {"query": "hose", "recency_days": 1e30}),
        ("forget", {"query": "hose", "since": "0001-01-01T00:00:00+14:00"}),
        ("export", {"person": 3}),
        ("profile", {"person": 3}),
    ],
    ids=[
        "expires_in_billion_days",
        "expires_in_over_100_years",
        "expires_in_hours_1e300",
        "expires_in_hours_inf",
        "expires_in_seconds_1e300",
        "expires_in_inf_text",
        "expires_in_2^64",
        "expires_at_year_1",
        "expires_at_year_9999",
        "expires_at_year_9000",
        "expires_at_1899",
        "add_person_int",
        "add_person_float",
        "since_year_1",
        "since_year_9999",
        "recency_ten_million",
        "recency_1e30",
        "recency_over_100_years",
        "recency_inf",
        "recency_nan",
        "search_person_int",
        "forget_recency_1e30",
        "forget_since_year_1",
        "export_person_int",
        "profile_person_int",
    ],
)
async def test_out_of_bounds_refused(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    service: str,
    data: dict[str, Any],
) -> None:
    """Numbers, durations and dates beyond the bounds fail validation, no overflow."""
    kept = await add(hass, "The garden hose is in the shed")
    if service == "add":
        data = {"content": "Guests stay a while", **data}

    with pytest.raises(ServiceValidationError):
        await call(hass, service, data)

    assert await _all_ids(hass) == [kept]
    assert (await call(hass, "get", {"id": kept}))["status"] == "active"


async def test_bounds_accepted(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """The bounds themselves are valid values."""
    far = await add(hass, "The deed is kept at the bank", expires_in={"days": 36_500})
    late = await add(
        hass, "The time capsule opens", expires_at="8999-12-31T12:00:00-05:00"
    )

    assert (await call(hass, "get", {"id": late}))["expires_at"] == (
        "8999-12-31T17:00:00+00:00"
    )
    assert sorted(await search_ids(hass, recency_days=36_500)) == [far, late]
    assert sorted(await search_ids(hass, since="1900-01-01T00:00:00+00:00")) == [
        far,
        late,
    ]


@pytest.mark.parametrize(
    "content",
    [
        "\x00",
        "\x00\x00 \x00",
        "\u200b",
        "\ufeff",
        "\u200b\u200c\u200d\u2060\ufeff",
        "\u00a0\u2002\u3000\u2028\u2029",
        "\u202e\u2066\u2069\u061c\u00ad",
        "\u3164\u115f\u2800",
        "\u0301\u20dd",
        "\x01\x1b\x7f\x9b",
    ],
    ids=[
        "nul",
        "nuls_and_space",
        "zero_width_space",
        "bom",
        "zero_widths",
        "unicode_spaces",
        "bidi_and_soft_hyphen",
        "fillers",
        "lone_combining_marks",
        "controls",
    ],
)
async def test_invisible_content_is_empty(
    hass: HomeAssistant, init_integration: MockConfigEntry, content: str
) -> None:
    """Text that shows nothing is not a memory."""
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "add", {"content": content})

    assert err.value.translation_key == "empty_content"
    assert await _all_ids(hass) == []


async def test_nul_never_stored(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """NUL and other control characters are dropped; tabs and line breaks stay."""
    item_id = await add(hass, "Mia\x00 likes\x07 tea\r\n\twith milk\x00")

    assert (await call(hass, "get", {"id": item_id}))["content"] == (
        "Mia likes tea\n\twith milk"
    )
    # Zero-width joiners inside visible text (emoji sequences) are kept.
    family = await add(hass, "Family: \U0001f468\u200d\U0001f469\u200d\U0001f467")
    assert "\u200d" in (await call(hass, "get", {"id": family}))["content"]


async def test_too_many_tags_names_the_count(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """The refusal says how many tags were given and how many fit."""
    with pytest.raises(ServiceValidationError) as err:
        await call(
            hass, "add", {"content": "ok", "tags": [f"tag{i}" for i in range(25)]}
        )

    assert err.value.translation_key == "too_many_tags"
    assert err.value.translation_placeholders == {"count": "25", "limit": "20"}
    assert "25" in str(err.value)
    assert "20" in str(err.value)
    assert await _all_ids(hass) == []


async def test_tag_words_are_joined(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """A tag of several words is stored with `_`, and found as typed."""
    item_id = await add(hass, "The boiler was serviced", tags=["Two  Words", "kids"])

    assert (await call(hass, "get", {"id": item_id}))["tags"] == ["two_words", "kids"]
    assert await search_ids(hass, tags=["two words"]) == [item_id]
    assert await search_ids(hass, tags=["TWO_WORDS"]) == [item_id]


async def test_not_loaded_after_setup_error(
    hass: HomeAssistant, mock_config_entry: MockConfigEntry, database_file: Path
) -> None:
    """With the entry in setup_error, every action answers a validation error."""
    database_file.parent.mkdir(parents=True)
    database_file.write_bytes(b"not a database " * 1000)
    mock_config_entry.add_to_hass(hass)
    assert not await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    assert mock_config_entry.state is ConfigEntryState.SETUP_ERROR

    for service, data in ALL_ACTIONS:
        with pytest.raises(ServiceValidationError) as err:
            await call(hass, service, data)
        assert err.value.translation_domain == DOMAIN
        assert err.value.translation_key == "not_loaded", service
        assert "Set it up" in str(err.value)


# -- database failures ---------------------------------------------------------

_TABLES = ("memories", "memories_fts", "memory_tags", "embedding_jobs")


def _row_counts(path: Path) -> dict[str, int]:
    """Rows per table, read from the file by a connection of its own."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: S608
            for table in _TABLES
        }


async def _writer_pragma(entry: MemoryConfigEntry, pragma: str) -> int:
    """Set a pragma on the store's own writer connection; return page_count."""
    store = entry.runtime_data.store
    assert isinstance(store, MemoryStore)
    async with store.transaction() as writer:
        await writer.execute(f"PRAGMA {pragma}")
        async with writer.execute("PRAGMA page_count") as cursor:
            row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def test_disk_full(
    hass: HomeAssistant, init_integration: MemoryConfigEntry, database_file: Path
) -> None:
    """A full disk is a translated error; a failed add stores nothing at all."""
    kept = await add(hass, "The garden hose is in the shed", tags=["garden"])
    pages = await _writer_pragma(init_integration, "page_count")
    await _writer_pragma(init_integration, f"max_page_count = {pages}")

    failure: HomeAssistantError | None = None
    before: dict[str, int] = {}
    for i in range(20):  # until the pages left over are used up
        before = await hass.async_add_executor_job(_row_counts, database_file)
        words = " ".join(f"word{i}x{j}" for j in range(150))
        try:
            await call(hass, "add", {"content": words, "tags": [f"t{i}", "full"]})
        except HomeAssistantError as err:
            failure = err
            break
    assert failure is not None
    assert not isinstance(failure, ServiceValidationError)
    assert failure.translation_domain == DOMAIN
    assert failure.translation_key == "database_full"
    assert "full" in str(failure)
    assert await hass.async_add_executor_job(_row_counts, database_file) == before
    # What is stored can still be read and searched.
    assert await search_ids(hass, query="garden") == [kept]
    assert (await call(hass, "get", {"id": kept}))["status"] == "active"

    # With space again, the same call works.
    await _writer_pragma(init_integration, "max_page_count = 1073741823")
    assert (await call(hass, "add", {"content": "Space is back"}))["created"]


async def test_database_read_only(
    hass: HomeAssistant, init_integration: MemoryConfigEntry, database_file: Path
) -> None:
    """A database SQLite may not write answers a translated error; reads work."""
    kept = await add(hass, "The garden hose is in the shed")
    await _writer_pragma(init_integration, "query_only = 1")
    before = await hass.async_add_executor_job(_row_counts, database_file)

    for service, data in (
        ("add", {"content": "Ben is allergic to cats"}),
        ("forget", {"ids": [kept]}),
        ("forget", {"ids": [kept], "purge": True}),
    ):
        with pytest.raises(HomeAssistantError) as err:
            await call(hass, service, data)
        assert not isinstance(err.value, ServiceValidationError)
        assert err.value.translation_key == "database_read_only"
        assert "may not write" in str(err.value)

    assert await hass.async_add_executor_job(_row_counts, database_file) == before
    assert await search_ids(hass, query="garden") == [kept]


@pytest.mark.parametrize(
    "how", ["file_deleted", "folder_deleted", "file_moved", "file_replaced"]
)
async def test_database_vanished(
    hass: HomeAssistant,
    init_integration: MemoryConfigEntry,
    database_file: Path,
    how: str,
) -> None:
    """A database removed under Home Assistant is reported, never written blind.

    In WAL mode SQLite would go on "storing" into the deleted file, and all
    of it would be gone at the next start.
    """
    await add(hass, "The garden hose is in the shed")
    await hass.async_block_till_done()

    def vanish() -> None:
        if how == "file_deleted":
            database_file.unlink()
        elif how == "folder_deleted":
            shutil.rmtree(database_file.parent)
        elif how == "file_moved":
            database_file.rename(database_file.with_suffix(".moved"))
        else:  # a copy put back in its place (a restore while running)
            moved = database_file.rename(database_file.with_suffix(".moved"))
            shutil.copyfile(moved, database_file)

    await hass.async_add_executor_job(vanish)

    for service, data in (
        ("add", {"content": "Ben is allergic to cats"}),
        ("search", {"query": "garden"}),
        ("get", {"id": 1}),
        ("forget", {"ids": [1]}),
    ):
        with pytest.raises(HomeAssistantError) as err:
            await call(hass, service, data)
        assert not isinstance(err.value, ServiceValidationError)
        assert err.value.translation_key == "database_gone", service
        assert str(database_file) in str(err.value)

    # As the message says: a reload starts again (with the file now there).
    assert await hass.config_entries.async_reload(init_integration.entry_id)
    await hass.async_block_till_done()
    assert (await call(hass, "add", {"content": "Ben is allergic to cats"}))["created"]


async def test_other_errors_are_not_database_errors(hass: HomeAssistant) -> None:
    """A ValueError that is not aiosqlite's closed connection is a bug: let it go."""

    async def buggy(call: ServiceCall) -> ServiceResponse:
        raise ValueError("a bug, not the database")

    with pytest.raises(ValueError, match="a bug"):
        await translated_errors(buggy)(ServiceCall(hass, DOMAIN, "add", {}))
