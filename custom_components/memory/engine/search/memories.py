"""Hybrid search of memories: their corpus for the one hybrid search.

`hybrid.py` runs the search (keyword and semantic signals, fused); this
module says what is the memories' own: their filters (status, expiry,
scopes, types, tags, age), a follow-up's earlier turns, the store's vector
index on its own connection, and the step after fusion that scores a
conversation turn with its neighbours (`MemoryCorpus.refine`,
`fusion.add_context`). `MemorySearch` holds the `Database`, the memories'
vectors (`MemoryVectors`) and their table (`MemoryTable.get_many`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import aiosqlite

from ..errors import InvalidInputError, VectorDimensionError
from ..models import MemoryItem, SearchHit, SearchQuery, Vector, to_timestamp
from ..sql import IDS, placeholders, rows_in
from ..store import (
    ITEM_COLUMNS,
    Database,
    MemoryTable,
    MemoryVectors,
    normalize_tags,
    row_to_item,
    validate_limit,
)
from ..vectors import Readings, Scale, VectorIndex, as_unit_vector
from .candidates import Candidates, Request, Tables, Vectors
from .fusion import Ranked, add_context
from .hybrid import HybridSearch
from .keywords import MATCH_BUDGET

MEMORY_TABLES: Final = Tables(
    rows="memories",
    fts="memories_fts",
    embeddings="embeddings",
    key="memory_id",
    bm25="bm25(memories_fts)",
    terms_only=True,
)

# Earlier turns a follow-up's search may carry.
MAX_EARLIER: Final = 8


def validate_earlier(earlier: Sequence[tuple[str, float]]) -> None:
    """Refuse earlier turns beyond a few, or weighing 0 or less, or more than 1."""
    if len(earlier) > MAX_EARLIER:
        raise InvalidInputError(f"at most {MAX_EARLIER} earlier turns")
    for text, weight in earlier:
        if not text or not 0.0 < weight <= 1.0:
            raise InvalidInputError("an earlier turn needs text and a weight in (0, 1]")


class MemorySearch:
    """The memories, found by keywords and meaning."""

    # Rows a keyword MATCH may find (`keywords.MATCH_BUDGET`).
    match_budget: int = MATCH_BUDGET

    def __init__(
        self, database: Database, vectors: MemoryVectors, table: MemoryTable
    ) -> None:
        """Hold the parts it reads; the hybrid search's counts are kept per store."""
        self._db = database
        self._vectors = vectors
        self._table = table
        self._hybrid = HybridSearch(MEMORY_TABLES)

    def _filters(self, query: SearchQuery) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if query.status != "any":
            clauses.append("m.status = ?")
            params.append(query.status)
        if query.status == "active":
            clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
            params.append(self._db.now())
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

    def _request(self, query: SearchQuery) -> Request:
        """Make the hybrid search's request for `query`, its filters as SQL."""
        where, params = self._filters(query)
        return Request(
            text=query.text,
            vector=query.vector,
            language=query.language,
            limit=query.limit,
            min_score=query.min_score,
            where=where,
            params=params,
            earlier=query.earlier,
        )

    def _corpus(self, reader: aiosqlite.Connection, context: bool) -> MemoryCorpus:
        """Present the memories as a corpus, with this store's handles."""
        return MemoryCorpus(
            reader=reader,
            language=self._db.language,
            match_budget=self.match_budget,
            context=context,
            vector_reader=next(iter(self._db.vector_readers), None),
            index=self._vectors.index,
            model=self._db.model,
            cosine_scale=self._vectors.cosine_scale,
            readings=self._db.readings,
            items=self._table.get_many,
        )

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        """Find memories: keyword, semantic or both, fused into one ranking."""
        _writer, reader = self._db.connections()
        validate_limit(query.limit)
        validate_earlier(query.earlier)
        if query.scopes is not None and not query.scopes:
            return []
        return await self._hybrid.search(
            self._corpus(reader, query.context), self._request(query)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryCorpus:
    """The memories of one store, as one search sees them (`hybrid.Corpus`)."""

    reader: aiosqlite.Connection
    language: str
    match_budget: int
    # Score each candidate with its conversation neighbours (`query.context`).
    context: bool
    # The semantic side: its own connection, the index, the store's model.
    vector_reader: aiosqlite.Connection | None
    index: VectorIndex | None
    model: str | None
    cosine_scale: Callable[[Vector], Scale | None]
    # How well the model reads each language (the embedding worker's measure).
    readings: Readings
    items: Callable[..., Awaitable[dict[int, MemoryItem]]]

    async def recent(
        self, where: str, params: list[Any], limit: int
    ) -> list[SearchHit]:
        """Return the newest memories passing the filters."""
        rows = await self.reader.execute_fetchall(
            f"SELECT {ITEM_COLUMNS} FROM memories m WHERE {where} "
            "ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
            [*params, limit],
        )
        return [SearchHit(item=row_to_item(row), score=1.0, matched=()) for row in rows]

    async def vectors(self, vector: Vector | None) -> Vectors | None:
        """Return the query's unit vector and index, or None when none can use it."""
        if vector is None or self.model is None:
            return None
        unit = as_unit_vector(vector)
        if self.index is None:
            return None
        if len(unit) != self.index.dim:
            raise VectorDimensionError(
                f"model {self.model} makes {self.index.dim}-dimensional "
                f"vectors, the query has {len(unit)}",
                expected=str(self.index.dim),
                got=str(len(unit)),
            )
        return Vectors(unit, self.index, self.model, self.vector_reader)

    def scale(self, unit: Vector, language: str | None) -> Scale | None:
        """How unrelated memories score with this query, and the language's trust."""
        return self.readings.weigh(self.cosine_scale(unit), language)

    async def hits(self, ranked: Sequence[Ranked]) -> list[SearchHit]:
        """Return the ranked memories as hits (memories gone meanwhile left out)."""
        items = await self.items([entry.id for entry in ranked], conn=self.reader)
        return [
            SearchHit(item=items[entry.id], score=entry.score, matched=entry.signals)
            for entry in ranked
            if entry.id in items
        ]

    async def refine(
        self,
        search: HybridSearch,
        request: Request,
        candidates: Candidates,
        ranking: tuple[list[Ranked], Scale | None],
    ) -> list[Ranked]:
        """Score candidates with their conversation neighbours (`query.context`).

        Neighbours are the memories with the next lower and higher id in the
        same conversation (turns are stored in order) that pass the filters.
        Neighbours that are not candidates are scored on both signals first.
        """
        fused, scale = ranking
        if not self.context:
            return fused
        known = {entry.id for entry in fused}
        around = sorted({i + step for i in known for step in (-1, 0, 1)} - {0})
        rows = await rows_in(
            self.reader,
            f"SELECT m.id, m.conversation_id FROM memories m WHERE m.id IN ({IDS}) "
            f"AND m.conversation_id IS NOT NULL AND {request.where}",
            around,
            after=request.params,
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
            await search.complete(self.reader, request, candidates, new)
            fused = candidates.fused(scale)
        return add_context(fused, neighbours)
