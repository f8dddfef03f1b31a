"""How keyword and semantic results are merged into one ranking.

Kept to one pure function with named constants so that the recall-quality
benchmark (`bench/locomo.py`) can swap and tune it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .models import Signal

# Reciprocal-rank fusion constant (Cormack et al. 2009).
RRF_K: Final = 60
KEYWORD_WEIGHT: Final = 1.0
SEMANTIC_WEIGHT: Final = 1.0

# A keyword hit's score mixes how much of the query it contains (coverage)
# with its bm25 relative to the best hit: bm25 alone is near zero in a small
# collection, so a minimum score would mean nothing there.
COVERAGE_WEIGHT: Final = 0.5


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
    keyword: Sequence[tuple[int, float]],
    semantic: Sequence[tuple[int, float]],
) -> list[Ranked]:
    """Merge two ranked lists (best first) into one, best first.

    With one signal only, its own 0..1 scores are kept so that a minimum
    score means the same thing with or without vectors. With both, reciprocal
    ranks are summed and scaled so that first place in both lists scores 1.
    """
    if not semantic:
        return [Ranked(i, score, (Signal.KEYWORD,)) for i, score in keyword]
    if not keyword:
        return [Ranked(i, score, (Signal.SEMANTIC,)) for i, score in semantic]
    best = (KEYWORD_WEIGHT + SEMANTIC_WEIGHT) / (RRF_K + 1)
    scores: dict[int, float] = {}
    signals: dict[int, list[Signal]] = {}
    for signal, weight, ranked in (
        (Signal.KEYWORD, KEYWORD_WEIGHT, keyword),
        (Signal.SEMANTIC, SEMANTIC_WEIGHT, semantic),
    ):
        for rank, (item_id, _score) in enumerate(ranked, start=1):
            scores[item_id] = scores.get(item_id, 0.0) + weight / (RRF_K + rank)
            signals.setdefault(item_id, []).append(signal)
    ordered = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    return [
        Ranked(item_id, score / best, tuple(signals[item_id]))
        for item_id, score in ordered
    ]
