"""The panel's websocket API: browse, get and subscribe, each within the user's reach.

A real Home Assistant with its websocket server; users log in with their own
access tokens, so the reach comes from who is connected, as in the panel.
"""

from __future__ import annotations

import asyncio
from typing import Any

from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser
from pytest_homeassistant_custom_component.typing import (
    MockHAClientWebSocket,
    WebSocketGenerator,
)

from custom_components.memory.engine import (
    HOUSEHOLD,
    MemoryStatus,
    NewMemory,
    Origin,
    Source,
)
from custom_components.memory.websocket_api import CHANGE_WINDOW_SECONDS
from tests.provider_servers import FakeEmbeddingServer

from . import add, setup_embedding_entry
from .ai_task_agent import ScriptedAITask
from .assist import ANNA, BEN, Household


async def token_for(hass: HomeAssistant, user: MockUser) -> str:
    """Log a user in: an access token of their own."""
    refresh = await hass.auth.async_create_refresh_token(user, "https://example.com/")
    return hass.auth.async_create_access_token(refresh)


async def guest_token(hass: HomeAssistant) -> str:
    """Log in a non-admin user linked to no person (reads codes redacted)."""
    group = await hass.auth.async_get_group(GROUP_ID_USER)
    assert group is not None
    guest = MockUser(name="Guest", groups=[group]).add_to_hass(hass)
    return await token_for(hass, guest)


async def ask(client: MockHAClientWebSocket, **message: Any) -> dict[str, Any]:
    """Send one command; return its result, or its error."""
    await client.send_json_auto_id(message)
    reply = await client.receive_json()
    return dict(reply["result"] if reply["success"] else {"error": reply["error"]})


async def memories_of(hass: HomeAssistant, household: Household) -> dict[str, int]:
    """Add the household's, Anna's and Ben's memories; return their ids by name."""
    anna, ben = household.context("anna"), household.context("ben")
    return {
        "house": await add(hass, "The bins go out on Thursday"),
        "anna": await add(
            hass, "Anna's running shoes are size 39", context=anna, person=ANNA
        ),
        "ben": await add(
            hass, "Ben is planning a surprise party", context=ben, person=BEN
        ),
        "code": await add(hass, "The garage door code is 7731"),
    }


async def test_an_admin_browses_everything_with_owners(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """The owner sees every memory, named by whose it is, a page at a time."""
    ids = await memories_of(hass, household)
    client = await hass_ws_client(hass)
    result = await ask(client, type="memory/browse", limit=2)
    assert result["total"] == 4
    first = [memory["id"] for memory in result["memories"]]
    assert first == [ids["code"], ids["ben"]]
    owners = {memory["id"]: memory["owner"] for memory in result["memories"]}
    assert owners[ids["ben"]] == "Ben"
    rest = await ask(client, type="memory/browse", limit=2, cursor=result["cursor"])
    assert [memory["id"] for memory in rest["memories"]] == [ids["anna"], ids["house"]]
    assert rest["cursor"] is None
    # One person's, the household's only, and a search by relevance.
    anna = await ask(client, type="memory/browse", person=ANNA)
    assert [memory["id"] for memory in anna["memories"]] == [ids["anna"]]
    house = await ask(client, type="memory/browse", person=HOUSEHOLD)
    assert {memory["id"] for memory in house["memories"]} == {ids["house"], ids["code"]}
    found = await ask(client, type="memory/browse", query="surprise party")
    assert found["memories"][0]["id"] == ids["ben"]
    assert found["memories"][0]["score"] > 0


async def test_a_person_never_receives_someone_elses_memory(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Anna (not an admin) lists, searches and opens the household's and her own only."""
    ids = await memories_of(hass, household)
    client = await hass_ws_client(hass, await token_for(hass, household.anna))
    listed = await ask(client, type="memory/browse")
    assert {memory["id"] for memory in listed["memories"]} == {
        ids["house"],
        ids["anna"],
        ids["code"],
    }
    assert listed["total"] == 3
    # Ben's, asked for by name, by words, by id, or by most recalled.
    assert (await ask(client, type="memory/browse", person=BEN)) == {
        "memories": [],
        "total": 0,
        "cursor": None,
    }
    searched = await ask(client, type="memory/browse", query="surprise party Ben")
    assert ids["ben"] not in {memory["id"] for memory in searched["memories"]}
    recalled = await ask(client, type="memory/browse", order="recalled", status="any")
    assert ids["ben"] not in {memory["id"] for memory in recalled["memories"]}
    refused = await ask(client, type="memory/get", memory_id=ids["ben"])
    assert refused["error"]["translation_key"] == "unknown_memory"
    # Her own, with the code shown to her (an identified person in its scope).
    own = await ask(client, type="memory/get", memory_id=ids["code"])
    assert "7731" in own["memory"]["content"]


async def test_a_user_with_no_person_reads_codes_redacted(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """A non-admin linked to no person sees the household's, codes redacted."""
    ids = await memories_of(hass, household)
    client = await hass_ws_client(hass, await guest_token(hass))
    listed = await ask(client, type="memory/browse")
    texts = {memory["id"]: memory["content"] for memory in listed["memories"]}
    assert set(texts) == {ids["house"], ids["code"]}
    assert texts[ids["code"]] == "The garage door code is [redacted]"


async def test_get_shows_the_history_chain(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Portland -> Seattle: each opens with what it replaced or what replaced it."""
    store = init_integration.runtime_data.store
    portland = await add(hass, "We live in Portland")
    seattle, _old = await store.supersede(
        portland,
        NewMemory(content="We live in Seattle", source=Source(origin=Origin.DIGESTION)),
    )
    client = await hass_ws_client(hass)
    new = await ask(client, type="memory/get", memory_id=seattle.id)
    assert new["memory"]["content"] == "We live in Seattle"
    assert [memory["id"] for memory in new["superseded"]] == [portland]
    assert new["superseded_by"] == []
    old = await ask(client, type="memory/get", memory_id=portland)
    assert old["memory"]["status"] == "superseded"
    assert [memory["id"] for memory in old["superseded_by"]] == [seattle.id]


async def test_bad_input_is_an_error_not_a_crash(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """A forged cursor, an id beyond 64 bits, a page of 0: clear errors."""
    client = await hass_ws_client(hass)
    forged = await ask(client, type="memory/browse", cursor="bm90IGEgY3Vyc29y")
    assert forged["error"]["code"] == "home_assistant_error"
    assert forged["error"]["translation_key"] == "page_cursor"
    huge = await ask(client, type="memory/get", memory_id=2**70)
    assert huge["error"]["code"] == "home_assistant_error"
    assert "9223372036854775807" in huge["error"]["message"]
    for message in (
        {"type": "memory/browse", "limit": 0},
        {"type": "memory/browse", "status": "deleted"},
        {"type": "memory/browse", "origins": ["telepathy"]},
    ):
        refused = await ask(client, **message)
        assert refused["error"]["code"] == "invalid_format", message


async def test_subscribers_hear_that_something_changed_never_what(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """One event per change, with no content; none after unsubscribing."""
    client = await hass_ws_client(hass, await token_for(hass, household.anna))
    await client.send_json_auto_id({"type": "memory/subscribe"})
    subscribed = await client.receive_json()
    assert subscribed["success"]
    await add(
        hass, "Ben's secret gift idea", context=household.context("ben"), person=BEN
    )
    event = await client.receive_json()
    assert event["type"] == "event"
    assert event["event"] == {"changed": True}
    # Changes in quick succession are one event.
    for number in range(3):
        await add(hass, f"The shed key number {number} hangs by the door")
    assert (await client.receive_json())["event"] == {"changed": True}
    with pytest.raises(TimeoutError):
        await client.receive_json(timeout=CHANGE_WINDOW_SECONDS * 2)
    # A change just before unsubscribing sends nothing after it (its event
    # may come before the unsubscription's answer, never after).
    await add(hass, "The spare bulbs are in the hall cupboard")
    await client.send_json_auto_id(
        {"type": "unsubscribe_events", "subscription": subscribed["id"]}
    )
    while (reply := await client.receive_json())["type"] == "event":
        pass
    assert reply["success"]
    await add(hass, "Another note")
    await asyncio.sleep(CHANGE_WINDOW_SECONDS * 2)
    # The next message is the answer to a new command, not an event.
    result = await ask(client, type="memory/browse", limit=1)
    assert result["total"] == 5


async def test_forget_restore_and_purge_within_reach(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Anna forgets and restores her own; Ben's is unknown to her; purge erases."""
    ids = await memories_of(hass, household)
    client = await hass_ws_client(hass, await token_for(hass, household.anna))
    forgot = await ask(client, type="memory/forget", memory_ids=[ids["anna"]])
    assert forgot == {"forgotten": [ids["anna"]], "purged": False}
    archived = await ask(client, type="memory/browse", status="archived")
    assert [memory["id"] for memory in archived["memories"]] == [ids["anna"]]
    restored = await ask(client, type="memory/restore", memory_ids=[ids["anna"]])
    assert restored == {"restored": [ids["anna"]]}
    assert (await ask(client, type="memory/get", memory_id=ids["anna"]))["memory"][
        "status"
    ] == "active"
    # Someone else's: refused as unknown, and nothing changed.
    for command in ("memory/forget", "memory/restore"):
        refused = await ask(client, type=command, memory_ids=[ids["anna"], ids["ben"]])
        assert refused["error"]["translation_key"] == "unknown_memory"
    store = init_integration.runtime_data.store
    items = await store.get_many([ids["anna"], ids["ben"]])
    assert {item.status for item in items.values()} == {MemoryStatus.ACTIVE}
    # For good.
    purged = await ask(
        client, type="memory/forget", memory_ids=[ids["anna"]], purge=True
    )
    assert purged == {"forgotten": [ids["anna"]], "purged": True}
    assert ids["anna"] not in await store.get_many([ids["anna"]])
    gone = await ask(client, type="memory/restore", memory_ids=[ids["anna"]])
    assert gone["error"]["translation_key"] == "unknown_memory"


async def test_a_selection_beyond_one_page_is_forgotten_at_once(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """The panel's selection may span pages (Show more): up to 500 ids a call."""
    client = await hass_ws_client(hass)
    ids = [await add(hass, f"Selected note number {number}") for number in range(60)]
    forgot = await ask(client, type="memory/forget", memory_ids=ids)
    assert sorted(forgot["forgotten"]) == ids
    restored = await ask(client, type="memory/restore", memory_ids=ids)
    assert sorted(restored["restored"]) == ids
    refused = await ask(client, type="memory/forget", memory_ids=list(range(1, 502)))
    assert refused["error"]["code"] == "invalid_format"
    assert (await ask(client, type="memory/browse", limit=1))["total"] == 60


async def test_restoring_over_a_twin_says_why(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """The same words were added again meanwhile: a translated refusal naming it."""
    client = await hass_ws_client(hass)
    old = await add(hass, "The spare key is under the pot")
    await ask(client, type="memory/forget", memory_ids=[old])
    new = await add(hass, "The spare key is under the pot")
    refused = await ask(client, type="memory/restore", memory_ids=[old])
    assert refused["error"]["code"] == "home_assistant_error"
    assert refused["error"]["translation_key"] == "memory_twin"
    assert refused["error"]["message"] == (
        f"Memory {new} already has this text: edit or forget that one instead"
    )


async def test_add_and_correct_with_history(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Anna adds, then rewords (the old wording stays as history), retags, moves."""
    client = await hass_ws_client(hass, await token_for(hass, household.anna))
    added = await ask(
        client,
        type="memory/add",
        content="Book the dentist",
        person=ANNA,
        tags=["todo"],
    )
    assert added["created"] is True
    first = added["id"]
    changed = await ask(
        client,
        type="memory/update",
        memory_id=first,
        content="Book the dentist for Mia",
        kind="fact",
    )
    assert "error" in changed  # unknown field: refused, nothing changed
    changed = await ask(
        client,
        type="memory/update",
        memory_id=first,
        content="Book the dentist for Mia",
    )
    second = changed["memory"]["id"]
    assert changed["replaced"] == first
    assert changed["memory"]["tags"] == ["todo"]
    assert changed["memory"]["owner"] == "Anna"
    opened = await ask(client, type="memory/get", memory_id=second)
    assert [m["content"] for m in opened["superseded"]] == ["Book the dentist"]
    # Type, tags, expiry and owner change in place: same id, no new history.
    moved = await ask(
        client,
        type="memory/update",
        memory_id=second,
        memory_type="event",
        tags=["health", "kids"],
        person=HOUSEHOLD,
        expires_at="2099-01-01T00:00:00+00:00",
    )
    assert moved["replaced"] is None
    memory = moved["memory"]
    assert (memory["id"], memory["type"], memory["owner"]) == (
        second,
        "event",
        "household",
    )
    assert memory["tags"] == ["health", "kids"]
    assert memory["expires_at"].startswith("2099-01-01")
    found = await ask(client, type="memory/browse", tags=["kids"])
    assert [m["id"] for m in found["memories"]] == [second]
    cleared = await ask(client, type="memory/update", memory_id=second, expires_at=None)
    assert cleared["memory"]["expires_at"] is None
    # Not to someone else, and not someone else's.
    refused = await ask(client, type="memory/update", memory_id=second, person=BEN)
    assert refused["error"]["translation_key"] == "person_not_allowed"
    bens = await add(hass, "Ben's note", context=household.context("ben"), person=BEN)
    hidden = await ask(client, type="memory/update", memory_id=bens, tags=["x"])
    assert hidden["error"]["translation_key"] == "unknown_memory"


async def test_a_code_seen_redacted_cannot_be_reworded(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """A user who reads "[redacted]" would save it over the code: refused."""
    code = await add(hass, "The garage door code is 7731")
    client = await hass_ws_client(hass, await guest_token(hass))
    refused = await ask(
        client,
        type="memory/update",
        memory_id=code,
        content="The garage door code is [redacted]",
    )
    assert refused["error"]["translation_key"] == "edit_redacted"
    # Its tags they may change.
    tagged = await ask(client, type="memory/update", memory_id=code, tags=["doors"])
    assert tagged["memory"]["tags"] == ["doors"]
    assert (await init_integration.runtime_data.store.get_many([code]))[
        code
    ].content == ("The garage door code is 7731")


async def test_overview_counts_and_profiles_within_reach(
    hass: HomeAssistant,
    ai_task: ScriptedAITask,
    init_integration: MockConfigEntry,
    household: Household,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Anna's overview counts her reach only; profiles refresh for her scopes only."""
    ids = await memories_of(hass, household)
    await init_integration.runtime_data.store.forget([ids["code"]])
    ai_task.responder = lambda _task: {"profile": "A short portrait."}
    anna = await hass_ws_client(hass, await token_for(hass, household.anna))
    refreshed = await ask(anna, type="memory/refresh_profile")
    assert {result["scope"] for result in refreshed["profiles"]} == {HOUSEHOLD, ANNA}
    refused = await ask(anna, type="memory/refresh_profile", person=BEN)
    assert refused["error"]["translation_key"] == "person_not_allowed"
    overview = await ask(anna, type="memory/overview")
    # The bins, Anna's shoes and the two profiles just written; the code is
    # forgotten; Ben's is not hers.
    assert overview["counts"] == {
        "active": 4,
        "expiring": 0,
        "archived": 1,
        "superseded": 0,
    }
    assert [p["owner"] for p in overview["profiles"]] == ["household", "Anna"]
    health = overview["health"]
    assert health["database_bytes"] > 0
    assert health["vector_backend"]
    assert health["ai_task_calls_last_hour"] == 2
    # The owner counts everyone's.
    owner = await hass_ws_client(hass)
    assert (await ask(owner, type="memory/overview"))["counts"]["active"] == 5


async def test_a_search_keeps_the_filters_browsing_has(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """Searched words with status expiring, an origin or an end date: still filtered."""
    store = init_integration.runtime_data.store
    kept = await add(hass, "The garden hose goes in the shed")
    brief = await add(hass, "The garden party tent stays up", expires_in={"days": 3})
    gone = await add(hass, "The garden gnome was sold")
    await store.forget([gone])
    tool = await store.add(
        NewMemory(content="The garden gate squeaks", source=Source(origin=Origin.TOOL))
    )
    client = await hass_ws_client(hass)

    async def found(**fields: Any) -> set[int]:
        result = await ask(client, type="memory/browse", query="garden", **fields)
        return {memory["id"] for memory in result["memories"]}

    assert await found() == {kept, brief, tool.item.id}
    assert await found(status="expiring") == {brief}
    assert await found(origins=["tool"]) == {tool.item.id}
    assert await found(until="2000-01-01T00:00:00+00:00") == set()
    assert gone in await found(status="any")


async def test_overview_shows_embedding_progress(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """With a provider, the health says which, whether it answers, and how far along."""
    entry = await setup_embedding_entry(hass, embedding_server.url)
    client = await hass_ws_client(hass)
    keyword = await ask(client, type="memory/overview")
    await add(hass, "The bins go out on Thursday")
    await entry.runtime_data.embedding.coordinator.async_refresh()
    await hass.async_block_till_done()
    health = (await ask(client, type="memory/overview"))["health"]
    embedding = health["embedding"]
    assert embedding["provider"] == "ollama"
    assert embedding["model"] == "embed-small"
    assert embedding["connected"] is True
    assert 0 <= embedding["progress"] <= 100
    assert keyword["health"]["embedding"]["provider"] == "ollama"
