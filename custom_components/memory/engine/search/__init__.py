"""Search: keyword and vector candidates fused into one ranking.

`keywords` (a query's terms, weights, the bounded FTS5 MATCH),
`term_counts` (the index's row and term counts, common ones kept), `semantic`
(the vector pool and exact cosines), `fusion` (both signals on their own
scales, combined), `candidates` (what one search works on: tables,
request, candidates), `hybrid` (the one hybrid search over a `Corpus`: memories
or conversation messages), `memories` (the memories' corpus and search).
"""

from .candidates import KEYWORD_POOL, Candidates, Request, Tables, Vectors
from .fusion import Ranked, add_context, fuse
from .hybrid import KEYWORD_OVERFETCH, Corpus, HybridSearch
from .keywords import MATCH_BUDGET, MATCH_SHARE, KeywordQuery, idf, keyword_query
from .memories import MemorySearch, validate_earlier
from .semantic import (
    EXACT_SCAN_MAX,
    HYBRID_OVERSAMPLE,
    SEMANTIC_OVERSAMPLE,
    SEMANTIC_POOL,
    cosines_outside_pool,
    oversample,
    row_cosines,
    semantic_pool,
)
from .term_counts import RowCounter, TermCounts

__all__ = [
    "EXACT_SCAN_MAX",
    "HYBRID_OVERSAMPLE",
    "KEYWORD_OVERFETCH",
    "KEYWORD_POOL",
    "MATCH_BUDGET",
    "MATCH_SHARE",
    "SEMANTIC_OVERSAMPLE",
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
    "add_context",
    "cosines_outside_pool",
    "fuse",
    "idf",
    "keyword_query",
    "oversample",
    "row_cosines",
    "semantic_pool",
    "validate_earlier",
]
