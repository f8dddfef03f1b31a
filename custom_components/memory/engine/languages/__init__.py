"""Languages: how a text becomes search terms, in each supported language.

`tags` (language tags and names), `words` (one word's stem and folded form,
stop words from `stopwords/`), `plurals` (light plural rules), `compounds`
(compound tails), `analysis` (a text's terms; would a query find a text).
"""
