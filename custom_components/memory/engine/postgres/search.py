"""The memories' hybrid search on PostgreSQL, ranked as the SQLite store ranks them.

`PostgresSearch.search(SearchQuery)` is `MemoryStore.search` step for step
(`search.hybrid.HybridSearch` over `search.memories.MemoryCorpus`), with
each read of SQLite's tables made of PostgreSQL's:

- a query with no words and no vector lists the newest memories passing
  the filters, each scored 1;
- the keyword query is the engine's own (`search.keyword_query`: the
  speaker's and the default language, compound parts, the MATCH budget,
  `newest`, earlier turns), its numbers read from `memory_terms`
  (`search_keywords.PgTermCounts`); the keyword pool is ranked by FTS5's
  bm25 (`search_keywords.RANKED`), the best KEYWORD_OVERFETCH times the
  pool fetched, then filtered, and every match when the filters leave too
  few; terms outside the MATCH rank the rows again (`KeywordQuery.rest`);
- the vector pool starts first, on its own connection
  (`search_vectors.semantic_pool` over `PgVectorIndex`), beside the
  keyword query;
- every candidate is then scored on both signals (bm25 of pooled vectors
  outside a full keyword pool, exact cosines of keyword hits outside the
  vector pool), fused by `search.fuse` with the model's cosine scale
  (`search_vectors.VectorSample`), neighbouring conversation turns added
  with `search.add_context` when the query asks, cut at the minimum score
  and the limit.

The filters (status, expiry at the search's clock, scopes, types, tags,
since) are `MemorySearch._filters` in PostgreSQL's terms. Vectors are the
unit vectors of one model in `PgVectorIndex`'s table; `set_vectors` stores
them as `MemoryStore.set_vectors` does (scaled to length one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
import contextlib
import time
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..errors import StoreError, VectorDimensionError
from ..languages import DEFAULT_LANGUAGE, language_code
from ..models import SearchHit, SearchQuery, Vector, to_timestamp
from ..search import (
    KEYWORD_OVERFETCH,
    KEYWORD_POOL,
    MATCH_BUDGET,
    SEMANTIC_POOL,
    Candidates,
    KeywordQuery,
    Ranked,
    add_context,
    keyword_query,
    oversample,
    validate_earlier,
)
from ..store import ITEM_COLUMNS, normalize_tags, row_to_item, validate_limit
from ..vectors import Readings, Scale, as_unit_vector
from .memories import PostgresMemories
from .search_keywords import (
    BM25_OF,
    RANKED,
    RANKED_PARAMS,
    TOTAL_ROWS,
    PgTermCounts,
    bm25_args,
    every_args,
    of_rows,
    ranked_rows,
)
from .search_vectors import VectorSample, exact_cosines, scores_of, semantic_pool
from .vectors import TABLE, PgVectorIndex

# Keyword hits `(id, bm25, coverage)`, best first.
type KeywordHits = list[tuple[int, float, float]]
# The filters' SQL (memories as `m`) and parameters, numbered from a given $n.
type Where = tuple[str, list[Any]]

_RECENT: Final = (
    "SELECT {columns} FROM memories m WHERE {where} "
    "ORDER BY m.created_at DESC, m.id DESC LIMIT ${limit}"
)


def where(query: SearchQuery, now: float, first: int) -> Where:
    """Return the filters of `query` as SQL, parameters numbered from `$first`."""
    clauses: list[str] = []
    params: list[Any] = []

    def arg(value: Any, cast: str = "") -> str:
        params.append(value)
        return f"${first + len(params) - 1}{cast}"

    if query.status != "any":
        clauses.append(f"m.status = {arg(query.status)}")
    if query.status == "active":
        clauses.append(f"(m.expires_at IS NULL OR m.expires_at > {arg(now)})")
    if query.scopes is not None:
        clauses.append(f"m.scope = ANY({arg(list(query.scopes), '::text[]')})")
    if query.types:
        kinds = [str(kind) for kind in query.types]
        clauses.append(f"m.type = ANY({arg(kinds, '::text[]')})")
    if query.tags:
        tags = list(normalize_tags(query.tags))
        clauses.append(
            "m.id IN (SELECT memory_id FROM memory_tags WHERE tag = "  # noqa: S608
            f"ANY({arg(tags, '::text[]')}))"
        )
    if query.since is not None:
        clauses.append(f"m.created_at >= {arg(to_timestamp(query.since))}")
    return " AND ".join(clauses) or "true", params


class PostgresSearch:
    """The memories of one PostgreSQL database, found by keywords and meaning."""

    # Rows a keyword MATCH may find (`search.MATCH_BUDGET`).
    match_budget: int = MATCH_BUDGET

    def __init__(
        self,
        pool: Any,
        *,
        vectors: PgVectorIndex | None = None,
        language: str = DEFAULT_LANGUAGE,
        clock: Any = time.time,
        readings: Readings | None = None,
    ) -> None:
        """Hold the pool (its connections knowing pgvector: `register_vector`).

        `vectors` is the model's index (None: keywords only); `language`
        the store's default; `clock` gives the time expiry is read at;
        `readings` how well the model reads each language (the store's).
        """
        self._pool = pool
        self._index = vectors
        self.language = language
        self.readings = readings or Readings(language)
        self._clock = clock
        self._memories = PostgresMemories(pool, language=language, clock=clock)
        self._counts = PgTermCounts()
        self._sample = None if vectors is None else VectorSample(vectors.model)

    async def set_vectors(self, vectors: Mapping[int, npt.ArrayLike]) -> None:
        """Store (or replace) the model's vectors of memories, scaled to length one."""
        if self._index is None or not vectors:
            return
        ids = list(vectors)
        units = [as_unit_vector(vectors[item_id]) for item_id in ids]
        for unit in units:
            self._check(unit)
        await self._index.add(ids, np.stack(units))
        if self._sample is not None:
            self._sample.forget()

    def _check(self, unit: Vector) -> None:
        """Refuse a vector of another dimension than the index's."""
        assert self._index is not None  # noqa: S101 - checked by callers
        if len(unit) != self._index.dim:
            raise VectorDimensionError(
                f"model {self._index.model} makes {self._index.dim}-dimensional "
                f"vectors, the query has {len(unit)}",
                expected=str(self._index.dim),
                got=str(len(unit)),
            )

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        """Find memories: keyword, semantic or both, fused into one ranking."""
        validate_limit(query.limit)
        validate_earlier(query.earlier)
        if query.scopes is not None and not query.scopes:
            return []
        now = float(self._clock())
        words = query.text.strip() not in ("", "*")
        if not words and query.vector is None:
            return await self._recent(query, now)
        unit: Vector | None = None
        if query.vector is not None and self._index is not None:
            unit = as_unit_vector(query.vector)
            self._check(unit)
        pool = max(KEYWORD_POOL, query.limit)
        semantic_task = asyncio.create_task(
            self._semantic(query, now, unit, oversample(words))
        )
        try:
            async with self._pool.acquire() as conn:
                keyword, cosines, keywords = await self._keyword(conn, query, now, unit)
        except BaseException:
            semantic_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, StoreError):
                await semantic_task
            raise
        semantic = await semantic_task
        pooled = {item_id for item_id, _score in semantic}
        late = [i for i, _bm25, _cover in keyword if i not in pooled and semantic]
        outside = {i: score for i, score in (cosines or {}).items() if i not in pooled}
        candidates = Candidates(
            keywords, keyword, semantic, outside if semantic else {}
        )
        async with self._pool.acquire() as conn:
            candidates.keyword, found = await self._complete_keyword(
                conn,
                (candidates, unit, pool),
                pooled,
                late if cosines is None else [],
            )
            candidates.similarity |= found
            scale = await self._scale(conn, unit, query.language) if words else None
            fused = candidates.fused(scale)
            if fused and query.context:
                fused = await self._refine(
                    conn, (query, now, pool), (candidates, unit), (fused, scale)
                )
        ranked = [entry for entry in fused if entry.score >= query.min_score][
            : query.limit
        ]
        items = await self._memories.get_many([entry.id for entry in ranked])
        return [
            SearchHit(item=items[entry.id], score=entry.score, matched=entry.signals)
            for entry in ranked
            if entry.id in items
        ]

    async def _recent(self, query: SearchQuery, now: float) -> list[SearchHit]:
        """Return the newest memories passing the filters (a query with no words)."""
        clause, params = where(query, now, 1)
        sql = _RECENT.format(columns=ITEM_COLUMNS, where=clause, limit=len(params) + 1)
        async with self._pool.acquire() as conn:
            records = await conn.fetch(sql, *params, query.limit)
        return [
            SearchHit(item=row_to_item(tuple(record)), score=1.0, matched=())
            for record in records
        ]

    async def _scale(
        self, conn: Any, unit: Vector | None, language: str | None
    ) -> Scale | None:
        """How unrelated memories score with this query, and the language's trust."""
        if unit is None or self._sample is None:
            return None
        return self.readings.weigh(await self._sample.scale(conn, unit), language)

    async def keyword_query(
        self,
        conn: Any,
        text: str,
        language: str | None,
        earlier: Sequence[tuple[str, float]] = (),
    ) -> KeywordQuery | None:
        """Build the engine's keyword query of `text`, numbers from `memory_terms`."""
        default = self.language
        total = int(await conn.fetchval(TOTAL_ROWS))
        return await keyword_query(
            conn,
            text,
            [language_code(language, default), default],
            vocab=self._counts,
            total=total,
            budget=self.match_budget,
            index="memory_terms",
            earlier=earlier,
        )

    async def _keyword(
        self, conn: Any, query: SearchQuery, now: float, unit: Vector | None
    ) -> tuple[KeywordHits, dict[int, float] | None, KeywordQuery | None]:
        """Keyword hits `(id, bm25, coverage)` best first, their cosines, the query.

        `HybridSearch._keyword`: cosines None when the rows are ranked
        again (`KeywordQuery.others`) and vectors are asked for.
        """
        keywords = await self.keyword_query(
            conn, query.text.strip(), query.language, query.earlier
        )
        if keywords is None:
            return [], {}, None
        pool = max(KEYWORD_POOL, query.limit)
        wanted = pool * KEYWORD_OVERFETCH
        clause, params = where(query, now, RANKED_PARAMS + 1)
        vector, join = "NULL::bytea", ""
        if unit is not None and not keywords.others and self._index is not None:
            params.append(self._index.model)
            vector = "e.embedding"
            join = (
                f"LEFT JOIN {TABLE} e ON e.model = ${RANKED_PARAMS + len(params)} "
                "AND e.memory_id = m.id"
            )
        sql = RANKED.format(vector=vector, join=join, where=clause)
        out = wanted if keywords.others else pool
        others, flags = every_args(keywords)
        head = [*bm25_args(keywords), keywords.newest, others, flags, wanted]
        rows = ranked_rows(await conn.fetch(sql, *head, wanted, out, *params))
        if len(rows) < pool and (not rows or rows[0][4] >= wanted):
            # The filters kept too few of the best matches: rank them all.
            rows = ranked_rows(await conn.fetch(sql, *head, None, out, *params))
        if keywords.others:
            scored = [(row, row[2] - keywords.rest(row[1])) for row in rows]
            scored.sort(key=lambda pair: (pair[1], pair[0][0]))
            hits = [keywords.hit(row[0], bm25, row[1]) for row, bm25 in scored[:pool]]
            if unit is not None:
                return hits, None, keywords
            return hits, {}, keywords
        hits = [keywords.hit(row[0], row[2], row[1]) for row in rows]
        stored = [(row[0], row[3]) for row in rows if row[3] is not None]
        return hits, dict(scores_of(stored, unit)) if unit is not None else {}, keywords

    async def keyword_of(
        self, conn: Any, keywords: KeywordQuery | None, ids: Sequence[int]
    ) -> KeywordHits:
        """Keyword hits among `ids` (which passed the filters already)."""
        if keywords is None or not ids:
            return []
        records = await conn.fetch(BM25_OF, *bm25_args(keywords), list(ids))
        return keywords.hits(of_rows(records))

    async def _complete_keyword(
        self,
        conn: Any,
        state: tuple[Candidates, Vector | None, int],
        ids: Iterable[int],
        late: Sequence[int] = (),
    ) -> tuple[KeywordHits, dict[int, float]]:
        """Add the bm25 of `ids` outside a full keyword pool; cosines of `late`."""
        candidates, unit, pool = state
        keyword, keywords = candidates.keyword, candidates.keywords
        have = {hit[0] for hit in keyword}
        missing = sorted({item_id for item_id in ids if item_id not in have})
        if len(keyword) < pool:
            missing = []
        hits = await self.keyword_of(conn, keywords, missing)
        if keywords is None or unit is None or not late or self._index is None:
            return keyword + hits, {}
        cosines = await exact_cosines(conn, unit, late, self._index.model)
        return keyword + hits, cosines

    async def _semantic(
        self, query: SearchQuery, now: float, unit: Vector | None, factor: int
    ) -> list[tuple[int, float]]:
        """Return the semantic pool `(id, cosine)`, best first, exactly re-scored.

        The index proposes `factor` times the pool (`search.oversample`).
        """
        if unit is None or self._index is None:
            return []
        return await semantic_pool(
            self._pool,
            self._index,
            unit,
            where=where(query, now, 2),
            size=max(SEMANTIC_POOL, query.limit),
            oversample=factor,
        )

    async def _refine(
        self,
        conn: Any,
        request: tuple[SearchQuery, float, int],
        state: tuple[Candidates, Vector | None],
        ranking: tuple[list[Ranked], Scale | None],
    ) -> list[Ranked]:
        """Score candidates with their conversation neighbours (`MemoryCorpus.refine`)."""
        query, now, pool = request
        candidates, unit = state
        fused, scale = ranking
        known = {entry.id for entry in fused}
        around = sorted({i + step for i in known for step in (-1, 0, 1)} - {0})
        clause, params = where(query, now, 2)
        records = await conn.fetch(
            "SELECT m.id, m.conversation_id FROM memories m "  # noqa: S608
            "WHERE m.id = ANY($1::int8[]) AND m.conversation_id IS NOT NULL "
            f"AND {clause}",
            around,
            *params,
        )
        conversation = {int(r[0]): str(r[1]) for r in records}
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
            candidates.keyword, _none = await self._complete_keyword(
                conn, (candidates, unit, pool), new
            )
            pooled = {item_id for item_id, _score in candidates.semantic}
            missing = sorted({i for i in new if i not in pooled})
            if unit is not None and candidates.semantic and missing and self._index:
                candidates.similarity = candidates.similarity | await exact_cosines(
                    conn, unit, missing, self._index.model
                )
            fused = candidates.fused(scale)
        return add_context(fused, neighbours)
