"""Search: keyword and vector candidates fused into one ranking.

`keywords` (a query's terms, weights, the bounded FTS5 MATCH), `semantic`
(the vector pool and exact cosines), `fusion` (both signals on their own
scales, combined), `hybrid` (the one hybrid search over a `Corpus`: memories
or conversation messages), `memories` (the memories' corpus and search).
"""

from .fusion import Ranked, fuse
from .hybrid import Candidates, Corpus, HybridSearch, Request, Tables, Vectors
from .keywords import (
    MATCH_BUDGET,
    KeywordQuery,
    RowCounter,
    TermCounts,
    idf,
    keyword_query,
)
from .memories import MemorySearch
from .semantic import SEMANTIC_POOL, cosines_outside_pool, semantic_pool

__all__ = [
    "MATCH_BUDGET",
    "SEMANTIC_POOL",
    "Candidates",
    "Corpus",
    "HybridSearch",
    "KeywordQuery",
    "MemorySearch",
    "Ranked",
    "Request",
    "RowCounter",
    "Tables",
    "TermCounts",
    "Vectors",
    "cosines_outside_pool",
    "fuse",
    "idf",
    "keyword_query",
    "semantic_pool",
]
