"""Tests of `opening.opened`: what an opening opens is closed if its opener is cancelled."""

from __future__ import annotations

import asyncio

import pytest

from custom_components.memory.engine.opening import opened


class _Opening:
    """An opening that finishes when the test says, and what was closed."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.finish: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.closed: list[str] = []

    async def open(self) -> str:
        self.started.set()
        return await self.finish

    async def close(self, handle: str) -> None:
        self.closed.append(handle)


async def _cancelled_midway(opening: _Opening) -> asyncio.Task[str]:
    """Start `opened` on the opening and cancel it while the opening runs."""
    task = asyncio.create_task(opened(opening.open(), opening.close))
    await opening.started.wait()
    task.cancel()
    await asyncio.sleep(0)
    return task


async def test_an_opening_not_cancelled_is_returned_open() -> None:
    """Nothing cancelled: the handle comes back, nothing is closed."""
    opening = _Opening()
    opening.finish.set_result("file")
    assert await opened(opening.open(), opening.close) == "file"
    assert opening.closed == []


async def test_a_cancelled_opener_closes_what_opens_then_stops() -> None:
    """Cancelled mid-way: the opening goes on, its handle is closed, the cancel stands."""
    opening = _Opening()
    task = await _cancelled_midway(opening)
    assert not task.done()  # still waiting for the opening to finish
    opening.finish.set_result("file")
    with pytest.raises(asyncio.CancelledError):
        _handle = await task
    assert opening.closed == ["file"]


async def test_an_opening_that_fails_after_a_cancel_closes_nothing() -> None:
    """Cancelled, then the opening fails: nothing to close, the cancel stands."""
    opening = _Opening()
    task = await _cancelled_midway(opening)
    opening.finish.set_exception(OSError("disk gone"))
    with pytest.raises(asyncio.CancelledError):
        _handle = await task
    assert opening.closed == []
