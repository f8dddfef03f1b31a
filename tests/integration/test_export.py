"""`memory.export`: a readable Markdown mirror, written for who asks."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
import logging
from pathlib import Path
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.memory.const import CONF_CONVERSATION_RETENTION_DAYS, DOMAIN
from custom_components.memory.engine import (
    ConversationInfo,
    ConversationLog,
    MessageRole,
    NewMessage,
)

from . import add, call, search_ids
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
            str(folder / "memories.json"),
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
        str(folder / "memories.json"),
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
    # The purge itself rewrote both audiences' exports; a later export agrees.
    assert sorted(p.name for p in conversations.iterdir()) == [
        "2026-03-10.md",
        "notes.md",
    ]
    assert not (export_dir(hass, ANNA, "conversations", "2026-03-11.md")).exists()
    again = await call(hass, "export", {"everything": True})
    assert again["days"] == 1
    assert sorted(p.name for p in conversations.iterdir()) == [
        "2026-03-10.md",
        "notes.md",
    ]


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


# -- what is erased leaves the exports ------------------------------------

CODE = "The garage door code is 7731"
PIN = "Anna's bank PIN is 0552"
PASSWORD = "the alarm password is tulip-4410"


def holding(root: Path, text: str) -> list[Path]:
    """Every file under `root` whose bytes contain `text`."""
    needle = text.encode()
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and needle in path.read_bytes()
    )


def logged(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    """Messages logged at INFO or above that contain `text`."""
    return [
        record.getMessage()
        for record in caplog.records
        if record.levelno >= logging.INFO and text in record.getMessage()
    ]


def config_dir(hass: HomeAssistant) -> Path:
    """Return the configuration folder: the database, exports, `.storage`."""
    return Path(hass.config.config_dir)


async def export_all(hass: HomeAssistant, household: Household) -> list[Path]:
    """Export for every audience: everything, the household, Anna and Ben."""
    await call(hass, "export", {"everything": True})
    await call(hass, "export")
    await call(hass, "export", context=household.context("anna"))
    await call(hass, "export", context=household.context("ben"))
    return [
        export_dir(hass),
        export_dir(hass, "household"),
        export_dir(hass, ANNA),
        export_dir(hass, BEN),
    ]


def block_conversations(folder: Path) -> None:
    """Put a file where an export's `conversations/` is: it cannot be written."""
    (folder / "conversations").rename(folder / "moved")
    (folder / "conversations").write_text("not a folder")


async def message_ids(entry: MockConfigEntry, key: int, text: str) -> list[int]:
    """Ids of a conversation's messages that contain `text`."""
    log: ConversationLog = entry.runtime_data.conversations
    return [m.id for m in await log.messages(key) if text in m.content]


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_purge_rewrites_every_export(
    hass: HomeAssistant, filled: MockConfigEntry, household: Household
) -> None:
    """Purged memories and messages leave every audience's files; the rest stays."""
    door = await add(hass, CODE)
    pin = await add(hass, PIN, person=ANNA)
    day = dt_util.as_utc(
        datetime(2026, 3, 12, 8, 0, tzinfo=dt_util.get_default_time_zone())
    )
    chat = await save_conversation(
        filled,
        "a2",
        ANNA,
        [(f"Remember {PASSWORD}", day), ("Water the plants", day + timedelta(hours=1))],
    )
    folders = await export_all(hass, household)
    exports = export_dir(hass)
    # The Markdown mirror and the lossless copy (memories.json) both.
    assert holding(exports, CODE) == sorted(
        folder / name for folder in folders for name in ("MEMORY.md", "memories.json")
    )
    assert holding(exports, PIN) == sorted(
        export_dir(hass, *where, name)
        for where in ((), (ANNA,))
        for name in ("MEMORY.md", "memories.json")
    )
    assert holding(exports, PASSWORD) == [
        export_dir(hass, "conversations", "2026-03-12.md"),
        export_dir(hass, ANNA, "conversations", "2026-03-12.md"),
    ]

    response = await call(hass, "forget", {"ids": [door, pin], "purge": True})
    assert response["purged"] is True
    secret = await message_ids(filled, chat, PASSWORD)
    await call(
        hass, "forget", {"ids": secret, "source": "conversations", "purge": True}
    )

    # Nothing erased survives anywhere on disk: exports, database, .storage.
    for text in (CODE, PIN, PASSWORD):
        assert holding(config_dir(hass), text) == [], text
    # What was not purged is still exported, for each audience.
    for folder in folders:
        assert "Bins go out on Thursday" in (folder / "MEMORY.md").read_text()
    assert "Anna is planning" in (export_dir(hass, ANNA, "MEMORY.md")).read_text()
    assert "Ben prefers" in (export_dir(hass, BEN, "MEMORY.md")).read_text()
    assert "Ben prefers" not in (export_dir(hass, ANNA, "MEMORY.md")).read_text()
    for folder in (export_dir(hass), export_dir(hass, ANNA)):
        kept = (folder / "conversations" / "2026-03-12.md").read_text()
        assert "**User**: Water the plants" in kept
    assert (
        "diary" in (export_dir(hass, BEN, "conversations", "2026-03-11.md")).read_text()
    )
    # A purged day's file goes: nothing else happened on it for the household.
    assert not export_dir(hass, "household", "conversations", "2026-03-12.md").exists()


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_purge_writes_no_new_export(
    hass: HomeAssistant, filled: MockConfigEntry, household: Household
) -> None:
    """Only exports already written are rewritten: a purge creates none."""
    door = await add(hass, CODE)
    await call(hass, "forget", {"ids": [door], "purge": True})
    assert not export_dir(hass).exists()

    await call(hass, "export", context=household.context("anna"))
    ben = await add(hass, "Ben's locker code is 5150", person=BEN)
    door = await add(hass, CODE)
    assert CODE not in (export_dir(hass, ANNA, "MEMORY.md")).read_text()
    await call(hass, "export", context=household.context("anna"))
    assert CODE in (export_dir(hass, ANNA, "MEMORY.md")).read_text()
    await call(hass, "forget", {"ids": [door, ben], "purge": True})
    assert holding(config_dir(hass), CODE) == []
    assert sorted(path.name for path in export_dir(hass).iterdir()) == [ANNA]


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_retention_rewrites_exports(
    hass: HomeAssistant,
    filled: MockConfigEntry,
    household: Household,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Messages erased by retention leave the exported conversation files."""
    hass.config_entries.async_update_entry(
        filled, options={**filled.options, CONF_CONVERSATION_RETENTION_DAYS: 4}
    )
    folders = await export_all(hass, household)
    exports = export_dir(hass)
    assert holding(exports, "Turn on the lights") == [
        folder / "conversations" / "2026-03-10.md" for folder in folders
    ]
    assert len(holding(exports, "Plan the surprise party")) == 2

    # A day later the retention's hourly run erases 2026-03-10's messages.
    freezer.tick(timedelta(days=1, hours=1))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)

    for text in ("Turn on the lights", "Plan the surprise party"):
        assert holding(config_dir(hass), text) == [], text
    for folder in folders:
        assert not (folder / "conversations" / "2026-03-10.md").exists()
    assert (
        "Cake?"
        in (export_dir(hass, ANNA, "conversations", "2026-03-11.md")).read_text()
    )
    assert (
        "diary" in (export_dir(hass, BEN, "conversations", "2026-03-11.md")).read_text()
    )
    assert not (export_dir(hass, "household", "conversations")).exists() or not any(
        (export_dir(hass, "household", "conversations")).iterdir()
    )


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_purge_removes_leftover_temporary_files(
    hass: HomeAssistant, filled: MockConfigEntry, household: Household
) -> None:
    """Temporary files a crash left in an export may hold erased text: they go."""
    door = await add(hass, CODE)
    await call(hass, "export", context=household.context("anna"))
    folder = export_dir(hass, ANNA)
    leftovers = [
        folder / "MEMORY.md.tmp",
        folder / "conversations" / "2026-03-10.md.tmp",
        # Home Assistant's `write_utf8_file`, which earlier versions used.
        folder / "conversations" / "tmpq7_x2k9a",
    ]
    for path in leftovers:
        path.write_text(f"- {CODE} (half written")
    mine = folder / "conversations" / "notes.txt"
    mine.write_text("the user's own notes")

    await call(hass, "forget", {"ids": [door], "purge": True})

    assert holding(config_dir(hass), CODE) == []
    assert not any(path.exists() for path in leftovers)
    assert mine.read_text() == "the user's own notes"
    assert "Bins go out on Thursday" in (folder / "MEMORY.md").read_text()


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_export_that_cannot_be_rewritten_is_removed(
    hass: HomeAssistant,
    filled: MockConfigEntry,
    household: Household,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An export that cannot be rewritten after a purge is removed instead."""
    door = await add(hass, CODE)
    await export_all(hass, household)
    broken = export_dir(hass, ANNA)
    block_conversations(broken)

    await call(hass, "forget", {"ids": [door], "purge": True})

    assert holding(config_dir(hass), CODE) == []
    assert not (broken / "MEMORY.md").exists()
    assert f"Removed the export in {broken}" in caplog.text
    assert not logged(caplog, CODE)
    # The other audiences' exports were rewritten, not removed.
    for folder in (export_dir(hass), export_dir(hass, "household")):
        assert "Bins go out on Thursday" in (folder / "MEMORY.md").read_text()


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_export_that_cannot_be_erased_is_reported(
    hass: HomeAssistant,
    filled: MockConfigEntry,
    household: Household,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A copy that can be neither rewritten nor removed is an error, not silence.

    The tests run as root, for whom permissions never refuse: the refusal a
    read-only folder gives everyone else is injected at `Path.unlink`.
    """
    door = await add(hass, CODE)
    await export_all(hass, household)
    stuck = export_dir(hass, ANNA)
    block_conversations(stuck)
    unlink = Path.unlink

    def refuse(path: Path, missing_ok: bool = False) -> None:
        if path.parent == stuck:
            raise PermissionError(13, "Permission denied", str(path))
        unlink(path, missing_ok=missing_ok)

    with (
        patch.object(Path, "unlink", refuse),
        pytest.raises(HomeAssistantError) as err,
    ):
        await call(hass, "forget", {"ids": [door], "purge": True})
    assert err.value.translation_key == "export_not_erased"
    assert err.value.translation_placeholders is not None
    assert err.value.translation_placeholders["folder"] == str(stuck)
    # The purge itself stands, and every other export (Ben's comes after
    # Anna's) was rewritten: only the stuck one still holds the text.
    assert holding(config_dir(hass), CODE) == [
        stuck / "MEMORY.md",
        stuck / "memories.json",
    ]
    assert "Bins go out" in (export_dir(hass, BEN, "MEMORY.md")).read_text()
    assert await search_ids(hass, query="garage", status="any") == []

    # An export folder that cannot even be listed may hold anything.
    iterdir = Path.iterdir

    def unlistable(path: Path) -> Iterator[Path]:
        if path == export_dir(hass):
            raise PermissionError(13, "Permission denied", str(path))
        return iterdir(path)

    bins = await search_ids(hass, query="bins")
    with (
        patch.object(Path, "iterdir", unlistable),
        pytest.raises(HomeAssistantError) as err,
    ):
        await call(hass, "forget", {"ids": bins, "purge": True})
    assert err.value.translation_placeholders == {
        "folder": str(export_dir(hass)),
        "error": f"[Errno 13] Permission denied: '{export_dir(hass)}'",
    }

    # Retention meets the same refusal in the background: a warning, no crash.
    hass.config_entries.async_update_entry(
        filled, options={**filled.options, CONF_CONVERSATION_RETENTION_DAYS: 1}
    )
    with patch.object(Path, "unlink", refuse):
        await filled.runtime_data.capture.async_apply_retention()
    assert await filled.runtime_data.conversations.conversations() == []
    assert holding(export_dir(hass, "household"), "Turn on the lights") == []
    assert "Could not apply conversation retention" in caplog.text
    assert not logged(caplog, CODE)


@pytest.mark.freeze_time(FROZEN_TIME)
async def test_removing_the_integration_removes_exports(
    hass: HomeAssistant,
    filled: MockConfigEntry,
    household: Household,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The exports go with the database; files of the user's own stay."""
    unlink = Path.unlink

    def refuse(path: Path, missing_ok: bool = False) -> None:
        if path.name == "MEMORY.md":
            raise PermissionError(13, "Permission denied", str(path))
        unlink(path, missing_ok=missing_ok)

    folders = await export_all(hass, household)
    mine = export_dir(hass, "household", "conversations", "notes.txt")
    mine.write_text("the user's own notes")

    await hass.config_entries.async_remove(filled.entry_id)
    await hass.async_block_till_done()

    assert holding(config_dir(hass), "Bins go out on Thursday") == []
    assert [path for path in export_dir(hass).rglob("*") if path.is_file()] == [mine]
    for folder in folders[2:]:
        assert not folder.exists()
    mine.unlink()

    # Added again and exported twice: removal clears the folders it made,
    # and one it cannot clear is a warning, not a failed removal.
    for refused in (False, True):
        entry = MockConfigEntry(domain=DOMAIN, data=filled.data)
        entry.add_to_hass(hass)
        assert await hass.config_entries.async_setup(entry.entry_id)
        await add(hass, "Bins go out on Thursday")
        await call(hass, "export")
        with patch.object(Path, "unlink", refuse if refused else unlink):
            await hass.config_entries.async_remove(entry.entry_id)
            await hass.async_block_till_done()
        assert hass.config_entries.async_get_entry(entry.entry_id) is None
        assert export_dir(hass).exists() is refused
    assert f"Could not remove the exports in {export_dir(hass)}" in caplog.text
