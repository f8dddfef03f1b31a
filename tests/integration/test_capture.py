"""Conversation capture: every Assist conversation is kept, privately, for a while."""

from __future__ import annotations

import asyncio
from contextlib import closing
from datetime import timedelta
from pathlib import Path
import sqlite3
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components import conversation
from homeassistant.components.conversation.const import ChatLogEventType
from homeassistant.components.conversation.trace import (
    ConversationTraceEvent,
    ConversationTraceEventType,
    async_conversation_trace,
)
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import device_registry as dr, entity_registry as er, llm
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.memory.capture import (
    FLUSH_DELAY,
    POLL_INTERVAL,
    _json,
    _seen_message,
)
from custom_components.memory.const import (
    CONF_CONVERSATION_RETENTION_DAYS,
    CONF_SATELLITE_PERSONS,
)
from custom_components.memory.engine import (
    ConversationLog,
    MessageRole,
    StoredConversation,
    StoredMessage,
)

from . import call, entity_state
from .assist import (
    AGENT_ID,
    ANNA,
    BEN,
    Household,
    RecordingAgent,
    async_add_person,
    converse,
)


def log_of(entry: MockConfigEntry) -> ConversationLog:
    """Return the loaded entry's conversation log."""
    log: ConversationLog = entry.runtime_data.conversations
    return log


async def stored(
    entry: MockConfigEntry,
) -> list[tuple[StoredConversation, list[StoredMessage]]]:
    """Every stored conversation (oldest first) with its messages."""
    log = log_of(entry)
    conversations = sorted(await log.conversations(), key=lambda c: c.id)
    return [(c, await log.messages(c.id)) for c in conversations]


async def later(hass: HomeAssistant, seconds: float) -> None:
    """Let `seconds` pass for Home Assistant's timers."""
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=seconds))
    await hass.async_block_till_done()


def file_bytes(path: Path) -> bytes:
    """Read the database file and its write-ahead log."""
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


async def test_conversation_is_captured(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    enabled_sensors: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
) -> None:
    """User, assistant and tool messages are kept with who, where and when."""
    first = await converse(
        hass,
        "Remember that the plumber comes on Monday",
        context=household.context("anna"),
        device_id="phone-1",
    )
    # The reply to a new chat log comes with no event: the poll reads it.
    await later(hass, POLL_INTERVAL + 1)
    [(conv, messages)] = await stored(init_integration)
    assert [(m.role, m.content) for m in messages] == [
        (MessageRole.USER, "Remember that the plumber comes on Monday"),
        (MessageRole.ASSISTANT, "OK."),
    ]
    assert conv.conversation_id == first.conversation_id
    assert conv.agent_id == AGENT_ID
    assert conv.user_id == household.anna.id
    assert conv.device_id == "phone-1"
    assert conv.scope == ANNA
    assert conv.ended_at is None
    assert all(m.scope == ANNA for m in messages)
    assert all(m.user_id == household.anna.id for m in messages)
    assert all(m.device_id == "phone-1" for m in messages)
    assert messages[1].agent_id == AGENT_ID

    # A second turn with a tool call, in the same conversation.
    assist_agent.tool_calls = [
        llm.ToolInput(
            tool_name="assist__memory__search",
            tool_args={"query": "plumber"},
            id="call-1",
        )
    ]
    assist_agent.reply = "On Monday."
    await converse(
        hass,
        "When does the plumber come?",
        context=household.context("anna"),
        device_id="phone-1",
        conversation_id=first.conversation_id,
    )
    await later(hass, FLUSH_DELAY + 1)
    [(conv, messages)] = await stored(init_integration)
    assert [m.role for m in messages] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL_RESULT,
        MessageRole.ASSISTANT,
    ]
    call_message, result_message = messages[3], messages[4]
    assert "assist__memory__search" in call_message.data
    assert "plumber" in call_message.data
    assert result_message.tool_name == "assist__memory__search"
    assert result_message.tool_call_id == "call-1"
    assert '"memories"' in result_message.data
    assert messages[5].content == "On Monday."
    assert [m.created_at for m in messages] == sorted(m.created_at for m in messages)
    assert (
        entity_state(hass, "sensor.assist_memory_conversations_captured_today").state
        == "1"
    )


async def test_capture_survives_unload_and_restart(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    enabled_sensors: MockConfigEntry,
    assist_agent: RecordingAgent,
) -> None:
    """What was said is written on unload, and still there after set-up."""
    result = await converse(hass, "The garage door code changed")
    # No timer has fired yet: unloading writes it.
    assert await hass.config_entries.async_unload(init_integration.entry_id)
    await hass.async_block_till_done()
    assert await hass.config_entries.async_setup(init_integration.entry_id)
    await hass.async_block_till_done()

    [(conv, messages)] = await stored(init_integration)
    assert conv.conversation_id == result.conversation_id
    assert [m.content for m in messages] == ["The garage door code changed", "OK."]
    # Set-up ends what the last run left open: its chat sessions are gone.
    assert conv.ended_at is not None
    assert (
        entity_state(hass, "sensor.assist_memory_conversations_captured_today").state
        == "1"
    )

    # A reload does not capture the still-live chat log a second time.
    await converse(
        hass, "And the gate code too", conversation_id=result.conversation_id
    )
    await later(hass, FLUSH_DELAY + 1)
    texts = [m.content for _c, ms in await stored(init_integration) for m in ms]
    assert texts == [
        "The garage door code changed",
        "OK.",
        "And the gate code too",
        "OK.",
    ]


async def test_stop_writes_everything(
    hass: HomeAssistant, init_integration: MockConfigEntry, assist_agent: RecordingAgent
) -> None:
    """Home Assistant stopping (entries stay loaded) writes what is pending."""
    await converse(hass, "The window in the attic is open")
    hass.bus.async_fire(EVENT_HOMEASSISTANT_STOP)
    await hass.async_block_till_done()
    [(_conv, messages)] = await stored(init_integration)
    assert [m.content for m in messages] == ["The window in the attic is open", "OK."]


async def test_deleted_chat_log_ends_the_conversation(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    freezer: FrozenDateTimeFactory,
) -> None:
    """When Home Assistant drops the idle chat session, the conversation ends."""
    await converse(hass, "Turn on the porch light")
    await later(hass, FLUSH_DELAY + 1)
    [(conv, _messages)] = await stored(init_integration)
    assert conv.ended_at is None

    freezer.tick(timedelta(minutes=6))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()
    await later(hass, FLUSH_DELAY + 1)
    [(conv, messages)] = await stored(init_integration)
    assert conv.ended_at is not None
    assert [m.content for m in messages] == ["Turn on the porch light", "OK."]
    assert not init_integration.runtime_data.capture._conversations


async def test_satellite_conversations(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
) -> None:
    """A satellite's device is recorded; its scope is the household or its person."""
    other = MockConfigEntry(domain="test")
    other.add_to_hass(hass)
    device = dr.async_get(hass).async_get_or_create(
        config_entry_id=other.entry_id, identifiers={("test", "sat")}
    )
    satellite = er.async_get(hass).async_get_or_create(
        "assist_satellite", "test", "sat", device_id=device.id, config_entry=other
    )
    await converse(hass, "Good morning", satellite_id=satellite.entity_id)
    hass.config_entries.async_update_entry(
        init_integration, options={CONF_SATELLITE_PERSONS: {device.id: ANNA}}
    )
    await converse(hass, "Good night", satellite_id=satellite.entity_id)
    await init_integration.runtime_data.capture.async_flush()

    [(morning, _m1), (night, _m2)] = await stored(init_integration)
    assert morning.device_id == device.id
    assert morning.user_id is None
    assert morning.scope == "household"
    assert night.device_id == device.id
    assert night.scope == ANNA


async def test_agent_called_directly_uses_its_llm_context(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
) -> None:
    """Without `async_converse` (no trace), the LLM context says who spoke."""
    await assist_agent.async_process(
        conversation.ConversationInput(
            text="My favourite colour is green",
            context=household.context("ben"),
            conversation_id=None,
            device_id="tablet",
            satellite_id=None,
            language="en",
            agent_id=AGENT_ID,
        )
    )
    await init_integration.runtime_data.capture.async_flush()
    [(conv, messages)] = await stored(init_integration)
    assert conv.scope == BEN
    assert conv.user_id == household.ben.id
    assert conv.device_id == "tablet"
    assert conv.agent_id == AGENT_ID
    assert [m.scope for m in messages] == [BEN, BEN]


async def test_write_failure_is_retried(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A failed write is logged (without content) and retried with the next."""
    with patch.object(
        ConversationLog, "save", side_effect=sqlite3.OperationalError("disk full")
    ):
        await converse(hass, "The secret recipe uses cardamom")
        await later(hass, FLUSH_DELAY + 1)
    ours = [r for r in caplog.records if r.name.startswith("custom_components")]
    assert "Could not save conversation messages: disk full" in caplog.text
    assert not any("cardamom" in r.getMessage() for r in ours)
    assert await stored(init_integration) == []

    await init_integration.runtime_data.capture.async_flush()
    [(_conv, messages)] = await stored(init_integration)
    assert messages[0].content == "The secret recipe uses cardamom"


async def test_search_conversations_by_scope(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
) -> None:
    """`memory.search` finds kept messages, each person only their own."""
    await converse(
        hass, "My passport expires in June", context=household.context("anna")
    )
    await converse(
        hass, "Ben's passport is in the drawer", context=household.context("ben")
    )
    await converse(hass, "The family passports are renewed together")
    await init_integration.runtime_data.capture.async_flush()

    # Anna is not an admin: her action calls are restricted to her reach.
    as_anna = Context(user_id=household.anna.id)
    found = await call(
        hass,
        "search",
        {"query": "passport", "source": "conversations"},
        context=as_anna,
    )
    assert "memories" not in found
    assert {m["content"] for m in found["messages"]} == {
        "My passport expires in June",
        "The family passports are renewed together",
    }
    assert all(m["scope"] in ("household", ANNA) for m in found["messages"])
    assert all("score" in m and "conversation_id" in m for m in found["messages"])

    both = await call(
        hass, "search", {"query": "passport", "source": "both"}, context=as_anna
    )
    assert both["memories"] == []
    assert both["messages"] == found["messages"]
    # Default: memories only.
    assert list(await call(hass, "search", {"query": "passport"})) == ["memories"]
    # An automation (no user) reaches every scope.
    everyone = await call(
        hass, "search", {"query": "passport", "source": "conversations"}
    )
    assert {m["scope"] for m in everyone["messages"]} >= {ANNA, BEN}


async def test_forget_conversation_messages(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
    database_file: Path,
) -> None:
    """Forgetting messages erases them and every copy of their text."""
    marker = "zebracode4711"
    await converse(
        hass, f"The alarm code is {marker}", context=household.context("anna")
    )
    await converse(
        hass, f"Ben's code is not {marker}", context=household.context("ben")
    )
    await init_integration.runtime_data.capture.async_flush()
    as_anna = Context(user_id=household.anna.id)

    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "forget", {"query": marker, "source": "conversations"})
    assert err.value.translation_key == "messages_need_purge"
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "forget", {"ids": [1], "source": "both", "purge": True})
    assert err.value.translation_key == "ids_need_one_source"

    found = await call(
        hass, "search", {"query": marker, "source": "conversations"}, context=as_anna
    )
    [annas] = found["messages"]
    everyone = await call(hass, "search", {"query": marker, "source": "conversations"})
    [bens] = [m for m in everyone["messages"] if m["scope"] == BEN]
    # Anna cannot reach Ben's message, even by id.
    with pytest.raises(ServiceValidationError) as err:
        await call(
            hass,
            "forget",
            {"ids": [bens["id"]], "source": "conversations", "purge": True},
            context=as_anna,
        )
    assert err.value.translation_key == "unknown_message"

    preview = await call(
        hass,
        "forget",
        {"query": marker, "source": "conversations", "dry_run": True},
        context=as_anna,
    )
    assert preview["dry_run"] is True
    assert preview["purged"] is False
    assert [m["id"] for m in preview["messages"]] == [annas["id"]]

    done = await call(
        hass,
        "forget",
        {"ids": [annas["id"]], "source": "conversations", "purge": True},
        context=as_anna,
    )
    assert done["purged"] is True
    assert [m["content"] for m in done["messages"]] == [f"The alarm code is {marker}"]

    # Then everything else, memories and messages, by a search.
    done = await call(
        hass, "forget", {"query": marker, "source": "both", "purge": True}
    )
    assert done["memories"] == []
    assert [m["id"] for m in done["messages"]] == [bens["id"]]
    assert marker.encode() not in file_bytes(database_file)


async def test_retention(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Messages older than the retention are erased; 0 days keeps none."""
    hass.config_entries.async_update_entry(
        init_integration, options={CONF_CONVERSATION_RETENTION_DAYS: 1}
    )
    await converse(hass, "Old words about the shed")
    await init_integration.runtime_data.capture.async_flush()
    assert len(await stored(init_integration)) == 1

    freezer.tick(timedelta(days=1, hours=2))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert await stored(init_integration) == []

    # 0 days: nothing is kept, and nothing captured.
    await converse(hass, "New words about the shed")
    await init_integration.runtime_data.capture.async_flush()
    assert len(await stored(init_integration)) == 1
    hass.config_entries.async_update_entry(
        init_integration, options={CONF_CONVERSATION_RETENTION_DAYS: 0}
    )
    assert await init_integration.runtime_data.capture.async_apply_retention() == 2
    await converse(hass, "Words not kept")
    await init_integration.runtime_data.capture.async_flush()
    assert await stored(init_integration) == []


async def test_log_failures_do_not_stop_set_up(
    hass: HomeAssistant,
    mock_config_entry: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Ending last run's conversations or retention may fail: set-up goes on."""
    mock_config_entry.add_to_hass(hass)
    error = sqlite3.OperationalError("database is locked")
    with (
        patch.object(ConversationLog, "close_open", side_effect=error),
        patch.object(ConversationLog, "purge_before", side_effect=error),
    ):
        assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
        await hass.async_block_till_done()
    assert "Could not end the conversations of the last run" in caplog.text
    assert "Could not apply conversation retention" in caplog.text


def test_content_conversion() -> None:
    """Odd content still becomes a message; system prompts are not kept."""
    assert _seen_message({"role": "system", "content": "You are..."}) is None
    created = dt_util.utcnow()
    made = _seen_message(
        {
            "role": "tool_result",
            "tool_call_id": "c1",
            "tool_name": "old_style",
            "tool_result": {"value": object()},
            "created": created,
        }
    )
    assert made is not None
    key, raw = made
    assert key == ("tool_result", created.isoformat(), "c1")
    assert raw.role is MessageRole.TOOL_RESULT
    assert raw.data.startswith('"')  # not JSON-able: kept as text
    assert _json({"a": [1, 2]}) == '{"a":[1,2]}'


async def test_unanswered_turn_is_watched_until_it_ends(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """A turn with no reply (yet) is polled; at its end, it is written as is."""
    capture = init_integration.runtime_data.capture
    capture._on_event("c-1", ChatLogEventType.CREATED, {"chat_log": {}})
    capture._on_event(
        "c-1",
        ChatLogEventType.CONTENT_ADDED,
        {"content": {"role": "user", "content": "Hello?", "created": dt_util.utcnow()}},
    )
    await later(hass, FLUSH_DELAY + 1)
    # Nobody is known to be speaking and nobody answered: nothing written yet.
    assert await stored(init_integration) == []
    await later(hass, POLL_INTERVAL + 1)
    assert capture._poll_timer is not None  # still watching

    capture._on_event("c-1", ChatLogEventType.DELETED, {})
    await later(hass, POLL_INTERVAL + 1)
    [(conv, messages)] = await stored(init_integration)
    assert conv.scope == "household"
    assert conv.ended_at is not None
    assert [m.content for m in messages] == ["Hello?"]
    assert capture._poll_timer is None
    # Events of an unknown, already ended conversation are ignored.
    capture._on_event("c-2", ChatLogEventType.DELETED, {})
    assert "c-2" not in capture._conversations
    # Whatever an event holds, it never raises into the conversation.
    capture._on_event("c-3", ChatLogEventType.CONTENT_ADDED, {})
    capture._on_event("c-3", ChatLogEventType.UPDATED, {"chat_log": {"content": [{}]}})


async def test_another_conversations_trace_is_ignored(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """An agent calling an agent: the outer turn's input is not this speaker."""
    capture = init_integration.runtime_data.capture
    with async_conversation_trace() as trace:
        trace.add_event(
            ConversationTraceEvent(
                ConversationTraceEventType.ASYNC_PROCESS,
                {"conversation_id": "outer", "context": Context(user_id="u1")},
            )
        )
        capture._on_event("inner", ChatLogEventType.CREATED, {"chat_log": {}})
    conversation = capture._conversations["inner"]
    assert conversation.identified is False
    assert conversation.user_id is None
    capture._on_event("inner", ChatLogEventType.DELETED, {})
    await capture.async_flush()


async def test_each_speaker_keeps_their_messages(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
) -> None:
    """Two people in one conversation, before any write: each keeps their scope."""
    first = await converse(
        hass, "My locker code is 1234", context=household.context("anna")
    )
    await converse(
        hass,
        "And mine is 9876",
        context=household.context("ben"),
        conversation_id=first.conversation_id,
    )
    await init_integration.runtime_data.capture.async_flush()
    [(conv, messages)] = await stored(init_integration)
    assert [(m.content, m.scope) for m in messages] == [
        ("My locker code is 1234", ANNA),
        ("OK.", ANNA),
        ("And mine is 9876", BEN),
        ("OK.", BEN),
    ]
    assert messages[0].user_id == household.anna.id
    assert messages[3].user_id == household.ben.id
    # The conversation stays with who started it.
    assert (conv.scope, conv.user_id) == (ANNA, household.anna.id)


async def test_actions_read_what_was_just_said(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
) -> None:
    """Search, forget and export see a conversation at once, before capture's timer."""
    anna = household.context("anna")
    await converse(hass, "The spare key hides under the blue flowerpot", context=anna)
    found = await call(
        hass, "search", {"query": "flowerpot", "source": "conversations"}, context=anna
    )
    assert [m["content"] for m in found["messages"]] == [
        "The spare key hides under the blue flowerpot"
    ]

    await converse(hass, "My sister arrives on the night train", context=anna)
    preview = await call(
        hass,
        "forget",
        {"query": "train", "source": "both", "dry_run": True},
        context=anna,
    )
    assert [m["content"] for m in preview["messages"]] == [
        "My sister arrives on the night train"
    ]

    await converse(hass, "Remember the dentist on Friday", context=anna)
    exported = await call(hass, "export", {}, context=anna)
    days = [Path(p) for p in exported["paths"] if "/conversations/" in p]
    assert "Remember the dentist on Friday" in "".join(p.read_text() for p in days)


async def test_a_flush_waits_for_the_one_under_way(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
) -> None:
    """An action's flush returns only once a timer's flush under way has written."""
    capture = init_integration.runtime_data.capture
    await converse(hass, "The plumber comes on Wednesday", context=Context())
    under_way = hass.async_create_task(capture.async_flush())
    await asyncio.sleep(0)  # it has started writing
    await capture.async_flush()
    assert under_way.done()
    [(_conv, messages)] = await stored(init_integration)
    assert messages[0].content == "The plumber comes on Wednesday"


async def test_a_shared_conversation_is_each_speakers_own(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
) -> None:
    """Cleo continues Anna's conversation: each finds and exports her own words."""
    anna, cleo = household.context("anna"), await async_add_person(hass, "Cleo")
    first = await converse(hass, "My biopsy results come on Monday", context=anna)
    await init_integration.runtime_data.capture.async_flush()
    await converse(
        hass,
        "My bike results from the race come on Monday",
        context=cleo,
        conversation_id=first.conversation_id,
    )
    for context, own, other in ((anna, "biopsy", "bike"), (cleo, "bike", "biopsy")):
        found = await call(
            hass,
            "search",
            {"query": "results Monday", "source": "conversations"},
            context=context,
        )
        said = " ".join(m["content"] for m in found["messages"])
        assert own in said
        assert other not in said
        exported = await call(hass, "export", {}, context=context)
        text = "".join(
            Path(p).read_text() for p in exported["paths"] if "/conversations/" in p
        )
        assert own in text
        assert other not in text


def languages(hass: HomeAssistant) -> list[tuple[str, str, str]]:
    """Every stored message's role, text and language, in order."""
    with closing(sqlite3.connect(hass.config.path("memory", "memory.db"))) as conn:
        return conn.execute(
            "SELECT role, content, language FROM conversation_messages ORDER BY id"
        ).fetchall()


async def test_each_message_keeps_the_language_of_its_turn(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
) -> None:
    """The user's words, the reply and tool results carry the turn's language.

    Stored as its primary subtag ("de" for "de-DE").
    """
    anna = household.context("anna")
    assist_agent.reply = "In Ordnung."
    first = await converse(
        hass, "Der Klempner kommt am Montag", context=anna, language="de-DE"
    )
    # The reply comes with no event: read by the poll, still in German.
    await later(hass, POLL_INTERVAL + 1)
    assist_agent.reply = "D'accord."
    assist_agent.tool_calls = [
        llm.ToolInput(
            tool_name="assist__memory__search",
            tool_args={"query": "plombier"},
            id="call-fr",
        )
    ]
    await converse(
        hass,
        "Quand vient le plombier ?",
        context=anna,
        conversation_id=first.conversation_id,
        language="fr",
    )
    await init_integration.runtime_data.capture.async_flush()
    assert [(role, language) for role, _text, language in languages(hass)] == [
        ("user", "de"),
        ("assistant", "de"),
        ("user", "fr"),
        ("assistant", "fr"),
        ("tool_result", "fr"),
        ("assistant", "fr"),
    ]
    # Without a language, Assist uses Home Assistant's own.
    await converse(hass, "The bins go out on Tuesday", context=anna)
    await init_integration.runtime_data.capture.async_flush()
    assert languages(hass)[-2:] == [
        ("user", "The bins go out on Tuesday", hass.config.language),
        ("assistant", "D'accord.", hass.config.language),
    ]


async def test_an_agent_called_directly_gives_its_language(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    assist_agent: RecordingAgent,
    household: Household,
) -> None:
    """Without a trace, the LLM context's language is the turn's."""
    await assist_agent.async_process(
        conversation.ConversationInput(
            text="Mijn lievelingskleur is groen",
            context=household.context("ben"),
            conversation_id=None,
            device_id="tablet",
            satellite_id=None,
            language="nl",
            agent_id=AGENT_ID,
        )
    )
    await init_integration.runtime_data.capture.async_flush()
    assert [language for _role, _text, language in languages(hass)] == ["nl", "nl"]
