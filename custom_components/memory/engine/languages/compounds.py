"""Compound words: the tails an index keeps, the parts a query looks up.

German, Dutch and the Nordic languages write compounds as one word
("Heizöltank", "stookolietank", "Geburtstagsfeier"), so a memory about a
"Heizöltank" shares no token with a question about the "Öltank". Without a
dictionary of each language, both sides meet half way:

- the index holds, for every word of `MIN_COMPOUND` letters or more, the
  stems of its tails `word[i:]` (`i >= MIN_HEAD_INDEX`, at least `MIN_TAIL`
  letters): "heizöltank" also gives "oltank" and "tank", "bijgevuld" gives
  "gevuld";
- a query's long word offers its heads (with and without a linking element,
  "geburtstags" and "geburtstag") to be matched as prefixes of index terms,
  and its tails to be matched exactly; a name in the genitive ("Leos") offers
  the name ("leo"). The search keeps the longest head and tail that exist in
  the index's vocabulary, so the parts that are not words cost nothing.
"""

from __future__ import annotations

import functools
from typing import Final, Literal

from .words import fold_term, stem, stop_words

MIN_COMPOUND: Final = 8  # letters a word needs before it is split
MIN_HEAD_INDEX: Final = 3  # letters before the first tail the index keeps
MIN_HEAD: Final = 4  # letters of the shortest head a query offers
MIN_TAIL: Final = 4  # letters of the shortest tail, both sides
MAX_HEADS: Final = 5  # heads a query word offers
MAX_TAILS: Final = 6  # tails a query word offers
MAX_PARTS_PER_WORD: Final = 12

PartKind = Literal["exact", "prefix"]

# Linking elements (Fugenelemente) between the parts of a compound: a head
# ending in one is also offered without it ("geburtstags" -> "geburtstag",
# "küchen" -> "küche"). Longest first.
LINKS: Final[dict[str, tuple[str, ...]]] = {
    "de": ("ens", "es", "en", "er", "s", "n", "e"),
    "nl": ("en", "s", "e"),
    "sv": ("s", "a", "u", "o", "e"),
    "da": ("s", "e"),
    "no": ("s", "e"),
    "fi": (),
}


@functools.lru_cache(maxsize=16384)
def compound_tails(word: str, code: str) -> tuple[str, ...]:
    """Return the index terms of a long word's tails (none for a short word).

    `word` is lower-cased with its accents, as the stemmer wants it. The
    word's own term and stop-word tails are left out.
    """
    if len(word) < MIN_COMPOUND or not word.isalpha():
        return ()
    stops = stop_words(code)
    own = set(fold_term(stem(word, code)))
    terms: list[str] = []
    for start in range(MIN_HEAD_INDEX, len(word) - MIN_TAIL + 1):
        tail = word[start:]
        if tail in stops:
            continue
        for term in fold_term(stem(tail, code)):
            # Stemming may cut a tail to a fragment that matches unrelated
            # words ("ining" -> "in"); a real word's stem may be short
            # ("gevuld" -> "vul"), so three letters stay.
            if term not in own and len(term) >= MIN_TAIL - 1:
                own.add(term)
                terms.append(term)
    return tuple(terms)


@functools.lru_cache(maxsize=4096)
def genitive_parts(word: str, code: str) -> tuple[tuple[str, PartKind], ...]:
    """Offer a genitive's name without its -s ("leos" -> "leo"), exact.

    Offered as it is and as its stem; only counts when the index has it.
    """
    if not word.isalpha() or not word.endswith("s") or len(word) < MIN_TAIL:
        return ()
    base = word[:-1]
    if base in stop_words(code):
        return ()
    own = set(fold_term(stem(word, code)))
    parts: list[tuple[str, PartKind]] = []
    for term in fold_term(stem(base, code)) + fold_term(base):
        if term not in own:
            own.add(term)
            parts.append((term, "exact"))
    return tuple(parts)


@functools.lru_cache(maxsize=4096)
def word_parts(word: str, code: str) -> tuple[tuple[str, PartKind], ...]:
    """Offer a long query word's heads (prefix) and tails (exact), longest first.

    At most `MAX_PARTS_PER_WORD`; none for a word shorter than
    `MIN_COMPOUND`.
    """
    if len(word) < MIN_COMPOUND or not word.isalpha():
        return ()
    stops = stop_words(code)
    own = set(fold_term(stem(word, code)))
    heads = _heads(word, code, stops, own)
    tails: list[str] = []
    # The shortest tails are the likeliest words ("feier" of
    # "geburtstagsfeier"); the longest are parts of the same compound.
    for start in range(len(word) - MIN_TAIL, MIN_HEAD - 1, -1):
        tail = word[start:]
        if tail in stops:
            continue
        for term in fold_term(stem(tail, code)):
            if term not in own:
                own.add(term)
                tails.append(term)
        if len(tails) >= MAX_TAILS:
            break
    parts: list[tuple[str, PartKind]] = [(head, "prefix") for head in heads]
    tails = sorted(tails[:MAX_TAILS], key=len, reverse=True)
    parts += [(tail, "exact") for tail in tails]
    return tuple(parts[:MAX_PARTS_PER_WORD])


def _heads(word: str, code: str, stops: frozenset[str], own: set[str]) -> list[str]:
    """Choose a long word's heads to match as prefixes, longest first.

    Heads without their linking element come first (the likeliest words),
    then the longest plain heads, up to `MAX_HEADS`. A head is kept as it is
    and as its stem ("küche" is indexed as "kuch").
    """
    linked: list[str] = []
    plain: list[str] = []
    for end in range(len(word) - MIN_TAIL, MIN_HEAD - 1, -1):
        head = word[:end]
        plain.append(head)
        linked.extend(
            head[: -len(link)]
            for link in LINKS.get(code, ())
            if head.endswith(link) and len(head) - len(link) >= MIN_HEAD
        )
    chosen: list[str] = []
    for head in linked + plain:
        if head in stops:
            continue
        for candidate in (head, stem(head, code)):
            for term in fold_term(candidate):
                if len(term) >= MIN_HEAD and term not in own and term not in chosen:
                    chosen.append(term)
        if len(chosen) >= MAX_HEADS:
            break
    return sorted(chosen[:MAX_HEADS], key=len, reverse=True)
