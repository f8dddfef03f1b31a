"""Text handling: normalisation for de-duplication and safe FTS5 queries.

User text never reaches `MATCH` raw. Words are extracted with a Unicode
regular expression and each is passed as a quoted FTS5 string, so operators
(`AND`, `OR`, `NOT`, `NEAR(`), column filters (`:`), prefixes (`*`),
negation (`-`), quotes and brackets are searched as plain words or dropped as
punctuation, and never raise a syntax error. The only syntax added is ours: a
`*` after the closing quote, so that a word also finds its inflections.

The choices here (stop words, OR, light stemming with prefix matching) were
measured on the LoCoMo benchmark: see `bench/locomo.py` and
`docs/benchmarks/recall.md`.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from typing import Final
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACE = re.compile(r"\s+")
_TAG = re.compile(r"^[\w.-]+$", re.UNICODE)

# Bounded so a pasted page cannot turn into a huge MATCH expression.
MAX_QUERY_TERMS: Final = 32

# Light stemming for recall: a query word loses one of these endings (the
# first that fits) when at least PREFIX_MIN_CHARS letters remain, and a term
# of at least PREFIX_MIN_CHARS letters is matched as a prefix: "painting"
# searches `paint*` (paint, painted, painter), "dances" `danc*` (dance,
# dancing). Shorter words must match exactly, so "car" does not find
# "career". Query side only: the index keeps plain unicode61 tokens.
STEM_SUFFIXES: Final = ("ing", "ed", "es", "s")
PREFIX_MIN_CHARS: Final = 4

# Words that carry no topic in a spoken question. Only dropped when the query
# keeps at least one other word, so "who is it" still searches something.
_STOP_WORDS_TEXT: Final = """
a about above after again all am an and any are as at be been before being
below between both but by can could did do does doing down during each few
for from further had has have having he her here hers herself him himself
his how i if in into is it its itself just me more most my myself no nor not
now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what
when where which while who whom why will with would you your yours yourself
yourselves tell know remember please let s t d ll m re ve
"""
STOP_WORDS: Final = frozenset(_STOP_WORDS_TEXT.split())


def fold(text: str) -> str:
    """Case- and accent-fold like FTS5's `unicode61 remove_diacritics 2`."""
    if text.isascii():
        return text.lower()  # the common case, and 20 times faster
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def stem(term: str) -> str:
    """Drop one inflection ending if enough of the word remains."""
    for suffix in STEM_SUFFIXES:
        if (
            term.endswith(suffix)
            and len(term) - len(suffix) >= PREFIX_MIN_CHARS
            and not (suffix == "s" and term.endswith("ss"))
        ):
            return term[: -len(suffix)]
    return term


def is_prefix_term(term: str) -> bool:
    """Whether a (stemmed) term is matched as a prefix rather than exactly."""
    return len(term) >= PREFIX_MIN_CHARS


def term_coverage(terms: list[str], text: str) -> float:
    """Share of the query terms that occur in `text` the way FTS matches them.

    A long term counts when a word starts with its stem, a short one when a
    word equals it.
    """
    if not terms:
        return 0.0
    words = sorted(set(_WORD.findall(fold(text))))
    found = 0
    for term in terms:
        key = fold(stem(term))
        if not is_prefix_term(key):
            key = fold(term)
        # The first word not below `key` is the one that would start with it.
        at = bisect.bisect_left(words, key)
        if at < len(words) and (
            words[at].startswith(key) if is_prefix_term(key) else words[at] == key
        ):
            found += 1
    return found / len(terms)


def normalize_content(text: str) -> str:
    """Collapse the differences that do not change what a memory says."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _SPACE.sub(" ", text).strip()
    return text.rstrip(" .!?;,")


# Characters that show nothing on their own: controls, format characters
# (zero-width space, BOM, bidi marks...), surrogates, separators, and
# combining marks with nothing to combine with.
_INVISIBLE_CATEGORIES: Final = frozenset(
    {"Cc", "Cf", "Cs", "Zs", "Zl", "Zp", "Mn", "Me"}
)
# Letters and symbols that are drawn as blank space (Hangul fillers, the
# blank Braille pattern).
_FILLERS: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def clean_content(text: str) -> str:
    """Drop NUL and the other control characters; tabs and line breaks stay."""
    if text.isprintable():
        return text  # the common case
    return "".join(
        char for char in text if char in "\t\n" or unicodedata.category(char) != "Cc"
    )


def is_blank(text: str) -> bool:
    """Whether no character of `text` would show: spaces, invisible, fillers."""
    return all(
        unicodedata.category(char) in _INVISIBLE_CATEGORIES or char in _FILLERS
        for char in text
    )


def content_key(text: str) -> str:
    """Stable key of the normalised text, used for de-duplication."""
    return hashlib.sha256(normalize_content(text).encode()).hexdigest()[:32]


def normalize_tag(tag: str) -> str | None:
    """Lower-case a tag and join words with `_`; None when it is not storable."""
    tag = _SPACE.sub("_", unicodedata.normalize("NFKC", tag).strip().casefold())
    return tag if tag and _TAG.match(tag) else None


def query_terms(text: str) -> list[str]:
    """Words of a query, stop words dropped when others remain, de-duplicated."""
    # lower(), not casefold(): FTS5's unicode61 lower-cases character by
    # character, so "ß" or "ﬁ" folded to "ss" or "fi" would never match.
    words = [word.lower() for word in _WORD.findall(text)]
    content_words = [word for word in words if word not in STOP_WORDS]
    chosen = content_words or words
    return list(dict.fromkeys(chosen))[:MAX_QUERY_TERMS]


def fts_term(term: str) -> str:
    """One query word as an FTS5 string, a prefix query when it is long enough.

    The word is quoted (embedded quotes doubled), which FTS5 treats as a
    literal phrase; the only syntax added is the prefix `*` after the quote.
    """
    stemmed = stem(term)
    quoted = '"' + stemmed.replace('"', '""') + '"'
    return quoted + "*" if is_prefix_term(stemmed) else quoted


def fts_match_expression(text: str) -> str | None:
    """Build an FTS5 MATCH expression that ORs the query's words (None: no words).

    OR, not AND: a spoken question has words its answer does not repeat, and
    bm25 already ranks documents with more (and rarer) words first. No
    operator or column syntax from the text can leak through (see `fts_term`).
    """
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join(dict.fromkeys(fts_term(term) for term in terms))
