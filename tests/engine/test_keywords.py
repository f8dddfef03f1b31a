"""The keyword query: terms weighed by how many rows hold them, the MATCH bounded."""

from __future__ import annotations

from custom_components.memory.engine import MemoryStore, SearchQuery
from custom_components.memory.engine.keywords import idf, keyword_query

from .conftest import contents, memory


async def _query(store: MemoryStore, text: str, budget: int = 10_000):  # type: ignore[no-untyped-def]
    return await keyword_query(
        store.reader,
        text,
        ["en"],
        vocab="memories_fts_vocab",
        total=await store._memory_rows.count(store.reader),
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
