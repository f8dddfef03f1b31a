"""Keyword analysis per language: the terms a text is indexed and searched by.

A memory or message is indexed, and a spoken question searched, in its own
language (`languages.language_code` of the conversation's tag):

- words are cut from the NFKC, lower-cased text; an apostrophe splits a word
  ("l'eau", "dell'acqua", "Leo's") unless the whole form is a stop word
  ("don't");
- stop words of the language (`engine/languages/stopwords/<code>.txt`) are dropped on
  both sides, so "Quand est-ce que Mia va nager ?" searches only the stems
  of "Mia" and "nager", and a name or a content word is never outweighed by
  function words;
- every other word is stemmed with the language's Snowball stemmer (a light
  one of our own for Polish), brought nearer its singular where Snowball
  leaves a plural apart (`plurals.refine`), and folded to what FTS5's `unicode61
  remove_diacritics 2` holds (`analysis_words.fold_term`): each term is one
  token of that tokenizer, the same one it reads back;
- in German, Dutch, the Nordic languages and Finnish the index also holds
  the tails of long words (after the words; `index_columns` gives them
  apart), and a query's long words offer heads and tails to look up in the
  index's vocabulary (`compounds`, `compound_parts`, `compound_groups`);
- runs of Chinese, Japanese and Korean script become overlapping character
  bigrams (a lone character stays itself): "生日" is found in
  "我女儿的生日是五月";
- any other language is folded and searched word by word, unstemmed.

Bump `ANALYSIS_VERSION` whenever `index_terms` gives another output for some
text: stored rows with an older version are analysed again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
import functools
import re
from typing import Final
import unicodedata

from .compounds import PartKind, compound_tails, genitive_parts, word_parts
from .tags import COMPOUNDING, language_code
from .words import APOSTROPHES, fold_char, fold_term, stem, stop_words

ANALYSIS_VERSION: Final[int] = 2

# Bounded so a pasted page cannot turn into a huge MATCH expression.
MAX_QUERY_TERMS: Final = 32
# Letters a query term needs before, in a compounding language, it also
# matches the stored words it begins (`keywords`, `query_finds`): Snowball
# leaves "Sommer", "Wasser", "vand" four letters ("somm", "wass", "vand"),
# which begin "Sommerurlaub", "Wasserhahn", "vandhane". Household keyword
# MRR at 4 against 5: de 0.923 -> 0.928, nl 0.825 -> 0.839, sv 0.880 ->
# 0.906, da 0.857 -> 0.873, no language lower (docs/benchmarks/household.md).
MIN_PREFIX_TERM: Final = 4
# Query analyses kept (`query_terms_in`): a few turns' worth, a few KiB.
QUERY_CACHE: Final = 256

# Han (with its extensions and compatibility ideographs), the iteration and
# closing marks, Hiragana, Katakana (and its phonetic extensions), Hangul
# syllables and jamo. NFKC has already made half-width forms full-width.
_CJK_RANGES: Final = (
    "\u1100-\u11ff\u3005-\u3007\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff"
    "\uf900-\ufaff\U00020000-\U0003134f"
)
_CJK_SPLIT: Final = re.compile(f"([{_CJK_RANGES}]+)")
# A word: letters and digits joined by apostrophes. `_` (a separator for
# unicode61) is made a space first: `[^\\W_]` would be three times slower.
_WORD: Final = re.compile(f"\\w+(?:[{APOSTROPHES}]\\w+)*")
_APOSTROPHE: Final = re.compile(f"[{APOSTROPHES}]")


def _segments(text: str) -> Iterator[tuple[bool, str]]:
    """Cut the text into pieces: (True, a CJK run) or (False, anything else)."""
    text = unicodedata.normalize("NFKC", text).lower().replace("_", " ")
    if text.isascii() or not _CJK_SPLIT.search(text):
        yield False, text
        return
    for index, piece in enumerate(_CJK_SPLIT.split(text)):
        if piece:
            yield index % 2 == 1, piece


def _bigrams(run: str) -> list[str]:
    """Return the overlapping character bigrams of a CJK run; a lone character alone."""
    terms: list[str] = []
    for part in "".join(map(fold_char, run)).split():
        if len(part) == 1:
            terms.append(part)
        else:
            terms.extend(part[at : at + 2] for at in range(len(part) - 1))
    return terms


def _token_words(token: str, stops: frozenset[str]) -> list[str]:
    """Return one `_WORD` match's content words (lower-cased, accents kept).

    An apostrophe: "don't" may be a stop word as a whole; otherwise its
    parts are words of their own ("l'eau" -> "l", "eau").
    """
    if token.isalnum():
        return [] if token in stops else [token]
    if _APOSTROPHE.sub("'", token) in stops:
        return []
    return [part for part in _APOSTROPHE.split(token) if part not in stops]


def _content_words(
    text: str, code: str, stops: frozenset[str] | None = None
) -> Iterator[str | list[str]]:
    """Yield the content words of a text (lower-cased, accents kept) in order.

    A CJK run arrives as its list of bigrams, already terms. `stops`
    replaces the language's stop words when given.
    """
    if stops is None:
        stops = stop_words(code)
    for is_cjk, piece in _segments(text):
        if is_cjk:
            yield _bigrams(piece)
            continue
        for word in _WORD.findall(piece):
            yield from _token_words(word, stops)


# Words analysed (`_token_analysis`), one dict a language: a household's
# texts repeat their words, so most words skip stemming, folding and the
# compound search. Words up to MAX_CACHED_TOKEN characters are kept (longer
# ones, and numbers, which are not stemmed and would crowd out the words, are
# analysed each time), each counting 1 plus its compound tails against
# TOKEN_CACHE; when that is reached the caches start afresh (one step, safe
# while another thread reads) and everyday words come back at once. Measured
# with `sys.getsizeof` over an entry's word, terms and tails and a dict slot:
# at worst about 650 bytes a unit (40 four-byte characters; a 40-letter
# German compound with 34 tails: 2.7 KiB, 5.7 KiB in four-byte characters),
# so at most about 10.5 MiB; everyday words take about 300 bytes.
TOKEN_CACHE: Final = 16384
MAX_CACHED_TOKEN: Final = 40
_NOTHING: Final[tuple[tuple[str, ...], tuple[str, ...]]] = ((), ())
type _Analysed = tuple[tuple[str, ...], tuple[str, ...]]
_token_caches: dict[str, dict[str, _Analysed]] = {}
_cached_count = [0]


def _token_analysis(
    token: str, code: str, stops: frozenset[str], *, tails: bool
) -> _Analysed:
    """Return one `_WORD` match's terms and, with `tails`, its compound tails.

    No word's analysis depends on the words around it. The tails are empty
    outside compounding languages.
    """
    words = _token_words(token, stops)
    if not words:
        return _NOTHING
    terms = tuple(term for word in words for term in fold_term(stem(word, code)))
    if not tails or code not in COMPOUNDING:
        return terms, ()
    return terms, tuple(tail for word in words for tail in compound_tails(word, code))


def _terms(
    text: str,
    code: str,
    *,
    tails: list[str] | None,
    stops: frozenset[str] | None = None,
) -> list[str]:
    """Return the words' terms; compound tails go to `tails` when given.

    With the language's own stop words (`stops` None) each word is looked up
    in its language's cache first (and kept there, tails and all); a given
    `stops` analyses every word anew.
    """
    cache = _token_caches.setdefault(code, {}) if stops is None else None
    own_stops = stop_words(code) if stops is None else stops
    terms: list[str] = []
    for is_cjk, piece in _segments(text):
        if is_cjk:
            terms.extend(_bigrams(piece))
            continue
        for token in _WORD.findall(piece):
            found = None if cache is None else cache.get(token)
            if found is None:
                found = _token_analysis(
                    token, code, own_stops, tails=cache is not None or tails is not None
                )
                if (
                    cache is not None
                    and len(token) <= MAX_CACHED_TOKEN
                    and not token.isdecimal()
                ):
                    _keep(cache, token, found)
            terms.extend(found[0])
            if tails is not None and found[1]:
                tails.extend(found[1])
    return terms


def _keep(cache: dict[str, _Analysed], token: str, found: _Analysed) -> None:
    """Put a word's analysis in its language's cache, within TOKEN_CACHE."""
    if _cached_count[0] >= TOKEN_CACHE:
        _cached_count[0] = 0
        for each in list(_token_caches.values()):
            each.clear()
    cache[token] = found
    _cached_count[0] += 1 + len(found[1])


def index_terms(text: str, language: str) -> str:
    """Return the searchable terms of a text, space-joined, for the FTS5 column.

    Stop words dropped, every other word stemmed and folded, numbers kept,
    compound tails added in compounding languages (after the words), CJK as
    bigrams. Each term is one `unicode61 remove_diacritics 2` token,
    unchanged by it. Deterministic; `language` is any tag (an unknown one:
    generic analysis).
    """
    words, tails = index_columns(text, language)
    return f"{words} {tails}" if tails else words


def index_columns(text: str, language: str) -> tuple[str, str]:
    """Return `index_terms` in two parts: the words' terms, the compound tails.

    For a search that keeps tails in a column of their own (weighted lower,
    and not lengthening the words' column for bm25). The tails are empty
    outside compounding languages.
    """
    tails: list[str] = []
    words = _terms(text, language_code(language), tails=tails)
    return " ".join(words), " ".join(tails)


def query_terms(text: str, language: str) -> list[str]:
    """Return the analysed terms of a spoken query, matching `index_terms`.

    Stop words dropped, de-duplicated in order, at most `MAX_QUERY_TERMS`;
    empty when the text has only stop words or punctuation. Compound parts
    are not among them (`compound_parts`).
    """
    terms = _terms(text, language_code(language), tails=None)
    return list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]


def query_terms_in(text: str, languages: Iterable[str]) -> list[str]:
    """Return a query's terms analysed in each of several languages, merged.

    For a household that speaks two languages: the union of every language's
    `query_terms`, but a word that is a stop word in any of them is dropped
    in all ("die" of a German question is not searched as an English word).
    The last QUERY_CACHE analyses are kept: a turn is read by the follow-up
    check, the memories' and the messages' searches, and later turns'
    searches as an earlier turn, and is stemmed once.
    """
    codes = tuple(dict.fromkeys(language_code(language) for language in languages))
    return list(_query_terms_in(text, codes))


@functools.lru_cache(maxsize=QUERY_CACHE)
def _query_terms_in(text: str, codes: tuple[str, ...]) -> tuple[str, ...]:
    """`query_terms_in` of language codes, kept (a tuple: nobody changes it)."""
    stops = frozenset().union(*(stop_words(code) for code in codes))
    terms: dict[str, None] = {}
    for code in codes:
        terms.update(dict.fromkeys(_terms(text, code, tails=None, stops=stops)))
    return tuple(terms)[:MAX_QUERY_TERMS]


def compound_groups(text: str, language: str) -> list[list[tuple[str, PartKind]]]:
    """Group `compound_parts`: one list per query word, and one per genitive.

    A search that keeps "the longest head and the longest tail that exist"
    should do so within each group: a long tail of one word ("eier") must
    not crowd out the name of another ("leo").
    """
    return [parts for _whole, parts in compound_words(text, language)]


def compound_words(
    text: str, language: str
) -> list[tuple[tuple[str, ...], list[tuple[str, PartKind]]]]:
    """Return `compound_groups` with the terms of the word each group is of.

    A search may let a part stand in for its word when the index does not
    hold the word itself ("mullabfuhr" absent, its head "mull" found).
    """
    code = language_code(language)
    if code not in COMPOUNDING:
        return []
    seen = set(query_terms(text, code))
    taken: set[tuple[str, PartKind]] = set()
    groups: list[tuple[tuple[str, ...], list[tuple[str, PartKind]]]] = []
    words = [word for word in _content_words(text, code) if isinstance(word, str)]
    for word in dict.fromkeys(words[:MAX_QUERY_TERMS]):
        whole = tuple(fold_term(stem(word, code)))
        for found in (
            genitive_parts(word, code),
            word_parts(word, code),
        ):
            group = [
                (term, kind)
                for term, kind in found
                if (term, kind) not in taken and not (kind == "exact" and term in seen)
            ]
            taken.update(group)
            if group:
                groups.append((whole, group))
    return groups


def compound_parts(text: str, language: str) -> list[tuple[str, PartKind]]:
    """Return the parts of a query's words to look up in the index vocabulary.

    For compounding languages (de, nl, sv, da, no, fi): a genitive's name
    ("Leos" -> ("leo", "exact")), and for each long word its heads as
    ("geburtstag", "prefix") candidates that may begin an index term and its
    tails as ("feier"'s stem, "exact") candidates that must equal one; at
    most 12 a word, longest first within each kind, none that is already a
    query term. Empty for other languages. `compound_groups` gives the same
    parts grouped by word.
    """
    return [part for group in compound_groups(text, language) for part in group]


def query_finds(query: str, languages: Iterable[str], text: str, language: str) -> bool:
    """Whether a keyword search of `query` would find `text` by some term.

    The query is analysed in `languages` (`query_terms_in`, with its
    compound parts), the text as the index holds it in its own `language`
    (`index_terms`): a query term or a compound's tail must equal one of
    the text's terms; a compound's head, and in a compounding language a
    query term of `MIN_PREFIX_TERM` letters, may begin one. As
    `keywords.keyword_query` matches, without asking the index which parts
    it knows.
    """
    held = set(index_terms(text, language).split())
    codes = list(dict.fromkeys(language_code(tag) for tag in languages))
    terms = set(query_terms_in(query, codes))
    heads: set[str] = set()
    for code in codes:
        for part, kind in compound_parts(query, code):
            (heads if kind == "prefix" else terms).add(part)
        if code in COMPOUNDING:
            heads.update(
                term
                for term in terms
                if len(term) >= MIN_PREFIX_TERM and term.isalpha()
            )
    if terms & held:
        return True
    return any(word.startswith(head) for head in heads for word in held)
