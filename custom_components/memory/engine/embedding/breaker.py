"""The circuit breaker that keeps recall fast while an embedding provider fails.

Once the provider fails, or a query embedding takes too long, the breaker
opens: queries get no vector (search answers from keywords at once) and the
provider is left alone until a probe, backing off from `BREAKER_BASE_DELAY`
to `BREAKER_MAX_DELAY`, finds it healthy again.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
import logging
import time
from typing import Final

from .providers import ProviderError

_LOGGER = logging.getLogger(__name__)

# Provider failures: probe again after 10 s, doubling up to 5 minutes.
BREAKER_BASE_DELAY: Final = 10.0
BREAKER_MAX_DELAY: Final = 300.0


class BreakerState(StrEnum):
    """Closed: requests flow. Open: the provider is left alone until a probe."""

    CLOSED = "closed"
    OPEN = "open"


class CircuitBreaker:
    """Remembers whether the provider works, and when to try it again."""

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        *,
        base_delay: float = BREAKER_BASE_DELAY,
        max_delay: float = BREAKER_MAX_DELAY,
    ) -> None:
        """Start closed: a provider is trusted until it fails."""
        self._clock = clock
        self._base_delay = base_delay
        self._max_delay = max_delay
        self.state = BreakerState.CLOSED
        self.failures = 0
        self.down_since: float | None = None
        self.retry_at = 0.0
        self.last_error: ProviderError | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def closed(self) -> bool:
        """Whether queries may use the provider."""
        return self.state is BreakerState.CLOSED

    @property
    def probe_due(self) -> bool:
        """Whether an open breaker's provider should be tried again now."""
        return not self.closed and self._clock() >= self.retry_at

    def seconds_to_probe(self) -> float:
        """Time left until the next probe (0 when closed or due)."""
        return 0.0 if self.closed else max(self.retry_at - self._clock(), 0.0)

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` after every change; returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def record_success(self) -> None:
        """Close: the provider answered."""
        if self.closed and self.failures == 0:
            return
        self.state = BreakerState.CLOSED
        self.failures = 0
        self.down_since = None
        self.last_error = None
        self._notify()

    def record_failure(self, error: ProviderError) -> None:
        """Open: the provider failed; probe again later, backing off."""
        now = self._clock()
        if self.closed:
            self.down_since = now
            _LOGGER.debug("Embedding provider failed, searching by keywords: %s", error)
        self.state = BreakerState.OPEN
        self.failures += 1
        delay = min(self._base_delay * 2.0 ** (self.failures - 1), self._max_delay)
        self.retry_at = now + delay
        self.last_error = error
        self._notify()

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()
