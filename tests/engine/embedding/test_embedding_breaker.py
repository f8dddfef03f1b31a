"""The embedding provider's circuit breaker, on a fake clock (no provider)."""

from __future__ import annotations

import numpy as np

from custom_components.memory.engine.embedding.breaker import CircuitBreaker
from custom_components.memory.engine.embedding.providers import CannotConnectError
from tests.engine.conftest import FakeClock, fresh_bool


def test_breaker_backoff_is_capped(clock: FakeClock) -> None:
    """Probes back off exponentially up to the maximum delay."""
    breaker = CircuitBreaker(clock, base_delay=10, max_delay=40)
    assert breaker.seconds_to_probe() == 0.0
    error = CannotConnectError("down")
    delays = []
    for _ in range(5):
        breaker.record_failure(error)
        delays.append(breaker.seconds_to_probe())
    assert delays == [10, 20, 40, 40, 40]
    assert not breaker.probe_due
    clock.advance(40)
    assert fresh_bool(breaker.probe_due)
    remove = breaker.add_listener(lambda: None)
    remove()
    breaker.record_success()
    assert breaker.closed
    assert breaker.failures == 0
    breaker.record_success()  # no change, no notification
    assert np.isclose(breaker.seconds_to_probe(), 0.0)
