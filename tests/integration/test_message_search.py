"""Captured conversation messages found by meaning through `memory.search`.

Real Home Assistant set-up, a real conversation agent whose turns capture
keeps, and the local embedding server of `tests/provider_servers.py`
speaking Ollama's and OpenAI's APIs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import closing
from pathlib import Path
import sqlite3
from typing import Any

from homeassistant.core import Context, HomeAssistant, State
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockUser,
    mock_config_flow,
)

from custom_components.memory.engine import MessageQuery
from custom_components.memory.engine.embedding.jobs import QueueStatus
from tests.provider_servers import FakeEmbeddingServer

from . import add, call
from .assist import (
    ANNA,
    BEN,
    AgentConfigFlow,
    Household,
    RecordingAgent,
    async_setup_agent,
    converse,
)
from .test_providers import (
    PROGRESS,
    embedding_until,
    provider_entry,
    settle,
    setup as setup_entry,
)

# "peanut allergy" shares no word (or stem) with "... allergic to nuts".
QUESTION = "peanut allergy"
EMBED_CALLS = {"ollama": "ollama.embed", "openai": "openai.embeddings"}


@pytest.fixture
async def agent(hass: HomeAssistant) -> AsyncIterator[RecordingAgent]:
    """Set up a conversation agent whose turns capture keeps."""
    with mock_config_flow("test", AgentConfigFlow):
        yield await async_setup_agent(hass)


async def wait_for(
    hass: HomeAssistant, entry: MockConfigEntry, done: Callable[[QueueStatus], bool]
) -> None:
    """Write what capture holds, then wait for the worker's status to say `done`."""
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    await entry.runtime_data.capture.async_flush()

    async def check() -> bool:
        return done(await runtime.queue.status())

    await embedding_until(hass, entry, check)


async def settle_messages(
    hass: HomeAssistant, entry: MockConfigEntry, embedded: int
) -> None:
    """Wait until `embedded` messages have vectors and none is pending."""
    await wait_for(
        hass,
        entry,
        lambda status: (
            status.messages_ready >= embedded
            and not status.messages_pending
            and not status.messages_rebuilding
        ),
    )


async def search_messages(
    hass: HomeAssistant, query: str, *, context: Context | None = None, **data: Any
) -> list[dict[str, Any]]:
    """`memory.search` over the conversation log."""
    found = await call(
        hass,
        "search",
        {"query": query, "source": "conversations", **data},
        context=context,
    )
    messages: list[dict[str, Any]] = found["messages"]
    return messages


def rows(path: Path, statement: str) -> list[tuple[Any, ...]]:
    """Read the database with a separate plain sqlite3 connection."""
    with closing(sqlite3.connect(path)) as conn:
        return [tuple(row) for row in conn.execute(statement)]


@pytest.mark.parametrize("provider", ["ollama", "openai"])
async def test_conversations_found_by_meaning(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    household: Household,
    provider: str,
) -> None:
    """A captured message is found by meaning, and only by whom it belongs to."""
    entry = await setup_entry(hass, provider_entry(embedding_server, provider))
    with mock_config_flow("test", AgentConfigFlow):
        await async_setup_agent(hass)
    await converse(hass, "Mia is allergic to nuts", context=household.context("anna"))
    await converse(
        hass, "Ben is allergic to nuts too", context=household.context("ben")
    )
    await converse(hass, "The bins go out on Thursday")
    # Three user messages; the agent's "OK." replies are too short to embed.
    await settle_messages(hass, entry, 3)
    log = entry.runtime_data.conversations
    assert await log.search(MessageQuery(text=QUESTION)) == []  # no shared word

    # Anna (not an admin) finds hers by meaning, never Ben's.
    as_anna = Context(user_id=household.anna.id)
    found = await search_messages(hass, QUESTION, context=as_anna)
    assert found[0]["content"] == "Mia is allergic to nuts"
    assert found[0]["scope"] == ANNA
    assert found[0]["matched"] == ["semantic"]
    assert {m["scope"] for m in found} <= {ANNA, "household"}
    # And the other way round: Ben's reach holds none of Anna's.
    found = await search_messages(hass, QUESTION, person=BEN)
    assert found[0]["content"] == "Ben is allergic to nuts too"
    assert {m["scope"] for m in found} <= {BEN, "household"}
    # Both signals, reported per hit.
    found = await search_messages(hass, "rubbish bins", context=as_anna)
    assert found[0]["content"] == "The bins go out on Thursday"
    assert found[0]["matched"] == ["keyword", "semantic"]

    # `both`: one query embedding serves memories and messages.
    calls = embedding_server.calls[EMBED_CALLS[provider]]
    both = await call(
        hass,
        "search",
        {"query": "what must Mia not eat", "source": "both"},
        context=as_anna,
    )
    assert embedding_server.calls[EMBED_CALLS[provider]] == calls + 1
    assert both["memories"] == []
    assert both["messages"][0]["content"] == "Mia is allergic to nuts"


async def test_provider_down_searches_keywords(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    household: Household,
    agent: RecordingAgent,
) -> None:
    """With the provider away, message search answers from keywords, no error."""
    entry = await setup_entry(hass, provider_entry(embedding_server))
    await converse(hass, "Mia is allergic to nuts")
    await settle_messages(hass, entry, 1)
    await embedding_server.stop()

    assert await search_messages(hass, QUESTION) == []
    found = await search_messages(hass, "allergic")
    assert [(m["content"], m["matched"]) for m in found] == [
        ("Mia is allergic to nuts", ["keyword"])
    ]


async def test_forgetting_a_message_erases_its_vector(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    household: Household,
    agent: RecordingAgent,
    database_file: Path,
) -> None:
    """A purged message leaves no vector, job or text hash in the database."""
    entry = await setup_entry(hass, provider_entry(embedding_server))
    await converse(hass, "The safe code is 4711 behind the painting")
    await converse(hass, "Mia is allergic to nuts")
    await settle_messages(hass, entry, 2)
    [secret] = [
        m["id"]
        for m in await search_messages(hass, "safe code")
        if "safe" in m["content"]
    ]
    [(vector,)] = rows(
        database_file,
        f"SELECT vector FROM message_embeddings WHERE message_id = {secret}",  # noqa: S608
    )

    done = await call(
        hass, "forget", {"ids": [secret], "source": "conversations", "purge": True}
    )
    assert done["purged"] is True
    assert rows(
        database_file,
        f"SELECT count(*) FROM message_embeddings WHERE message_id = {secret}",  # noqa: S608
    ) == [(0,)]
    assert rows(
        database_file,
        f"SELECT count(*) FROM message_embedding_jobs WHERE message_id = {secret}",  # noqa: S608
    ) == [(0,)]
    wal = Path(f"{database_file}-wal")
    data = database_file.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    assert vector not in data
    found = await search_messages(hass, "safe code painting")
    assert all("safe" not in m["content"] for m in found)


async def test_restart_resumes_pending_message_jobs(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    household: Household,
    agent: RecordingAgent,
    database_file: Path,
) -> None:
    """Messages kept while the provider was down are embedded after a restart."""
    entry = await setup_entry(hass, provider_entry(embedding_server))
    await embedding_server.stop()
    await converse(hass, "Mia is allergic to nuts")
    await wait_for(hass, entry, lambda status: status.messages_pending == 1)
    assert rows(database_file, "SELECT state FROM message_embedding_jobs") == [
        ("pending",)
    ]
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()

    await embedding_server.start()
    assert await hass.config_entries.async_setup(entry.entry_id)
    await settle_messages(hass, entry, 1)
    # The job queued before the restart was finished, not queued anew.
    assert rows(database_file, "SELECT state FROM message_embedding_jobs") == [
        ("ready",)
    ]
    assert rows(database_file, "SELECT count(*) FROM message_embedding_rebuilds") == [
        (0,)
    ]
    found = await search_messages(hass, QUESTION)
    assert found[0]["content"] == "Mia is allergic to nuts"
    assert found[0]["matched"] == ["semantic"]


async def progress_when(
    hass: HomeAssistant, entry: MockConfigEntry, done: Callable[[State], bool]
) -> State:
    """Write what capture holds, then wait for the progress sensor to say `done`."""
    await entry.runtime_data.capture.async_flush()

    async def check() -> bool:
        state = hass.states.get(PROGRESS)
        return state is not None and done(state)

    await embedding_until(hass, entry, check)
    state = hass.states.get(PROGRESS)
    assert state is not None
    return state


async def test_progress_counts_messages(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    household: Household,
    agent: RecordingAgent,
) -> None:
    """Embedding progress stays below 100 while only messages wait for vectors."""
    entry = await setup_entry(hass, provider_entry(embedding_server))
    await add(hass, "Mia is allergic to nuts")
    await settle(hass, entry)
    await embedding_server.stop()
    await converse(hass, "The bins go out on Thursday")

    # Every memory has its vector; the message (search by keywords) does not.
    state = await progress_when(
        hass, entry, lambda state: state.attributes["messages_pending"] == 1
    )
    assert state.state == "50.0"
    assert state.attributes == state.attributes | {
        "pending": 0,
        "embedded": 1,
        "failed": 0,
        "rebuilding": False,
        "messages_pending": 1,
        "messages_embedded": 0,
        "messages_failed": 0,
        "messages_rebuilding": False,
    }

    # The provider is back after a restart: the worker finishes the message.
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    await embedding_server.start()
    assert await hass.config_entries.async_setup(entry.entry_id)
    state = await progress_when(hass, entry, lambda state: state.state == "100.0")
    assert state.attributes == state.attributes | {
        "embedded": 1,
        "messages_pending": 0,
        "messages_embedded": 1,
    }
    found = await search_messages(hass, "rubbish bins")
    assert found[0]["matched"] == ["keyword", "semantic"]


async def test_codes_never_reach_the_embedding_provider(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    household: Household,
    agent: RecordingAgent,
) -> None:
    """What is said, added and searched goes out with "[redacted]" for its code.

    The conversation's messages, a memory an admin adds, the recall query of
    the turn and a search query: the provider on 127.0.0.1 receives every
    word but the codes. The log keeps the message as said, and shows it as
    said only to the identified people in its scope.
    """
    entry = await setup_entry(hass, provider_entry(embedding_server))
    await converse(
        hass,
        "The garage door code is 7731, remember it",
        context=household.context("anna"),
    )
    await converse(hass, "The gate code is 2468 for the gardener")  # an automation
    await call(hass, "add", {"content": "The alarm PIN is 2580"})
    await settle_messages(hass, entry, 2)
    await settle(hass, entry)
    found = await call(
        hass, "search", {"query": "what was the alarm PIN 2580", "source": "both"}
    )
    assert found["memories"][0]["content"] == "The alarm PIN is 2580"

    received = embedding_server.received
    for secret in ("7731", "2468", "2580"):
        assert not [text for text in received if secret in text], secret
    assert "The garage door code is [redacted], remember it" in received
    assert "The gate code is [redacted] for the gardener" in received
    assert "The alarm PIN is [redacted]" in received
    assert "what was the alarm PIN [redacted]" in received

    # The household's message: as said to Anna, redacted for a user with no person.
    anna = Context(user_id=household.anna.id)
    [said] = [
        m
        for m in await search_messages(hass, "gate code", context=anna)
        if "gardener" in m["content"]
    ]
    assert said["content"] == "The gate code is 2468 for the gardener"
    guest = Context(user_id=MockUser(name="Guest").add_to_hass(hass).id)
    [shown] = await search_messages(hass, "gate code", context=guest)
    assert shown["content"] == "The gate code is [redacted] for the gardener"
    dry = await call(
        hass,
        "forget",
        {"ids": [shown["id"]], "source": "conversations", "dry_run": True},
        context=guest,
    )
    assert (
        dry["messages"][0]["content"] == "The gate code is [redacted] for the gardener"
    )
