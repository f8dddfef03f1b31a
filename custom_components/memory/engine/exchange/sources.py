"""What the exports read, whichever backend holds the memories.

`MemorySource` is the part of a memory store the exports and the profile
keeper read: `MemoryStore` (SQLite) and `PostgresStore` both offer it, so
`memories.json` and `MEMORY.md` are written alike from either.
`ConversationSource` is the part of a conversation log the day files read:
`ConversationLog` and `PostgresConversationLog` both offer it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from ..conversations import StoredConversation, StoredMessage
from ..models import MemoryItem, MemoryType
from ..store import BrowseQuery


class MemorySource(Protocol):
    """A memory store's reads for the exports."""

    async def browse_all(
        self, query: BrowseQuery, *, now: datetime | None = None
    ) -> list[MemoryItem]:
        """Every memory `query`'s filters select, by id, on no page."""
        ...

    async def count_changed(
        self, scope: str, since: datetime | None, *, types: Sequence[MemoryType]
    ) -> int:
        """How many of `scope`'s memories of `types` changed after `since`."""
        ...

    async def active_scopes(self) -> list[str]:
        """List the scopes that have an active memory, sorted."""
        ...


class ConversationSource(Protocol):
    """A conversation log's reads for the day files."""

    async def conversations(
        self,
        *,
        scopes: tuple[str, ...] | None = None,
        since: datetime | None = None,
        ended: bool | None = None,
        limit: int = 100,
    ) -> list[StoredConversation]:
        """Conversations updated since a time, newest first."""
        ...

    async def messages_of(
        self, conversations: Sequence[int]
    ) -> dict[int, list[StoredMessage]]:
        """Every message of these conversations, oldest first in each."""
        ...
