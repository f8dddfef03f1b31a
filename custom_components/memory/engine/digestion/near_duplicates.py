"""Near duplicates: when two memories say the same thing, and when they may not.

The measures `consolidation.py` judges a candidate by, and `bench/dedup.py`
chose the thresholds with: the keyword overlap of two texts (Jaccard of
their content words' terms, each text analysed in its own language as
keyword search indexes it: `analysis.query_terms`), the thresholds that make
a pair a near duplicate or worth a question, and the conflicts (other
numbers, a negation or a name on one side only) that keep alike-sounding
texts apart. Number words and negations are English ones.
"""

from __future__ import annotations

from dataclasses import dataclass
import re
from typing import Final
import unicodedata

from ..languages import fold_term, language_code, query_terms, stem
from ..text import fold

_NUMBER: Final = re.compile(r"\d+(?:[.,:]\d+)?")
_WORD: Final = re.compile(r"[\w'’]+", re.UNICODE)
_WORDS_ONLY: Final = re.compile(r"[^\W\d_]+", re.UNICODE)
_SENTENCE: Final = re.compile(r"[.!?:;]\s+")
_NUMBER_WORDS: Final = {
    word: str(value)
    for value, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
} | {"once": "1", "twice": "2"}
_NEGATIONS: Final = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "nobody",
        "nothing",
        "neither",
        "nor",
        "without",
        "cannot",
        "anymore",
        "stopped",
        "quit",
    ]
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Thresholds:
    """When two texts say the same thing (measured by bench/dedup.py).

    A pair is a near duplicate when its keyword overlap (Jaccard of stemmed
    content words) reaches `keyword` without vectors, or, with vectors, its
    cosine reaches `cosine` and its overlap `hybrid_keyword`. It is worth
    asking the LLM about when the overlap reaches `ask_keyword` or the cosine
    `ask_cosine`. `pool` is how many search hits are compared.
    """

    keyword: float
    cosine: float
    hybrid_keyword: float
    ask_keyword: float
    ask_cosine: float
    pool: int = 10


# Chosen by bench/dedup.py (docs/benchmarks/dedup.md): no false merge on the
# labelled pairs, best recall among such settings.
DEFAULT_THRESHOLDS: Final = Thresholds(
    keyword=0.8,
    cosine=0.95,
    hybrid_keyword=0.4,
    ask_keyword=0.4,
    ask_cosine=0.6,
)


def content_terms(text: str, language: str) -> frozenset[str]:
    """Return the terms of a text's content words in its language, as search sees them."""
    return frozenset(query_terms(text, language))


def keyword_overlap(
    left: str, right: str, language: str, right_language: str | None = None
) -> float:
    """Jaccard overlap of two texts' content terms (0..1).

    `left` is analysed in `language`, `right` in `right_language` (None:
    the same).
    """
    a = content_terms(left, language)
    b = content_terms(right, language if right_language is None else right_language)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _term(word: str, code: str) -> str:
    """One word as its language's stem, folded ("Fahrräder" -> "fahrrad")."""
    lowered = unicodedata.normalize("NFKC", word).lower()
    return " ".join(fold_term(stem(lowered, code))) or fold(word)


def _words(text: str) -> list[str]:
    """Words without a possessive "'s", as written (case kept)."""
    return [word.removesuffix("'s").removesuffix("’s") for word in _WORD.findall(text)]


def _numbers(text: str) -> frozenset[str]:
    spelled = {
        _NUMBER_WORDS[folded]
        for folded in map(fold, _WORDS_ONLY.findall(text))
        if folded in _NUMBER_WORDS
    }
    return frozenset(_NUMBER.findall(text)) | spelled


def _negated(text: str) -> bool:
    words = [fold(word) for word in _WORD.findall(text)]
    return any(word in _NEGATIONS or word.endswith("n't") for word in words)


def _names(text: str, code: str) -> set[str]:
    """Capitalised words not starting a sentence: names, days, months, places.

    In German, every noun too: its inflections are one stem.
    """
    found: set[str] = set()
    for sentence in _SENTENCE.split(text):
        found.update(
            _term(word, code)
            for word in _words(sentence)[1:]
            if len(word) > 1 and word[0].isupper()
        )
    return found


def conflicting(
    left: str, right: str, language: str, right_language: str | None = None
) -> bool:
    """Whether two similar texts may still disagree, so must never be merged.

    Other numbers ("bed at 8 pm" / "at 9 pm"), a negation on one side only
    ("likes mushrooms" / "does not like mushrooms"), or a name on one side
    only ("piano on Saturday" / "on Sunday", "lives in Portland" / "in
    Seattle"): both measures rate such pairs as alike as paraphrases. Words
    are stemmed in each text's language (`left` in `language`, `right` in
    `right_language`, None: the same).
    """
    if _numbers(left) != _numbers(right) or _negated(left) != _negated(right):
        return True
    codes = (
        language_code(language),
        language_code(language if right_language is None else right_language),
    )
    names = _names(left, codes[0]) | _names(right, codes[1])
    if not names:
        return False
    in_left = {_term(word, codes[0]) for word in _words(left)} & names
    in_right = {_term(word, codes[1]) for word in _words(right)} & names
    return in_left != in_right


def is_near_duplicate(
    overlap: float, cosine: float | None, thresholds: Thresholds
) -> bool:
    """Apply the near-duplicate rule to one pair's measures (no conflict check)."""
    if cosine is None:
        return overlap >= thresholds.keyword
    return cosine >= thresholds.cosine and overlap >= thresholds.hybrid_keyword


def is_similar(overlap: float, cosine: float | None, thresholds: Thresholds) -> bool:
    """Tell whether a pair is similar enough to be worth a question (ask band)."""
    return overlap >= thresholds.ask_keyword or (
        cosine is not None and cosine >= thresholds.ask_cosine
    )
