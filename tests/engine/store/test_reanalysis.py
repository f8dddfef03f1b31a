"""Stored rows re-analysed in batches: search terms of the current analysers."""

from __future__ import annotations

from pathlib import Path

from custom_components.memory.engine import MemoryStore, SearchQuery
from custom_components.memory.engine.conversations.log import ConversationLog
from custom_components.memory.engine.conversations.records import MessageQuery
from custom_components.memory.engine.languages.analysis import (
    ANALYSIS_VERSION,
    index_terms,
)
from custom_components.memory.engine.store import reanalysis
from tests.engine.conftest import contents, memory, sql
from tests.engine.conversations.test_conversations import info, message


def _outdated(path: Path) -> None:
    """Make every row look analysed by an older version, without terms."""
    sql(path, "UPDATE memories SET terms = '', analysed = 0, language = ''")
    sql(path, "UPDATE conversation_messages SET terms = '', analysed = 0")


async def test_rows_are_reanalysed_in_batches(
    store: MemoryStore, db_path: Path
) -> None:
    """Outdated rows are not found by keywords until their batch is done."""
    await store.add_many([memory(f"Boiler service number {i}") for i in range(7)])
    await store.add(memory("Die Kinder schwimmen am Dienstag", language="de"))
    log = ConversationLog(store)
    await log.save([(None, info("c-1"), [message("The boiler makes a noise")])])
    _outdated(db_path)
    sql(db_path, "UPDATE memories SET language = 'de' WHERE content LIKE 'Die%'")

    assert await store.search(SearchQuery(text="boiler")) == []
    assert await store.pending_analysis() == 9
    assert await store.reanalyse(limit=5) == 5
    assert len(await store.search(SearchQuery(text="boiler", limit=50))) == 5
    assert await store.reanalyse(limit=5) == 4  # 3 memories, then the message
    assert await store.reanalyse() == 0
    assert await store.pending_analysis() == 0

    assert len(await store.search(SearchQuery(text="boiler", limit=50))) == 7
    found = await log.search(MessageQuery(text="boiler"))
    assert [hit.message.content for hit in found] == ["The boiler makes a noise"]
    # A row without a language takes the default it was analysed in; one
    # with a language keeps it and is analysed in it.
    rows = sql(db_path, "SELECT language, terms, analysed FROM memories ORDER BY id")
    assert {row[0] for row in rows[:7]} == {"en"}
    assert rows[7][0] == "de"
    assert rows[7][1] == index_terms("Die Kinder schwimmen am Dienstag", "de")
    assert {row[2] for row in rows} == {ANALYSIS_VERSION}


async def test_a_row_changed_meanwhile_keeps_its_new_terms(
    store: MemoryStore, db_path: Path
) -> None:
    """A reword between reading and writing a batch is not overwritten."""
    added = await store.add(memory("The boiler is in the cellar"))
    _outdated(db_path)
    updates = await reanalysis.prepare(store.reader, store.language)
    await store.update_content(added.item.id, content="The heat pump is in the garage")
    async with store.transaction() as conn:
        await reanalysis.write(conn, updates)

    assert contents(await store.search(SearchQuery(text="garage"))) == [
        "The heat pump is in the garage"
    ]
    assert await store.search(SearchQuery(text="boiler")) == []
    assert await store.pending_analysis() == 0


async def test_default_language_analyses_rows_without_one(db_path: Path) -> None:
    """A store's default language is the one its unlabelled rows are analysed in."""
    store = MemoryStore(db_path, language="de-AT")
    await store.open()
    try:
        assert store.language == "de"
        added = await store.add(memory("Die Kinder schwimmen am Dienstag"))
        assert added.item.language == "de"
        labelled = await store.add(memory("The children swim", language="en-GB"))
        assert labelled.item.language == "en"
        rows = sql(db_path, "SELECT terms FROM memories ORDER BY id")
        assert rows[0][0] == index_terms("Die Kinder schwimmen am Dienstag", "de")
        assert rows[1][0] == index_terms("The children swim", "en")
    finally:
        await store.close()
