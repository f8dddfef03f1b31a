"""Binary codes of unit vectors: one bit a dimension, and a cosine estimate from them.

A vector is kept as the signs of its components, 48 bytes at 384
dimensions, plus one float32 that corrects the estimate (RaBitQ's
estimator): for a unit vector `x` and a unit query `q`,
`cos ≈ (q · sign(x)) / |x|₁`. Two ways to compare a query:

- `hamming`: XOR and popcount with the query's own signs; crude, but it
  reads 48 bytes a row and needs no float arithmetic (the first pass of a
  large index);
- `estimate`: the query's floats against the bits; much closer to the
  cosine (the second pass, and the only one of a small index).

The estimate only ranks candidates: the store re-scores them exactly from
the float32 vectors in SQLite. A random rotation first (as RaBitQ does) made
recall@10 after re-scoring 1.000 instead of 0.9975 on bench/engine.py's
vectors (which have outlier dimensions) and changed nothing on LoCoMo's
MiniLM vectors, but its matrix product made loading 100k vectors seconds
slower and woke OpenBLAS's buffers: not worth it.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

# Rows unpacked and scored per step: a float32 block of 512 x 384 (768 KiB)
# stays in the L2 cache.
CHUNK_ROWS: Final = 512

type Words = npt.NDArray[np.uint64]
type Floats = npt.NDArray[np.float32]


def words_per_row(dim: int) -> int:
    """Return how many 64-bit words hold `dim` sign bits."""
    return (dim + 63) // 64


def pack_signs(vectors: Floats) -> Words:
    """Each row's signs as bits, packed into 64-bit words (zero-padded)."""
    packed = np.packbits(vectors > 0, axis=-1)
    if packed.ndim == 1:
        packed = packed.reshape(1, -1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def encode(vectors: Floats) -> tuple[Words, Floats]:
    """Sign bits of the rows and the factor `|x|₂² / |x|₁` of each (0 for zero)."""
    norms = np.abs(vectors).sum(axis=1)
    factors = np.zeros(len(vectors), dtype=np.float32)
    np.divide(
        np.einsum("ij,ij->i", vectors, vectors), norms, out=factors, where=norms > 0
    )
    return pack_signs(vectors), factors


def hamming(words: Words, query_words: Words) -> npt.NDArray[np.uint32]:
    """Bits in which each row differs from the query's signs."""
    distance: npt.NDArray[np.uint32] = np.bitwise_count(words ^ query_words).sum(
        axis=1, dtype=np.uint32
    )
    return distance


def estimate(words: Words, factors: Floats, query: Floats) -> Floats:
    """Estimated cosines of the rows `words` with the query, in cache-sized steps.

    `q · sign(x)` is `2 · (sum of q over set bits) - sum(q)`: the bits are
    unpacked to 0/1 floats a chunk at a time and multiplied by `2q`.
    """
    dim = len(query)
    size = len(words)
    sums = np.empty(size, dtype=np.float32)
    twice = (2.0 * query).astype(np.float32)
    buffer = np.empty((min(size, CHUNK_ROWS), dim), dtype=np.float32)
    as_bytes = words.view(np.uint8)
    for start in range(0, size, CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, size)
        block = buffer[: stop - start]
        bits = np.unpackbits(as_bytes[start:stop], axis=1, count=dim)
        np.copyto(block, bits, casting="unsafe")
        np.matmul(block, twice, out=sums[start:stop])
    sums -= np.float32(query.sum())
    scores: Floats = sums * factors
    return scores
