"""Where a model's cosines start to mean something: how unrelated texts score.

Each embedding model has its own scale. all-MiniLM-L6-v2 gives two
unrelated sentences a cosine near 0.1; multilingual-e5-small gives them
0.7 to 0.8, and its best match rarely passes 0.9. A fusion that divides a
cosine by the best one (0.8 / 0.9) cannot tell e5's unrelated texts from
its close ones; it needs the level an unrelated pair reaches with *this*
model, on *this* household's texts, and how far around it they scatter.

`CosineScale` keeps a sample of a model's stored unit vectors (every one up
to SAMPLE_SIZE, then a reservoir sample: deterministic, each vector equally
likely to be kept). A query's cosines with the sample give its unrelated
level (their mean: in a household almost every memory is unrelated to any
one question) and their spread (standard deviation), in one small matrix
product. Both move with the model's scale: if every cosine were compressed
or shifted (`a * cos + b`, `a > 0`), the level would move the same way and
the spread would scale by `a`, so scores measured in them keep their order.
"""

from __future__ import annotations

from dataclasses import dataclass
import random
from typing import Final

import numpy as np
import numpy.typing as npt

from ..models import Vector

# Below this many stored vectors the sample is mostly the few memories the
# query may be about: no scale (fusion then measures from its candidates).
MIN_VECTORS: Final = 8
# Vectors kept (0.75 MB at 384 dimensions); households below it are exact.
SAMPLE_SIZE: Final = 512
# The reservoir's draws are seeded: the same writes keep the same sample.
_SEED: Final = 0x5EED


@dataclass(frozen=True, slots=True)
class Scale:
    """A query's cosines with unrelated texts: their mean and spread.

    `trust` is how well the model reads the query's language, the share of
    its weight the semantic signal keeps in fusion (`embedding/reading.py`;
    1 when unmeasured).
    """

    level: float
    spread: float
    trust: float = 1.0


class CosineScale:
    """A bounded, deterministic sample of one model's stored unit vectors."""

    __slots__ = ("_random", "_rows", "_sample", "_seen")

    def __init__(self) -> None:
        """Start empty: no scale until MIN_VECTORS vectors were added."""
        self._sample: npt.NDArray[np.float32] | None = None
        self._rows = 0  # rows of the sample in use
        self._seen = 0  # vectors offered since the start
        self._random = random.Random(_SEED)  # noqa: S311 - a sample, not a secret

    @property
    def count(self) -> int:
        """How many vectors the sample was drawn from."""
        return self._seen

    def add(self, vectors: npt.NDArray[np.float32]) -> None:
        """Offer unit vectors (rows); another dimension starts the sample again."""
        if vectors.ndim != 2 or not len(vectors):
            return
        if self._sample is None or self._sample.shape[1] != vectors.shape[1]:
            self._sample = np.empty((SAMPLE_SIZE, vectors.shape[1]), dtype=np.float32)
            self._rows = self._seen = 0
        for row in vectors:
            self._seen += 1
            if self._rows < SAMPLE_SIZE:
                self._sample[self._rows] = row
                self._rows += 1
                continue
            slot = self._random.randrange(self._seen)
            if slot < SAMPLE_SIZE:
                self._sample[slot] = row

    def choose(self, count: int, dim: int) -> list[int]:
        """Start again, offering `count` vectors by position only; give what is kept.

        The same draws as `add` of `count` rows: item `slot` of the answer is
        the position (0 to count - 1) of the row that slot keeps. `fill`
        then gives their values, so a caller holding the rows elsewhere
        (the store, at open) reads only the sample's.
        """
        self._sample = np.zeros((SAMPLE_SIZE, dim), dtype=np.float32)
        self._rows = self._seen = 0
        positions: list[int] = []
        for position in range(count):
            self._seen += 1
            if self._rows < SAMPLE_SIZE:
                positions.append(position)
                self._rows += 1
                continue
            slot = self._random.randrange(self._seen)
            if slot < SAMPLE_SIZE:
                positions[slot] = position
        return positions

    def fill(self, vectors: npt.NDArray[np.float32]) -> None:
        """Set the rows `choose` kept, slot by slot (`vectors[slot]`)."""
        if self._sample is None or vectors.shape != (self._rows, self._sample.shape[1]):
            raise ValueError("fill takes one row per slot that choose kept")
        self._sample[: self._rows] = vectors

    def scale(self, unit: Vector) -> Scale | None:
        """Give the query's level and spread among unrelated texts (None: too few)."""
        if self._sample is None or self._rows < MIN_VECTORS:
            return None
        if self._sample.shape[1] != unit.shape[0]:
            return None
        cosines = self._sample[: self._rows] @ unit
        return Scale(float(cosines.mean()), float(cosines.std()))
