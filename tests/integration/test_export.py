"""`memory.export`: a readable Markdown mirror, written for who asks."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.memory.engine import (
    ConversationInfo,
    ConversationLog,
    MessageRole,
    NewMessage,
)

from . import add, call
from .assist import ANNA, BEN, Household

FROZEN_TIME = "2026-03-14T12:00:00+00:00"


def export_dir(hass: HomeAssistant, *parts: str) -> Path:
    """Return a folder under `<config>/memory/export/`."""
    return Path(hass.config.path("memory", "export", *parts))


async def save_conversation(
    entry: MockConfigEntry,
    conversation_id: str,
    scope: str,
    said: list[tuple[str, datetime]],
) -> int:
    """Keep a conversation as capture does: user turns and an assistant reply each."""
    log: ConversationLog = entry.runtime_data.conversations
    messages: list[NewMessage] = []
    for text, moment in said:
        messages.append(
            NewMessage(
                role=MessageRole.USER, content=text, created_at=moment, scope=scope
            )
        )
        messages.append(
            NewMessage(
                role=MessageRole.ASSISTANT,
                content="OK.",
                created_at=moment + timedelta(seconds=5),
                scope=scope,
            )
        )
    info = ConversationInfo(
        conversation_id=conversation_id,
        started_at=said[0][1],
        scope=scope,
        agent_id="conversation.test_agent",
    )
    [key] = await log.save([(None, info, messages)])
    return key


@pytest.fixture
async def filled(
    hass: HomeAssistant, init_integration: MockConfigEntry, household: Household
) -> MockConfigEntry:
    """Memories and conversations of the household, Anna and Ben."""
    await add(hass, "Bins go out on Thursday")
    await add(hass, "# Pwned\n[click](http://evil.example) <b>x</b>")
    await add(hass, "Anna is planning Ben's surprise party", person=ANNA)
    await add(hass, "Ben prefers 19 °C", person=BEN, type="preference")
    archived = await add(hass, "An old household fact")
    await call(hass, "forget", {"ids": [archived]})
    day1 = dt_util.as_utc(
        datetime(2026, 3, 10, 9, 30, tzinfo=dt_util.get_default_time_zone())
    )
    day2 = day1 + timedelta(days=1)
    await save_conversation(
        init_integration, "h1", "household", [("Turn on the lights", day1)]
    )
    await save_conversation(
        init_integration,
        "a1",
        ANNA,
        [("Plan the surprise party", day1 + timedelta(hours=1)), ("Cake?", day2)],
    )
    await save_conversation(
        init_integration, "b1", BEN, [("What is my diary today", day2)]
    )
    return init_integration


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_non_admin_gets_household_and_own(
    hass: HomeAssistant, filled: MockConfigEntry, household: Household
) -> None:
    """Anna's export holds the household's and hers, nothing of Ben's."""
    response = await call(hass, "export", context=household.context("anna"))
    folder = export_dir(hass, ANNA)
    assert response == {
        "paths": [
            str(folder / "MEMORY.md"),
            str(folder / "conversations" / "2026-03-10.md"),
            str(folder / "conversations" / "2026-03-11.md"),
        ],
        "memories": 3,
        "days": 2,
    }
    memory_md = (folder / "MEMORY.md").read_text()
    assert "Bins go out on Thursday" in memory_md
    assert "Anna is planning Ben's surprise party" in memory_md
    assert "Ben prefers" not in memory_md
    assert "An old household fact" not in memory_md
    # Stored text cannot forge a heading, a link or HTML.
    assert [line for line in memory_md.splitlines() if line.startswith("#")] == [
        "# Memory",
        "## household",
        "### Facts",
        "## Anna",
        "### Facts",
    ]
    assert (
        "- \\# Pwned \\[click\\](http://evil.example) &lt;b&gt;x&lt;/b&gt; ("
        in memory_md
    )
    day1 = (folder / "conversations" / "2026-03-10.md").read_text()
    assert "**User**: Turn on the lights" in day1
    assert "**User**: Plan the surprise party" in day1
    assert "## 09:30, household, agent conversation.test\\_agent" in day1
    day2 = (folder / "conversations" / "2026-03-11.md").read_text()
    assert "Cake?" in day2
    assert "diary" not in day2
    assert oct((folder / "MEMORY.md").stat().st_mode & 0o777) == "0o600"

    # Someone else's memories, or everyone's, are refused.
    with pytest.raises(ServiceValidationError) as err:
        await call(
            hass, "export", {"everything": True}, context=household.context("anna")
        )
    assert err.value.translation_key == "export_everything_admin"
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "export", {"person": BEN}, context=household.context("anna"))
    assert err.value.translation_key == "person_not_allowed"
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "export", {"person": ANNA, "everything": True})
    assert err.value.translation_key == "export_person_or_everything"
    # Unticking "everything" in the UI sends false: that is the default export.
    unticked = await call(
        hass,
        "export",
        {"person": ANNA, "everything": False},
        context=household.context("anna"),
    )
    assert unticked["paths"] == response["paths"]
    assert not export_dir(hass, BEN).exists()
    assert not (export_dir(hass) / "MEMORY.md").exists()


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_admin_default_and_everything(
    hass: HomeAssistant, filled: MockConfigEntry, household: Household
) -> None:
    """An admin exports their own by default; everything only when asked."""
    own = await call(hass, "export", context=household.context("ben"))
    assert own["memories"] == 3
    ben_md = (export_dir(hass, BEN) / "MEMORY.md").read_text()
    assert "Ben prefers 19 °C" in ben_md
    assert "surprise party" not in ben_md
    days = sorted(p.name for p in (export_dir(hass, BEN) / "conversations").iterdir())
    assert days == ["2026-03-10.md", "2026-03-11.md"]
    assert (
        "surprise"
        not in (export_dir(hass, BEN) / "conversations" / "2026-03-10.md").read_text()
    )

    # Another person, named by an admin: the household's and Anna's.
    anna = await call(
        hass, "export", {"person": ANNA}, context=household.context("ben")
    )
    assert anna["paths"][0] == str(export_dir(hass, ANNA) / "MEMORY.md")
    assert "surprise party" in Path(anna["paths"][0]).read_text()

    everything = await call(
        hass, "export", {"everything": True}, context=household.context("ben")
    )
    assert everything["paths"][0] == str(export_dir(hass) / "MEMORY.md")
    assert everything["memories"] == 4
    assert everything["days"] == 2
    all_md = (export_dir(hass) / "MEMORY.md").read_text()
    assert (
        all_md.index("## household") < all_md.index("## Anna") < all_md.index("## Ben")
    )
    assert "diary" in (export_dir(hass, "conversations", "2026-03-11.md")).read_text()


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_automation_gets_household(
    hass: HomeAssistant, filled: MockConfigEntry
) -> None:
    """A call without a user (automation, script) exports the household only."""
    response = await call(hass, "export")
    folder = export_dir(hass, "household")
    assert response["paths"] == [
        str(folder / "MEMORY.md"),
        str(folder / "conversations" / "2026-03-10.md"),
    ]
    assert response["memories"] == 2
    text = (folder / "MEMORY.md").read_text()
    assert "Anna" not in text
    assert "Ben" not in text
    assert "surprise" not in (folder / "conversations" / "2026-03-10.md").read_text()
    # An automation may ask for everything, as it may search everything.
    assert (await call(hass, "export", {"everything": True}))["memories"] == 4


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_stale_days_removed(
    hass: HomeAssistant, filled: MockConfigEntry, household: Household
) -> None:
    """A day whose conversations were erased leaves that audience's export."""
    await call(hass, "export", {"everything": True})
    await call(hass, "export", context=household.context("anna"))
    conversations = export_dir(hass, "conversations")
    unrelated = conversations / "notes.md"
    unrelated.write_text("mine")
    assert sorted(p.name for p in conversations.iterdir()) == [
        "2026-03-10.md",
        "2026-03-11.md",
        "notes.md",
    ]
    # Erase every message of 2026-03-11.
    log: ConversationLog = filled.runtime_data.conversations
    erase = [
        message.id
        for conversation in await log.conversations()
        for message in await log.messages(conversation.id)
        if dt_util.as_local(message.created_at).day == 11
    ]
    assert len(erase) == 4
    await call(hass, "forget", {"source": "conversations", "ids": erase, "purge": True})
    again = await call(hass, "export", {"everything": True})
    assert again["days"] == 1
    assert sorted(p.name for p in conversations.iterdir()) == [
        "2026-03-10.md",
        "notes.md",
    ]
    # Anna's own export is another audience: untouched until she exports again.
    assert (export_dir(hass, ANNA, "conversations", "2026-03-11.md")).exists()


async def test_write_failure(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """A folder that cannot be written fails with a translated error."""
    await add(hass, "Bins go out on Thursday")
    export_dir(hass).mkdir(parents=True)
    export_dir(hass, "household").write_text("a file where a folder should be")
    with pytest.raises(HomeAssistantError) as err:
        await call(hass, "export")
    assert err.value.translation_key == "export_failed"
    assert str(export_dir(hass, "household")) in str(err.value.translation_placeholders)


async def test_not_loaded(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """Without a loaded entry the action says so."""
    await hass.config_entries.async_unload(init_integration.entry_id)
    with pytest.raises(HomeAssistantError) as err:
        await call(hass, "export", context=Context())
    assert err.value.translation_key == "not_loaded"
