"""A PostgreSQL server that goes away or hangs under a loaded Assist Memory.

The entry's `db_url` goes through a `TcpProxy` in front of the real test
server. Cut: the actions, the panel's browse and the LLM tools give the
translated `memory_server_unavailable` error, an Assist turn still gets
its answer (without recalled memories), the `postgresql_unavailable`
repair names the server without its password, digestion's and the periodic
expiry's failed passes are logged at DEBUG only. Restored: everything works
again without a reload, the issue goes, every memory added before the cut
is there. Hung: a call fails within the store's bounds (made short here
through `backend`'s constants), not never. Unloading withdraws the
issue; a store already away when watched has it at once. No log record at any level
holds the password, none at INFO or above a memory's text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
import logging
import time

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import issue_registry as ir, llm
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
    mock_config_flow,
)
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.memory import backend
from custom_components.memory.availability import (
    ISSUE_POSTGRESQL_UNAVAILABLE,
    async_watch_availability,
    outage_level,
)
from custom_components.memory.const import DOMAIN, EXPIRE_INTERVAL_SECONDS
from custom_components.memory.engine.postgres import PostgresStore, redact_url
from tests.tcp_proxy import TcpProxy

from . import add, call, search_ids
from .assist import AgentConfigFlow, async_setup_agent, converse, recalled, speech
from .postgres import password, setup_postgres_entry
from .test_llm_tools import assist_tools, llm_context

pytestmark = pytest.mark.usefixtures("socket_enabled")

# The store's bounds in these tests (seconds): a hang ends soon.
TIMEOUT = 1.5
UNAVAILABLE = "memory_server_unavailable"
NUTS = "Mia is allergic to nuts"


@pytest.fixture
async def proxy(postgres_database: str) -> AsyncIterator[TcpProxy]:
    """Yield a proxy in front of the test server; it closes after the entry."""
    async with TcpProxy.for_url(postgres_database) as proxy:
        yield proxy


@pytest.fixture
def url(proxy: TcpProxy, postgres_database: str) -> str:
    """Return the entry's `db_url`: the test database through the proxy."""
    return proxy.url_through(postgres_database)


@pytest.fixture
async def entry(
    hass: HomeAssistant,
    url: str,
    proxy: TcpProxy,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[MockConfigEntry]:
    """Assist Memory loaded through the proxy with short bounds, logged at DEBUG."""
    caplog.set_level(logging.DEBUG)
    monkeypatch.setattr(backend, "CONNECT_TIMEOUT", TIMEOUT)
    monkeypatch.setattr(backend, "COMMAND_TIMEOUT", TIMEOUT)
    loaded = await setup_postgres_entry(hass, url)
    yield loaded
    await proxy.restore()
    await hass.async_block_till_done()
    assert await hass.config_entries.async_unload(loaded.entry_id)


def _available(store: PostgresStore) -> bool:
    """Read afresh (type checkers keep an earlier narrowing)."""
    return store.available


def _issue(hass: HomeAssistant) -> ir.IssueEntry | None:
    return ir.async_get(hass).async_get_issue(DOMAIN, ISSUE_POSTGRESQL_UNAVAILABLE)


async def _fails(hass: HomeAssistant, service: str, data: dict[str, object]) -> None:
    """Call an action; it must raise the translated error of a server away."""
    with pytest.raises(HomeAssistantError) as caught:
        await call(hass, service, data)
    assert caught.value.translation_domain == DOMAIN
    assert caught.value.translation_key == UNAVAILABLE


def _assert_logs_kept_secrets(caplog: pytest.LogCaptureFixture, url: str) -> None:
    secret = password(url)
    assert caplog.records
    assert not [r for r in caplog.records if secret in r.getMessage()]
    loud = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert not [r for r in loud if NUTS in r.getMessage()]


async def test_an_outage_gives_clear_errors_a_repair_and_heals(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    proxy: TcpProxy,
    url: str,
    hass_ws_client: WebSocketGenerator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Cut: translated errors, Assist answers, a repair; restored: all back."""
    store = entry.runtime_data.store
    assert isinstance(store, PostgresStore)
    with mock_config_flow("test", AgentConfigFlow):
        agent = await async_setup_agent(hass)
    assert await async_setup_component(hass, "llm", {})
    tools = await assist_tools(hass, llm_context())
    client = await hass_ws_client(hass)
    nuts = await add(hass, NUTS)
    bins = await add(hass, "The bins go out on Thursday")
    assert _issue(hass) is None

    await proxy.cut()
    await _fails(hass, "add", {"content": "Anna walks the dog"})
    await _fails(hass, "search", {"query": "nuts"})
    await _fails(hass, "get", {"id": nuts})
    await _fails(hass, "forget", {"ids": [bins]})
    await client.send_json_auto_id({"type": "memory/browse", "limit": 5})
    reply = await client.receive_json()
    assert not reply["success"]
    assert reply["error"]["translation_key"] == UNAVAILABLE
    with pytest.raises(HomeAssistantError) as caught:
        await tools["memory__search"].async_call(
            hass,
            llm.ToolInput(tool_name="memory__search", tool_args={"query": "nuts"}),
            llm_context(),
        )
    assert caught.value.translation_key == UNAVAILABLE
    agent.reply = "I could not look that up."
    result = await converse(hass, "What is Mia allergic to?")
    assert speech(result) == "I could not look that up."
    assert recalled(agent.last_prompt) == ""
    issue = _issue(hass)
    assert issue is not None
    assert issue.severity is ir.IssueSeverity.ERROR
    assert issue.translation_placeholders == {"server": redact_url(url)}
    assert password(url) not in repr(issue.translation_placeholders)
    assert not _available(store)
    # Digestion's pass fails quietly: the issue says it, not a line a minute.
    entry.runtime_data.digestion.async_schedule()
    await hass.async_block_till_done(wait_background_tasks=True)
    failed = [r for r in caplog.records if "Digestion could not" in r.getMessage()]
    assert failed
    assert {r.levelno for r in failed} == {logging.DEBUG}
    # So does the periodic expiry: its job survives (the hass fixture would
    # raise an exception it let through), and the next pass runs again.
    async_fire_time_changed(
        hass, dt_util.utcnow() + timedelta(seconds=EXPIRE_INTERVAL_SECONDS + 1)
    )
    await hass.async_block_till_done(wait_background_tasks=True)
    expiry = [r for r in caplog.records if "Expiring memories" in r.getMessage()]
    assert expiry
    assert {r.levelno for r in expiry} == {logging.DEBUG}

    await proxy.restore()
    assert await search_ids(hass, query="nuts") == [nuts]
    await hass.async_block_till_done()
    assert _available(store)
    assert _issue(hass) is None
    assert (await call(hass, "get", {"id": bins}))["status"] == "active"
    dog = await add(hass, "Anna walks the dog")
    assert await search_ids(hass, query="dog") == [dog]
    await client.send_json_auto_id({"type": "memory/browse", "limit": 5})
    reply = await client.receive_json()
    assert reply["success"], reply
    assert reply["result"]["total"] == 3
    await converse(hass, "What is Mia allergic to?")
    assert NUTS in recalled(agent.last_prompt)
    _assert_logs_kept_secrets(caplog, url)


async def test_a_hung_server_fails_calls_within_the_bound(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    proxy: TcpProxy,
    url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Stalled: an action fails soon with the translated error; restored: it works."""
    nuts = await add(hass, NUTS)

    proxy.stall()
    started = time.monotonic()
    await _fails(hass, "search", {"query": "nuts"})
    assert time.monotonic() - started < 4 * TIMEOUT
    assert _issue(hass) is not None

    await proxy.restore()
    assert await search_ids(hass, query="nuts") == [nuts]
    await hass.async_block_till_done()
    assert _issue(hass) is None
    _assert_logs_kept_secrets(caplog, url)


async def test_unloading_withdraws_the_issue(
    hass: HomeAssistant, entry: MockConfigEntry, proxy: TcpProxy
) -> None:
    """An issue raised while the server is away goes with the entry."""
    await proxy.cut()
    await _fails(hass, "search", {"query": "nuts"})
    assert _issue(hass) is not None
    await proxy.restore()
    assert await hass.config_entries.async_unload(entry.entry_id)
    assert _issue(hass) is None
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()


async def test_watching_a_store_already_away_raises_the_issue_at_once(
    hass: HomeAssistant, entry: MockConfigEntry, proxy: TcpProxy
) -> None:
    """A store that lost its server before it is watched has the issue at once."""
    store = entry.runtime_data.store
    assert isinstance(store, PostgresStore)
    assert outage_level(store) == logging.WARNING
    await proxy.cut()
    await _fails(hass, "search", {"query": "nuts"})
    assert outage_level(store) == logging.DEBUG
    ir.async_delete_issue(hass, DOMAIN, ISSUE_POSTGRESQL_UNAVAILABLE)
    watched = MockConfigEntry(domain=DOMAIN, data=dict(entry.data))
    async_watch_availability(hass, watched, store)
    assert _issue(hass) is not None
    await proxy.restore()
    await call(hass, "search", {"query": "nuts"})
    await hass.async_block_till_done()
    assert _issue(hass) is None
