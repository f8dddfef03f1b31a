"""The memory store: the one object callers hold for the memories database.

A thin facade: the database's life cycle (`database.py`), the memories'
vectors (`memory_vectors.py`), the `memories` table (`memories.py`,
`memory_rows.py`) and hybrid search (`search.py`) are built up in layers,
each a class of its own module; consolidation's reads
(`consolidation_queries.py`) and paged browsing (`browse.py`) are reached
through it too.
"""

from __future__ import annotations

from collections.abc import Sequence

from .models import MemoryItem, Vector
from .search import MemorySearch
from .store import (
    BATCH,
    BrowsePage,
    BrowseQuery,
    active_by_topic,
    browse,
    find_active,
    history,
    pending,
    prepare,
    stored_vectors,
    write,
)


class MemoryStore(MemorySearch):
    """Stores, finds and forgets memories in one SQLite database file."""

    async def find_active(self, scope: str, content: str) -> MemoryItem | None:
        """Find the active memory of `scope` whose text normalises like `content`."""
        _writer, reader = self._require()
        return await find_active(reader, scope, content)

    async def active_by_topic(self, scope: str, topic: str) -> list[MemoryItem]:
        """Active memories of `scope` with this exact topic, newest first."""
        _writer, reader = self._require()
        return await active_by_topic(reader, scope, topic)

    async def stored_vectors(self, ids: Sequence[int]) -> dict[int, Vector]:
        """Read the active model's unit vectors of `ids` (those that have one)."""
        _writer, reader = self._require()
        return await stored_vectors(reader, self._model, ids)

    async def reanalyse(self, limit: int = BATCH) -> int:
        """Redo the search terms of up to `limit` rows of an older analysis.

        Memories first, then messages; returns how many rows were read (0
        when none are left). See `reanalysis.py`.
        """
        _writer, reader = self._require()
        updates = await prepare(reader, self.language, limit)
        done = sum(map(len, updates))
        if done:
            async with self.transaction() as conn:
                await write(conn, updates)
        return done

    async def pending_analysis(self) -> int:
        """Rows whose search terms are not of the current analysis yet."""
        _writer, reader = self._require()
        return await pending(reader)

    async def browse(self, query: BrowseQuery) -> BrowsePage:
        """Return one page of memories in an order, and how many match (`browse.py`)."""
        _writer, reader = self._require()
        return await browse(reader, query, self._clock())

    async def history(
        self, item: MemoryItem
    ) -> tuple[list[MemoryItem], list[MemoryItem]]:
        """Return what `item` superseded, oldest first, and what superseded it."""
        _writer, reader = self._require()
        return await history(reader, item)
