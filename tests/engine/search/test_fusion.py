"""Tests of fusion's cosine scale: how unrelated texts score, not the raw band.

`fusion.fuse` measures a cosine from the level an unrelated text reaches
with the model, and trusts the semantic signal by how far the best cosine
stands out in the spread of unrelated ones (`cosine_scale.CosineScale`).
So the ranking must not move when every cosine is compressed or shifted,
and a narrow band of cosines (multilingual-e5-small's) must weigh as much
as a wide one (MiniLM's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, strategies as st
import numpy as np
import numpy.typing as npt
import pytest

from custom_components.memory.engine import MemoryStore, SearchQuery
from custom_components.memory.engine.search import fusion
from custom_components.memory.engine.search.fusion import (
    CONFIDENT_Z,
    KEYWORD_WEIGHT,
    Ranked,
    closeness,
    confidence,
    fuse,
    grouped_coverage,
)
from custom_components.memory.engine.vectors.index import as_unit_vector
from custom_components.memory.engine.vectors.scale import (
    MIN_VECTORS,
    SAMPLE_SIZE,
    CosineScale,
    Scale,
)
from tests.engine.conftest import StoreFactory, memory, vector

type F32 = npt.NDArray[np.float32]
type Keyword = list[tuple[int, float, float]]
type Semantic = list[tuple[int, float]]


def order(ranked: list[Ranked]) -> list[int]:
    """Ids best first."""
    return [entry.id for entry in ranked]


# -- the property: the model's scale does not matter -----------------------------

_cosine = st.floats(min_value=-0.2, max_value=1.0, allow_nan=False)


@st.composite
def candidates(draw: st.DrawFn) -> tuple[Keyword, Semantic, dict[int, float], Scale]:
    """Keyword hits, a semantic pool, cosines outside it, and a scale."""
    count = draw(st.integers(min_value=2, max_value=12))
    # Distinct cosines on a grid: no two candidates tie on both signals.
    grid = draw(
        st.lists(
            st.integers(min_value=0, max_value=1000),
            min_size=count,
            max_size=count,
            unique=True,
        )
    )
    cosines = {i: -0.2 + 1.2 * step / 1000 for i, step in enumerate(grid, start=1)}
    ids = sorted(cosines, key=lambda i: -cosines[i])
    pooled = draw(st.integers(min_value=1, max_value=count))
    semantic = [(i, cosines[i]) for i in ids[:pooled]]
    similarity = {i: cosines[i] for i in ids[pooled:]}
    keyword = [
        (i, -draw(st.integers(min_value=1, max_value=50)) / 7, 0.5)
        for i in sorted(cosines)
        if draw(st.booleans())
    ]
    spread = draw(st.floats(min_value=0.0, max_value=0.3))
    return keyword, semantic, similarity, Scale(draw(_cosine), spread)


@given(
    candidates(),
    st.floats(min_value=0.05, max_value=5.0),
    st.floats(min_value=-0.9, max_value=0.9),
    st.booleans(),
)
def test_compressing_or_shifting_every_cosine_keeps_the_ranking(
    drawn: tuple[Keyword, Semantic, dict[int, float], Scale],
    scale: float,
    shift: float,
    with_level: bool,
) -> None:
    """`a * cos + b` (a > 0) on every cosine and the scale: same ranking.

    That is what an order-preserving change of the model's scale does (e5's
    narrow band against MiniLM's wide one), so the weights need no tuning
    per model (the spread scales by `a`). Without a scale, the lowest
    candidate is the floor. The scores stay the same too, also without a
    keyword hit when the scale is known (a minimum score means the same with
    every model); without keywords and without a scale, raw cosines, in order.
    """
    keyword, semantic, similarity, unrelated = drawn

    def moved(cosine: float) -> float:
        return scale * cosine + shift

    before = fuse(keyword, semantic, similarity, unrelated if with_level else None)
    after = fuse(
        keyword,
        [(i, moved(c)) for i, c in semantic],
        {i: moved(c) for i, c in similarity.items()},
        Scale(moved(unrelated.level), scale * unrelated.spread) if with_level else None,
    )
    if keyword or with_level:  # without both, raw cosines: only the order holds
        assert {e.id: e.score for e in after} == pytest.approx(
            {e.id: e.score for e in before}, abs=1e-9
        )
    # The order is the same wherever two scores are not a rounding apart.
    scores = {e.id: e.score for e in before}
    kept = [
        i
        for n, i in enumerate(order(before))
        if n == 0 or scores[order(before)[n - 1]] - scores[i] > 1e-6
    ]
    assert [i for i in order(after) if i in kept] == kept


def test_a_narrow_band_of_cosines_still_decides() -> None:
    """e5's cosines (0.78..0.89) weigh like MiniLM's (0.1..0.6) for the same texts.

    Memory 1 is the clear semantic match without a keyword; memory 2 shares
    the query's best keyword but is unrelated (at the model's unrelated
    level). Divided by the best cosine, e5's 0.79 / 0.89 = 0.89 let the
    keyword decide; measured from the level, the meaning wins with either
    model, as it does with MiniLM's wide band.
    """
    keyword = [(2, -3.0, 1.0), (3, -1.0, 0.5)]
    e5 = fuse(keyword, [(1, 0.89), (3, 0.80), (2, 0.79)], scale=Scale(0.78, 0.02))
    minilm = fuse(keyword, [(1, 0.6), (3, 0.19), (2, 0.15)], scale=Scale(0.1, 0.09))
    assert order(e5) == order(minilm) == [1, 2, 3]
    assert e5[0].score == pytest.approx(1 - KEYWORD_WEIGHT)
    # Without the level the floor is the lowest candidate: the same order.
    assert order(fuse(keyword, [(1, 0.89), (3, 0.80), (2, 0.79)])) == [1, 2, 3]


def test_first_place_in_both_scores_one_and_the_level_scores_only_its_place() -> None:
    """The best on both signals scores 1; below the level only a place counts.

    A cosine at or below the unrelated level adds nothing of its own: how
    far below does not matter, only the candidate's place in the list.
    """
    keyword = [(1, -2.0, 1.0), (2, -1.0, 1.0)]
    scale = Scale(0.5, 0.05)
    ranked = fuse(keyword, [(1, 0.9), (2, 0.5)], {3: 0.4}, scale=scale)
    scores = {entry.id: entry.score for entry in ranked}
    assert scores[1] == pytest.approx(1.0)
    assert 0.0 < scores[3] < scores[2] < scores[1]
    lower = fuse(keyword, [(1, 0.9), (2, 0.5)], {3: -0.3}, scale=scale)
    assert {entry.id: entry.score for entry in lower} == pytest.approx(scores)


def test_a_best_match_lost_among_unrelated_texts_weighs_less() -> None:
    """The semantic share follows how far the best cosine stands out (z-score).

    The same candidates: with the best cosine CONFIDENT_Z spreads above the
    level the meaning decides; at one spread it barely counts, and the
    keyword's best hit comes first (an English model asked in Chinese).
    """
    keyword = [(2, -3.0, 1.0)]
    semantic = [(1, 0.5), (2, 0.3)]
    clear = fuse(keyword, semantic, scale=Scale(0.3, 0.2 / CONFIDENT_Z))
    crowded = fuse(keyword, semantic, scale=Scale(0.3, 0.2))
    assert order(clear) == [1, 2]
    assert order(crowded) == [2, 1]
    assert crowded[0].score > clear[1].score


@pytest.mark.parametrize(
    ("best", "scale", "expected"),
    [
        (0.9, Scale(0.8, 0.02), 1.0),  # five spreads up: full trust
        (0.82, Scale(0.8, 0.02), 1 / CONFIDENT_Z),
        (0.7, Scale(0.8, 0.02), 0.0),  # below the level
        (0.9, Scale(0.8, 0.0), 1.0),  # no spread: above the level or not
        (0.8, Scale(0.8, 0.0), 0.0),
        # Times the language's trust (how well the model reads it).
        (0.9, Scale(0.8, 0.02, 0.7), 0.7),
        (0.82, Scale(0.8, 0.02, 0.7), 0.7 / CONFIDENT_Z),
        (0.9, Scale(0.8, 0.0, 0.7), 0.7),
    ],
)
def test_confidence(best: float, scale: Scale, expected: float) -> None:
    """Standard deviations above the level, over CONFIDENT_Z, clipped, times trust."""
    assert confidence(best, scale) == pytest.approx(expected)


def test_ties_on_coverage_go_to_bm25_as_far_as_the_model_cannot_read() -> None:
    """Two hits holding the same terms: the vectors order them, or bm25 at low trust."""
    keyword = [(1, -3.0, 1.0), (2, -1.0, 1.0)]  # equal coverage, 1 better bm25
    semantic = [(2, 0.80), (1, 0.795)]
    read = fuse(keyword, semantic, scale=Scale(0.5, 0.05))
    unread = fuse(keyword, semantic, scale=Scale(0.5, 0.05, 0.7))
    assert order(read) == [2, 1]
    assert order(unread) == [1, 2]


def test_a_model_that_cannot_read_the_language_gives_way_to_keywords() -> None:
    """A full keyword match beats the vectors' favourite at low trust, not at full."""
    keyword = [(1, -2.0, 1.0), (2, -1.0, 0.5)]
    semantic = [(2, 0.95), (1, 0.85)]
    read = fuse(keyword, semantic, scale=Scale(0.5, 0.05))
    unread = fuse(keyword, semantic, scale=Scale(0.5, 0.05, 0.3))
    assert order(read) == [2, 1]
    assert order(unread) == [1, 2]


@pytest.mark.parametrize(
    ("cosine", "floor", "best", "expected"),
    [
        (0.85, 0.8, 0.9, 0.5),
        (0.7, 0.8, 0.9, 0.0),  # below the level: clipped to 0
        (0.95, 0.8, 0.9, 1.0),  # above the best (a rounding): clipped to 1
        (0.9, 0.9, 0.9, 0.0),  # no range: the signal says nothing
        (0.9, 0.95, 0.9, 0.0),  # the best below the level
    ],
)
def test_closeness(cosine: float, floor: float, best: float, expected: float) -> None:
    """Between the floor (0) and the best (1), clipped; 0 without a range."""
    assert closeness(cosine, floor, best) == pytest.approx(expected)


def test_a_best_cosine_below_the_level_leaves_the_keyword_signal() -> None:
    """Nothing closer than an unrelated text: the keyword side orders the hits.

    With the model's scale that is how much of the query a hit holds
    (coverage), not bm25: the shorter memory with the better bm25 but fewer
    of the query's words comes second.
    """
    ranked = fuse(
        [(1, -1.0, 1.0), (2, -3.0, 0.4)], [(1, 0.6), (2, 0.7)], scale=Scale(0.75, 0.1)
    )
    assert order(ranked) == [1, 2]
    assert ranked[0].score == pytest.approx(1.0)


# -- issue #22, second round: coverage, decay, ranks, grouped terms ----------------


@dataclass(frozen=True)
class Evidence:
    """Per-term evidence as `KeywordQuery` hands it to `fuse`."""

    weights: Mapping[str, float]
    held: Mapping[int, frozenset[str]]


def test_a_hit_holding_only_a_common_term_ranks_below_the_vectors_clear_answer() -> (
    None
):
    """Coverage, not bm25, is the keyword relevance.

    Memory 1 is short and holds only a common word of the question: the best
    bm25 by far, a tenth of the query's weight. Memory 2 holds the rare
    words and is the vectors' best. bm25 over the best gave memory 1 full
    keyword marks and first place; by coverage the answer comes first.
    """
    keyword = [(1, -5.0, 0.1), (2, -1.0, 0.9)]
    ranked = fuse(keyword, [(2, 0.9), (1, 0.85), (3, 0.6)], scale=Scale(0.5, 0.05))
    assert order(ranked) == [2, 1, 3]
    # Hits holding the same terms tie on the keyword side: the vectors decide.
    tied = [(1, -5.0, 0.5), (2, -1.0, 0.5)]
    assert order(fuse(tied, [(2, 0.9), (1, 0.85)], scale=Scale(0.5, 0.05))) == [2, 1]


def test_terms_the_same_hits_hold_count_once() -> None:
    """A word and its compound parts found in the same rows are one piece of evidence.

    "Hvornår har Mia fødselsdag?": the split of "fødselsdag" adds "fødsel"
    and "elsdag", held by the same three birthday memories; "mia" is the
    answer's only match. Counted apart, the split holds most of the query's
    weight and a birthday memory beats the answer the vectors prefer;
    counted once, the answer comes first.
    """
    split = frozenset({"fodselsdag", "fodsel", "elsdag"})
    evidence = Evidence(
        {"fodselsdag": 2.0, "fodsel": 2.0, "elsdag": 2.0, "mia": 1.5},
        {1: split, 2: split, 3: split, 4: frozenset({"mia"})},
    )
    keyword = [(1, -3.0, 0.8), (2, -2.9, 0.8), (3, -2.8, 0.8), (4, -2.0, 0.2)]
    semantic = [(4, 0.80), (1, 0.78), (2, 0.70), (3, 0.65)]
    scale = Scale(0.5, 0.05)
    assert order(fuse(keyword, semantic, None, scale, evidence))[0] == 4
    assert order(fuse(keyword, semantic, None, scale))[0] == 1
    coverage = grouped_coverage(keyword, evidence)
    assert coverage[1] == coverage[2] == coverage[3]
    assert coverage[1] + coverage[4] == pytest.approx(1.0)  # every term held, once
    # A term no hit holds still weighs in the query's total.
    absent = Evidence({**evidence.weights, "kage": 2.0}, evidence.held)
    assert grouped_coverage(keyword, absent)[4] < coverage[4]
    # Without evidence, each hit keeps the coverage it came with.
    assert grouped_coverage(keyword, None) == {1: 0.8, 2: 0.8, 3: 0.8, 4: 0.2}


def test_first_place_in_a_list_counts_whatever_the_gap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rank bonus: two candidates a hair apart in the weighted sum.

    Memory 1 leads the keywords by a little and memory 2 the vectors by a
    little; the weighted sum alone follows the keyword side's hair-breadth
    lead. With each list's place counted (the semantic list, with the larger
    share, puts memory 2 first), memory 2 comes first.
    """
    keyword = [(1, -2.0, 1.0), (2, -2.0, 0.97)]
    semantic = [(2, 0.9), (1, 0.8995), (3, 0.6)]
    assert order(fuse(keyword, semantic, scale=Scale(0.5, 0.05))) == [2, 1, 3]
    monkeypatch.setattr(fusion, "RANK_BONUS", 0.0)
    assert order(fuse(keyword, semantic, scale=Scale(0.5, 0.05))) == [1, 2, 3]


def test_a_cosine_decays_with_its_distance_from_the_best_in_spreads() -> None:
    """exp(-d / DECAY_SD): one spread below the best keeps less than half.

    Linear closeness gave a cosine halfway between the level and the best
    half the semantic marks; decaying, a cosine many spreads below the best
    keeps almost nothing, so a keyword hit the vectors call barely related
    no longer rides on them.
    """
    scale = Scale(0.5, 0.05)
    assert fusion.decay(0.9, scale, 0.9) == 1.0
    near, halfway = fusion.decay(0.85, scale, 0.9), fusion.decay(0.7, scale, 0.9)
    assert 0.0 < halfway < 0.05 < near < 0.5
    assert fusion.decay(0.5, scale, 0.9) == fusion.decay(0.4, scale, 0.9) == 0.0


# -- the scale: a sample of the stored vectors -------------------------------------


def _units(count: int, seed: int, dim: int = 16) -> F32:
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(count, dim)).astype(np.float32)
    units: F32 = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return units


def test_scale_is_the_mean_and_spread_of_the_cosines_with_the_stored_vectors() -> None:
    """Up to SAMPLE_SIZE vectors, every one counts: exact mean and deviation."""
    rows = _units(40, seed=3)
    sample = CosineScale()
    sample.add(rows[:25])
    sample.add(rows[25:])
    query = as_unit_vector(np.random.default_rng(4).normal(size=16))
    found = sample.scale(query)
    assert found is not None
    assert sample.count == 40
    assert found.level == pytest.approx(float(np.mean(rows @ query)), abs=1e-6)
    assert found.spread == pytest.approx(float(np.std(rows @ query)), abs=1e-6)


def test_a_larger_household_is_sampled_alike_every_time() -> None:
    """Beyond SAMPLE_SIZE a reservoir sample: the same writes, the same sample.

    Its level stays close to the exact mean of all the vectors.
    """
    rows = _units(SAMPLE_SIZE * 3, seed=5)
    query = as_unit_vector(np.random.default_rng(6).normal(size=16))
    first, second = CosineScale(), CosineScale()
    first.add(rows)
    for start in range(0, len(rows), 100):
        second.add(rows[start : start + 100])
    assert first.count == second.count == len(rows)
    assert first.scale(query) == second.scale(query)
    found = first.scale(query)
    assert found is not None
    cosines = rows @ query
    assert found.level == pytest.approx(float(cosines.mean()), abs=0.03)
    assert found.spread == pytest.approx(float(cosines.std()), rel=0.15)


def test_no_scale_from_too_few_vectors_or_another_dimension() -> None:
    """Below MIN_VECTORS there is no scale; another dimension starts again."""
    sample = CosineScale()
    query = as_unit_vector(vector("q"))
    assert sample.scale(query) is None
    sample.add(np.stack([vector(i) for i in range(MIN_VECTORS - 1)]))
    assert sample.scale(query) is None
    sample.add(np.stack([vector("x")]))
    assert sample.scale(query) is not None
    assert sample.scale(as_unit_vector(vector("q", dim=8))) is None
    sample.add(np.zeros((0, 16), dtype=np.float32))  # nothing: unchanged
    assert sample.count == MIN_VECTORS
    sample.add(np.stack([vector(i, dim=8) for i in range(MIN_VECTORS)]))
    assert sample.count == MIN_VECTORS
    assert sample.scale(query) is None
    assert sample.scale(as_unit_vector(vector("q", dim=8))) is not None


async def _add_notes(store: MemoryStore, count: int) -> tuple[int, list[F32]]:
    """Add `count` memories with vectors; the first one's id and the unit vectors."""
    rows = [vector(i) for i in range(count)]
    results = await store.add_many(
        [memory(f"note number {i}") for i in range(count)], vectors=rows
    )
    return results[0].item.id, [as_unit_vector(row) for row in rows]


async def test_the_store_keeps_the_scale_of_its_model(
    open_store: StoreFactory,
) -> None:
    """Adds count in at once; after reopening (index read or not) it is the same."""
    store = await open_store()
    query = as_unit_vector(vector("query"))
    assert store.cosine_scale(query) is None
    first, rows = await _add_notes(store, MIN_VECTORS + 4)
    found = store.cosine_scale(query)
    assert found is not None
    assert found.level == pytest.approx(
        float(np.mean(np.stack(rows) @ query)), abs=1e-6
    )
    await store.set_vectors({first: vector("another")})
    await store.close()
    reopened = await open_store()
    # From the table again (every vector, or a sample of up to SAMPLE_SIZE).
    rows[0] = as_unit_vector(vector("another"))
    again = reopened.cosine_scale(query)
    assert again is not None
    cosines = np.stack(rows) @ query
    assert again.level == pytest.approx(float(cosines.mean()), abs=1e-6)
    assert again.spread == pytest.approx(float(cosines.std()), abs=1e-6)
    assert len(rows) < SAMPLE_SIZE
    hits = await reopened.search(SearchQuery(text="note", vector=vector(3)))
    assert hits[0].item.content == "note number 3"


def test_no_keyword_hit_reads_cosines_on_the_models_scale() -> None:
    """Words searched, none found: e5's 0.8 for unrelated texts scores near 0, not 0.8.

    A raw cosine would let every candidate of a narrow-band model through
    any minimum score below its unrelated level (0.75 for e5); on the
    model's scale only the match that stands out passes, as with MiniLM.
    """
    semantic = [(1, 0.90), (2, 0.81), (3, 0.80)]
    e5 = {e.id: e.score for e in fuse([], semantic, None, Scale(0.80, 0.02))}
    assert e5[1] == pytest.approx(1 - KEYWORD_WEIGHT)
    assert e5[3] < e5[2] < 0.2  # under the default recall floor
    # The same texts with MiniLM's wide band score the same.
    minilm = [(1, 0.60), (2, 0.15), (3, 0.10)]
    wide = {e.id: e.score for e in fuse([], minilm, None, Scale(0.10, 0.1))}
    assert wide == pytest.approx(e5)
    # Below the unrelated level every score is 0: the cosines keep the order.
    low = fuse([], [(5, 0.79), (4, 0.70), (6, 0.75)], None, Scale(0.80, 0.02))
    assert [e.id for e in low] == [5, 6, 4]
    # A search by vector alone (no scale given) keeps raw cosines.
    assert [e.score for e in fuse([], semantic)] == [0.90, 0.81, 0.80]


def _narrowed(row: F32, compress: float) -> F32:
    """`row` with one more, constant dimension: cosines become a * cos + (1 - a).

    With a = 0.2 unrelated texts (cosine near 0) meet near 0.8 and the best
    matches near 0.9 to 1: multilingual-e5-small's narrow band, made from
    MiniLM-like vectors. The change keeps every order of cosines.
    """
    scaled = np.sqrt(compress) * as_unit_vector(row)
    return np.append(scaled, np.float32(np.sqrt(1 - compress))).astype(np.float32)


_TOPICS = ("boiler", "bins", "dentist", "birthday", "school", "garden")


def _topic_vector(index: int) -> F32:
    """Give a memory's vector: its topic's direction plus its own noise."""
    return (3 * vector(_TOPICS[index % len(_TOPICS)]) + vector(index)).astype(
        np.float32
    )


@pytest.mark.parametrize("compress", [0.2, 0.5])
async def test_a_narrower_cosine_band_through_the_store_keeps_every_search(
    open_store: StoreFactory, tmp_path: Path, compress: float
) -> None:
    """Issue #22: the model's scale must not matter, end to end.

    The same memories and questions, once with wide-band vectors and once
    with every cosine compressed and shifted (`_narrowed`): the store's
    sample of its vectors (`CosineScale`) moves with the band, and every
    hybrid search returns the same memories in the same order with the same
    scores, so a minimum score means the same with both models.
    """
    texts = [f"{_TOPICS[i % len(_TOPICS)]} note {i}" for i in range(3 * MIN_VECTORS)]
    rows = [_topic_vector(i) for i in range(len(texts))]
    wide = await open_store(tmp_path / "wide.db")
    narrow = await open_store(tmp_path / "narrow.db")
    await wide.add_many([memory(text) for text in texts], vectors=rows)
    await narrow.add_many(
        [memory(text) for text in texts],
        vectors=[_narrowed(row, compress) for row in rows],
    )
    questions = {
        "boiler note": 3 * vector("boiler") + vector("q1"),
        "when is the birthday": 3 * vector("school") + vector("q2"),
        "dentist": vector("q3"),
        "nothing matches this": 3 * vector("garden") + vector("q4"),
    }
    for text, row in questions.items():
        found = [
            [(hit.item.content, hit.score) for hit in await store.search(query)]
            for store, query in (
                (wide, SearchQuery(text=text, vector=row, limit=10)),
                (
                    narrow,
                    SearchQuery(text=text, vector=_narrowed(row, compress), limit=10),
                ),
            )
        ]
        assert [content for content, _ in found[0]] == [
            content for content, _ in found[1]
        ], text
        assert [score for _, score in found[0]] == pytest.approx(
            [score for _, score in found[1]], abs=1e-4
        ), text
