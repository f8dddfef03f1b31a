"""What recall and digestion ask of a memory store, as protocols either backend meets.

`MemoryReads` (search, memories by id, the store's language) is what a
turn's recall (`recall.turn`) and digestion's extraction read;
`MemoryCuration` adds what consolidation writes (twins, topics, vectors,
add, supersede, reword). `MemoryStore` (SQLite) and the postgres room's
`PostgresStore` both have these calls with the same results (the parity
tests in tests/engine/postgres hold them so), so the integration hands
either store to the engine without a cast, and mypy checks every call
against both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy.typing as npt

from .models import AddResult, MemoryItem, NewMemory, SearchHit, SearchQuery, Vector


class MemoryReads(Protocol):
    """Searches and reads memories."""

    @property
    def language(self) -> str:
        """The language of texts that come without their own."""
        ...

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        """Find memories: keyword, semantic or both, fused into one ranking."""
        ...

    async def get_many(self, ids: Sequence[int]) -> dict[int, MemoryItem]:
        """Memories by id; missing ids are absent from the result."""
        ...


class MemoryCuration(MemoryReads, Protocol):
    """Reads, and keeps memories current: what consolidation does to a store."""

    async def get(self, item_id: int) -> MemoryItem | None:
        """One memory by id, whatever its status."""
        ...

    async def find_active(self, scope: str, content: str) -> MemoryItem | None:
        """Find the active memory of `scope` whose text normalises like `content`."""
        ...

    async def active_by_topic(self, scope: str, topic: str) -> list[MemoryItem]:
        """Active memories of `scope` with this exact topic, newest first."""
        ...

    async def stored_vectors(self, ids: Sequence[int]) -> dict[int, Vector]:
        """Read the active model's unit vectors of `ids` (those that have one)."""
        ...

    async def add(
        self, memory: NewMemory, *, vector: npt.ArrayLike | None = None
    ) -> AddResult:
        """Add one memory, or return its active twin in the same scope."""
        ...

    async def supersede(
        self, old_id: int, new: NewMemory, *, also: Sequence[int] = ()
    ) -> tuple[MemoryItem, MemoryItem]:
        """Add `new` and mark `old_id` (and `also`) superseded by it, atomically."""
        ...

    async def update_content(
        self,
        item_id: int,
        *,
        content: str,
        confidence: float | None = None,
        topic: str | None = None,
    ) -> MemoryItem:
        """Reword an active memory in place."""
        ...
