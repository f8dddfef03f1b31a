"""Vectors: the in-memory vector index and the model's cosine scale.

`index` (the numpy index and the vec0 one for comparisons), `codes` (binary
codes after a fixed rotation), `scale` (how unrelated texts score with the
model in use).
"""
