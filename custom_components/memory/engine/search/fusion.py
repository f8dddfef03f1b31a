"""How keyword and semantic results are merged into one ranking.

`fuse` is the one function that merges the two signals (the store calls it
and nothing else, so the benchmark can swap it); `add_context` is the optional
step after it that lets neighbouring conversation turns lift each other.
Every weight is a named constant measured on the LoCoMo benchmark
(`bench/locomo.py`, results and the variants tried in
`docs/benchmarks/recall.md`).

The hybrid score is a weighted sum of the two signals, each normalised
against its own range for the query: bm25 divided by the best bm25, and a
cosine measured from the level an unrelated text reaches with this model
(`cosine_scale.CosineScale`) up to the best cosine. First place in both
lists scores 1. On LoCoMo a weighted sum beat reciprocal-rank fusion of the
same candidates by 6 (facts) to 17 (conversation turns) points of
recall@10: ranks throw away how much better the best keyword match is than
the tenth, and how far apart two cosines are (Bruch, Gai and Ingber, "An
Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 2023, found
the same, provided each score is normalised against its own range).

The cosine's range is the model's: all-MiniLM-L6-v2 puts unrelated texts
near 0.1, multilingual-e5-small near 0.75 with its best matches at 0.9.
Divided by the best cosine, e5's candidates all scored 0.85 to 1 and the
keyword signal decided the order alone (hybrid 4 to 20 points of recall@1
below e5's vectors alone on the household set). Measured from the
unrelated level, a cosine means the same with every model: no weight is
tuned per model, and compressing or shifting every cosine (`a * cos + b`,
`a > 0`) leaves the ranking as it was.

The semantic signal's share also follows how far the query's best cosine
stands out from unrelated texts, in their standard deviations: a best
match lost in the crowd (an English model asked in Chinese) says little,
and the keyword signal then weighs more. Results, variants and commands:
`docs/benchmarks/household.md` and `docs/benchmarks/recall.md`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ..models import Signal
from ..vectors import Scale

# Share of the keyword signal in a hybrid score; the semantic signal has the
# rest, times its confidence (below). Measured on the household set and
# LoCoMo with all-MiniLM-L6-v2 and multilingual-e5-small vectors
# (docs/benchmarks/household.md): the same share serves both models.
KEYWORD_WEIGHT: Final = 0.4
# The semantic signal counts fully when the best cosine lies this many
# standard deviations above the unrelated level, and in proportion below.
CONFIDENT_Z: Final = 5.0

# A keyword-only hit's score mixes how much of the query it contains (coverage)
# with its bm25 relative to the best hit: bm25 alone is near zero in a small
# collection, so a minimum score would mean nothing there.
COVERAGE_WEIGHT: Final = 0.5

# With `SearchQuery.context`, a memory closes CONTEXT_WEIGHT of the gap to
# its best neighbour: own + CONTEXT_WEIGHT * max(0, neighbour - own), the
# neighbours being the memories stored just before and after it in the same
# conversation. An answer ("Yes, a sunrise over the lake") rarely repeats the
# words of the question it answers; its neighbour does. +8 points of
# recall@10 on LoCoMo turns; 0.5 to 0.7 scored alike. A score is never
# lowered, so a minimum score means the same with and without context.
CONTEXT_WEIGHT: Final = 0.5


@dataclass(frozen=True, slots=True)
class Ranked:
    """An id with its fused score and the signals that contributed."""

    id: int
    score: float
    signals: tuple[Signal, ...]


def keyword_scores(
    hits: Sequence[tuple[int, float, float]],
) -> list[tuple[int, float]]:
    """Score keyword hits `(id, bm25, coverage)` in 0..1, best first.

    FTS5's bm25 is negative, lower is better.
    """
    if not hits:
        return []
    best = max(-bm25 for _id, bm25, _coverage in hits) or 1.0
    scored = [
        (
            item_id,
            COVERAGE_WEIGHT * coverage + (1 - COVERAGE_WEIGHT) * max(-bm25, 0.0) / best,
        )
        for item_id, bm25, coverage in hits
    ]
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored


def closeness(cosine: float, floor: float, best: float) -> float:
    """Where `cosine` lies between `floor` (0) and the query's `best` (1), clipped.

    No range (the best no higher than the floor): 0, the signal says nothing.
    """
    if best <= floor:
        return 0.0
    return min(max((cosine - floor) / (best - floor), 0.0), 1.0)


def confidence(best: float, scale: Scale) -> float:
    """How far the best cosine stands out from unrelated texts, 0..1."""
    if scale.spread <= 0:
        return 1.0 if best > scale.level else 0.0
    return min(max((best - scale.level) / scale.spread / CONFIDENT_Z, 0.0), 1.0)


def fuse(
    keyword: Sequence[tuple[int, float, float]],
    semantic: Sequence[tuple[int, float]],
    similarity: Mapping[int, float] | None = None,
    scale: Scale | None = None,
) -> list[Ranked]:
    """Merge keyword hits and semantic hits into one ranking, best first.

    `keyword` holds FTS5 hits `(id, bm25, coverage)`, `semantic` the nearest
    vectors `(id, cosine)` best first, and `similarity` the cosines of other
    candidates (keyword hits outside the semantic pool, context neighbours),
    so that every candidate is scored on both signals. `Ranked.signals` names
    the lists an item was found in (none for an item only `similarity` has).

    Keywords alone (no vectors) keep their own scores (`keyword_scores`), so
    that a minimum score means the same thing with or without vectors. No
    keyword hit, with vectors: with the model's `scale`, the hybrid score
    with a keyword relevance of 0 for every candidate (the keyword signal
    found nothing), so a minimum score means the same with every model (a
    raw cosine would not: multilingual-e5-small gives unrelated texts 0.8);
    without a scale, the raw cosine. With both, bm25 is divided by the best bm25, a cosine
    is measured from the level of unrelated texts (`scale`, the query's
    `CosineScale.scale`; without one, from the lowest candidate) to the best
    cosine (`closeness`), and the two are summed with KEYWORD_WEIGHT, the
    semantic share times `confidence` (1 without a scale): 0..1, and 1 for
    the first place in both.
    """
    if not semantic:
        return [
            Ranked(i, score, (Signal.KEYWORD,)) for i, score in keyword_scores(keyword)
        ]
    found = {item_id for item_id, _score in semantic}
    if not keyword and scale is None:
        ranked = [Ranked(i, score, (Signal.SEMANTIC,)) for i, score in semantic]
        ranked.extend(
            Ranked(i, score, ())
            for i, score in (similarity or {}).items()
            if i not in found
        )
        ranked.sort(key=lambda entry: (-entry.score, entry.id))
        return ranked
    cosines = dict(similarity or {})
    cosines.update(semantic)
    best_bm25 = max((-bm25 for _id, bm25, _coverage in keyword), default=1.0) or 1.0
    best_cosine = max(score for _id, score in semantic)
    floor = min(cosines.values()) if scale is None else scale.level
    share = (1 - KEYWORD_WEIGHT) * (
        1.0 if scale is None else confidence(best_cosine, scale)
    )
    total = KEYWORD_WEIGHT + share
    relevance = {item_id: max(-bm25, 0.0) / best_bm25 for item_id, bm25, _ in keyword}
    scored = []
    for item_id in relevance.keys() | cosines.keys():
        near = closeness(cosines.get(item_id, floor), floor, best_cosine)
        score = (KEYWORD_WEIGHT * relevance.get(item_id, 0.0) + share * near) / total
        signals = tuple(
            signal
            for signal, ids in ((Signal.KEYWORD, relevance), (Signal.SEMANTIC, found))
            if item_id in ids
        )
        scored.append(Ranked(item_id, score, signals))
    # Equal scores (those at or below the unrelated level all score 0 on the
    # semantic side) keep the cosines' order.
    scored.sort(
        key=lambda entry: (-entry.score, -cosines.get(entry.id, -2.0), entry.id)
    )
    return scored


def add_context(
    ranked: Sequence[Ranked],
    neighbours: Mapping[int, Sequence[int]],
    weight: float = CONTEXT_WEIGHT,
) -> list[Ranked]:
    """Lift each memory towards its best-scoring neighbour, best first.

    `neighbours` maps ids to the ids stored next to them in the same
    conversation (symmetric). A neighbour not in `ranked` scores 0, and an
    item that only its context brings in gets the signals of the neighbour
    that did.
    """
    base = {entry.id: entry for entry in ranked}
    ids = list(base)
    ids.extend(i for i in neighbours if i not in base)
    result = []
    for item_id in ids:
        own = base.get(item_id)
        score = own.score if own is not None else 0.0
        helper = max(
            (base[j] for j in neighbours.get(item_id, ()) if j in base),
            key=lambda entry: (entry.score, -entry.id),
            default=None,
        )
        signals = own.signals if own is not None else ()
        if helper is not None:
            score += weight * max(helper.score - score, 0.0)
            signals = signals or helper.signals
        result.append(Ranked(item_id, score, signals))
    result.sort(key=lambda entry: (-entry.score, entry.id))
    return result
