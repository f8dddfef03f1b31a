"""Does an utterance carry on from the conversation, and how much the earlier turns count.

"What is Mia allergic to?" then "And her brother?": the second question
alone names neither Mia nor allergies. Recall (`turn_recall`) searches a
follow-up with the conversation's earlier user turns too (`SearchQuery.
earlier`), fading with age (`earlier_weights`), and blends their query
vectors (`context_vector`) instead of embedding again. A question on a new
subject searches alone, so the old subject does not crowd it.

An utterance carries on (`is_follow_up`) when, in any of the turn's
languages, it opens with a continuation ("and", "what about", "und", "et",
`followup_words.OPENERS`), refers back ("her", "there", "then", "dort",
`followup_words.REFERS`), shares an analysed content term with the previous
turn, or is too short to stand alone ("Tomorrow?", "The bedroom?", "Thanks").
Word lists and stemming only: microseconds, no model.
"""

from __future__ import annotations

from collections.abc import Sequence
import re
from typing import Final
import unicodedata

import numpy as np

from ..languages import APOSTROPHES, language_code, query_terms_in
from ..models import Vector
from .followup_words import OPENERS, REFERS

# Weight of the previous user turn; each turn before it counts half again.
FADE: Final = 0.5
# Earlier user turns a follow-up looks back at.
MAX_EARLIER_TURNS: Final = 3
# A turn of at most this many words cannot stand alone ("Tomorrow?",
# "The bedroom?", "Thanks!"); "Where is the stopcock?" can.
ELLIPTICAL_WORDS: Final = 2

_WORD: Final = re.compile(f"\\w+(?:[{APOSTROPHES}-]\\w+)*")


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def _cued(words: Sequence[str], code: str) -> bool:
    """Whether the words open with a continuation or refer back, in `code`."""
    for phrase in OPENERS.get(code, ()):
        if tuple(words[: len(phrase)]) == phrase:
            return True
    refers = REFERS.get(code)
    return refers is not None and any(word in refers for word in words)


def is_follow_up(
    utterance: str, earlier: Sequence[str], languages: Sequence[str]
) -> bool:
    """Whether `utterance` carries on from `earlier` (newest first).

    `languages` are the turn's and the household's language tags. False
    without an earlier turn or without words.
    """
    if not earlier:
        return False
    words = _words(utterance)
    if not words:
        return False
    codes = list(dict.fromkeys(language_code(tag) for tag in languages if tag))
    if any(_cued(words, code) for code in codes):
        return True
    if len(words) <= ELLIPTICAL_WORDS:
        return True
    own = query_terms_in(utterance, codes)
    return bool(set(own) & set(query_terms_in(earlier[0], codes)))


def earlier_weights(count: int) -> list[float]:
    """Weights of `count` earlier turns, newest first: 0.5, 0.25, 0.125."""
    return [FADE ** (age + 1) for age in range(min(count, MAX_EARLIER_TURNS))]


def context_vector(now: Vector, earlier: Sequence[Vector | None]) -> Vector:
    """Return the unit vector of `now` plus the earlier turns' vectors, fading.

    Entries that are None (a turn embedded by no provider) or of another
    dimension are skipped: this is made of vectors recall already has.
    """
    total = np.asarray(now, dtype=np.float32).copy()
    for weight, vector in zip(earlier_weights(len(earlier)), earlier, strict=False):
        if vector is not None and vector.shape == total.shape:
            total += np.float32(weight) * np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(total))
    return total / np.float32(norm) if norm > 0 else np.asarray(now, dtype=np.float32)
