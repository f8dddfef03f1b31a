"""How keyword and semantic results are merged into one ranking.

`fuse` is the one function that merges the two signals (the store calls it
and nothing else, so the benchmark can swap it); `add_context` is the optional
step after it that lets neighbouring conversation turns lift each other.
Every weight is a named constant measured on the LoCoMo benchmark
(`bench/locomo.py`, results and the variants tried in
`docs/benchmarks/recall.md`).

The hybrid score is a weighted sum of the two signals, each divided by its
best value for the query (bm25 by the best bm25, cosine by the best cosine):
first place in both lists scores 1. On LoCoMo this beat reciprocal-rank
fusion of the same candidates by 6 (facts) to 17 (conversation turns) points
of recall@10: ranks throw away how much better the best keyword match is
than the tenth, and how far apart two cosines are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from .models import Signal

# Share of the keyword signal in a hybrid score; the semantic signal has the
# rest. Tuned on two sets that pull apart (docs/benchmarks/household.md):
# LoCoMo's long conversation turns want the keyword signal (0.5 and 0.45
# best, 0.4 one point lower, 0.3 three), a household's short memories and
# spoken questions want less of it (0.3 best in every language). 0.45 keeps
# LoCoMo as it was and lifts the household set's hybrid to at least its
# better single signal in 11 of 12 languages (English: one question short of
# the vector signal).
KEYWORD_WEIGHT: Final = 0.45

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


def fuse(
    keyword: Sequence[tuple[int, float, float]],
    semantic: Sequence[tuple[int, float]],
    similarity: Mapping[int, float] | None = None,
) -> list[Ranked]:
    """Merge keyword hits and semantic hits into one ranking, best first.

    `keyword` holds FTS5 hits `(id, bm25, coverage)`, `semantic` the nearest
    vectors `(id, cosine)` best first, and `similarity` the cosines of other
    candidates (keyword hits outside the semantic pool, context neighbours),
    so that every candidate is scored on both signals. `Ranked.signals` names
    the lists an item was found in (none for an item only `similarity` has).

    With one signal only, its own scores are kept (keyword: `keyword_scores`,
    semantic: the cosine) so that a minimum score means the same thing with or
    without vectors. With both, each signal is divided by its best value for
    the query and the two are summed with KEYWORD_WEIGHT: 0..1, and 1 for the
    first place in both.
    """
    if not semantic:
        return [
            Ranked(i, score, (Signal.KEYWORD,)) for i, score in keyword_scores(keyword)
        ]
    found = {item_id for item_id, _score in semantic}
    if not keyword:
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
    best_bm25 = max(-bm25 for _id, bm25, _coverage in keyword) or 1.0
    best_cosine = max(score for _id, score in semantic)
    relevance = {item_id: max(-bm25, 0.0) / best_bm25 for item_id, bm25, _ in keyword}
    scored = []
    for item_id in relevance.keys() | cosines.keys():
        closeness = (
            min(max(cosines.get(item_id, 0.0), 0.0) / best_cosine, 1.0)
            if best_cosine > 0
            else 0.0
        )
        score = (
            KEYWORD_WEIGHT * relevance.get(item_id, 0.0)
            + (1 - KEYWORD_WEIGHT) * closeness
        )
        signals = tuple(
            signal
            for signal, ids in ((Signal.KEYWORD, relevance), (Signal.SEMANTIC, found))
            if item_id in ids
        )
        scored.append(Ranked(item_id, score, signals))
    scored.sort(key=lambda entry: (-entry.score, entry.id))
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
