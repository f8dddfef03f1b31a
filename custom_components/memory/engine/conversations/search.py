"""Message search: the conversation log found by keywords and by meaning.

FTS5 ranks messages by keywords; with an embedding model, user and assistant
messages also have vectors (made by `embedding_queue.py`, kept in
`message_embeddings`), and a query vector ranks them by meaning, both fused
as memories are: the messages are a corpus of the one hybrid search
(`search.HybridSearch`; `MessageCorpus` says what is theirs). The vectors are
searched through an in-memory int8 index (`NumpyIndex`) that is derived
data: it catches up from the table on each semantic search, and purges take
their ids out of it; a sample of the vectors it read
(`cosine_scale.CosineScale`) tells fusion how unrelated messages score.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import aiosqlite
import numpy as np

from ..memory_store import MemoryStore
from ..models import Vector, to_timestamp
from ..search import (
    MATCH_BUDGET,
    Candidates,
    HybridSearch,
    Ranked,
    Request,
    Tables,
    Vectors,
)
from ..sql import placeholders, read_one, read_pages
from ..store import validate_limit
from ..vectors import CosineScale, NumpyIndex, Scale, as_unit_vector
from .records import (
    MESSAGE_COLUMNS,
    MessageHit,
    MessageQuery,
    messages_by_id,
    row_to_message,
)

# FTS5 column weights: terms (the analysed content), data (tool calls and
# results, plain words).
BM25_WEIGHTS: Final = (1.0, 0.3)
MESSAGE_TABLES: Final = Tables(
    rows="conversation_messages",
    fts="conversation_messages_fts",
    embeddings="message_embeddings",
    key="message_id",
    bm25="bm25(conversation_messages_fts, "
    + ", ".join(str(weight) for weight in BM25_WEIGHTS)
    + ")",
)
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
        self._hybrid = HybridSearch(MESSAGE_TABLES)

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
        request = Request(
            text=query.text,
            vector=query.vector,
            language=query.language,
            limit=query.limit,
            min_score=query.min_score,
            where=" AND ".join(clauses) or "1",
            params=params,
        )
        return await self._hybrid.search(MessageCorpus(self), request)

    @property
    def store(self) -> MemoryStore:
        """The store whose log this searches."""
        return self._store

    @property
    def cosine_scale(self) -> CosineScale:
        """The sample of the indexed vectors: how unrelated messages score."""
        return self._scale

    async def vector_index(self) -> tuple[str, int, NumpyIndex] | None:
        """Return the index of the store's model, caught up with the table."""
        model = self._store.model
        if model is None:
            return None
        reader = self._store.reader
        async with self._index_lock:
            if self._index is None:
                row = await read_one(
                    reader,
                    "SELECT dim, (SELECT count(*) FROM message_embeddings "
                    "WHERE model = ?) FROM embedding_models WHERE model = ?",
                    (model, model),
                )
                if row is None:
                    return None  # nothing embedded by this model yet
                self._dim = int(row[0])
                self._index = NumpyIndex(self._dim, capacity=int(row[1]))
                self._scale = CosineScale()
                self._indexed = 0
            index = self._index
            # `+model`: each page a range of the row ids, not a sort of all
            # the model's rows (its unique index would be chosen otherwise).
            async for rows in read_pages(
                reader,
                "SELECT id, message_id, vector FROM message_embeddings "
                "WHERE +model = ? AND id > ? ORDER BY id LIMIT ?",
                (model,),
                key=self._indexed,
                size=_LOAD_BATCH,
            ):
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


@dataclass(frozen=True, slots=True)
class MessageCorpus:
    """The conversation log of one store, as a search sees it (`hybrid.Corpus`)."""

    search: MessageSearch
    match_budget: int = MATCH_BUDGET

    @property
    def reader(self) -> aiosqlite.Connection:
        """The store's reader: keywords, vectors and completion all read it."""
        return self.search.store.reader

    @property
    def language(self) -> str:
        """The store's default language."""
        return self.search.store.language

    async def recent(
        self, where: str, params: list[Any], limit: int
    ) -> list[MessageHit]:
        """Return the newest messages passing the filters."""
        rows = await self.reader.execute_fetchall(
            f"SELECT {MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
            "JOIN conversations c ON c.id = m.conversation "
            f"WHERE {where} ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
            [*params, limit],
        )
        return [MessageHit(message=row_to_message(row), score=1.0) for row in rows]

    async def vectors(self, vector: Vector | None) -> Vectors | None:
        """Return the query's unit vector and the message index, caught up.

        None without a vector, before any message has one of the store's
        model, or for another model's query: keywords only.
        """
        if vector is None:
            return None
        found = await self.search.vector_index()
        if found is None:
            return None
        model, dim, index = found
        unit = as_unit_vector(vector)
        if len(unit) != dim:
            return None  # not this model's query: keywords only
        return Vectors(unit, index, model, self.reader)

    def scale(self, unit: Vector, language: str | None) -> Scale | None:
        """How unrelated messages score with this query, and the language's trust."""
        readings = self.search.store.database.readings
        return readings.weigh(self.search.cosine_scale.scale(unit), language)

    async def refine(
        self,
        search: HybridSearch,
        request: Request,
        candidates: Candidates,
        ranking: tuple[list[Ranked], Scale | None],
    ) -> list[Ranked]:
        """Return the ranking as it is: messages have no step of their own."""
        del search, request, candidates
        return ranking[0]

    async def hits(self, ranked: Sequence[Ranked]) -> list[MessageHit]:
        """Return the ranked messages as hits (messages gone meanwhile left out)."""
        found = await messages_by_id(self.reader, [entry.id for entry in ranked])
        return [
            MessageHit(
                message=found[entry.id], score=entry.score, matched=entry.signals
            )
            for entry in ranked
            if entry.id in found
        ]
