"""numpy's BLAS on one thread in the process that runs the engine.

numpy hands a matrix product to its BLAS library (OpenBLAS in the wheels
Home Assistant installs), which splits a large enough product over one
thread per core and keeps those threads spinning for a while after it. The
engine's products are small (a batch of 500 vectors turned by 64 x 64
rotations, a query against a short list of codes, a 6-layer encoder over
a sentence), and Home Assistant's own work shares the cores: on the 2-core
machine the second BLAS thread made nothing faster and cost a great deal
(docs/benchmarks/engine.md, "#25: numpy's BLAS on one thread"): a bulk add
with vectors took 128 µs of CPU a memory instead of 56, and the built-in
encoder's query 14 ms instead of 8.

OpenBLAS keeps one thread count for the whole process, so
`use_one_blas_thread` sets it once, for good: every other numpy user in
Home Assistant's process runs its products on one thread too (README,
"Performance"). Call it on the main thread (the event loop): once that
thread had set a count, a count set from another thread did not take,
here. Finding the libraries (`find_blas`, ~10 ms: threadpoolctl reads the
process's loaded libraries) may run on any thread first. Where
threadpoolctl finds no BLAS library it changes nothing.
"""

from __future__ import annotations

import importlib
import logging
import threading
from typing import Any, Final

_LOGGER: Final = logging.getLogger(__name__)
_LOCK: Final = threading.Lock()
# The controller of numpy's BLAS libraries once found (None: none found),
# and whether the count was set.
_found: list[Any] = []
_done: list[bool] = []


def find_blas() -> Any:
    """Find numpy's BLAS libraries once (threadpoolctl's controller, or None)."""
    with _LOCK:
        if not _found:
            try:
                threadpoolctl = importlib.import_module("threadpoolctl")
                _found.append(threadpoolctl.ThreadpoolController())
            except Exception as err:  # noqa: BLE001 - a speed-up, never a failure
                _LOGGER.debug("numpy's BLAS threads left as they are: %s", err)
                _found.append(None)
        return _found[0]


def use_one_blas_thread() -> None:
    """Set numpy's BLAS libraries to one thread (the first call only)."""
    controller = find_blas()
    with _LOCK:
        if _done or controller is None:
            return
        _done.append(True)
        try:
            controller.limit(limits=1, user_api="blas")
        except Exception as err:  # noqa: BLE001 - a speed-up, never a failure
            _LOGGER.debug("numpy's BLAS threads left as they are: %s", err)
