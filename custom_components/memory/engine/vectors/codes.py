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

The codes are stored beside the vectors (`codes_to_blobs`, `codes_from_blobs`: the
bits' bytes, then the factor as a little-endian float32, 52 bytes at 384
dimensions), so that opening reads them instead of the float32 vectors and
skips the rotation. `code_fingerprint` names what makes a code: stored codes of
another fingerprint (another rotation, layout or `CODES_VERSION`) are stale
and made again from the vectors.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Final

import numpy as np
import numpy.typing as npt

# Rows unpacked and scored per step: a float32 block of 512 x 384 (768 KiB)
# stays in the L2 cache.
CHUNK_ROWS: Final = 512

# Any fixed seed. Codes are stored, and `code_fingerprint` (a hash of the rotation
# and of probe codes) tells a stored code made with another rotation, so a
# new seed, block size or numpy's other draw only makes them again.
ROTATION_SEED: Final = 20_261_126
# Bump when what a code means changes in a way the probe codes of
# `code_fingerprint` would not show.
CODES_VERSION: Final = 1

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


def hamming(columns: Words, query_words: Words) -> npt.NDArray[np.uint16]:
    """Bits in which each row differs from the query's signs.

    `columns` holds the rows' words column by column (`columns[j]` is every
    row's word j, as `NumpyIndex` keeps them): each word is one contiguous
    XOR and popcount pass. Row by row, the sum over a row's six words was
    the slowest step of a search at 100k rows (1.8 ms against 0.3).
    """
    query = query_words.reshape(-1)
    distance: npt.NDArray[np.uint16] = np.bitwise_count(columns[0] ^ query[0]).astype(
        np.uint16
    )
    for word in range(1, len(query)):
        distance += np.bitwise_count(columns[word] ^ query[word])
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


def encode_unit(vectors: Floats) -> tuple[Words, Floats]:
    """Codes of unit vectors (rows): turned by the rotation, then `encode`."""
    return encode(rotate(vectors))


def _blob_dtype(dim: int) -> np.dtype[np.void]:
    return np.dtype([("bits", np.uint8, (words_per_row(dim) * 8,)), ("factor", "<f4")])


def code_blob_size(dim: int) -> int:
    """Return the bytes of one stored code of `dim` dimensions."""
    return _blob_dtype(dim).itemsize


def codes_to_blobs(words: Words, factors: Floats) -> list[bytes]:
    """One stored code a row: its bits' bytes, then its factor (little-endian)."""
    dim = words.shape[1] * 64
    rows = np.empty(len(words), dtype=_blob_dtype(dim))
    rows["bits"] = (
        np.ascontiguousarray(words).view(np.uint8).reshape(rows["bits"].shape)
    )
    rows["factor"] = factors
    data = rows.tobytes()
    size = rows.dtype.itemsize
    return [data[start : start + size] for start in range(0, len(data), size)]


def codes_from_blobs(data: bytes, dim: int) -> tuple[Words, Floats]:
    """Return the codes of stored blobs joined end to end (`codes_to_blobs`)."""
    rows = np.frombuffer(data, dtype=_blob_dtype(dim))
    words: Words = np.ascontiguousarray(rows["bits"]).view(np.uint64)
    factors: Floats = rows["factor"].astype(np.float32)
    return words, factors


@functools.cache
def code_fingerprint(dim: int) -> int:
    """Return what codes of `dim` dimensions are made with, as a 63-bit number.

    A hash of `CODES_VERSION`, the rotation and the stored codes of a few
    fixed probe vectors: any change to the rotation (seed, block size, how
    numpy draws or factorises it) or to the encoding gives another number.
    """
    probe = np.sin(np.arange(4 * dim, dtype=np.float64) * 0.7 + 0.3).reshape(4, dim)
    probe /= np.linalg.norm(probe, axis=1, keepdims=True)
    digest = hashlib.sha256(f"codes {CODES_VERSION} {dim}".encode())
    digest.update(rotation(block_size(dim)).tobytes())
    for blob in codes_to_blobs(*encode_unit(probe.astype(np.float32))):
        digest.update(blob)
    return int.from_bytes(digest.digest()[:8], "big") >> 1
