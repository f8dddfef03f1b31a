"""The keyword side of a search: which analysed terms drive an FTS5 match, and how much each is worth.

A query is analysed like the rows it searches (`analysis.py`): in the
speaker's language and, when that differs, in the store's default language
too, so a household that mixes two languages finds both. Long words of the
compounding languages add those of their parts that the index knows
(`analysis.compound_parts`, checked against the FTS5 vocabulary), so
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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
import math
from typing import Final

import aiosqlite

from .analysis import MAX_QUERY_TERMS, compound_parts, query_terms

# Rows the MATCH may find before the commoner terms stop driving it (about
# 5 ms of bm25 here, see docs/BENCHMARKS.md).
MATCH_BUDGET: Final = 4000
# Compound parts added to one query at most.
MAX_PARTS: Final = 8


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


def _analysed(text: str, languages: Iterable[str]) -> list[str]:
    terms: dict[str, None] = {}
    for language in languages:
        terms.update(dict.fromkeys(query_terms(text, language)))
    return list(terms)[:MAX_QUERY_TERMS]


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
    terms = _analysed(text, languages)
    languages = list(dict.fromkeys(languages))
    parts: dict[str, str] = {}
    for language in languages:
        for part, kind in compound_parts(text, language):
            if part not in terms:
                parts.setdefault(part, kind)
    exact = [part for part, kind in parts.items() if kind == "exact"]
    counts = await _counts(conn, vocab, [*terms, *exact])
    prefixes: list[str] = []
    for head in (part for part, kind in parts.items() if kind == "prefix"):
        if len(prefixes) >= MAX_PARTS or any(p.startswith(head) for p in prefixes):
            continue
        found = await _prefix_rows(conn, vocab, head)
        if found:
            prefixes.append(head)
            counts[head] = found
    chosen = list(terms)
    chosen += [part for part in exact if counts.get(part)][:MAX_PARTS]
    chosen += prefixes
    if not chosen:
        return None
    total = max(total, 1)
    weights = {term: idf(counts.get(term, 0), total) for term in chosen}
    # The MATCH: rarest first, within the budget; the rarest always.
    driving: list[str] = []
    matched = 0
    for term in sorted(
        (term for term in chosen if counts.get(term)), key=lambda t: (counts[t], t)
    ):
        if driving and matched + counts[term] > budget:
            break
        driving.append(term)
        matched += counts[term]
    if not driving:
        return None
    head_set = frozenset(prefixes)
    expression = " OR ".join(_quoted(term, term in head_set) for term in driving)
    return KeywordQuery(expression=expression, weights=weights, prefixes=head_set)
