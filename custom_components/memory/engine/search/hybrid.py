"""The one hybrid search: keyword and semantic candidates of a corpus, fused.

Memories (`memories.py`) and conversation messages (`conversations/search.py`)
are searched alike; each is a `Corpus` (its connections, vector index, row
mapping and any step of its own, such as the memories' neighbouring turns)
over its `Tables`. The algorithm is written here once: an empty query lists
the newest rows; otherwise the vector scan starts first (it runs on its own
connection or in a worker thread, beside the FTS5 query), the keyword pool
is ranked by bm25 in the speaker's and the default language, every candidate
is scored on both signals (`complete`: exact cosines of keyword hits outside
the vector pool; the pooled vectors outside the keyword pool are keyword hits
by their terms, read with their vectors, when the fusion reads coverage
(`KeywordQuery.found`), else by their bm25 through FTS5), and `fusion.fuse`
merges them into one ranking.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
import contextlib
from typing import Any, Final, Protocol

import aiosqlite

from ..errors import StoreError
from ..languages import language_code
from ..models import Vector
from ..sql import ID_CHUNK, IDS, placeholders, rows_in
from ..vectors import Scale
from .candidates import (
    Candidates,
    KeywordHits,
    Request,
    Tables,
    Vectors,
    stored_cosines,
)
from .fusion import Ranked
from .keywords import KeywordQuery, keyword_query
from .semantic import (
    SEMANTIC_POOL,
    cosines_outside_pool,
    exact_cosines,
    oversample,
    semantic_pool,
)
from .term_counts import RowCounter, TermCounts

# FTS5 ranks its matches alone and hands over this many times the keyword
# pool to be joined with the rows and filtered (bench/engine.py: a third of
# the keyword query's time at 100k memories).
KEYWORD_OVERFETCH: Final = 4


class Corpus[H](Protocol):
    """What one corpus brings to a search; `H` is its hit type."""

    @property
    def reader(self) -> aiosqlite.Connection:
        """The connection the keyword side and completion read."""
        ...

    @property
    def language(self) -> str:
        """The store's default language."""
        ...

    @property
    def match_budget(self) -> int:
        """Rows a keyword MATCH may find (`keywords.MATCH_BUDGET`)."""
        ...

    async def recent(self, where: str, params: list[Any], limit: int) -> list[H]:
        """Return the newest rows passing the filters (a query with no words)."""
        ...

    async def vectors(self, vector: Vector | None) -> Vectors | None:
        """Return the query's vectors, or None: keywords only."""
        ...

    def scale(self, unit: Vector, language: str | None) -> Scale | None:
        """How unrelated rows score with this query (`CosineScale.scale`).

        With the trust of the query's `language` (None: the store's), how
        well the model reads it (`vectors.Readings.trust`).
        """
        ...

    async def refine(
        self,
        search: HybridSearch,
        request: Request,
        candidates: Candidates,
        ranking: tuple[list[Ranked], Scale | None],
    ) -> list[Ranked]:
        """Apply the corpus's own step after fusion (none: return the ranking)."""
        ...

    async def hits(self, ranked: Sequence[Ranked]) -> list[H]:
        """Return the ranked rows as hits, in order (rows gone meanwhile left out)."""
        ...


class HybridSearch:
    """Searches one corpus; keeps its row and term counts between searches."""

    def __init__(self, tables: Tables) -> None:
        """Search the corpus in `tables`."""
        self.tables = tables
        # How many rows the index holds, and how many hold each common term,
        # for the terms' weights and the MATCH's bound.
        self.rows = RowCounter(tables.rows)
        self.term_counts = TermCounts(f"{tables.fts}_vocab")

    async def search[H](self, corpus: Corpus[H], request: Request) -> list[H]:
        """Find rows: keyword, semantic or both, fused into one ranking."""
        if not request.words and request.vector is None:
            return await corpus.recent(request.where, request.params, request.limit)
        vectors = await corpus.vectors(request.vector)
        # The vector scan runs in a worker thread (numpy) or on its own
        # connection (vec0): started first, it overlaps the FTS5 query.
        semantic_task = asyncio.create_task(self._semantic(request, vectors))
        early: asyncio.Task[dict[int, float]] | None = None
        try:
            keyword, cosines, keywords = await self._keyword(corpus, request, vectors)
            if cosines is None and vectors is not None and not semantic_task.done():
                # The keyword pool's cosines, read while the vector scan ends.
                early = asyncio.create_task(
                    self._cosines(corpus.reader, vectors, [hit[0] for hit in keyword])
                )
            semantic, pooled_terms = await semantic_task
            if early is not None:
                cosines = await early
        except BaseException:
            for task in (semantic_task, early):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, StoreError):
                        await task
            raise
        # Keyword hits outside the semantic pool keep the cosine their row
        # brought, or get it now (`late`).
        pooled = {item_id for item_id, _score in semantic}
        late = [i for i, _bm25, _cover in keyword if i not in pooled and semantic]
        outside = {i: score for i, score in (cosines or {}).items() if i not in pooled}
        candidates = Candidates(
            keywords, keyword, semantic, outside if semantic else {}, vectors
        )
        # How unrelated rows score with this query; a search by vector
        # alone (no words) keeps raw cosines.
        scale = (
            corpus.scale(vectors.unit, request.language)
            if vectors is not None and request.words
            else None
        )
        # With a scale the fusion reads the pooled rows' coverage, not their
        # bm25: their terms, read with their vectors, say what they hold.
        candidates.keyword, cosines = await self._complete_keyword(
            corpus.reader,
            request,
            candidates,
            (pooled, pooled_terms if scale is not None else None),
            late if cosines is None else [],
        )
        candidates.similarity |= cosines
        fused = candidates.fused(scale)
        if fused:
            fused = await corpus.refine(self, request, candidates, (fused, scale))
        ranked = [entry for entry in fused if entry.score >= request.min_score][
            : request.limit
        ]
        return await corpus.hits(ranked)

    async def keyword_query[H](
        self,
        corpus: Corpus[H],
        text: str,
        language: str | None,
        earlier: Sequence[tuple[str, float]] = (),
    ) -> KeywordQuery | None:
        """Analyse `text` (and a follow-up's `earlier` turns) against the index.

        In the speaker's language and the store's default one (`keywords`).
        """
        conn = corpus.reader
        default = corpus.language
        return await keyword_query(
            conn,
            text,
            [language_code(language, default), default],
            vocab=self.term_counts,
            total=self.rows,
            budget=corpus.match_budget,
            index=self.tables.fts,
            earlier=earlier,
        )

    async def _keyword[H](
        self, corpus: Corpus[H], request: Request, vectors: Vectors | None
    ) -> tuple[KeywordHits, dict[int, float] | None, KeywordQuery | None]:
        """FTS5 hits `(id, bm25, coverage)` best first, their cosines, the query.

        FTS5 ranks its matches on its own first (a bounded sort, without
        touching the rows), and only the best KEYWORD_OVERFETCH times the
        pool are joined and filtered: far cheaper than joining every match.
        Only when the filters leave too few of those is every match joined.
        With `vectors`, each hit's stored vector comes along and its cosine
        is returned; but not when the rows are ranked again in Python
        (`KeywordQuery.others`): of the KEYWORD_OVERFETCH times the pool
        fetched, only the pool's are needed, and only those outside the
        semantic pool, so they are read later (cosines None).
        """
        keywords = await self.keyword_query(
            corpus, request.text.strip(), request.language, request.earlier
        )
        if keywords is None:
            return [], {}, None
        tables = self.tables
        pool = request.pool
        vector = "NULL"
        join = ""
        args: list[Any] = []
        if vectors is not None and not keywords.others:
            vector = "e.vector"
            join = (
                f"LEFT JOIN {tables.embeddings} e ON e.model = ? "
                f"AND e.{tables.key} = m.id "
            )
            args.append(vectors.model)
        wanted = pool * KEYWORD_OVERFETCH
        # The MATCH's lowest rowid: 0, or that of its `newest`-th newest row,
        # found here rather than by a statement of its own (one hand-off less).
        floor = "?"
        lowest = ""
        bound: list[Any] = [0]
        match: list[Any] = []
        if keywords.newest:
            floor = "(SELECT floor FROM lowest)"
            lowest = (
                "lowest AS MATERIALIZED (SELECT coalesce((SELECT rowid "  # noqa: S608
                f"FROM {tables.fts} WHERE {tables.fts} MATCH ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?), 0) AS floor), "
            )
            bound = []
            match = [keywords.expression, keywords.newest - 1]
        every = ""
        order = "rank, rowid"
        if keywords.every:
            # Terms outside the MATCH: the rows holding every term (the
            # newest of them) come first, then the best bm25 of the rest.
            every = (
                f"every AS MATERIALIZED (SELECT rowid AS id FROM {tables.fts} "  # noqa: S608
                f"WHERE {tables.fts} MATCH ? AND rowid >= {floor} "
                "ORDER BY rowid DESC LIMIT ?), "
            )
            order = "rowid IN every DESC, rank, rowid"
            match += [keywords.every, *bound, wanted]
        match += [keywords.expression, *bound]
        sql = (
            f"WITH {lowest}{every}f AS MATERIALIZED (SELECT rowid AS id, "  # noqa: S608
            f"{tables.bm25} AS rank FROM {tables.fts} WHERE {tables.fts} MATCH ? "
            f"AND rowid >= {floor} ORDER BY {order} LIMIT ?) "
            f"SELECT m.id, m.terms, f.rank, {vector}, (SELECT count(*) FROM f) "
            f"FROM f CROSS JOIN {tables.rows} m ON m.id = f.id "
            f"{join}WHERE {request.where} ORDER BY f.rank, m.id LIMIT ?"
        )
        # With terms outside the MATCH, every fetched row is ranked again
        # with their share of bm25 before the pool is cut.
        out = wanted if keywords.others else pool
        conn = corpus.reader
        params = request.params
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
                keywords.hit(int(row[0]), bm25, row[1]) for row, bm25 in scored[:pool]
            ]
        else:
            hits = [keywords.hit(int(row[0]), float(row[2]), row[1]) for row in rows]
        if vectors is not None and keywords.others:
            return hits, None, keywords
        return hits, stored_cosines(rows, vectors), keywords

    def _bm25_of(self) -> str:
        """SELECT `(id, bm25 or NULL, terms, NULL)` of `ids` ({IDS}; then the MATCH)."""
        fts = self.tables.fts
        return (
            f"WITH c AS MATERIALIZED (SELECT m.id, m.terms "  # noqa: S608
            f"FROM {self.tables.rows} m WHERE m.id IN ({IDS})), "
            f"f AS MATERIALIZED (SELECT {fts}.rowid AS id, {self.tables.bm25} "
            f"AS rank FROM {fts} WHERE {fts} MATCH ? "
            f"AND +{fts}.rowid IN (SELECT id FROM c)) "
            "SELECT c.id, f.rank, c.terms, NULL FROM c LEFT JOIN f ON f.id = c.id"
        )

    async def keyword_of(
        self,
        conn: aiosqlite.Connection,
        keywords: KeywordQuery | None,
        ids: Sequence[int],
    ) -> KeywordHits:
        """FTS5 hits among `ids` (which passed the filters already).

        bm25 is computed for these rows only; FTS5 is kept the outer loop
        (`+rowid`) so that its statistics are gathered once, not once per
        id. Rows the MATCH does not find but that hold terms outside it
        score on those alone (`KeywordQuery.rest`): one statement reads
        both.
        """
        if keywords is None or not ids:
            return []
        rows = await rows_in(conn, self._bm25_of(), ids, after=[keywords.expression])
        return keywords.hits(rows)

    async def _complete_keyword(
        self,
        conn: aiosqlite.Connection,
        request: Request,
        candidates: Candidates,
        ids: tuple[Iterable[int], Mapping[int, str] | None],
        late: Sequence[int] = (),
    ) -> tuple[KeywordHits, dict[int, float]]:
        """Add to the keyword hits the bm25 of `ids` outside the keyword pool.

        Only needed when the pool was full: if it was not, every match that
        passes the filters is in it already. `ids` comes with its rows'
        terms, or None: with them (`Tables.terms_only`) the rows are judged
        on their terms (`KeywordQuery.found`), without FTS5. Returns the
        cosines of the keyword hits `late` too (through FTS5: read in the
        same statement).
        """
        keyword, tables = candidates.keyword, self.tables
        keywords, vectors = candidates.keywords, candidates.vectors
        have = {hit[0] for hit in keyword}
        missing = sorted({item_id for item_id in ids[0] if item_id not in have})
        if len(keyword) < request.pool:
            missing = []
        terms = ids[1]
        if keywords is not None and terms is not None:
            hits = keywords.found((i, terms[i]) for i in missing if i in terms)
            cosines: dict[int, float] = {}
            if vectors is not None and late:
                cosines = await self._cosines(conn, vectors, late)
            return keyword + hits, cosines
        if keywords is None or vectors is None or not late:
            return keyword + await self.keyword_of(conn, keywords, missing), {}
        if not missing or len(missing) + len(late) > ID_CHUNK:
            hits = await self.keyword_of(conn, keywords, missing)
            return keyword + hits, await self._cosines(conn, vectors, late)
        key = tables.key
        rows = list(
            await conn.execute_fetchall(
                self._bm25_of().replace(IDS, placeholders(len(missing)))
                + f" UNION ALL SELECT e.{key}, NULL, NULL, e.vector "  # noqa: S608
                f"FROM {tables.embeddings} e WHERE e.model = ? "
                f"AND e.{key} IN ({placeholders(len(late))})",
                [*missing, keywords.expression, vectors.model, *late],
            )
        )
        hits = keywords.hits([row for row in rows if row[3] is None])
        return keyword + hits, stored_cosines(rows, vectors)

    async def _cosines(
        self, conn: aiosqlite.Connection, vectors: Vectors, ids: Sequence[int]
    ) -> dict[int, float]:
        """Exact cosines of `ids`' stored vectors with the query."""
        tables = self.tables
        return await exact_cosines(
            conn,
            vectors.unit,
            ids,
            table=tables.embeddings,
            key=tables.key,
            model=vectors.model,
        )

    async def complete(
        self,
        conn: aiosqlite.Connection,
        request: Request,
        candidates: Candidates,
        ids: Sequence[int],
    ) -> None:
        """Score `ids` on both signals: bm25 and cosine where still missing.

        Keyword hits outside the semantic pool get their exact cosine; ids
        outside the keyword pool get their bm25 if the pool was full (if it
        was not, every match is in it already).
        """
        candidates.keyword, _cosines = await self._complete_keyword(
            conn, request, candidates, (ids, None)
        )
        cosines = await self._similarity(conn, request, candidates, ids)
        candidates.similarity = candidates.similarity | cosines

    async def _similarity(
        self,
        conn: aiosqlite.Connection,
        request: Request,
        candidates: Candidates,
        ids: Sequence[int],
    ) -> dict[int, float]:
        """Exact cosines of `ids` outside the semantic pool (none without one)."""
        vectors = candidates.vectors
        if request.vector is None or not candidates.semantic or vectors is None:
            return {}
        return await cosines_outside_pool(
            conn,
            request.vector,
            candidates.semantic,
            ids,
            table=self.tables.embeddings,
            key=self.tables.key,
            model=vectors.model,
        )

    async def _semantic(
        self, request: Request, vectors: Vectors | None
    ) -> tuple[list[tuple[int, float]], dict[int, str] | None]:
        """Return the semantic pool `(id, cosine)`, best first, exactly re-scored.

        Reads through the corpus's vector connection, so that it runs beside
        the keyword query on the reader instead of queueing behind it; with
        words it re-scores fewer of the index's candidates (`oversample`).
        With `Tables.terms_only` the rows' terms come along, by id (else None).
        """
        terms: dict[int, str] | None = {} if self.tables.terms_only else None
        if vectors is None or vectors.conn is None:
            return [], terms
        tables = self.tables
        key = f"e.{tables.key}"
        base = (
            f"SELECT {key}, e.vector{', m.terms' if tables.terms_only else ''} "  # noqa: S608
            f"FROM {tables.embeddings} e JOIN {tables.rows} m ON m.id = {key} "
            f"WHERE e.model = ? AND {request.where}"
        )
        pool = await semantic_pool(
            vectors.conn,
            vectors.index,
            vectors.unit,
            rows=(base, [vectors.model, *request.params]),
            key=key,
            pool=max(SEMANTIC_POOL, request.limit),
            terms=terms,
            oversample=oversample(request.words),
        )
        return pool, terms
