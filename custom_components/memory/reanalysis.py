"""Search terms brought up to the current language analysers, in the background.

After the upgrade to per-language keyword search, and whenever the analysers
change, stored memories and messages are re-analysed in batches
(`MemoryStore.reanalyse`). It runs as a task after set-up, so set-up never
waits for it, and stops when the entry unloads; what is left is done at the
next start. Then, once per version of the secret detector, vectors made
from a value it now redacts are queued to be made again
(`engine.secret_recheck`). On PostgreSQL only the secret recheck runs:
`PostgresStore` has no re-analysis yet, so its rows keep the terms of the
analysers that wrote them until it has one.
"""

from __future__ import annotations

import asyncio
import logging

from .engine import MemoryStore, StoreError
from .engine.embedding import recheck
from .engine.postgres import AnyStore

_LOGGER = logging.getLogger(__name__)


async def async_reanalyse(store: AnyStore) -> int:
    """Re-analyse every row of an older analysis; return how many were done."""
    done = checked = 0
    try:
        while isinstance(store, MemoryStore) and (count := await store.reanalyse()):
            done += count
            await asyncio.sleep(0)  # let searches and writes in between
        while count := await recheck(store):
            checked += count
            await asyncio.sleep(0)
    except StoreError as err:
        # Closed meanwhile, or the disk is full: the rest waits for next time.
        _LOGGER.warning(
            "Updating the search terms of stored memories stopped (%s); "
            "it resumes at the next start",
            type(err).__name__,
        )
    if done:
        _LOGGER.info("Search terms of %d memories and messages updated", done)
    if checked:
        _LOGGER.debug("%d memories and messages checked for secrets", checked)
    return done
