"""The keyword query: terms weighed by how many rows hold them, the MATCH bounded."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st
import pytest

from custom_components.memory.engine import MemoryStore, SearchQuery
from custom_components.memory.engine.search.keywords import (
    MATCH_SHARE,
    idf,
    keyword_query,
)
from custom_components.memory.engine.search.term_counts import CACHE_ROWS, TermCounts
from tests.engine.conftest import contents, ids, memory


async def _query(store: MemoryStore, text: str, budget: int = 10_000):  # type: ignore[no-untyped-def]
    return await keyword_query(
        store.reader,
        text,
        ["en"],
        vocab="memories_fts_vocab",
        total=await store.finder._hybrid.rows.count(store.reader),
        budget=budget,
    )


async def test_common_terms_stop_driving_the_match(store: MemoryStore) -> None:
    """Past the budget, commoner terms only weigh in the coverage of what is found."""
    await store.add_many(
        [memory(f"Kitchen note number {i}") for i in range(60)]
        + [memory("Boiler in the kitchen"), memory("Boiler pressure is low")]
    )
    wide = await _query(store, "kitchen boiler")
    assert wide is not None
    assert set(wide.expression.split(" OR ")) == {'"kitchen"', '"boiler"'}
    narrow = await _query(store, "kitchen boiler", budget=10)
    assert narrow is not None
    assert narrow.expression == '"boiler"'  # the rarest always drives
    assert set(narrow.weights) == {"kitchen", "boiler"}
    assert narrow.weights["boiler"] > narrow.weights["kitchen"]
    # Among what the rare term finds, the row that also holds the common
    # one covers more of the query.
    assert narrow.coverage("boiler kitchen") == 1.0
    assert 0.5 < narrow.coverage("boiler pressur low") < 1.0
    assert narrow.coverage("kitchen note number") < 0.5


async def test_unknown_terms_match_nothing_but_count(store: MemoryStore) -> None:
    """A term no row holds leaves the MATCH; nothing at all gives no query."""
    await store.add(memory("Boiler pressure is low"))
    keywords = await _query(store, "boiler zzzunknown")
    assert keywords is not None
    assert keywords.expression == '"boiler"'
    assert keywords.coverage("boiler pressur low") < 1.0
    assert await _query(store, "zzzunknown") is None
    assert await _query(store, "?!") is None


async def test_a_name_outweighs_common_words(store: MemoryStore) -> None:
    """Coverage is weighed by rarity: the rare name beats the everyday words."""
    await store.add_many(
        [memory(f"Dinner plan for the week, day {i}") for i in range(30)]
        + [memory("Leo loves pancakes")]
    )
    hits = await store.search(SearchQuery(text="what does Leo plan for dinner"))
    assert contents(hits)[0] == "Leo loves pancakes"


def test_idf_falls_with_frequency() -> None:
    """Rarer terms weigh more, and no weight is zero or negative."""
    assert idf(1, 1000) > idf(10, 1000) > idf(900, 1000) > 0
    assert idf(1000, 1000) > 0


async def test_common_terms_counts_are_kept_until_the_table_moves(
    store: MemoryStore,
) -> None:
    """A common term's count is kept between searches; a rare term is always fresh."""
    size = CACHE_ROWS + 44
    await store.add_many([memory(f"Kitchen note number {i}") for i in range(size)])
    counts = TermCounts("memories_fts_vocab")
    assert await counts.terms(store.reader, ["kitchen", "boiler"], size) == {
        "kitchen": size
    }
    assert await counts.prefix(store.reader, "kitch", size) == size
    await store.add(memory("Boiler in the kitchen"))
    # One row more (0.3 %): the common counts are kept, the new term is found.
    assert await counts.terms(store.reader, ["kitchen", "boiler"], size + 1) == {
        "kitchen": size,
        "boiler": 1,
    }
    assert await counts.prefix(store.reader, "kitch", size + 1) == size
    await store.add_many([memory(f"Kitchen shelf {i}") for i in range(5)])
    # 2 % more rows: counted again.
    assert await counts.terms(store.reader, ["kitchen", "boiler"], size + 6) == {
        "kitchen": size + 6,
        "boiler": 1,
    }
    assert await counts.prefix(store.reader, "kitch", size + 6) == size + 6


async def test_a_rarest_term_over_the_budget_keeps_its_newest_rows(
    store: MemoryStore,
) -> None:
    """Even the rarest term past the budget: the MATCH finds its newest rows only."""
    added = await store.add_many(
        [memory(f"Kitchen note number {i}") for i in range(60)]
    )
    newest = sorted(result.item.id for result in added)[-10:]
    keywords = await keyword_query(
        store.reader,
        "kitchen",
        ["en"],
        vocab="memories_fts_vocab",
        total=60,
        budget=10,
        index="memories_fts",
    )
    assert keywords is not None
    assert keywords.newest == 10
    unbounded = await _query(store, "kitchen", budget=10)  # no index given
    assert unbounded is not None
    assert unbounded.newest == 0
    store.match_budget = 10
    hits = await store.search(SearchQuery(text="kitchen", limit=50))
    assert sorted(ids(hits)) == newest


async def test_terms_outside_the_match_still_rank_what_it_finds(
    store: MemoryStore,
) -> None:
    """Bounded, the MATCH's rows rank by bm25 as with every term driving it."""
    await store.add_many(
        [memory(f"Kitchen note number {i}") for i in range(40)]
        + [memory(f"Garden note number {i}") for i in range(160)]
    )
    # The shorter row has the better bm25 on "boiler" alone.
    both = await store.add(memory("Boiler check in the kitchen"))
    rare = await store.add(memory("Boiler low"))
    query = SearchQuery(text="kitchen boiler")
    request = store.finder._request(query)
    full, _cosines, _keywords = await store.finder._hybrid._keyword(
        store.finder._corpus(store.reader, False), request, None
    )
    store.match_budget = 10
    keywords = await store.finder._hybrid.keyword_query(
        store.finder._corpus(store.reader, False), "kitchen boiler", None
    )
    assert keywords is not None
    assert keywords.expression == '"boiler"'
    assert set(keywords.others) == {"kitchen"}
    assert keywords.rest("boiler check kitchen") > 0 == keywords.rest("boiler low")
    bounded, _cosines, _keywords = await store.finder._hybrid._keyword(
        store.finder._corpus(store.reader, False), request, None
    )
    assert [hit[0] for hit in bounded] == [both.item.id, rare.item.id]
    assert [hit[0] for hit in full[:2]] == [both.item.id, rare.item.id]


async def test_rows_holding_every_term_are_always_candidates(
    store: MemoryStore,
) -> None:
    """A row with every term is a candidate even when its bm25 on the MATCH is last."""
    await store.add_many(
        [memory(f"Boiler note {i}") for i in range(250)]
        + [memory(f"Kitchen note number {i}") for i in range(400)]
        + [memory(f"Garden note number {i}") for i in range(400)]
    )
    # One word longer than the notes: last of the 250 on "boiler" alone.
    wordy = await store.add(memory("Boiler check in the kitchen today"))
    store.match_budget = 300
    keywords = await store.finder._hybrid.keyword_query(
        store.finder._corpus(store.reader, False), "kitchen boiler", None
    )
    assert keywords is not None
    assert keywords.expression == '"boiler"'
    assert keywords.every == '("boiler") AND "kitchen"'
    hits = await store.search(SearchQuery(text="kitchen boiler"))
    assert ids(hits)[0] == wordy.item.id


async def _in(db_path: Path, language: str, memories: list[str]) -> MemoryStore:
    store = MemoryStore(db_path, language=language)
    await store.open()
    await store.add_many([memory(content) for content in memories])
    return store


@pytest.mark.parametrize(
    ("language", "memories", "question"),
    [
        # The query's compound reaches the memory's through their shared
        # head, a part the index knows.
        (
            "de",
            ["Die Restmülltonne wird dienstags geleert", "Der Schornsteinfeger kommt"],
            "Wann kommt die Müllabfuhr?",
        ),
        # Genitive name, and a compound whose head is the memory's word.
        (
            "de",
            [
                "Leo feiert seinen Geburtstag am 3. Mai",
                "Die Feier im Verein ist abgesagt",
            ],
            "Wann ist Leos Geburtstagsfeier?",
        ),
        # The memory's compound ends in the query's word.
        (
            "de",
            ["Der Heizöltank ist halb voll", "Der Tank des Autos ist leer"],
            "Öltank",
        ),
        (
            "nl",
            ["De stookolietank is in maart bijgevuld", "De tank van de auto is vol"],
            "Wanneer is de olietank gevuld?",
        ),
        # A four-letter stem ("Sommer": "somm", "vand") begins the stored
        # compound ("Sommerurlaub", "vandhanen").
        (
            "de",
            ["Der Sommerurlaub ist gebucht", "Der Winterdienst räumt ab sechs"],
            "Wo fahren wir im Sommer hin?",
        ),
        (
            "da",
            ["Vandhanen sidder under trappen", "Elmåleren sidder i kælderen"],
            "Hvor lukker man for vandet?",
        ),
        # Function words carry nothing: the name and the verb decide.
        (
            "fr",
            [
                "Mia a cours de natation le mercredi",
                "Quand est-ce que le plombier vient ?",
            ],
            "Quand est-ce que Mia va nager ?",
        ),
        (
            "es",
            ["Mia no puede comer frutos secos", "Mia puede usar pantallas una hora"],
            "¿Qué no puede comer Mia?",
        ),
        # Written without spaces: found through character pairs.
        ("zh", ["我女儿的生日是五月三日", "垃圾桶星期二清空"], "女儿生日是哪天"),
    ],
)
async def test_the_households_language_finds_the_memory(
    db_path: Path, language: str, memories: list[str], question: str
) -> None:
    """The issue's examples: the right memory comes first in its language."""
    store = await _in(db_path, language, memories)
    try:
        hits = await store.search(SearchQuery(text=question))
        assert contents(hits)[:1] == memories[:1]
    finally:
        await store.close()


async def test_a_query_in_another_language_than_the_default(db_path: Path) -> None:
    """The speaker's language and the default are both searched, without their stop words."""
    store = await _in(db_path, "en", ["The boiler is in the cellar"])
    try:
        await store.add(memory("Die Kinder schwimmen am Dienstag", language="de"))
        german = await store.search(
            SearchQuery(text="Wann schwimmen die Kinder?", language="de")
        )
        assert contents(german) == ["Die Kinder schwimmen am Dienstag"]
        english = await store.search(
            SearchQuery(text="where is the boiler", language="de")
        )
        assert contents(english) == ["The boiler is in the cellar"]
        # "die" and "ist" are German stop words: never a term, whichever
        # language also analyses the query.
        keywords = await store.finder._hybrid.keyword_query(
            store.finder._corpus(store.reader, False), "die ist", "de"
        )
        assert keywords is None
    finally:
        await store.close()


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    text=st.lists(
        st.sampled_from([*'"*-:^(){}+.,;ab ', "NOT", "AND", "NEAR", "ß", "生日", "Öl"]),
        max_size=20,
    ).map("".join),
    language=st.sampled_from(["en", "de", "fr", "zh", "xx", ""]),
)
async def test_hostile_text_is_a_valid_match(
    store: MemoryStore, text: str, language: str
) -> None:
    """Whatever is typed or said, the keyword query parses in FTS5 and searches."""
    if not await store.search(SearchQuery(text="seed")):
        await store.add_many(
            [memory("seed note: not now or never"), memory("Der Heizöltank, ab 生日")]
        )
    keywords = await store.finder._hybrid.keyword_query(
        store.finder._corpus(store.reader, False), text, language or None
    )
    if keywords is not None:
        await store.reader.execute_fetchall(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?",
            (keywords.expression,),
        )
    await store.search(SearchQuery(text=text, language=language or None))


async def test_the_match_budget_grows_with_the_index(store: MemoryStore) -> None:
    """A large index lets the MATCH find MATCH_SHARE of its rows if that is more."""
    await store.add_many([memory(f"Kitchen note {i}") for i in range(1000)])
    total = await store.finder._hybrid.rows.count(store.reader)
    bounded = await keyword_query(
        store.reader,
        "kitchen",
        ["en"],
        vocab="memories_fts_vocab",
        total=total,
        budget=1,
        index="memories_fts",
    )
    assert bounded is not None
    assert bounded.newest == int(total * MATCH_SHARE) == 2
    wider = await keyword_query(
        store.reader,
        "kitchen",
        ["en"],
        vocab="memories_fts_vocab",
        total=total,
        budget=5,
        index="memories_fts",
    )
    assert wider is not None
    assert wider.newest == 5


# Words whose analysis differs from a plain split: compounds, diacritics,
# apostrophes, plurals, CJK, a unit.
_WORDS = [
    "kitchen",
    "kitchens",
    "boiler",
    "Müllabfuhr",
    "Restmülltonne",
    "Müll",
    "café",
    "cafe",
    "Geburtstag",
    "Geburtstagsfeier",
    "生日",
    "派对",
    "l'école",
    "école",
    "naïve",
    "don't",
    "x-ray",
    "19°C",
    "voetbal",
    "voetbaltraining",
    "fietsen",
    "fiets",
    "vélo",
    "vélos",
    "Heizöltank",
    "Öl",
]
_LANGUAGES = ("en", "de", "fr", "nl", "zh")


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join),
    language=st.sampled_from(_LANGUAGES),
    budget=st.sampled_from([1, 3, 10_000]),
)
async def test_a_rows_terms_say_what_fts5_finds(
    store: MemoryStore, query: str, language: str, budget: int
) -> None:
    """`KeywordQuery.found` judges rows on their terms as FTS5's MATCH does.

    The hybrid search scores pooled rows outside the keyword pool this way
    when the fusion reads coverage, not bm25: the same rows must be hits,
    holding the same terms, as `keyword_of` finds through FTS5.
    """
    if not await store.search(SearchQuery(text="kitchen boiler")):
        texts = [
            " ".join(_WORDS[(i * 7 + k * 3) % len(_WORDS)] for k in range(1 + i % 4))
            for i in range(48)
        ]
        await store.add_many(
            [
                memory(text, language=_LANGUAGES[i % len(_LANGUAGES)])
                for i, text in enumerate([*texts, "kitchen boiler"])
            ]
        )
    keywords = await keyword_query(
        store.reader,
        query,
        [language, "en"],
        vocab="memories_fts_vocab",
        total=await store.finder._hybrid.rows.count(store.reader),
        budget=budget,
    )
    if keywords is None:
        return
    rows = [
        (int(row[0]), str(row[1]))
        for row in await store.reader.execute_fetchall("SELECT id, terms FROM memories")
    ]
    through_fts5 = await store.finder._hybrid.keyword_of(
        store.reader, keywords, [row[0] for row in rows]
    )
    on_terms = keywords.found(rows)
    assert {hit[0]: hit[2] for hit in on_terms} == {
        hit[0]: hit[2] for hit in through_fts5
    }
    assert on_terms, query
