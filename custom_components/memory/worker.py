"""What every background worker shares: what it subscribed to, released on stop.

Capture, digestion, embedding and profiles each run beside the store from
set-up until the entry unloads. Each gets what it uses passed to its
constructor (never looked up through the entry), keeps its subscriptions and
timers with `_hold`, and releases them all with `_release` when it stops.
`MemoryData.workers` lists them in the order they stop.
"""

from __future__ import annotations

from homeassistant.core import CALLBACK_TYPE, callback


class BackgroundWorker:
    """A worker started after set-up and stopped before the store closes."""

    def __init__(self) -> None:
        """Nothing held until the worker starts."""
        self._unsubscribers: list[CALLBACK_TYPE] = []

    @property
    def subscribed(self) -> bool:
        """Whether the worker holds subscriptions (it started, and did not stop)."""
        return bool(self._unsubscribers)

    @callback
    def _hold(self, *unsubscribers: CALLBACK_TYPE) -> None:
        """Keep what undoes a subscription or timer, for `_release`."""
        self._unsubscribers.extend(unsubscribers)

    @callback
    def _release(self) -> None:
        """Undo every subscription held, newest first; safe to call twice."""
        while self._unsubscribers:
            self._unsubscribers.pop()()

    async def async_stop(self) -> None:
        """Stop working; the store is still open."""
        raise NotImplementedError
