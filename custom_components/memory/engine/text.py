"""Text handling: normalisation for de-duplication and safe FTS5 queries.

User text never reaches `MATCH` raw. Words are extracted with a Unicode
regular expression and each is passed as a quoted FTS5 string, so operators
(`AND`, `OR`, `NOT`, `NEAR(`), column filters (`:`), prefixes (`*`),
negation (`-`), quotes and brackets are searched as plain words or dropped as
punctuation, and never raise a syntax error.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Final

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACE = re.compile(r"\s+")
_TAG = re.compile(r"^[\w.-]+$", re.UNICODE)

# Bounded so a pasted page cannot turn into a huge MATCH expression.
MAX_QUERY_TERMS: Final = 32

# Words that carry no topic in a spoken question. Only dropped when the query
# keeps at least one other word, so "who is it" still searches something.
STOP_WORDS: Final = frozenset(
    """
    a about above after again all am an and any are as at be been before being
    below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself
    his how i if in into is it its itself just me more most my myself no nor
    not now of off on once only or other our ours ourselves out over own same
    she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your
    yours yourself yourselves tell know remember please let s t d ll m re ve
    """.split()
)


def fold(text: str) -> str:
    """Case- and accent-fold like FTS5's `unicode61 remove_diacritics 2`."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def term_coverage(terms: list[str], text: str) -> float:
    """Share of the query terms that occur as words of `text`."""
    if not terms:
        return 0.0
    words = set(_WORD.findall(fold(text)))
    return sum(fold(term) in words for term in terms) / len(terms)


def normalize_content(text: str) -> str:
    """Collapse the differences that do not change what a memory says."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _SPACE.sub(" ", text).strip()
    return text.rstrip(" .!?;,")


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


def fts_match_expression(text: str) -> str | None:
    """An FTS5 MATCH expression that ORs the query's words; None if it has none.

    Each word is a quoted string (embedded quotes doubled), which FTS5 treats
    as a literal phrase: no operator or column syntax can leak through.
    """
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
