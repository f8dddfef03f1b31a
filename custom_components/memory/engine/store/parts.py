"""What the database's holders see of it: derived data, erase listeners, access.

The database is held, not inherited (`database.py`): `DerivedData` is
what registers with it to be built at open and released at close (the
memories' vector index), `DatabaseAccess` the narrow part that engine
modules keeping their own tables use (the `Database` and the `MemoryStore`
facade both offer it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
import contextlib
from typing import Protocol

import aiosqlite

# Awaited with the scopes whose text was just erased for good (a purge, the
# conversation retention), after the erase is committed. The export mirror
# rewrites its files with it; a listener that could not make its copies go
# raises a `StoreError`, which the erasing call then raises.
type EraseListener = Callable[[frozenset[str]], Awaitable[None]]


class DerivedData(Protocol):
    """Data built from the tables at open (an index), released at close."""

    @property
    def loaded(self) -> bool:
        """Whether it was built since the database opened."""
        ...

    async def load(self) -> None:
        """Build it from the tables; called with writes held."""
        ...

    async def close(self) -> None:
        """Release it; the database is closing."""
        ...


class DatabaseAccess(Protocol):
    """What engine modules keeping their own tables use of the database."""

    @property
    def language(self) -> str:
        """The language of texts that come without their own."""
        ...

    @property
    def reader(self) -> aiosqlite.Connection:
        """The read-only connection."""
        ...

    def transaction(
        self,
    ) -> contextlib.AbstractAsyncContextManager[aiosqlite.Connection]:
        """One write transaction under the single-writer lock."""
        ...

    async def erased(self, scopes: Iterable[str]) -> None:
        """Tell the erase listeners which scopes lost text for good."""
        ...

    async def truncate_wal(self) -> None:
        """Erase what deleted rows left in the write-ahead log."""
        ...
