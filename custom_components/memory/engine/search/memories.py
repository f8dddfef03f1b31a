"""Hybrid search of memories: keyword and semantic signals, fused into one ranking.

The keyword side (FTS5, bm25 and term coverage) runs on the reader while
the semantic side (`semantic.py`) runs on its own connection; every
candidate is then scored on both signals (`_complete_candidates`), fused
(`fusion.py`), and optionally scored with its conversation neighbours
(`_neighbouring_context`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
import contextlib
from typing import Any, Final

import aiosqlite
import numpy as np

from ..errors import InvalidInputError, StoreError, VectorDimensionError
from ..languages import language_code
from ..models import SearchHit, SearchQuery, Vector, to_timestamp
from ..sql import IDS, placeholders, rows_in
from ..store import (
    ITEM_COLUMNS,
    MemoryCuration,
    normalize_tags,
    row_to_item,
    validate_limit,
)
from ..vectors import Scale, as_unit_vector
from .fusion import Ranked, add_context, fuse
from .keywords import MATCH_BUDGET, KeywordQuery, RowCounter, TermCounts, keyword_query
from .semantic import SEMANTIC_POOL, cosines_outside_pool, semantic_pool

# A search's candidates so far: keyword hits (id, bm25, coverage), the
# semantic pool (id, cosine), and cosines of candidates outside that pool.
type _Candidates = tuple[
    list[tuple[int, float, float]], list[tuple[int, float]], dict[int, float]
]

# Candidates the keyword signal contributes before fusion (tuned by
# bench/locomo.py). Every candidate is then scored on both signals (keyword
# hits outside the semantic pool get their exact cosine), which makes the
# pools' size matter little: 50 and 200 gave the same recall on LoCoMo.
KEYWORD_POOL: Final = 50
# FTS5 ranks its matches alone and hands over this many times the keyword
# pool to be joined with `memories` and filtered (bench/engine.py: a third
# of the keyword query's time at 100k memories).
KEYWORD_OVERFETCH: Final = 4
_BM25: Final = "bm25(memories_fts)"


# Earlier turns a follow-up's search may carry.
MAX_EARLIER: Final = 8


def validate_earlier(earlier: Sequence[tuple[str, float]]) -> None:
    """Refuse earlier turns beyond a few, or weighing 0 or less, or more than 1."""
    if len(earlier) > MAX_EARLIER:
        raise InvalidInputError(f"at most {MAX_EARLIER} earlier turns")
    for text, weight in earlier:
        if not text or not 0.0 < weight <= 1.0:
            raise InvalidInputError("an earlier turn needs text and a weight in (0, 1]")


class MemorySearch(MemoryCuration):
    """The memories, found by keywords and meaning."""

    # Rows a keyword MATCH may find (`keywords.MATCH_BUDGET`).
    match_budget: int = MATCH_BUDGET

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """As `MemoryDatabase`; the count of memories is kept per store."""
        super().__init__(*args, **kwargs)
        # How many memories the index holds, and how many hold each common
        # term, for the terms' weights and the MATCH's bound.
        self._memory_rows = RowCounter("memories")
        self._term_counts = TermCounts("memories_fts_vocab")

    def _filters(self, query: SearchQuery) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if query.status != "any":
            clauses.append("m.status = ?")
            params.append(query.status)
        if query.status == "active":
            clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
            params.append(self._clock())
        if query.scopes is not None:
            clauses.append(f"m.scope IN ({placeholders(len(query.scopes))})")
            params.extend(query.scopes)
        if query.types:
            clauses.append(f"m.type IN ({placeholders(len(query.types))})")
            params.extend(str(kind) for kind in query.types)
        if query.tags:
            tags = normalize_tags(query.tags)
            clauses.append(
                "m.id IN (SELECT memory_id FROM memory_tags WHERE tag IN "
                f"({placeholders(len(tags))}))"
            )
            params.extend(tags)
        if query.since is not None:
            clauses.append("m.created_at >= ?")
            params.append(to_timestamp(query.since))
        return (" AND ".join(clauses) or "1"), params

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        """Find memories: keyword, semantic or both, fused into one ranking."""
        _writer, reader = self._require()
        validate_limit(query.limit)
        validate_earlier(query.earlier)
        if query.scopes is not None and not query.scopes:
            return []
        where, params = self._filters(query)
        text = query.text.strip()
        if (not text or text == "*") and query.vector is None:
            return await self._recent(reader, where, params, query.limit)
        # The vector scan runs in a worker thread: start it first so that it
        # overlaps the FTS5 query instead of queueing behind it.
        unit = self._query_unit(query)
        # The vector scan runs in a worker thread (numpy) or on its own
        # connection (vec0): started first, it overlaps the FTS5 query.
        semantic_task = asyncio.create_task(self._semantic(query, unit, where, params))
        try:
            keyword, cosines, keywords = await self._keyword(
                reader, query, (where, params), unit
            )
        except BaseException:
            semantic_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, StoreError):
                await semantic_task
            raise
        semantic = await semantic_task
        # Keyword hits outside the semantic pool keep the cosine their row
        # brought; pool members outside the keyword pool get their bm25.
        pooled = {item_id for item_id, _score in semantic}
        similarity = (
            {i: score for i, score in cosines.items() if i not in pooled}
            if semantic
            else {}
        )
        keyword = await self._complete_keyword(reader, query, keywords, keyword, pooled)
        # How unrelated memories score with this query (`cosine_scale`); a
        # search by vector alone (no words) keeps raw cosines.
        scale = (
            None if unit is None or text == "*" or not text else self.cosine_scale(unit)
        )
        fused = fuse(keyword, semantic, similarity, scale)
        if query.context and fused:
            fused = await self._neighbouring_context(
                reader,
                (query, keywords),
                (where, params),
                (keyword, semantic, similarity),
                (fused, scale),
            )
        ranked = [entry for entry in fused if entry.score >= query.min_score][
            : query.limit
        ]
        items = await self.get_many([entry.id for entry in ranked], conn=reader)
        return [
            SearchHit(item=items[entry.id], score=entry.score, matched=entry.signals)
            for entry in ranked
            if entry.id in items
        ]

    async def _recent(
        self, conn: aiosqlite.Connection, where: str, params: list[Any], limit: int
    ) -> list[SearchHit]:
        async with conn.execute(
            f"SELECT {ITEM_COLUMNS} FROM memories m WHERE {where} "
            "ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
            [*params, limit],
        ) as cursor:
            rows = await cursor.fetchall()
        return [SearchHit(item=row_to_item(row), score=1.0, matched=()) for row in rows]

    def _query_unit(self, query: SearchQuery) -> Vector | None:
        """Return the query's unit vector, or None when no index can use it."""
        if query.vector is None or self._model is None:
            return None
        unit = as_unit_vector(query.vector)
        if self._index is None:
            return None
        if len(unit) != self._index.dim:
            raise VectorDimensionError(
                f"model {self._model} makes {self._index.dim}-dimensional "
                f"vectors, the query has {len(unit)}",
                expected=str(self._index.dim),
                got=str(len(unit)),
            )
        return unit

    async def _keyword_query(
        self,
        conn: aiosqlite.Connection,
        text: str,
        language: str | None,
        earlier: Sequence[tuple[str, float]] = (),
    ) -> KeywordQuery | None:
        """Analyse `text` (and a follow-up's `earlier` turns) against the index."""
        languages = [language_code(language, self.language), self.language]
        return await keyword_query(
            conn,
            text,
            languages,
            vocab=self._term_counts,
            total=await self._memory_rows.count(conn),
            budget=self.match_budget,
            index="memories_fts",
            earlier=earlier,
        )

    async def _keyword(
        self,
        conn: aiosqlite.Connection,
        query: SearchQuery,
        filters: tuple[str, list[Any]],
        unit: Vector | None = None,
    ) -> tuple[list[tuple[int, float, float]], dict[int, float], KeywordQuery | None]:
        """FTS5 hits `(id, bm25, coverage)` best first, their cosines, the query.

        FTS5 ranks its matches on its own first (a bounded sort, without
        touching `memories`), and only the best KEYWORD_OVERFETCH times the
        pool are joined and filtered: far cheaper than joining every match.
        Only when the filters leave too few of those is every match joined.
        With `unit`, each hit's stored vector comes along and its cosine is
        returned.
        """
        keywords = await self._keyword_query(
            conn, query.text.strip(), query.language, query.earlier
        )
        if keywords is None:
            return [], {}, None
        where, params = filters
        pool = max(KEYWORD_POOL, query.limit)
        vector = "NULL"
        join = ""
        args: list[Any] = []
        if unit is not None:
            vector = "e.vector"
            join = "LEFT JOIN embeddings e ON e.model = ? AND e.memory_id = m.id "
            args.append(self._model)
        wanted = pool * KEYWORD_OVERFETCH
        match = [keywords.expression, keywords.floor]
        every = ""
        order = "rank, rowid"
        if keywords.every:
            # Terms outside the MATCH: the rows holding every term (the
            # newest of them) come first, then the best bm25 of the rest.
            every = (
                "every AS MATERIALIZED (SELECT rowid AS id FROM memories_fts "
                "WHERE memories_fts MATCH ? AND rowid >= ? "
                "ORDER BY rowid DESC LIMIT ?), "
            )
            order = "rowid IN every DESC, rank, rowid"
            match = [keywords.every, keywords.floor, wanted, *match]
        sql = (
            f"WITH {every}f AS MATERIALIZED (SELECT rowid AS id, {_BM25} AS rank "
            "FROM memories_fts WHERE memories_fts MATCH ? AND rowid >= ? "
            f"ORDER BY {order} LIMIT ?) "
            f"SELECT m.id, m.terms, f.rank, {vector}, "
            "(SELECT count(*) FROM f) FROM f CROSS JOIN memories m ON m.id = f.id "
            f"{join}WHERE {where} ORDER BY f.rank, m.id LIMIT ?"
        )
        # With terms outside the MATCH, every fetched row is ranked again
        # with their share of bm25 before the pool is cut.
        out = wanted if keywords.others else pool
        rows = list(
            await conn.execute_fetchall(sql, [*match, wanted, *args, *params, out])
        )
        if len(rows) < pool and (not rows or rows[0][4] >= wanted):
            # The filters kept too few of the best matches: rank them all.
            rows = list(
                await conn.execute_fetchall(sql, [*match, -1, *args, *params, out])
            )
        if keywords.others:
            scored = [(row, float(row[2]) - keywords.rest(row[1])) for row in rows]
            scored.sort(key=lambda pair: (pair[1], pair[0][0]))
            rows = [row for row, _bm25 in scored[:pool]]
            hits = [
                (int(row[0]), bm25, keywords.coverage(row[1]))
                for row, bm25 in scored[:pool]
            ]
        else:
            hits = [
                (int(row[0]), float(row[2]), keywords.coverage(row[1])) for row in rows
            ]
        cosines: dict[int, float] = {}
        if unit is not None:
            stored = [row for row in rows if row[3] is not None]
            if stored:
                matrix = np.frombuffer(
                    b"".join(row[3] for row in stored), dtype=np.float32
                ).reshape(len(stored), -1)
                cosines = {
                    int(row[0]): float(score)
                    for row, score in zip(stored, matrix @ unit, strict=True)
                }
        return hits, cosines, keywords

    async def _keyword_of(
        self,
        conn: aiosqlite.Connection,
        keywords: KeywordQuery | None,
        ids: Sequence[int],
    ) -> list[tuple[int, float, float]]:
        """FTS5 hits among `ids` (which passed the filters already).

        bm25 is computed for these rows only; FTS5 is kept the outer loop
        (`CROSS JOIN`, `+rowid`) so that its statistics are gathered once,
        not once per id.
        """
        if keywords is None or not ids:
            return []
        rows = await rows_in(
            conn,
            f"SELECT memories_fts.rowid, {_BM25}, m.terms "
            "FROM memories_fts CROSS JOIN memories m "
            "ON m.id = memories_fts.rowid WHERE memories_fts MATCH ? "
            f"AND +memories_fts.rowid IN ({IDS})",
            ids,
            before=[keywords.expression],
        )
        hits = [
            (
                int(row[0]),
                float(row[1]) - keywords.rest(row[2]),
                keywords.coverage(row[2]),
            )
            for row in rows
        ]
        if keywords.others:
            # Rows that hold only terms outside the MATCH score on those.
            found = {hit[0] for hit in hits}
            hits += await self._rest_only(
                conn, keywords, [i for i in ids if i not in found]
            )
        hits.sort(key=lambda hit: (hit[1], hit[0]))
        return hits

    @staticmethod
    async def _rest_only(
        conn: aiosqlite.Connection, keywords: KeywordQuery, ids: Sequence[int]
    ) -> list[tuple[int, float, float]]:
        """Hits among `ids` on the terms outside the MATCH alone (none: no hit)."""
        if not ids:
            return []
        rows = await rows_in(
            conn, f"SELECT m.id, m.terms FROM memories m WHERE m.id IN ({IDS})", ids
        )
        hits = []
        for row in rows:
            rest = keywords.rest(row[1])
            if rest > 0:
                hits.append((int(row[0]), -rest, keywords.coverage(row[1])))
        return hits

    async def _complete_keyword(
        self,
        conn: aiosqlite.Connection,
        query: SearchQuery,
        keywords: KeywordQuery | None,
        keyword: list[tuple[int, float, float]],
        ids: Iterable[int],
    ) -> list[tuple[int, float, float]]:
        """Add the bm25 of `ids` outside the keyword pool.

        Only needed when the pool was full: if it was not, every match that
        passes the filters is in it already.
        """
        have = {hit[0] for hit in keyword}
        missing = sorted({item_id for item_id in ids if item_id not in have})
        if not missing or len(keyword) < max(KEYWORD_POOL, query.limit):
            return keyword
        return keyword + await self._keyword_of(conn, keywords, missing)

    async def _similarity(
        self,
        conn: aiosqlite.Connection,
        query: SearchQuery,
        semantic: Sequence[tuple[int, float]],
        ids: Sequence[int],
    ) -> dict[int, float]:
        """Exact cosines of `ids` outside the semantic pool (none without one)."""
        if query.vector is None or not semantic:
            return {}
        assert self._model is not None  # noqa: S101 - a semantic pool needs one
        return await cosines_outside_pool(
            conn,
            query.vector,
            semantic,
            ids,
            table="embeddings",
            key="memory_id",
            model=self._model,
        )

    async def _complete_candidates(
        self,
        conn: aiosqlite.Connection,
        queries: tuple[SearchQuery, KeywordQuery | None],
        signals: _Candidates,
        ids: Sequence[int],
    ) -> tuple[list[tuple[int, float, float]], dict[int, float]]:
        """Score `ids` on both signals: bm25 and cosine where still missing.

        Keyword hits outside the semantic pool get their exact cosine; ids
        outside the keyword pool get their bm25 if the pool was full (if it
        was not, every match is in it already).
        """
        query, keywords = queries
        keyword, semantic, similarity = signals
        keyword = await self._complete_keyword(conn, query, keywords, keyword, ids)
        similarity = similarity | await self._similarity(conn, query, semantic, ids)
        return keyword, similarity

    async def _neighbouring_context(
        self,
        conn: aiosqlite.Connection,
        queries: tuple[SearchQuery, KeywordQuery | None],
        filters: tuple[str, list[Any]],
        signals: _Candidates,
        ranking: tuple[list[Ranked], Scale | None],
    ) -> list[Ranked]:
        """Score candidates with their conversation neighbours (`query.context`).

        Neighbours are the memories with the next lower and higher id in the
        same conversation (turns are stored in order) that pass the filters.
        Neighbours that are not candidates are scored on both signals first.
        """
        where, params = filters
        keyword, semantic, similarity = signals
        fused, scale = ranking
        known = {entry.id for entry in fused}
        around = sorted({i + step for i in known for step in (-1, 0, 1)} - {0})
        rows = await rows_in(
            conn,
            f"SELECT m.id, m.conversation_id FROM memories m WHERE m.id IN ({IDS}) "
            f"AND m.conversation_id IS NOT NULL AND {where}",
            around,
            after=params,
        )
        conversation = {int(row[0]): str(row[1]) for row in rows}
        neighbours: dict[int, list[int]] = {}
        for item_id, conversation_id in conversation.items():
            near = [
                other
                for other in (item_id - 1, item_id + 1)
                if conversation.get(other) == conversation_id
                and (item_id in known or other in known)
            ]
            if near:
                neighbours[item_id] = near
        new = sorted(set(neighbours) - known)
        if new:
            keyword, similarity = await self._complete_candidates(
                conn, queries, (keyword, semantic, similarity), new
            )
            fused = fuse(keyword, semantic, similarity, scale)
        return add_context(fused, neighbours)

    async def _semantic(
        self,
        query: SearchQuery,
        unit: Vector | None,
        where: str,
        params: list[Any],
    ) -> list[tuple[int, float]]:
        """Return the semantic pool `(id, cosine)`, best first, exactly re-scored.

        Reads through its own connection, so that it runs beside the keyword
        query on the reader instead of queueing behind it.
        """
        if unit is None or self._index is None or self._vector_reader is None:
            return []
        base = (
            "SELECT e.memory_id, e.vector FROM embeddings e "
            f"JOIN memories m ON m.id = e.memory_id WHERE e.model = ? AND {where}"
        )
        return await semantic_pool(
            self._vector_reader,
            self._index,
            unit,
            base=base,
            args=[self._model, *params],
            key="e.memory_id",
            pool=max(SEMANTIC_POOL, query.limit),
        )
