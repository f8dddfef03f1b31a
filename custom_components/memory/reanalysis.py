"""Search terms brought up to the current language analysers, in the background.

After the upgrade to per-language keyword search, and whenever the analysers
change, stored memories and messages are re-analysed in batches
(`MemoryStore.reanalyse`). It runs as a task after set-up, so set-up never
waits for it, and stops when the entry unloads; what is left is done at the
next start.
"""

from __future__ import annotations

import asyncio
import logging

from .engine import MemoryStore, StoreError

_LOGGER = logging.getLogger(__name__)


async def async_reanalyse(store: MemoryStore) -> int:
    """Re-analyse every row of an older analysis; return how many were done."""
    done = 0
    try:
        while count := await store.reanalyse():
            done += count
            await asyncio.sleep(0)  # let searches and writes in between
    except StoreError as err:
        # Closed meanwhile, or the disk is full: the rest waits for next time.
        _LOGGER.warning(
            "Updating the search terms of stored memories stopped (%s); "
            "it resumes at the next start",
            type(err).__name__,
        )
    if done:
        _LOGGER.info("Search terms of %d memories and messages updated", done)
    return done
