"""Opening something that goes on elsewhere, closed again if the opener is cancelled.

Some openings run where cancelling the awaiting task cannot stop them: an
aiosqlite connection opens its file on its own thread, the model download
opens its `.part` file in an executor. A task cancelled meanwhile (Home
Assistant stopping, an entry unloaded during set-up) stops waiting, but the
file is opened anyway, and nobody closes it: it is left to the garbage
collector, open. `opened` waits for such an opening even then, closes what
it opened, and only then lets the cancellation go on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
import contextlib


async def opened[T](
    opening: Awaitable[T], close: Callable[[T], Awaitable[object]]
) -> T:
    """Return what `opening` opens; if cancelled meanwhile, `close` it first.

    An opening that fails after the cancellation leaves nothing to close;
    the cancellation goes on either way.
    """
    task = asyncio.ensure_future(opening)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):  # a failed opening left nothing
            await close(await asyncio.shield(task))
        raise
