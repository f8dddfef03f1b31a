"""`StoreListeners`: who `PostgresStore` tells of changes and erases, its own or heard.

Listeners (`add_listener`, plain callables as `MemoryStore`'s) are called
after each of the store's committed writes (`changed`) and for each
`Change` its feed hears from another instance (`heard`). Erase listeners
(`add_erase_listener`) are awaited with the scopes that lost text for good
(`erased`); for another instance's erase, in a task of their own, with
every scope that has memories when the notice could not list them.
`PostgresStore` is one: it gives the query for those scopes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
import logging

from ..store import EraseListener
from .notify import Change

_LOGGER = logging.getLogger(__name__)


class StoreListeners:
    """Listeners of changes and of erases for good, and the erases under way."""

    def __init__(self, all_scopes: Callable[[], Awaitable[frozenset[str]]]) -> None:
        """Hold how to read every scope that has memories."""
        self._all_scopes = all_scopes
        self._listeners: list[Callable[[], None]] = []
        self._erase_listeners: list[EraseListener] = []
        # Erase listeners' calls for other instances' notices, under way.
        self._erasing: set[asyncio.Task[None]] = set()

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` after every committed change, this store's or another's."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def changed(self) -> None:
        """Tell the listeners a change was committed (the log's and queue's too)."""
        self._changed()

    def _changed(self) -> None:
        """Tell the listeners that a change was committed."""
        for listener in list(self._listeners):
            listener()

    def add_erase_listener(self, listener: EraseListener) -> Callable[[], None]:
        """Await `listener` after every erase for good, this store's or another's."""
        self._erase_listeners.append(listener)
        return lambda: self._erase_listeners.remove(listener)

    async def erased(self, scopes: Iterable[str]) -> None:
        """Tell the erase listeners which scopes lost text for good."""
        erased = frozenset(scopes)
        if not erased:
            return
        for listener in list(self._erase_listeners):
            await listener(erased)

    def _heard(self, change: Change) -> None:
        """Another instance wrote (or notices were lost): tell the listeners.

        Text it erased for good (a purge, a move to another scope, purged
        messages) goes to the erase listeners in a task of their own.
        """
        self._changed()
        if change.erased and self._erase_listeners:
            task = asyncio.get_running_loop().create_task(
                self._erased_elsewhere(change.scopes)
            )
            self._erasing.add(task)
            task.add_done_callback(self._erasing.discard)

    async def _erased_elsewhere(self, scopes: frozenset[str] | None) -> None:
        """Call the erase listeners for another instance's erase.

        A notice with too many scopes to list names none: then every scope
        that has memories is told.
        """
        try:
            await self.erased(await self._all_scopes() if scopes is None else scopes)
        except Exception:
            _LOGGER.exception("An erase listener failed on another instance's erase")

    async def _stop_erasing(self) -> None:
        """Cancel the erase listeners' calls under way and wait for them."""
        for task in list(self._erasing):
            task.cancel()
        await asyncio.gather(*self._erasing, return_exceptions=True)
