"""Message search: the conversation log found by keywords and by meaning.

FTS5 ranks messages by keywords; with an embedding model, user and assistant
messages also have vectors (made by `embedding_queue.py`, kept in
`message_embeddings`), and a query vector ranks them by meaning, both fused
as memories are (`fusion.py`). The vectors are searched through an in-memory
int8 index (`NumpyIndex`) that is derived data: it catches up from the table
on each semantic search, and purges take their ids out of it; a sample of
the vectors it read (`cosine_scale.CosineScale`) tells fusion how unrelated
messages score.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
import contextlib
from typing import Any, Final

import numpy as np

from ..errors import StoreError
from ..languages import language_code
from ..memory_store import MemoryStore
from ..models import to_timestamp
from ..search import (
    SEMANTIC_POOL,
    KeywordQuery,
    RowCounter,
    TermCounts,
    cosines_outside_pool,
    fuse,
    keyword_query,
    semantic_pool,
)
from ..sql import placeholders
from ..store import validate_limit
from ..vectors import CosineScale, NumpyIndex, as_unit_vector
from .records import (
    MESSAGE_COLUMNS,
    MessageHit,
    MessageQuery,
    messages_by_id,
    row_to_message,
)

# Candidates the keyword search ranks before the minimum score and limit.
KEYWORD_POOL: Final = 50
# FTS5 column weights: terms (the analysed content), data (tool calls and
# results, plain words).
BM25_WEIGHTS: Final = (1.0, 0.3)
_LOAD_BATCH: Final = 4096


class MessageSearch:
    """Searches one store's conversation log, keeping its message vector index."""

    def __init__(self, store: MemoryStore) -> None:
        """Use `store`'s reader; it must be open before any search."""
        self._store = store
        # Vectors of the store's model, loaded on the first semantic search;
        # `_indexed` is the last `message_embeddings.id` read into it.
        self._index: NumpyIndex | None = None
        self._scale = CosineScale()
        self._dim = 0
        self._indexed = 0
        self._index_lock = asyncio.Lock()
        self._rows = RowCounter("conversation_messages")
        # Common terms' counts, kept between searches (`keywords.TermCounts`).
        self._term_counts = TermCounts("conversation_messages_fts_vocab")

    async def search(self, query: MessageQuery) -> list[MessageHit]:
        """Find messages by keywords and meaning, scored like memories.

        0..1, best first; each hit names the signals that found it. Scope and
        time filters apply to both signals in SQL, so a message outside the
        query's scopes is never a candidate.
        """
        validate_limit(query.limit)
        if query.scopes is not None and not query.scopes:
            return []
        clauses: list[str] = []
        params: list[Any] = []
        if query.scopes is not None:
            clauses.append(f"m.scope IN ({placeholders(len(query.scopes))})")
            params.extend(query.scopes)
        if query.since is not None:
            clauses.append("m.created_at >= ?")
            params.append(to_timestamp(query.since))
        filters = (" AND ".join(clauses) or "1", params)
        text = query.text.strip()
        if text in {"", "*"} and query.vector is None:
            return await self._recent(filters, query.limit)
        # The vector scan runs in a worker thread: start it first so that it
        # overlaps the FTS5 query, as the memory search does.
        semantic_task = asyncio.create_task(self._semantic(query, filters))
        try:
            keywords = await self._keyword_query(text, query.language)
            keyword = await self._keyword(
                keywords, filters, max(KEYWORD_POOL, query.limit)
            )
        except BaseException:
            semantic_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, StoreError):
                await semantic_task
            raise
        semantic = await semantic_task
        have = {hit[0] for hit in keyword}
        outside = [item_id for item_id, _ in semantic if item_id not in have]
        if outside and len(keyword) >= max(KEYWORD_POOL, query.limit):
            # The keyword pool was full: semantic hits beyond it may match too.
            keyword += await self._keyword(
                keywords, filters, len(outside), only=outside
            )
        similarity = await self._similarity(query, semantic, [h[0] for h in keyword])
        # A search by vector alone (no words) keeps raw cosines.
        words = query.text.strip() not in ("", "*")
        scale = (
            self._scale.scale(as_unit_vector(query.vector))
            if semantic and query.vector is not None and words
            else None
        )
        fused = fuse(keyword, semantic, similarity, scale)
        ranked = [entry for entry in fused if entry.score >= query.min_score][
            : query.limit
        ]
        found = await messages_by_id(self._store.reader, [entry.id for entry in ranked])
        return [
            MessageHit(
                message=found[entry.id], score=entry.score, matched=entry.signals
            )
            for entry in ranked
            if entry.id in found
        ]

    async def _recent(
        self, filters: tuple[str, list[Any]], limit: int
    ) -> list[MessageHit]:
        where, params = filters
        async with self._store.reader.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
            "JOIN conversations c ON c.id = m.conversation "
            f"WHERE {where} ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
            [*params, limit],
        ) as cursor:
            rows = await cursor.fetchall()
        return [MessageHit(message=row_to_message(row), score=1.0) for row in rows]

    async def _keyword_query(
        self, text: str, language: str | None
    ) -> KeywordQuery | None:
        """Analyse `text` and weigh its terms against the messages' index."""
        reader = self._store.reader
        default = self._store.language
        return await keyword_query(
            reader,
            text,
            [language_code(language, default), default],
            vocab=self._term_counts,
            total=await self._rows.count(reader),
            index="conversation_messages_fts",
        )

    async def _keyword(
        self,
        keywords: KeywordQuery | None,
        filters: tuple[str, list[Any]],
        limit: int,
        only: Sequence[int] = (),
    ) -> list[tuple[int, float, float]]:
        """FTS5 hits `(id, bm25, coverage)`, best first; `only` restricts ids."""
        if keywords is None:
            return []  # no term that any message holds
        where, params = filters
        weights = ", ".join(str(weight) for weight in BM25_WEIGHTS)
        restrict = f" AND m.id IN ({placeholders(len(only))})" if only else ""
        # A rarest term in very many messages: its newest ones only (not
        # when scoring given ids, which must all be scored).
        floor = 0 if only else keywords.floor
        async with self._store.reader.execute(
            "SELECT m.id, m.terms, m.data, "  # noqa: S608
            f"bm25(conversation_messages_fts, {weights}) AS rank "
            "FROM conversation_messages_fts JOIN conversation_messages m "
            "ON m.id = conversation_messages_fts.rowid "
            f"WHERE conversation_messages_fts MATCH ? "
            f"AND conversation_messages_fts.rowid >= ? AND {where}{restrict} "
            "ORDER BY rank LIMIT ?",
            [keywords.expression, floor, *params, *only, limit],
        ) as cursor:
            rows = await cursor.fetchall()
        # Terms outside the MATCH add their share of bm25 (`KeywordQuery.rest`).
        hits = [
            (
                int(row[0]),
                float(row[3]) - keywords.rest(row[1]),
                keywords.coverage(row[1]),
            )
            for row in rows
        ]
        hits.sort(key=lambda hit: (hit[1], hit[0]))
        return hits

    async def _vector_index(self) -> tuple[str, int, NumpyIndex] | None:
        """Return the index of the store's model, caught up with the table."""
        model = self._store.model
        if model is None:
            return None
        reader = self._store.reader
        async with self._index_lock:
            if self._index is None:
                async with reader.execute(
                    "SELECT dim, (SELECT count(*) FROM message_embeddings "
                    "WHERE model = ?) FROM embedding_models WHERE model = ?",
                    (model, model),
                ) as cursor:
                    row = await cursor.fetchone()
                if row is None:
                    return None  # nothing embedded by this model yet
                self._dim = int(row[0])
                self._index = NumpyIndex(self._dim, capacity=int(row[1]))
                self._scale = CosineScale()
                self._indexed = 0
            index = self._index
            async with reader.execute(
                "SELECT id, message_id, vector FROM message_embeddings "
                "WHERE id > ? AND model = ? ORDER BY id",
                (self._indexed, model),
            ) as cursor:
                while rows := list(await cursor.fetchmany(_LOAD_BATCH)):
                    matrix = np.frombuffer(
                        b"".join(row[2] for row in rows), dtype=np.float32
                    ).reshape(len(rows), -1)
                    await index.add([int(row[1]) for row in rows], matrix)
                    self._scale.add(matrix)
                    self._indexed = int(rows[-1][0])
        return model, self._dim, index

    async def unindex(self, ids: Sequence[int]) -> None:
        """Take erased messages out of the index."""
        async with self._index_lock:
            if self._index is not None:
                await self._index.remove(ids)

    @property
    def index_bytes(self) -> int:
        """Memory held by the message vector index (0 until first used)."""
        return 0 if self._index is None else self._index.nbytes

    async def _semantic(
        self, query: MessageQuery, filters: tuple[str, list[Any]]
    ) -> list[tuple[int, float]]:
        """Find the nearest messages `(id, cosine)` passing the filters, best first.

        The int8 index proposes candidates; their float32 vectors, read with
        the filters, are scored exactly. When a selective filter (one
        person's messages) leaves too few, its subset is scanned exactly.
        """
        if query.vector is None:
            return []
        found = await self._vector_index()
        if found is None:
            return []
        model, dim, index = found
        unit = as_unit_vector(query.vector)
        if len(unit) != dim:
            return []  # not this model's query: keywords only
        where, params = filters
        base = (
            "SELECT e.message_id, e.vector FROM message_embeddings e "  # noqa: S608
            "JOIN conversation_messages m ON m.id = e.message_id "
            f"WHERE e.model = ? AND {where}"
        )
        return await semantic_pool(
            self._store.reader,
            index,
            unit,
            base=base,
            args=[model, *params],
            key="e.message_id",
            pool=max(SEMANTIC_POOL, query.limit),
        )

    async def _similarity(
        self,
        query: MessageQuery,
        semantic: Sequence[tuple[int, float]],
        ids: Sequence[int],
    ) -> dict[int, float]:
        """Exact cosines of keyword hits outside the semantic pool."""
        model = self._store.model
        if query.vector is None or model is None:
            return {}
        return await cosines_outside_pool(
            self._store.reader,
            query.vector,
            semantic,
            ids,
            table="message_embeddings",
            key="message_id",
            model=model,
        )
