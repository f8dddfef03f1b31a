"""Hybrid message search on PostgreSQL: keywords and vectors fused as SQLite fuses them.

`message_search` is SQLite's `HybridSearch.search` over a `MessageCorpus`,
step for step, with PostgreSQL's reads: the keyword side
(`PostgresMessageSearch.keyword_side`), the vector side
(`PgMessageVectors.semantic_pool`, started first, beside it), every
candidate then scored on both signals (exact cosines of keyword hits
outside the semantic pool; bm25 of pooled messages outside a full keyword
pool, `keyword_of`), fused by `Candidates.fused` with the model's cosine
scale when the query has words, cut at the minimum score and the limit.
Messages have no refinement step of their own (no context), as on SQLite.

The query's scopes and time apply in SQL to both signals, so a message
outside them is never a candidate, found by keywords or by meaning. A
query vector is used only when the model has message vectors of its
length: otherwise the search is keywords only, as SQLite's log answers
before its first message vector or for another model's query.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
import contextlib
from typing import Any, Final

from ..conversations import MessageHit, MessageQuery, StoredMessage
from ..errors import StoreError
from ..models import to_timestamp
from ..search import KEYWORD_POOL, SEMANTIC_POOL, Candidates, oversample
from ..store import validate_limit
from ..vectors import Readings, as_unit_vector
from .message_search import PostgresMessageSearch
from .message_vectors import PgMessageVectors

# The filters of a message query, messages as `m`, parameters from $2.
_WHERE: Final = (
    "($2::text[] IS NULL OR m.scope = ANY($2::text[])) "
    "AND ($3::float8 IS NULL OR m.created_at >= $3::float8)"
)

type GetMessages = Callable[[Sequence[int]], Awaitable[dict[int, StoredMessage]]]


async def message_search(
    query: MessageQuery,
    languages: tuple[str, Readings],
    keywords: PostgresMessageSearch,
    vectors: PgMessageVectors | None,
    get_messages: GetMessages,
) -> list[MessageHit]:
    """Find messages by keywords and meaning, scored like memories (0..1, best first).

    `languages` is the store's default language and how well the model
    reads each (`vectors.Readings`).
    """
    language, readings = languages
    validate_limit(query.limit)
    if query.scopes is not None and not query.scopes:
        return []
    words = query.text.strip() not in ("", "*")
    if not words and query.vector is None:
        return await keywords.recent(query)
    unit = None
    if query.vector is not None and vectors is not None:
        given = as_unit_vector(query.vector)
        if len(given) == await vectors.dim():
            unit = given
    scopes = None if query.scopes is None else list(query.scopes)
    since = to_timestamp(query.since)
    semantic_task: asyncio.Task[list[tuple[int, float]]] | None = None
    if unit is not None and vectors is not None:
        semantic_task = asyncio.create_task(
            vectors.semantic_pool(
                unit,
                (_WHERE, [scopes, since]),
                max(SEMANTIC_POOL, query.limit),
                oversample(words),
            )
        )
    try:
        keyword, terms = (
            await keywords.keyword_side(query, language) if words else ([], None)
        )
    except BaseException:
        if semantic_task is not None:
            semantic_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, StoreError):
                await semantic_task
        raise
    semantic = [] if semantic_task is None else await semantic_task
    pooled = {item_id for item_id, _score in semantic}
    similarity: dict[int, float] = {}
    if semantic and unit is not None and vectors is not None:
        late = [hit[0] for hit in keyword if hit[0] not in pooled]
        similarity = await vectors.exact_cosines(unit, late) if late else {}
    if len(keyword) >= max(KEYWORD_POOL, query.limit):
        have = {hit[0] for hit in keyword}
        keyword = keyword + await keywords.keyword_of(terms, sorted(pooled - have))
    candidates = Candidates(terms, keyword, semantic, similarity)
    scale: Any = None
    if unit is not None and vectors is not None and words:
        scale = readings.weigh(await vectors.scale(unit), query.language)
    ranked = [
        entry for entry in candidates.fused(scale) if entry.score >= query.min_score
    ][: query.limit]
    found = await get_messages([entry.id for entry in ranked])
    return [
        MessageHit(message=found[entry.id], score=entry.score, matched=entry.signals)
        for entry in ranked
        if entry.id in found
    ]
