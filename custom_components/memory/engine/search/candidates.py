"""What one hybrid search works on: its corpus's tables, its request, its candidates.

`hybrid.py` runs the search over these; `memories.py` and the conversation
messages' search build them. `stored_cosines` scores the vectors a statement
brought along with its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import aiosqlite
import numpy as np

from ..models import Vector
from ..vectors import Scale, VectorIndex
from .fusion import Ranked, fuse
from .keywords import KeywordQuery
from .semantic import row_cosines

# Candidates the keyword signal contributes before fusion (tuned by
# bench/locomo.py). Every candidate is then scored on both signals (keyword
# hits outside the semantic pool get their exact cosine), which makes the
# pools' size matter little: 50 and 200 gave the same recall on LoCoMo.
KEYWORD_POOL: Final = 50
# Keyword hits `(id, bm25, coverage)`, best first.
type KeywordHits = list[tuple[int, float, float]]


@dataclass(frozen=True, slots=True)
class Tables:
    """Where a corpus lives: its rows, their FTS5 index and their vectors.

    `rows` has `id` and `terms` (the analysed text the FTS5 index holds);
    `embeddings` has `model`, `vector` and the row's id in column `key`.
    """

    rows: str
    fts: str
    embeddings: str
    key: str
    # FTS5's rank of a match: `bm25(<fts>)`, with column weights if any.
    bm25: str
    # The FTS5 index holds `terms` alone: a row's terms say which query
    # terms it matches (`KeywordQuery.found`), no MATCH needed.
    terms_only: bool = False


@dataclass(frozen=True, slots=True)
class Request:
    """One search of a corpus, its filters already SQL (rows as `m`)."""

    text: str
    vector: Vector | None
    language: str | None
    limit: int
    min_score: float
    where: str
    params: list[Any]
    # A follow-up's earlier turns `(text, weight)` (`keywords.keyword_query`).
    earlier: Sequence[tuple[str, float]] = ()

    @property
    def words(self) -> bool:
        """Whether the query has text to match (not empty, not `*`)."""
        return self.text.strip() not in ("", "*")

    @property
    def pool(self) -> int:
        """The keyword pool: KEYWORD_POOL, or the limit if larger."""
        return max(KEYWORD_POOL, self.limit)


@dataclass(frozen=True, slots=True)
class Vectors:
    """A corpus's vectors for one query: its unit vector, index and model.

    `conn` reads the semantic pool (None: no pool, the keyword hits still
    get their cosines on the reader).
    """

    unit: Vector
    index: VectorIndex
    model: str
    conn: aiosqlite.Connection | None


@dataclass(slots=True)
class Candidates:
    """A search's candidates so far, on both signals."""

    keywords: KeywordQuery | None
    keyword: KeywordHits
    # The semantic pool `(id, cosine)`, best first.
    semantic: list[tuple[int, float]]
    # Cosines of candidates outside the semantic pool.
    similarity: dict[int, float] = field(default_factory=dict)
    # The query's vectors (None: keywords only).
    vectors: Vectors | None = None

    def fused(self, scale: Scale | None) -> list[Ranked]:
        """Both signals merged into one ranking (`fusion.fuse`)."""
        return fuse(self.keyword, self.semantic, self.similarity, scale, self.keywords)


def stored_cosines(
    rows: Sequence[Sequence[Any]], vectors: Vectors | None
) -> dict[int, float]:
    """Cosines with the query of the rows `(id, …, vector or NULL)` that hold one."""
    stored = [row for row in rows if row[3] is not None]
    if vectors is None or not stored:
        return {}
    matrix = np.frombuffer(b"".join(row[3] for row in stored), dtype=np.float32)
    scores = row_cosines(matrix.reshape(len(stored), -1), vectors.unit)
    return {
        int(row[0]): float(score) for row, score in zip(stored, scores, strict=True)
    }
