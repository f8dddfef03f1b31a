"""The keyword side of a search: which analysed terms drive an FTS5 match, and how much each is worth.

A query is analysed like the rows it searches (`analysis.py`): in the
speaker's language and, when that differs, in the store's default language
too, so a household that mixes two languages finds both. Long words of the
compounding languages add those of their parts that the index knows
(`analysis.compound_words`, checked against the FTS5 vocabulary), so
"Müllabfuhr" reaches "Restmülltonne" and "Geburtstagsfeier" "Geburtstag".

How many rows hold each term (the vocabulary's `doc` count) sets its weight
(inverse document frequency) and bounds the work: FTS5 scores every row a
MATCH finds, about a microsecond each, so a term in tens of thousands of
rows set the search's tail. Terms are added to the MATCH rarest first until
MATCH_BUDGET rows are reached (the rarest always; MATCH_SHARE of the rows
if more); the rest only weigh in
the coverage of the candidates found (`coverage`) and add their share of
bm25 to them (`rest`), so a row that holds the common words too still
ranks above one that does not; the rows that hold every term are always
candidates (`every`: an AND over the MATCH's rows, no bm25 to compute).
When even the rarest term is in more rows than that, the MATCH keeps its
newest MATCH_BUDGET rows (`KeywordQuery.newest`: a rowid bound FTS5 seeks
to, found by the search's own statement). A term no row holds is left out
of the MATCH (it can find nothing) but counts in the coverage.

How many rows hold each term is looked up in one statement with the
table's row count (`term_counts.py`); the text is analysed first (no
term, no statement).

User text never reaches MATCH raw: every term is a quoted FTS5 string made of
word characters only; the only syntax added is ours (`OR`, a `*` after the
closing quote of a compound head).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
import math
from typing import Any, Final

import aiosqlite

from ..languages import (
    COMPOUNDING,
    MIN_PREFIX_TERM,
    compound_words,
    language_code,
    query_terms_in,
)
from .term_counts import RowCounter, TermCounts

# Rows the MATCH may find before the commoner terms stop driving it: FTS5
# reads and scores each for about 0.75 us here (bm25 0.5 of it), which set
# the keyword-only search's tail. Keyword-only target in the top 10 at
# 500 / 750 / 1000 / 1500 (bench/engine.py's corpus): 10k 0.87 at all,
# 100k 0.555 / 0.59 / 0.59 / 0.62, 300k - / 0.465 / 0.48 / 0.485 (1M
# takes MATCH_SHARE: 2000); hybrid 1.00 at each. Households never reach
# it; LoCoMo's turns do (the terms' rows summed): keyword-only R@10 0.7158
# -> 0.7146 from 1500 to 750, hybrid R@10 within 0.0002. At 750 the
# keyword-only p95 at 100k fell from 3.19 to 2.42 ms, 0.92 x the vector
# stage's in the quiet rounds (1.29 x at 1500, 1.02 x at 1000:
# docs/benchmarks/engine.md, "#25: the keyword side's budget, sixth round").
# Beyond it the query's terms are all common, and the rows holding every
# one of them are tens to hundreds: a bigger window ranks more of the same.
MATCH_BUDGET: Final = 750
# ... or this share of the index's rows when that is more (2000 at 1M).
MATCH_SHARE: Final = 0.002
# Compound parts added to one query at most.
MAX_PARTS: Final = 8
# bm25's term-frequency saturation, FTS5's default.
BM25_K1: Final = 1.2


@dataclass(frozen=True, slots=True)
class KeywordQuery:
    """A query's terms: the MATCH expression, each term's weight, what hits hold."""

    expression: str
    # Every analysed term of the query with its weight (idf); compound heads
    # appear as prefixes.
    weights: dict[str, float]
    prefixes: frozenset[str]
    # The MATCH counts only its newest this many rows (0: every row): the
    # budget, when even the rarest term is in more rows; the search finds
    # their lowest rowid in the same statement (`hybrid.py`).
    newest: int = 0
    # Terms some row holds that do not drive the MATCH, with their bm25
    # weight (`bm25_idf`); empty when every such term drives it.
    others: dict[str, float] = field(default_factory=dict)
    # With `others`: the MATCH of the rows that hold every term some row
    # holds (the best candidates, whatever their bm25 on the MATCH alone).
    every: str = ""
    # The MATCH's terms with their bm25 weight (`bm25_idf`, in full as FTS5
    # weighs a MATCH's terms), for `found`.
    driving: dict[str, float] = field(default_factory=dict)
    held: dict[int, frozenset[str]] = field(default_factory=dict, compare=False)

    def rest(self, terms: str) -> float:
        """bm25 share (≥ 0) of the terms outside the MATCH that `terms` holds.

        As FTS5 scores a term, without its length normalisation (a row's
        length against the average, which would need a scan to know).
        """
        if not self.others:
            return 0.0
        return self._share(terms.split(), self.others)

    def _share(self, words: Sequence[str], weights: Mapping[str, float]) -> float:
        """bm25 (≥ 0, unnormalised) of the `weights`' terms among a row's `words`."""
        score = 0.0
        for term, weight in weights.items():
            if term in self.prefixes:
                count = sum(word.startswith(term) for word in words)
            else:
                count = words.count(term)
            if count:
                score += weight * count * (BM25_K1 + 1) / (count + BM25_K1)
        return score

    def found(self, rows: Iterable[tuple[int, str]]) -> list[tuple[int, float, float]]:
        """Hits `(id, bm25, coverage)` of rows `(id, terms)`, judged on their terms alone.

        A row is a hit when it holds a term of the MATCH or one outside it,
        as `hits` finds with FTS5: each analysed term is one FTS5 token
        (`analysis`), so the words of `terms` are the index's. Its bm25 is
        every held term's share without length normalisation (`rest`), so
        it ranks these rows among themselves only; the fusion with a model's
        scale reads their coverage, not their bm25.
        """
        hits = []
        for item_id, terms in rows:
            words = terms.split()
            score = self._share(words, self.driving) + self._share(words, self.others)
            if score > 0:
                hits.append(self.hit(item_id, -score, terms))
        hits.sort(key=lambda hit: (hit[1], hit[0]))
        return hits

    def hits(self, rows: Iterable[Sequence[Any]]) -> list[tuple[int, float, float]]:
        """Hits `(id, bm25, coverage)` of rows `(id, bm25 or NULL, terms, …)`, best first.

        A row the MATCH did not find scores on the terms outside it (none: no hit).
        """
        hits = []
        for row in rows:
            rest = self.rest(row[2])
            if row[1] is not None:
                hits.append(self.hit(int(row[0]), float(row[1]) - rest, row[2]))
            elif rest > 0:
                hits.append(self.hit(int(row[0]), -rest, row[2]))
        hits.sort(key=lambda hit: (hit[1], hit[0]))
        return hits

    def hit(self, item_id: int, bm25: float, terms: str) -> tuple[int, float, float]:
        """Hit `(id, bm25, coverage)` of a row holding `terms`; keeps what it holds."""
        self.held[item_id] = held = self.holds(terms)
        return item_id, bm25, self.coverage(terms, held)

    def holds(self, terms: str) -> frozenset[str]:
        """Give the query's terms a row's `terms` hold (a prefix: a word it begins)."""
        words = set(terms.split())
        begun = {t for t in self.prefixes if any(w.startswith(t) for w in words)}
        return frozenset(t for t in self.weights if t in words or t in begun)

    def coverage(self, terms: str, held: frozenset[str] = frozenset()) -> float:
        """Weighted share of the query's terms a row's `terms` (`held`, if known) hold."""
        held, total = held or self.holds(terms), sum(self.weights.values())
        return sum(w for t, w in self.weights.items() if t in held) / (total or 1.0)


def _quoted(term: str, prefix: bool) -> str:
    return '"' + term.replace('"', '""') + ('"*' if prefix else '"')


def idf(rows: int, total: int) -> float:
    """Inverse document frequency as bm25 weighs it (never below a small floor)."""
    return max(math.log(1 + (total - rows + 0.5) / (rows + 0.5)), 0.01)


def bm25_idf(rows: int, total: int) -> float:
    """Weigh a term as FTS5's bm25 does (its formula and its floor)."""
    return max(math.log((total - rows + 0.5) / (rows + 0.5)), 1e-6)


def _head_candidates(terms: Sequence[str], languages: Sequence[str]) -> list[str]:
    """Terms that may begin stored compounds (in a compounding language)."""
    if not any(language_code(language) in COMPOUNDING for language in languages):
        return []
    return [term for term in terms if len(term) >= MIN_PREFIX_TERM and term.isalpha()]


def _as_heads(
    terms: Sequence[str], sums: Mapping[str, int], counts: dict[str, int]
) -> list[str]:
    """Long query terms that also begin stored compounds, to match as prefixes.

    In a compounding language a query word may be the head of a stored
    compound ("voetbal" of "voetbaltraining"); each such term's count
    becomes the rows of every term it begins (`sums`, looked up by
    `TermCounts.look_up`).
    """
    heads = []
    for term in terms:
        if sums.get(term, 0) > counts.get(term, 0):
            counts[term] = sums[term]
            heads.append(term)
    return heads


async def _known_parts(
    conn: aiosqlite.Connection,
    counter: TermCounts,
    parts: Sequence[tuple[str, str]],
    known: tuple[dict[str, int], int],
    taken: Iterable[str],
) -> tuple[list[str], str | None]:
    """Find a word's longest tail and longest head that the index holds.

    Returns the parts found and the head among them (matched as a prefix);
    `known` is the counts so far, which get the head's rows, and the
    table's row count.
    """
    counts, total = known
    found: list[str] = []
    tails = sorted(
        (part for part, kind in parts if kind == "exact" and counts.get(part)),
        key=len,
        reverse=True,
    )
    if tails:
        found.append(tails[0])
    taken = set(taken)
    for head in sorted(
        (part for part, kind in parts if kind == "prefix"), key=len, reverse=True
    ):
        if head in taken or head in found:
            break
        if rows := await counter.prefix(conn, head, total):
            counts[head] = rows
            found.append(head)
            return found, head
    return found, None


def _driving(
    chosen: Iterable[str], counts: Mapping[str, int], budget: int
) -> list[str]:
    """Pick the MATCH's terms: rarest first, within the budget; the rarest always."""
    driving: list[str] = []
    matched = 0
    for term in sorted(
        (term for term in chosen if counts.get(term)), key=lambda t: (counts[t], t)
    ):
        if driving and matched + counts[term] > budget:
            break
        driving.append(term)
        matched += counts[term]
    return driving


async def keyword_query(
    conn: aiosqlite.Connection,
    text: str,
    languages: Sequence[str],
    *,
    vocab: str | TermCounts,
    total: int | RowCounter,
    budget: int = MATCH_BUDGET,
    index: str | None = None,
    earlier: Sequence[tuple[str, float]] = (),
) -> KeywordQuery | None:
    """Build the keyword query of `text` (None: no term can match anything).

    `vocab` is the fts5vocab table ('row') of the index searched, or a
    `TermCounts` of it that keeps common terms' counts, and `total` the
    number of rows it holds (or the `RowCounter` that knows it: counted in
    the statement that looks the terms up); `budget` bounds the rows the
    MATCH finds (MATCH_SHARE of them if more). With `index` (the FTS5 table), a rarest term in more than
    `budget` rows is bounded to its newest `budget` rows
    (`KeywordQuery.newest`). The text is analysed before anything is read:
    a query with no term to look up reads nothing.

    `earlier` holds a follow-up's earlier turns with their weight (0..1):
    their terms some row holds join the query at that share of their idf
    and bm25 (a term of `text` keeps its own), so what is said now still
    decides the order; they drive the MATCH only when the terms of `text`
    find nothing.
    """
    counter = vocab if isinstance(vocab, TermCounts) else TermCounts(vocab)
    languages = list(dict.fromkeys(languages))
    terms = query_terms_in(text, languages)
    shares: dict[str, float] = {}
    turns: list[list[str]] = []
    for said, share in earlier:
        turns.append(
            [term for term in query_terms_in(said, languages) if term not in terms]
        )
        for term in turns[-1]:
            shares[term] = max(shares.get(term, 0.0), share)
    groups = [
        group for language in languages for group in compound_words(text, language)
    ]
    exact = list(
        dict.fromkeys(
            part
            for _whole, parts in groups
            for part, kind in parts
            if kind == "exact" and part not in terms
        )
    )
    if not terms and not shares and not groups:
        return None
    heads = _head_candidates(terms, languages)
    # One statement: the row count's check, the terms' and the heads' counts.
    counts, sums, total = await counter.look_up(
        conn, ([*terms, *exact, *shares], heads), total
    )
    total = max(total, 1)
    budget = max(budget, int(total * MATCH_SHARE))
    prefixes = _as_heads(heads, sums, counts)
    weights = {term: idf(counts.get(term, 0), total) for term in terms}
    added = 0
    # Per word, the parts the index holds ("Müllabfuhr": "mull*" reaches
    # "Restmülltonne"). When the index does not hold the word itself, its
    # parts stand in for it: they take its weight, and it leaves the coverage.
    for whole, parts in groups:
        if added >= MAX_PARTS:
            break
        found, head = await _known_parts(conn, counter, parts, (counts, total), weights)
        if head is not None:
            prefixes.append(head)
        inherited = 0.0
        if found and whole and not any(counts.get(term) for term in whole):
            inherited = max((weights.pop(term, 0.0) for term in whole), default=0.0)
        for part in found:
            added += part not in weights
            weights[part] = max(
                weights.get(part, 0.0), idf(counts[part], total), inherited
            )
    # A follow-up's earlier words count at their share, where some row holds
    # them (a word nobody wrote cannot tell rows apart); they drive the
    # MATCH only when the current words find nothing (the newest turn's
    # that find something), else they rank the rows the current words found.
    shares = {
        term: share
        for term, share in shares.items()
        if term not in weights and counts.get(term)
    }
    driving = _driving(weights, counts, budget)
    for turn_terms in turns:
        if driving:
            break
        driving = _driving([t for t in turn_terms if t in shares], counts, budget)
    for term, share in shares.items():
        weights[term] = share * idf(counts[term], total)
    if not driving:
        return None
    head_set = frozenset(prefixes)
    expression = " OR ".join(_quoted(term, term in head_set) for term in driving)
    newest = 0
    if index is not None and sum(counts[term] for term in driving) > budget:
        # Even the rarest term is in more rows than the budget: its newest.
        newest = budget
    others = {
        term: bm25_idf(counts[term], total) * shares.get(term, 1.0)
        for term in weights
        if counts.get(term) and term not in driving
    }
    every = ""
    if others:
        every = f"({expression}) AND " + " AND ".join(
            _quoted(term, term in head_set) for term in others
        )
    return KeywordQuery(
        expression=expression,
        weights=weights,
        prefixes=head_set,
        newest=newest,
        others=others,
        every=every,
        driving={term: bm25_idf(counts[term], total) for term in driving},
    )
