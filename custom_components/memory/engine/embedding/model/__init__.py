"""The built-in embedding model: a numpy encoder and its pinned files.

`encoder` (BERT forward pass), `files` (reading the weights), `numerics`,
`unigram` (E5's sentencepiece vocabulary), `pins` (each file's size and
SHA-256; the default model by language), `download` (resumable, checked).
"""
