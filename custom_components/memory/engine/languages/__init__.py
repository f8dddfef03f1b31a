"""Languages: how a text becomes search terms, in each supported language.

`tags` (language tags and names), `words` (one word's stem and folded form,
stop words from `stopwords/`), `plurals` (light plural rules), `compounds`
(compound tails), `analysis` (a text's terms; would a query find a text).
"""

from .analysis import (
    ANALYSIS_VERSION,
    MIN_PREFIX_TERM,
    compound_words,
    index_terms,
    query_finds,
    query_terms,
    query_terms_in,
)
from .tags import COMPOUNDING, DEFAULT_LANGUAGE, language_code, language_name
from .words import APOSTROPHES, fold_term, stem

__all__ = [
    "ANALYSIS_VERSION",
    "APOSTROPHES",
    "COMPOUNDING",
    "DEFAULT_LANGUAGE",
    "MIN_PREFIX_TERM",
    "compound_words",
    "fold_term",
    "index_terms",
    "language_code",
    "language_name",
    "query_finds",
    "query_terms",
    "query_terms_in",
    "stem",
]
