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
candidates (`every`: an AND over the MATCH's rows, no bm25 to compute).
When even the rarest term is in more rows than that, the MATCH keeps its
newest MATCH_BUDGET rows (`KeywordQuery.newest`: a rowid bound FTS5 seeks
to, found by the search's own statement). A term no row holds is left out
of the MATCH (it can find nothing) but counts in the coverage.

The vocabulary counts a term by reading its whole list of rows (about 20 ns a
row: 0.7 ms for a term in 32k rows, ten times that at a million), so the counts
of common terms are kept between searches (`TermCounts`) until the table has
grown or shrunk by CACHE_DRIFT; rare and absent terms are always looked up
(cheap, and a new row's new word is found at once). Each statement is a
hand-off to the connection's thread, which costs more than most of these
lookups while the vector side holds the other core: the text is analysed first
(no term, no statement), and the row count's check, the terms' and the compound
heads' counts are one statement (`TermCounts.look_up`).

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

# Rows the MATCH may find before the commoner terms stop driving it: FTS5's
# bm25 costs about 0.5 us a row here. Keyword-only target in the top 10 at
# 1000 / 1500 / 2000 (bench/engine.py --match-budget): 10k 0.87 at all
# three, 100k 0.59 / 0.62 / 0.62, 300k 0.48 / 0.485 / 0.48; hybrid 1.00 at
# every budget, and no LoCoMo conversation or household set reaches it
# (docs/benchmarks/engine.md, "#13" and "#25: the keyword side").
MATCH_BUDGET: Final = 1500
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
    held: dict[int, frozenset[str]] = field(default_factory=dict, compare=False)

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


class RowCounter:
    """Counts a table's rows again only after a write (`PRAGMA data_version`).

    The check rides along with the vocabulary lookup (`TermCounts.look_up`):
    one statement, one hand-off to the connection's thread.
    """

    def __init__(self, table: str) -> None:
        """Count `table` (a trusted name, never user text)."""
        self._table = table
        self._counted: tuple[tuple[int, int], int] | None = None

    def probe(self, conn: aiosqlite.Connection) -> tuple[str, list[Any]]:
        """Return a SELECT of `(0, data_version, rows or -1 if unchanged)`, its parameters."""
        kept = self._counted
        # data_version changes when another connection (the writer) commits;
        # the count is only run (CASE) when it did.
        version = kept[0][1] if kept is not None and kept[0][0] == id(conn) else -1
        sql = (
            "SELECT 0, v, CASE WHEN v = ? THEN -1 ELSE "  # noqa: S608
            f"(SELECT count(*) FROM {self._table}) END "
            "FROM (SELECT data_version AS v FROM pragma_data_version)"
        )
        return sql, [version]

    def take(self, conn: aiosqlite.Connection, version: int, rows: int) -> int:
        """Keep what `probe` read (`rows` -1: unchanged); return the row count."""
        if rows >= 0 or self._counted is None:
            self._counted = ((id(conn), version), max(rows, 0))
        return self._counted[1]

    async def count(self, conn: aiosqlite.Connection) -> int:
        """Rows of the table as `conn` sees them."""
        sql, params = self.probe(conn)
        rows = list(await conn.execute_fetchall(sql, params))
        return self.take(conn, int(rows[0][1]), int(rows[0][2]))


def _quoted(term: str, prefix: bool) -> str:
    return '"' + term.replace('"', '""') + ('"*' if prefix else '"')


def idf(rows: int, total: int) -> float:
    """Inverse document frequency as bm25 weighs it (never below a small floor)."""
    return max(math.log(1 + (total - rows + 0.5) / (rows + 0.5)), 0.01)


def bm25_idf(rows: int, total: int) -> float:
    """Weigh a term as FTS5's bm25 does (its formula and its floor)."""
    return max(math.log((total - rows + 0.5) / (rows + 0.5)), 1e-6)


def _prefix_sql(vocab: str) -> str:
    """SELECT the rows of the first 64 terms from `?` up to (without) `?` (summed)."""
    return (
        f"SELECT sum(doc) FROM (SELECT doc FROM {vocab} "  # noqa: S608
        "WHERE term >= ? AND term < ? LIMIT 64)"
    )


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

    def _current(self, total: int) -> bool:
        """Forget the kept counts if the table moved; return whether it did."""
        if abs(total - self._total) > CACHE_DRIFT * max(self._total, 0):
            self._kept.clear()
            self._total = total
            return True
        return False

    def _keep(self, key: str, rows: int) -> None:
        if rows >= CACHE_ROWS and len(self._kept) < CACHE_TERMS:
            self._kept[key] = rows

    async def terms(
        self, conn: aiosqlite.Connection, terms: Sequence[str], total: int
    ) -> dict[str, int]:
        """Rows holding each exact term (absent: none)."""
        return (await self.look_up(conn, (terms, ()), total))[0]

    async def look_up(
        self,
        conn: aiosqlite.Connection,
        words: tuple[Sequence[str], Sequence[str]],
        rows: RowCounter | int,
    ) -> tuple[dict[str, int], dict[str, int], int]:
        """Rows holding each exact term and each head's terms, and the table's rows.

        `words` is `(terms, heads)`; `rows` the table's row count or its
        `RowCounter`. One statement reads what is not kept: the counter's
        check, the terms, the heads (`_prefix_sql`). Should the row count
        have moved past CACHE_DRIFT, the kept counts served are read again.
        """
        terms, heads = words
        parts: list[str] = []
        params: list[Any] = []
        if isinstance(rows, RowCounter):
            sql, args = rows.probe(conn)
            parts.append(sql)
            params += args
        else:
            self._current(rows)
        counts = {term: self._kept[term] for term in terms if term in self._kept}
        sums = {
            head: self._kept[head + "*"] for head in heads if head + "*" in self._kept
        }
        fresh = [term for term in dict.fromkeys(terms) if term not in counts]
        if fresh:
            parts.append(
                f"SELECT 1, term, doc FROM {self.vocab} "  # noqa: S608
                f"WHERE term IN ({', '.join('?' * len(fresh))})"
            )
            params += fresh
        fresh_heads = [head for head in dict.fromkeys(heads) if head not in sums]
        for head in fresh_heads:
            parts.append(f"SELECT 2, ?, ({_prefix_sql(self.vocab)})")
            params += [head, head, head + "\U0010ffff"]
        total = rows if isinstance(rows, int) else 0
        found: dict[str, int] = {}
        found_sums = dict.fromkeys(fresh_heads, 0)
        if parts:
            for kind, key, value in await conn.execute_fetchall(
                " UNION ALL ".join(parts), params
            ):
                if kind == 0 and isinstance(rows, RowCounter):
                    total = rows.take(conn, int(key), int(value))
                elif kind == 1:
                    found[str(key)] = int(value)
                else:
                    found_sums[str(key)] = int(value or 0)
        if isinstance(rows, RowCounter) and self._current(total) and (counts or sums):
            # The kept counts are stale: read them again.
            again = await self.look_up(conn, (list(counts), list(sums)), total)
            counts, sums = again[0], again[1]
        for term, count in found.items():
            self._keep(term, count)
        for head, count in found_sums.items():
            self._keep(head + "*", count)
        return counts | found, sums | found_sums, total

    async def prefix(self, conn: aiosqlite.Connection, head: str, total: int) -> int:
        """Rows holding some term that starts with `head` (summed over terms)."""
        return (await self.look_up(conn, ((), (head,)), total))[1][head]


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
    MATCH finds. With `index` (the FTS5 table), a rarest term in more than
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
    )
