"""The memory store: the one object the Home Assistant side holds for the database.

A small facade built from parts, each holding what it needs instead of
inheriting it: the `Database` (connections, the writes' lock, listeners,
life cycle), `MemoryVectors` (the memories' vectors and their index,
derived data the database loads and closes), `MemoryTable` (the
`memories` table), `MemoryCuration` (changes by hand) and `MemorySearch`
(hybrid search). Consolidation's reads (`store.lookups`), paged browsing
(`store.browse`), the exports' reads (`store.exports`) and re-analysis are
reached through it too. Engine
modules that keep their own tables take the `database` (or anything that
offers `store.DatabaseAccess`, this facade included).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
import contextlib
from datetime import datetime
from pathlib import Path
import time
from typing import Literal

import aiosqlite
import numpy.typing as npt

from .languages import DEFAULT_LANGUAGE
from .models import (
    AddResult,
    MemoryItem,
    MemoryType,
    NewMemory,
    SearchHit,
    SearchQuery,
    StoreStats,
    Vector,
    to_timestamp,
)
from .search import MemorySearch
from .store import (
    BATCH,
    BackendChoice,
    BrowsePage,
    BrowseQuery,
    Database,
    EarlierConversation,
    EarlierQuery,
    EraseListener,
    IntegrityCheck,
    MemoryCuration,
    MemoryTable,
    MemoryVectors,
    active_by_topic,
    active_scopes,
    browse,
    browse_all,
    count_changed,
    earlier_conversations,
    find_active,
    history,
    pending,
    prepare,
    stored_vectors,
    write,
)
from .vectors import Readings, Scale, find_blas, use_one_blas_thread


class MemoryStore:
    """Stores, finds and forgets memories in one SQLite database file."""

    def __init__(
        self,
        path: str | Path,
        *,
        model: str | None = None,
        vector_backend: BackendChoice = "auto",
        clock: Callable[[], float] = time.time,
        language: str = DEFAULT_LANGUAGE,
    ) -> None:
        """Build the parts; nothing touches the disk until `open` (see `Database`)."""
        self.database = Database(
            path,
            model=model,
            vector_backend=vector_backend,
            clock=clock,
            language=language,
        )
        self.vectors = MemoryVectors(self.database)
        self.memories = MemoryTable(self.database, self.vectors)
        self.curation = MemoryCuration(self.database, self.memories)
        self.finder = MemorySearch(self.database, self.vectors, self.memories)

    # -- the database -------------------------------------------------------

    @property
    def path(self) -> Path:
        """The database file."""
        return self.database.path

    @property
    def language(self) -> str:
        """Home Assistant's language: of texts that come without their own."""
        return self.database.language

    @property
    def model(self) -> str | None:
        """The embedding model searches use."""
        return self.database.model

    @property
    def readings(self) -> Readings:
        """How well the model reads each language (measured by the embedding worker)."""
        return self.database.readings

    @property
    def vector_backend(self) -> str:
        """The vector backend in use (or that would be used once vectors exist)."""
        return self.database.vector_backend

    @property
    def last_check(self) -> IntegrityCheck | None:
        """The last integrity check's result (at open, or `check_integrity`)."""
        return self.database.last_check

    @property
    def reader(self) -> aiosqlite.Connection:
        """The read-only connection: sees committed data, never waits for writes."""
        return self.database.reader

    async def open(self, *, defer_index: bool = False) -> None:
        """Open, check and migrate the file; build the vector index (`Database.open`).

        First numpy's BLAS is set to one thread (`vectors.use_one_blas_thread`,
        on the calling thread: the event loop's).
        """
        await asyncio.to_thread(find_blas)
        use_one_blas_thread()
        await self.database.open(defer_index=defer_index)

    async def load_index(self) -> None:
        """Load the vector index `open(defer_index=True)` left; harmless twice."""
        await self.database.load_index()

    async def close(self) -> None:
        """Close the connections and release the index; safe to call twice."""
        await self.database.close()

    def transaction(
        self,
    ) -> contextlib.AbstractAsyncContextManager[aiosqlite.Connection]:
        """Run one write transaction under the single-writer lock."""
        return self.database.transaction()

    async def pause_writes(self) -> None:
        """Fold the WAL into the main file and hold writes until resumed."""
        await self.database.pause_writes()

    def resume_writes(self) -> None:
        """Let writes continue after `pause_writes`; harmless when not paused."""
        self.database.resume_writes()

    async def truncate_wal(self) -> None:
        """Erase what deleted rows left in the write-ahead log."""
        await self.database.truncate_wal()

    async def check_integrity(self) -> IntegrityCheck:
        """Check every page now, on a connection of its own."""
        return await self.database.check_integrity()

    def database_bytes(self) -> int:
        """Size on disk of the database and its write-ahead log."""
        return self.database.database_bytes()

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` after every committed change; returns a remover."""
        return self.database.add_listener(listener)

    def add_erase_listener(self, listener: EraseListener) -> Callable[[], None]:
        """Await `listener` after every erase for good; returns a remover."""
        return self.database.add_erase_listener(listener)

    async def erased(self, scopes: Iterable[str]) -> None:
        """Tell the erase listeners which scopes lost text for good."""
        await self.database.erased(scopes)

    # -- the memories -------------------------------------------------------

    async def add(
        self, memory: NewMemory, *, vector: npt.ArrayLike | None = None
    ) -> AddResult:
        """Add one memory, or return its active twin in the same scope."""
        return await self.memories.add(memory, vector=vector)

    async def add_many(
        self,
        memories: Sequence[NewMemory],
        *,
        vectors: Sequence[npt.ArrayLike | None] | None = None,
    ) -> list[AddResult]:
        """Add memories in one transaction (`MemoryTable.add_many`)."""
        return await self.memories.add_many(memories, vectors=vectors)

    async def forget(self, ids: Sequence[int], *, purge: bool = False) -> list[int]:
        """Archive memories, or with `purge` erase every copy of them."""
        return await self.memories.forget(ids, purge=purge)

    async def expire_due(self) -> list[int]:
        """Archive active memories whose expiry time has passed."""
        return await self.memories.expire_due()

    async def mark_recalled(self, ids: Sequence[int]) -> None:
        """Record that memories were put into a prompt."""
        await self.memories.mark_recalled(ids)

    async def get(self, item_id: int) -> MemoryItem | None:
        """One memory by id, whatever its status."""
        return await self.memories.get(item_id)

    async def get_many(
        self, ids: Sequence[int], *, conn: aiosqlite.Connection | None = None
    ) -> dict[int, MemoryItem]:
        """Memories by id; missing ids are absent from the result."""
        return await self.memories.get_many(ids, conn=conn)

    async def supersede(
        self, old_id: int, new: NewMemory, *, also: Sequence[int] = ()
    ) -> tuple[MemoryItem, MemoryItem]:
        """Add `new` and mark `old_id` (and `also`) superseded by it, atomically."""
        return await self.memories.supersede(old_id, new, also=also)

    async def update_content(
        self,
        item_id: int,
        *,
        content: str,
        confidence: float | None = None,
        topic: str | None = None,
    ) -> MemoryItem:
        """Reword an active memory in place (`MemoryTable.update_content`)."""
        return await self.memories.update_content(
            item_id, content=content, confidence=confidence, topic=topic
        )

    async def update_details(
        self,
        item_id: int,
        *,
        kind: MemoryType | None = None,
        tags: Sequence[str] | None = None,
        expires_at: datetime | Literal["keep"] | None = "keep",
        scope: str | None = None,
    ) -> MemoryItem:
        """Change an active memory's type, tags, expiry or owner, in place."""
        return await self.curation.update_details(
            item_id, kind=kind, tags=tags, expires_at=expires_at, scope=scope
        )

    async def restore(self, ids: Sequence[int]) -> list[int]:
        """Bring archived memories back; active ones are left as they are."""
        return await self.curation.restore(ids)

    async def stats(self) -> StoreStats:
        """Return counts and sizes for sensors and diagnostics (never content)."""
        return await self.memories.stats()

    # -- vectors and search -------------------------------------------------

    async def set_vectors(self, vectors: Mapping[int, npt.ArrayLike]) -> None:
        """Store (or replace) vectors of the store's model for existing items."""
        await self.vectors.set_vectors(vectors)

    def cosine_scale(self, unit: Vector) -> Scale | None:
        """Give how a unit query scores with unrelated memories (active model)."""
        return self.vectors.cosine_scale(unit)

    @property
    def match_budget(self) -> int:
        """Rows a keyword MATCH may find (`search.keywords.MATCH_BUDGET`)."""
        return self.finder.match_budget

    @match_budget.setter
    def match_budget(self, budget: int) -> None:
        self.finder.match_budget = budget

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        """Find memories: keyword, semantic or both, fused into one ranking."""
        return await self.finder.search(query)

    # -- lookups, browsing, re-analysis -------------------------------------

    async def find_active(self, scope: str, content: str) -> MemoryItem | None:
        """Find the active memory of `scope` whose text normalises like `content`."""
        return await find_active(self.reader, scope, content)

    async def active_by_topic(self, scope: str, topic: str) -> list[MemoryItem]:
        """Active memories of `scope` with this exact topic, newest first."""
        return await active_by_topic(self.reader, scope, topic)

    async def stored_vectors(self, ids: Sequence[int]) -> dict[int, Vector]:
        """Read the active model's unit vectors of `ids` (those that have one)."""
        return await stored_vectors(self.reader, self.model, ids)

    async def reanalyse(self, limit: int = BATCH) -> int:
        """Redo the search terms of up to `limit` rows of an older analysis.

        Memories first, then messages; returns how many rows were read (0
        when none are left). See `reanalysis.py`.
        """
        updates = await prepare(self.reader, self.language, limit)
        done = sum(map(len, updates))
        if done:
            async with self.transaction() as conn:
                await write(conn, updates)
        return done

    async def pending_analysis(self) -> int:
        """Rows whose search terms are not of the current analysis yet."""
        return await pending(self.reader)

    async def browse(self, query: BrowseQuery) -> BrowsePage:
        """Return one page of memories in an order, and how many match (`browse.py`)."""
        return await browse(self.reader, query, self.database.now())

    async def history(
        self, item: MemoryItem
    ) -> tuple[list[MemoryItem], list[MemoryItem]]:
        """Return what `item` superseded, oldest first, and what superseded it."""
        return await history(self.reader, item)

    # -- what the exports read (`store.exports`) ----------------------------

    async def browse_all(
        self, query: BrowseQuery, *, now: datetime | None = None
    ) -> list[MemoryItem]:
        """Every memory `query`'s filters select, by id, on no page.

        Its order, limit and cursor are not used; `now` (default: the
        store's clock) is when `active` memories must not have expired.
        """
        moment = to_timestamp(now)
        return await browse_all(
            self.reader, query, self.database.now() if moment is None else moment
        )

    async def count_changed(
        self, scope: str, since: datetime | None, *, types: Sequence[MemoryType]
    ) -> int:
        """How many of `scope`'s memories of `types` were added or changed after `since`."""
        return await count_changed(self.reader, scope, to_timestamp(since), types)

    async def active_scopes(self) -> list[str]:
        """List the scopes that have an active memory, sorted."""
        return await active_scopes(self.reader)

    async def earlier(self, query: EarlierQuery) -> list[EarlierConversation]:
        """Return a speaker's recent conversations, summaries, turns (recall's "Earlier")."""
        return await earlier_conversations(self.reader, query)
