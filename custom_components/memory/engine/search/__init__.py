"""Search: keyword and vector candidates fused into one ranking.

`keywords` (a query's terms, weights, the bounded FTS5 MATCH), `semantic`
(the vector pool and exact cosines), `fusion` (both signals on their own
scales, combined), `memories` (the memories' hybrid search).
"""

from .fusion import fuse
from .keywords import KeywordQuery, RowCounter, TermCounts, keyword_query
from .memories import MemorySearch
from .semantic import SEMANTIC_POOL, cosines_outside_pool, semantic_pool

__all__ = [
    "SEMANTIC_POOL",
    "KeywordQuery",
    "MemorySearch",
    "RowCounter",
    "TermCounts",
    "cosines_outside_pool",
    "fuse",
    "keyword_query",
    "semantic_pool",
]
