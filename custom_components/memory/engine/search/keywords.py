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
MATCH_BUDGET rows are reached (the rarest always); the rest only weigh in
the coverage of the candidates found (`coverage`) and add their share of
bm25 to them (`rest`), so a row that holds the common words too still
ranks above one that does not; the rows that hold every term are always
candidates (`every`: an AND over the MATCH's rows, no bm25 to compute). When even the rarest
term is in more rows than that, the MATCH keeps its newest MATCH_BUDGET
rows (`KeywordQuery.floor`, a rowid bound FTS5 seeks to). A term no row
holds is left out of the MATCH (it can find nothing) but counts in the
coverage.

The vocabulary counts a term by reading its whole list of rows (about
20 ns a row: 0.7 ms for a term in 32k rows, ten times that at a million),
so the counts of common terms are kept between searches (`TermCounts`)
until the table has grown or shrunk by CACHE_DRIFT; rare and absent terms
are always looked up (cheap, and a new row's new word is found at once).

User text never reaches MATCH raw: every term is a quoted FTS5 string made
of word characters only; the only syntax added is ours (`OR`, a `*` after
the closing quote of a compound head).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
import math
from typing import Final

import aiosqlite

from ..languages import (
    COMPOUNDING,
    MIN_PREFIX_TERM,
    compound_words,
    language_code,
    query_terms_in,
)

# Rows the MATCH may find before the commoner terms stop driving it: FTS5's
# bm25 costs about 1 us a row here. Measured at 100k synthetic memories on
# an idle machine (keyword-only p95 / target in the top 10): 1000: 5.0-5.4
# ms / 0.59, 1500: 6.0 / 0.62, 2000: 6.2-6.5 / 0.62; the engine before #13:
# 41 ms / 0.63. Hybrid keeps every target at every budget, and no LoCoMo
# conversation reaches it (docs/benchmarks/engine.md, "#13").
MATCH_BUDGET: Final = 2000
# Compound parts added to one query at most.
MAX_PARTS: Final = 8
# `TermCounts` keeps the counts of terms in at least this many rows...
CACHE_ROWS: Final = 256
# ... until the table's row count has moved by more than this share of it
# (the weights barely move before that)...
CACHE_DRIFT: Final = 0.01
# ... and at most this many terms.
CACHE_TERMS: Final = 4096
# bm25's term-frequency saturation, FTS5's default.
BM25_K1: Final = 1.2


@dataclass(frozen=True, slots=True)
class KeywordQuery:
    """A query's terms: the MATCH expression and each term's weight."""

    expression: str
    # Every analysed term of the query with its weight (idf); compound heads
    # appear as prefixes.
    weights: dict[str, float]
    prefixes: frozenset[str]
    # The MATCH counts only rows with a rowid at least this (0: every row):
    # the newest `budget` rows when even the rarest term is in more.
    floor: int = 0
    # Terms some row holds that do not drive the MATCH, with their bm25
    # weight (`bm25_idf`); empty when every such term drives it.
    others: dict[str, float] = field(default_factory=dict)
    # With `others`: the MATCH of the rows that hold every term some row
    # holds (the best candidates, whatever their bm25 on the MATCH alone).
    every: str = ""

    def rest(self, terms: str) -> float:
        """bm25 share (≥ 0) of the terms outside the MATCH that `terms` holds.

        As FTS5 scores a term, without its length normalisation (a row's
        length against the average, which would need a scan to know).
        """
        if not self.others:
            return 0.0
        words = terms.split()
        score = 0.0
        for term, weight in self.others.items():
            if term in self.prefixes:
                count = sum(word.startswith(term) for word in words)
            else:
                count = words.count(term)
            if count:
                score += weight * count * (BM25_K1 + 1) / (count + BM25_K1)
        return score

    def coverage(self, terms: str) -> float:
        """Weighted share of the query's terms that a row's `terms` hold."""
        total = sum(self.weights.values())
        if not total:
            return 0.0
        held = set(terms.split())
        found = sum(
            weight
            for term, weight in self.weights.items()
            if term in held
            or (term in self.prefixes and any(word.startswith(term) for word in held))
        )
        return found / total


class RowCounter:
    """Counts a table's rows again only after a write (`PRAGMA data_version`)."""

    def __init__(self, table: str) -> None:
        """Count `table` (a trusted name, never user text)."""
        self._table = table
        self._counted: tuple[tuple[int, int], int] | None = None

    async def count(self, conn: aiosqlite.Connection) -> int:
        """Rows of the table as `conn` sees them."""
        # One hand-off to the connection's thread per statement (a cursor
        # takes three).
        rows = list(await conn.execute_fetchall("PRAGMA data_version"))
        # data_version changes when another connection (the writer) commits.
        version = (id(conn), int(rows[0][0]) if rows else 0)
        if self._counted is None or self._counted[0] != version:
            counted = list(
                await conn.execute_fetchall(
                    f"SELECT count(*) FROM {self._table}"  # noqa: S608
                )
            )
            self._counted = (version, int(counted[0][0]) if counted else 0)
        return self._counted[1]


def _quoted(term: str, prefix: bool) -> str:
    quoted = '"' + term.replace('"', '""') + '"'
    return quoted + "*" if prefix else quoted


def idf(rows: int, total: int) -> float:
    """Inverse document frequency as bm25 weighs it (never below a small floor)."""
    return max(math.log(1 + (total - rows + 0.5) / (rows + 0.5)), 0.01)


def bm25_idf(rows: int, total: int) -> float:
    """Weigh a term as FTS5's bm25 does (its formula and its floor)."""
    return max(math.log((total - rows + 0.5) / (rows + 0.5)), 1e-6)


async def _counts(
    conn: aiosqlite.Connection, vocab: str, terms: Sequence[str]
) -> dict[str, int]:
    """Rows holding each exact term (absent: none)."""
    if not terms:
        return {}
    marks = ", ".join("?" * len(terms))
    rows = await conn.execute_fetchall(
        f"SELECT term, doc FROM {vocab} WHERE term IN ({marks})",  # noqa: S608
        list(terms),
    )
    return {str(row[0]): int(row[1]) for row in rows}


async def _prefix_rows(conn: aiosqlite.Connection, vocab: str, head: str) -> int:
    """Rows holding some term that starts with `head` (0 if none; summed over terms)."""
    rows = list(
        await conn.execute_fetchall(
            f"SELECT sum(doc) FROM (SELECT doc FROM {vocab} "  # noqa: S608
            "WHERE term >= ? AND term < ? LIMIT 64)",
            (head, head + "\U0010ffff"),
        )
    )
    return int(rows[0][0] or 0) if rows else 0


class TermCounts:
    """Rows holding each term of one vocabulary, common terms' counts kept.

    A count of at least CACHE_ROWS is kept until the table's row count
    (`total`) moves by more than CACHE_DRIFT of it; smaller counts, absent
    terms and prefixes below CACHE_ROWS are looked up every time.
    """

    def __init__(self, vocab: str) -> None:
        """Count in `vocab`, an fts5vocab 'row' table (a trusted name)."""
        self.vocab = vocab
        self._kept: dict[str, int] = {}
        self._total = -1

    def _current(self, total: int) -> None:
        if abs(total - self._total) > CACHE_DRIFT * max(self._total, 0):
            self._kept.clear()
            self._total = total

    def _keep(self, key: str, rows: int) -> None:
        if rows >= CACHE_ROWS and len(self._kept) < CACHE_TERMS:
            self._kept[key] = rows

    async def terms(
        self, conn: aiosqlite.Connection, terms: Sequence[str], total: int
    ) -> dict[str, int]:
        """Rows holding each exact term (absent: none)."""
        self._current(total)
        found = {term: self._kept[term] for term in terms if term in self._kept}
        fresh = await _counts(conn, self.vocab, [t for t in terms if t not in found])
        for term, rows in fresh.items():
            self._keep(term, rows)
        return found | fresh

    async def prefix(self, conn: aiosqlite.Connection, head: str, total: int) -> int:
        """Rows holding some term that starts with `head` (summed over terms)."""
        self._current(total)
        key = head + "*"  # no analysed term ends in "*"
        if key not in self._kept:
            rows = await _prefix_rows(conn, self.vocab, head)
            self._keep(key, rows)
            return rows
        return self._kept[key]


async def _floor(
    conn: aiosqlite.Connection, index: str, expression: str, budget: int
) -> int:
    """Return the rowid of the `budget`-th newest row `expression` matches (0: fewer)."""
    rows = list(
        await conn.execute_fetchall(
            f"SELECT rowid FROM {index} WHERE {index} MATCH ? "  # noqa: S608
            "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (expression, budget - 1),
        )
    )
    return int(rows[0][0]) if rows else 0


async def _as_heads(
    conn: aiosqlite.Connection,
    counter: TermCounts,
    terms: Sequence[str],
    counts: dict[str, int],
    total: int,
) -> list[str]:
    """Long query terms that also begin stored compounds, to match as prefixes.

    In a compounding language a query word may be the head of a stored
    compound ("voetbal" of "voetbaltraining"); each such term's count
    becomes the rows of every term it begins.
    """
    heads = []
    for term in terms:
        if len(term) >= MIN_PREFIX_TERM and term.isalpha():
            rows = await counter.prefix(conn, term, total)
            if rows > counts.get(term, 0):
                counts[term] = rows
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
    total: int,
    budget: int = MATCH_BUDGET,
    index: str | None = None,
    earlier: Sequence[tuple[str, float]] = (),
) -> KeywordQuery | None:
    """Build the keyword query of `text` (None: no term can match anything).

    `vocab` is the fts5vocab table ('row') of the index searched, or a
    `TermCounts` of it that keeps common terms' counts, and `total` the
    number of rows it holds; `budget` bounds the rows the MATCH finds. With
    `index` (the FTS5 table), a rarest term in more than `budget` rows is
    bounded to its newest `budget` rows (`KeywordQuery.floor`).

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
    counts = await counter.terms(conn, [*terms, *exact, *shares], total)
    total = max(total, 1)
    prefixes: list[str] = []
    if any(language_code(language) in COMPOUNDING for language in languages):
        prefixes += await _as_heads(conn, counter, terms, counts, total)
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
    floor = 0
    if index is not None and sum(counts[term] for term in driving) > budget:
        # Even the rarest term is in more rows than the budget: its newest.
        floor = await _floor(conn, index, expression, budget)
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
        floor=floor,
        others=others,
        every=every,
    )
