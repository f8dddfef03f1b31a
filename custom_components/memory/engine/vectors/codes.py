"""Binary codes of unit vectors: one bit a dimension, and a cosine estimate from them.

The index turns every vector by one fixed random rotation (`rotate`: cosines
are unchanged, and no dimension dominates any more: sentence embeddings have
a few outlier dimensions) and keeps the signs of the result, 48 bytes at 384
dimensions, plus one float32 that corrects the estimate (RaBitQ's
estimator): for a rotated unit vector `x` and rotated unit query `q`,
`cos ≈ (q · sign(x)) / |x|₁`. Two ways to compare a query:

- `hamming`: XOR and popcount with the query's own signs; crude, but it
  reads 48 bytes a row and needs no float arithmetic (the first pass of a
  large index);
- `estimate`: the query's floats against the bits; much closer to the
  cosine (the second pass, and the only one of a small index).

The estimate only ranks candidates: the store re-scores them exactly from
the float32 vectors in SQLite. Without the rotation, recall@10 after
re-scoring fell to 0.9875 on bench/engine.py's 1,000 vectors (uneven
dimensions); with it, 1.000 there and on LoCoMo's MiniLM vectors. The
rotation turns blocks of 64 dimensions (BLOCK): recall@10 as with a full
one on both sets (recall@50, the fusion's pool, 0.987 instead of 0.998 on
the 1,000), at a sixth of its cost when the index loads: a full one added
~0.5-1 s of CPU to loading 100k vectors, blocks of 64 add ~0.25 s.
"""

from __future__ import annotations

import functools
from typing import Final

import numpy as np
import numpy.typing as npt

# Rows unpacked and scored per step: a float32 block of 512 x 384 (768 KiB)
# stays in the L2 cache.
CHUNK_ROWS: Final = 512

# Any fixed seed: codes live in memory only (rebuilt at every open), so the
# rotation must be the same within a process, not across versions.
ROTATION_SEED: Final = 20_261_126

type Words = npt.NDArray[np.uint64]
type Floats = npt.NDArray[np.float32]


# Dimensions mixed together: a rotation of each block of BLOCK dimensions
# (one matrix for all blocks) costs a sixth of a full one at 384 and spreads
# an outlier dimension over 64; a dimension that is no multiple of BLOCK is
# turned whole.
BLOCK: Final = 64


def block_size(dim: int) -> int:
    """Return how many dimensions one rotation block turns together."""
    return BLOCK if dim > BLOCK and dim % BLOCK == 0 else dim


@functools.cache
def rotation(dim: int) -> Floats:
    """Return a random orthogonal `dim` x `dim` matrix, the same at every call."""
    rng = np.random.default_rng(ROTATION_SEED + dim)
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    # The signs of r's diagonal make the draw uniform (Haar) over rotations.
    matrix: Floats = np.ascontiguousarray((q * np.sign(np.diag(r))).T, np.float32)
    matrix.setflags(write=False)
    return matrix


def rotate(vectors: Floats) -> Floats:
    """Rows turned block by block (see BLOCK): cosines are unchanged."""
    dim = vectors.shape[-1]
    size = block_size(dim)
    blocks = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, size)
    turned: Floats = (blocks @ rotation(size).T).reshape(vectors.shape)
    return turned


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
