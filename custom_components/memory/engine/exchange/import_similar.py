"""Near duplicates between an import and the store, found without comparing all pairs.

The rule is digestion's (`near_duplicates.py`): the keyword overlap
(Jaccard of content terms, each text analysed in its own language) reaches
`DEFAULT_THRESHOLDS.keyword` and no number, negation or name conflicts. Comparing each imported entry
with every stored memory of its scope would take 10^10 steps at 100,000
each; prefix filtering finds the same pairs: with the words of every text
sorted rarest first, two sets whose overlap reaches `t` share at least one
of their first `n - ceil(t * n) + 1` words, so only texts sharing such a
word are compared. A text of common words only would still be compared
with most of the store: each entry is compared with at most `MAX_COMPARED`
stored memories, those that share its rarest words first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
import math
from typing import Final

from ..digestion import DEFAULT_THRESHOLDS, conflicting, content_terms

# Stored memories one imported entry is compared with at most.
MAX_COMPARED: Final = 50


def _prefix(terms: Sequence[str], threshold: float) -> Sequence[str]:
    size = len(terms)
    return terms[: size - math.ceil(threshold * size) + 1]


def near_duplicate_pairs(
    entries: Sequence[tuple[str, str, str]],
    stored: Sequence[tuple[int, str, str, str]],
    threshold: float = DEFAULT_THRESHOLDS.keyword,
) -> dict[int, int]:
    """Map the index of each entry (scope, text, language) to the stored memory it repeats.

    `stored` holds (id, scope, text, language) of active memories. Each
    stored memory is claimed once, by the entry most like it that comes
    first; an entry goes with the stored memory most like it.
    """
    entry_terms = [content_terms(text, language) for _scope, text, language in entries]
    stored_terms = [
        content_terms(text, language) for _id, _scope, text, language in stored
    ]
    frequency: Counter[str] = Counter()
    for terms in (*entry_terms, *stored_terms):
        frequency.update(terms)

    def ordered(terms: frozenset[str]) -> list[str]:
        return sorted(terms, key=lambda term: (frequency[term], term))

    index: dict[tuple[str, str], list[int]] = {}
    for position, ((_id, scope, _text, _language), terms) in enumerate(
        zip(stored, stored_terms, strict=True)
    ):
        for term in _prefix(ordered(terms), threshold):
            index.setdefault((scope, term), []).append(position)
    claimed: set[int] = set()
    pairs: dict[int, int] = {}
    for number, ((scope, text, language), terms) in enumerate(
        zip(entries, entry_terms, strict=True)
    ):
        if not terms:
            continue
        candidates: dict[int, None] = {}
        for term in _prefix(ordered(terms), threshold):
            for position in index.get((scope, term), ()):
                if position not in claimed:
                    candidates[position] = None
                    if len(candidates) >= MAX_COMPARED:
                        break
            if len(candidates) >= MAX_COMPARED:
                break
        best: tuple[float, int] | None = None
        for position in candidates:
            other = stored_terms[position]
            overlap = len(terms & other) / len(terms | other)
            if (
                overlap >= threshold
                and (best is None or overlap > best[0])
                and not conflicting(
                    text, stored[position][2], language, stored[position][3]
                )
            ):
                best = (overlap, position)
        if best is not None:
            claimed.add(best[1])
            pairs[number] = stored[best[1]][0]
    return pairs
