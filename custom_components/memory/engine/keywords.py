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
the coverage of the candidates found (`coverage`). A term no row holds is
left out of the MATCH (it can find nothing) but counts in the coverage.

User text never reaches MATCH raw: every term is a quoted FTS5 string made
of word characters only; the only syntax added is ours (`OR`, a `*` after
the closing quote of a compound head).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import math
from typing import Final

import aiosqlite

from .analysis import compound_words, query_terms_in
from .languages import COMPOUNDING, language_code

# Rows the MATCH may find before the commoner terms stop driving it (about
# 5 ms of bm25 here, see docs/BENCHMARKS.md).
MATCH_BUDGET: Final = 4000
# Compound parts added to one query at most.
MAX_PARTS: Final = 8
# Letters a query term needs before, in a compounding language, it also
# matches the stored words it begins.
MIN_PREFIX_TERM: Final = 5


@dataclass(frozen=True, slots=True)
class KeywordQuery:
    """A query's terms: the MATCH expression and each term's weight."""

    expression: str
    # Every analysed term of the query with its weight (idf); compound heads
    # appear as prefixes.
    weights: dict[str, float]
    prefixes: frozenset[str]

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
        async with conn.execute("PRAGMA data_version") as cursor:
            row = await cursor.fetchone()
        # data_version changes when another connection (the writer) commits.
        version = (id(conn), int(row[0]) if row else 0)
        if self._counted is None or self._counted[0] != version:
            async with conn.execute(
                f"SELECT count(*) FROM {self._table}"  # noqa: S608
            ) as cursor:
                counted = await cursor.fetchone()
            self._counted = (version, int(counted[0]) if counted else 0)
        return self._counted[1]


def _quoted(term: str, prefix: bool) -> str:
    quoted = '"' + term.replace('"', '""') + '"'
    return quoted + "*" if prefix else quoted


def idf(rows: int, total: int) -> float:
    """Inverse document frequency as bm25 weighs it (never below a small floor)."""
    return max(math.log(1 + (total - rows + 0.5) / (rows + 0.5)), 0.01)


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
    async with conn.execute(
        f"SELECT sum(doc) FROM (SELECT doc FROM {vocab} "  # noqa: S608
        "WHERE term >= ? AND term < ? LIMIT 64)",
        (head, head + "\U0010ffff"),
    ) as cursor:
        row = await cursor.fetchone()
    return int(row[0] or 0) if row else 0


async def _as_heads(
    conn: aiosqlite.Connection, vocab: str, terms: Sequence[str], counts: dict[str, int]
) -> list[str]:
    """Long query terms that also begin stored compounds, to match as prefixes.

    In a compounding language a query word may be the head of a stored
    compound ("voetbal" of "voetbaltraining"); each such term's count
    becomes the rows of every term it begins.
    """
    heads = []
    for term in terms:
        if len(term) >= MIN_PREFIX_TERM and term.isalpha():
            rows = await _prefix_rows(conn, vocab, term)
            if rows > counts.get(term, 0):
                counts[term] = rows
                heads.append(term)
    return heads


async def _known_parts(
    conn: aiosqlite.Connection,
    vocab: str,
    parts: Sequence[tuple[str, str]],
    counts: dict[str, int],
    taken: Iterable[str],
) -> tuple[list[str], str | None]:
    """Find a word's longest tail and longest head that the index holds.

    Returns the parts found and the head among them (matched as a prefix);
    `counts` gets the head's rows.
    """
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
        if rows := await _prefix_rows(conn, vocab, head):
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
    vocab: str,
    total: int,
    budget: int = MATCH_BUDGET,
) -> KeywordQuery | None:
    """Build the keyword query of `text` (None: no term can match anything).

    `vocab` is the fts5vocab table ('row') of the index searched and `total`
    the number of rows it holds; `budget` bounds the rows the MATCH finds.
    """
    languages = list(dict.fromkeys(languages))
    terms = query_terms_in(text, languages)
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
    counts = await _counts(conn, vocab, [*terms, *exact])
    total = max(total, 1)
    prefixes: list[str] = []
    if any(language_code(language) in COMPOUNDING for language in languages):
        prefixes += await _as_heads(conn, vocab, terms, counts)
    weights = {term: idf(counts.get(term, 0), total) for term in terms}
    added = 0
    # Per word, the parts the index holds ("Müllabfuhr": "mull*" reaches
    # "Restmülltonne"). When the index does not hold the word itself, its
    # parts stand in for it: they take its weight, and it leaves the coverage.
    for whole, parts in groups:
        if added >= MAX_PARTS:
            break
        found, head = await _known_parts(conn, vocab, parts, counts, weights)
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
    driving = _driving(weights, counts, budget)
    if not driving:
        return None
    head_set = frozenset(prefixes)
    expression = " OR ".join(_quoted(term, term in head_set) for term in driving)
    return KeywordQuery(expression=expression, weights=weights, prefixes=head_set)
