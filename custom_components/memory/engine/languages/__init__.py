"""Languages: how a text becomes search terms, in each supported language.

`tags` (language tags and names), `words` (one word's stem and folded form,
stop words from `stopwords/`), `plurals` (light plural rules), `compounds`
(compound tails), `analysis` (a text's terms; would a query find a text),
`paraphrases` (question and memory pairs only meaning links, to measure
how well an embedding model reads a language).
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
from .paraphrases import PARAPHRASES, paraphrase_pairs
from .tags import COMPOUNDING, DEFAULT_LANGUAGE, language_code, language_name
from .words import APOSTROPHES, fold_term, stem

__all__ = [
    "ANALYSIS_VERSION",
    "APOSTROPHES",
    "COMPOUNDING",
    "DEFAULT_LANGUAGE",
    "MIN_PREFIX_TERM",
    "PARAPHRASES",
    "compound_words",
    "fold_term",
    "index_terms",
    "language_code",
    "language_name",
    "paraphrase_pairs",
    "query_finds",
    "query_terms",
    "query_terms_in",
    "stem",
]
