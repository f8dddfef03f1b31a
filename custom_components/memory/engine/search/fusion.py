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
match lost in the crowd says little, and the keyword signal then weighs
more. It does not catch an English model asked in Chinese, whose few
"hub" memories stand out for every question as far as real answers do
(docs/benchmarks/household.md, "Sixth round"): that is the scale's `trust`,
how well the model reads the query's language, measured once by the
embedding worker (`vectors/reading.py`; "Eighth round"), which multiplies
the confidence. Results, variants and commands:
`docs/benchmarks/household.md` and `docs/benchmarks/recall.md`.

Issue #22's second round (docs/benchmarks/household.md, "Variants, second
round" and "Shipped: coverage, decay, ranks and grouped terms"; replayed
offline by `bench/fusion_replay.py`, the candidate
`decay:w=0.4,z=5,t=1.25,a=1,lam=0.3,k=2,grp=1`) changed three things in
the hybrid score, all with the model's scale:

- the keyword relevance is the hit's share of the query's idf (its
  coverage) over the best hit's, not bm25: hits holding the same query
  terms tie on the keyword side and the vectors order them (bm25 alone gave
  the shortest memory holding a shared name full keyword marks). A model
  that cannot read the language cannot order them: the relevance then takes
  the share of trust its vectors lost (`Scale.trust`) from bm25 over the
  best, as keyword-only search does (docs/benchmarks/household.md, "Eighth
  round"). Query
  terms that exactly the same hits hold count once, at their heaviest
  weight (`grouped_coverage`): a word and its compound parts found in the
  same rows ("fødselsdag", "fødsel", "elsdag") are one piece of evidence;
- a cosine d standard deviations below the query's best scores
  exp(-d / DECAY_SD) rather than its linear place between the unrelated
  level and the best: the answer the vectors clearly prefer keeps its lead
  over a crowd of near-unrelated keyword hits;
- each list adds RANK_BONUS times its share times
  RANK_OFFSET / (RANK_OFFSET + rank) to the candidates it ranks (keywords
  by relevance, vectors by cosine), so first place in a list counts as such
  whatever the gap in scores.

The sum is divided by its largest value, so first place in both lists
still scores 1. Without a scale (too few stored vectors to know the
model's) the hybrid score is the earlier linear one: bm25 over the best,
the cosine's place between the lowest candidate and the best.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import math
from typing import Final, Protocol

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
# With the model's scale, a cosine d of the scale's standard deviations below
# the query's best cosine scores exp(-d / DECAY_SD) on the semantic side (the
# best 1, one sd below 0.45, three below 0.09; at or below the unrelated level
# 0). Replay `t` (docs/benchmarks/household.md, "Variants, second round"):
# 1 and 1.25 were tried; 1.25 with the rank bonus kept LoCoMo.
DECAY_SD: Final = 1.25
# Each list adds RANK_BONUS times its share times
# RANK_OFFSET / (RANK_OFFSET + rank) to the candidates it ranks, rank 0 first
# (replay `lam`, `k`): first place adds 0.3 of the list's share, second 0.2,
# fifth 0.1. The keyword list ranks by relevance (coverage), the vectors by
# cosine. Without it, coverage and decay cost LoCoMo turns with MiniLM 0.4 to
# 0.7 points of recall@10; with it LoCoMo rose with both models.
RANK_BONUS: Final = 0.3
RANK_OFFSET: Final = 2.0

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


class TermEvidence(Protocol):
    """The keyword side's evidence per query term (`keywords.KeywordQuery`)."""

    @property
    def weights(self) -> Mapping[str, float]:
        """Each analysed query term's weight (idf)."""
        ...

    @property
    def held(self) -> Mapping[int, frozenset[str]]:
        """The query terms each keyword hit holds, by id."""
        ...


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
    """How far the best cosine stands out from unrelated texts, 0..1.

    Times the scale's `trust`: how well the model reads the query's language.
    """
    if scale.spread <= 0:
        return scale.trust if best > scale.level else 0.0
    standing = min(max((best - scale.level) / scale.spread / CONFIDENT_Z, 0.0), 1.0)
    return standing * scale.trust


def grouped_coverage(
    keyword: Sequence[tuple[int, float, float]], terms: TermEvidence | None
) -> dict[int, float]:
    """Each keyword hit's coverage, query terms held by the same hits counted once.

    Every group of query terms that exactly the same hits hold weighs its
    heaviest term's weight; a term no hit holds keeps its own. Without
    `terms` (or weights), the coverage each hit came with.
    """
    if terms is None or not terms.weights:
        return {item_id: coverage for item_id, _bm25, coverage in keyword}
    held = {
        item_id: terms.held.get(item_id, frozenset()) for item_id, _b, _c in keyword
    }
    groups: dict[object, float] = {}
    for term, weight in terms.weights.items():
        key: object = frozenset(i for i, own in held.items() if term in own)
        if not key:
            key = ("absent", term)
        groups[key] = max(groups.get(key, 0.0), weight)
    total = sum(groups.values()) or 1.0
    return {
        item_id: sum(
            weight
            for key, weight in groups.items()
            if isinstance(key, frozenset) and item_id in key
        )
        / total
        for item_id in held
    }


def decay(cosine: float, scale: Scale, best: float) -> float:
    """exp(-d / DECAY_SD), `cosine` d spreads below the `best`; 0 at the level."""
    if best <= scale.level or cosine <= scale.level:
        return 0.0
    if scale.spread <= 0:
        return 1.0 if cosine >= best else 0.0
    return math.exp(-(best - cosine) / scale.spread / DECAY_SD)


def _ranks(scores: Mapping[int, float]) -> dict[int, int]:
    """Each id's place (0 first) by score, ties by id."""
    ordered: Iterable[int] = sorted(scores, key=lambda i: (-scores[i], i))
    return {item_id: rank for rank, item_id in enumerate(ordered)}


def fuse(
    keyword: Sequence[tuple[int, float, float]],
    semantic: Sequence[tuple[int, float]],
    similarity: Mapping[int, float] | None = None,
    scale: Scale | None = None,
    terms: TermEvidence | None = None,
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
    best_cosine = max(score for _id, score in semantic)
    best_bm25 = max((-bm25 for _i, bm25, _c in keyword), default=1.0) or 1.0
    if scale is None:
        # No model scale: bm25 over the best, linear closeness, no rank bonus.
        relevance = {i: max(-bm25, 0.0) / best_bm25 for i, bm25, _c in keyword}
        floor = min(cosines.values())
        share, bonus = 1 - KEYWORD_WEIGHT, 0.0
        near = {i: closeness(c, floor, best_cosine) for i, c in cosines.items()}
    else:
        coverage = grouped_coverage(keyword, terms)
        best_coverage = max(coverage.values(), default=0.0) or 1.0
        # Hits holding the same terms tie on coverage, for the vectors to
        # order; as far as the model cannot read the language, bm25 does.
        relevance = {
            i: scale.trust * coverage[i] / best_coverage
            + (1 - scale.trust) * max(-bm25, 0.0) / best_bm25
            for i, bm25, _c in keyword
        }
        share = (1 - KEYWORD_WEIGHT) * confidence(best_cosine, scale)
        bonus = RANK_BONUS
        near = {i: decay(c, scale, best_cosine) for i, c in cosines.items()}
    total = KEYWORD_WEIGHT + share
    ranks = (
        (KEYWORD_WEIGHT, _ranks(relevance)),
        (share, _ranks(cosines)),
    )
    scored = []
    for item_id in relevance.keys() | cosines.keys():
        score = KEYWORD_WEIGHT * relevance.get(item_id, 0.0) + share * near.get(
            item_id, 0.0
        )
        if bonus:
            for weight, rank in ranks:
                if item_id in rank:
                    score += (
                        bonus * weight * RANK_OFFSET / (RANK_OFFSET + rank[item_id])
                    )
        signals = tuple(
            signal
            for signal, ids in ((Signal.KEYWORD, relevance), (Signal.SEMANTIC, found))
            if item_id in ids
        )
        scored.append(Ranked(item_id, score / (total * (1 + bonus)), signals))
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
