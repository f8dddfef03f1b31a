"""Embeddings: the providers, the built-in model, the queue that feeds the index.

`queue` (the worker, the query cache), `jobs` (the job tables), `breaker`
(stop asking a failing provider), `secret_recheck` (vectors made again when
the secret detector learns more), `providers` (one module per provider
family), `model` (the built-in numpy encoder and its pinned files).
"""
