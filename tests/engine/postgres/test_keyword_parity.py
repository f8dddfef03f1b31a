"""PostgreSQL keyword search gives FTS5's bm25, number for number, on the household set.

The household memories of every language are stored in a SQLite
`MemoryStore` and in PostgreSQL (`PostgresMemories`), the same order, the
same clock; a few are archived and a few purged on both sides, so the
index's row count holds rows a search must not return. Every question (and
its paraphrase) is analysed as the SQLite engine analyses it for its MATCH
(`search.keyword_query` against the FTS5 vocabulary), then ranked by FTS5
(`bm25(memories_fts)`) on the SQLite file and by `PostgresKeywords.search`
with the same terms: the same memories in the same order, bm25 equal within
1e-9 relative. Ids are matched by text (a conflict spends a PostgreSQL
sequence number, so ids may drift).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import math
from pathlib import Path
import re

import aiosqlite
import pytest

from custom_components.memory.engine import MemoryStore, NewMemory, Origin, Source
from custom_components.memory.engine.postgres import PostgresKeywords, PostgresMemories
from custom_components.memory.engine.search import keyword_query
from tests.engine.conftest import START
from tests.postgres_server import START_TIMEOUT
from tests.test_household_data import MINIMUM, memories, questions

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT),
]

DEFAULT = "en"
SOURCE = Source(origin=Origin.TOOL, conversation_id="household")
_QUOTED = re.compile(r'"((?:[^"]|"")*)"(\*?)')


def _household() -> list[NewMemory]:
    """Return every language's household memories, language by language."""
    return [
        NewMemory(content=text, source=SOURCE, language=lang)
        for lang in sorted(MINIMUM)
        for text in memories(lang).values()
    ]


def _match_terms(expression: str) -> tuple[list[str], set[str]]:
    """Return the terms of a MATCH expression the engine built, and its prefixes."""
    terms: list[str] = []
    prefixes: set[str] = set()
    for quoted, star in _QUOTED.findall(expression):
        term = quoted.replace('""', '"')
        terms.append(term)
        if star:
            prefixes.add(term)
    return terms, prefixes


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    """Yield a SQLite store on the tests' fixed clock, default language English."""
    store = MemoryStore(tmp_path / "memory.db", clock=lambda: START, language=DEFAULT)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def _fts5(
    conn: aiosqlite.Connection, expression: str, active: set[int]
) -> list[tuple[int, float]]:
    """Return FTS5's own ranking of a MATCH, active rows only, in the engine's order."""
    rows = await conn.execute_fetchall(
        "SELECT rowid, bm25(memories_fts) FROM memories_fts "
        "WHERE memories_fts MATCH ? ORDER BY rank, rowid",
        (expression,),
    )
    return [(int(row[0]), float(row[1])) for row in rows if int(row[0]) in active]


async def test_bm25_and_ranking_equal_fts5_on_the_household_set(
    sqlite_store: MemoryStore,
    pg_memories: PostgresMemories,
    pg_keywords: PostgresKeywords,
) -> None:
    """Every question of every language: same memories, same order, same bm25."""
    household = _household()
    sqlite_added = await sqlite_store.add_many(household)
    pg_added = await pg_memories.add_many(household, now=START)
    assert [r.created for r in sqlite_added] == [r.created for r in pg_added]
    # Archived and purged rows on both sides: archived ones still count in
    # the index (N, n, avgdl), purged ones no longer.
    for purge, picked in ((False, slice(3, None, 17)), (True, slice(5, None, 23))):
        await sqlite_store.forget(
            [r.item.id for r in sqlite_added[picked]], purge=purge
        )
        await pg_memories.forget([r.item.id for r in pg_added[picked]], purge=purge)
    sqlite_text = {r.item.id: r.item.content for r in sqlite_added}
    pg_text = {r.item.id: r.item.content for r in pg_added}
    active = {
        item.id
        for item in (await sqlite_store.get_many(list(sqlite_text))).values()
        if item.status == "active"
    }
    checked = compared = with_prefix = 0
    async with aiosqlite.connect(sqlite_store.path) as conn:
        (total,) = next(
            iter(await conn.execute_fetchall("SELECT count(*) FROM memories"))
        )
        for lang in sorted(MINIMUM):
            for question in questions(lang).values():
                for text in (question["question"], question["paraphrase"]):
                    query = await keyword_query(
                        conn,
                        text,
                        [lang, DEFAULT],
                        vocab="memories_fts_vocab",
                        total=int(total),
                    )
                    if query is None:
                        continue
                    terms, prefixes = _match_terms(query.expression)
                    expected = await _fts5(conn, query.expression, active)
                    hits = await pg_keywords.search(terms, prefixes=prefixes)
                    got = [(pg_text[hit.id], hit.bm25) for hit in hits]
                    want = [(sqlite_text[i], score) for i, score in expected]
                    assert [t for t, _ in got] == [t for t, _ in want], (lang, text)
                    for (_, mine), (_, theirs) in zip(got, want, strict=True):
                        assert math.isclose(mine, theirs, rel_tol=1e-9, abs_tol=0), (
                            lang,
                            text,
                            mine,
                            theirs,
                        )
                    checked += 1
                    compared += len(want)
                    with_prefix += bool(prefixes)
    assert checked > 500
    assert compared > 1000
    assert with_prefix > 10, with_prefix  # compound heads as prefixes
