"""Unit tests of the binary codes the numpy index keeps (engine/vector_codes)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from custom_components.memory.engine.vectors.codes import (
    CHUNK_ROWS,
    block_size,
    encode,
    estimate,
    hamming,
    pack_signs,
    rotate,
    rotation,
    words_per_row,
)


def _units(count: int, dim: int, seed: int) -> npt.NDArray[np.float32]:
    matrix = np.random.default_rng(seed).standard_normal((count, dim))
    units: npt.NDArray[np.float32] = (
        matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    ).astype(np.float32)
    return units


def test_pack_signs_packs_and_pads() -> None:
    """Positive components become set bits, padded with zeros to whole words."""
    rows = np.asarray([[1, -1, 2, 0.5] * 4, [-1.0] * 16], dtype=np.float32)
    bits = pack_signs(rows)
    assert bits.shape == (2, 1)
    assert bits.dtype == np.uint64
    assert bits[0].tobytes() == bytes([0b10111011, 0b10111011]) + bytes(6)
    assert bits[1].tobytes() == bytes(8)
    assert pack_signs(rows[0]).tolist() == bits[:1].tolist()  # one query row
    assert pack_signs(_units(3, 384, seed=0)).shape == (3, 6) == (3, words_per_row(384))
    assert words_per_row(100) == 2


@pytest.mark.parametrize("dim", [100, 384])
def test_estimate_is_the_sign_dot_over_the_l1_norm(dim: int) -> None:
    """Across chunk boundaries and odd dimensions: (q · sign(x)) |x|² / |x|₁."""
    count = CHUNK_ROWS * 2 + 37
    vectors = _units(count, dim, seed=1)
    vectors[5] *= 0.5  # not a unit vector: the factor keeps its length
    query = _units(1, dim, seed=2)[0]
    words, factors = encode(vectors)
    signs = np.where(vectors > 0, 1.0, -1.0)
    norms = np.abs(vectors).sum(axis=1)
    expected = (signs @ query) * (vectors * vectors).sum(axis=1) / norms
    np.testing.assert_allclose(estimate(words, factors, query), expected, atol=1e-5)
    np.testing.assert_allclose(
        estimate(words[[5]], factors[[5]], vectors[5] / 0.5), [0.5], atol=1e-6
    )


def test_a_row_estimates_itself_as_one_and_others_closely() -> None:
    """A unit row's own estimate is 1; others are off by about 1/sqrt(dim)."""
    vectors = _units(2000, 384, seed=3)
    words, factors = encode(vectors)
    for row in (0, 999, 1999):
        scores = estimate(words, factors, vectors[row])
        assert scores[row] == pytest.approx(1.0, abs=1e-5)
        error = scores - vectors @ vectors[row]
        assert abs(float(error.mean())) < 0.01
        assert float(np.abs(error).max()) < 0.25


def test_zero_row_estimates_zero() -> None:
    """A zero row gets factor 0 (no division by zero) and estimates 0."""
    words, factors = encode(np.zeros((1, 8), dtype=np.float32))
    assert factors.tolist() == [0.0]
    assert words.tolist() == [[0]]
    assert estimate(words, factors, _units(1, 8, seed=4)[0]).tolist() == [0.0]


def test_hamming_counts_differing_signs() -> None:
    """The distance is the number of dimensions whose signs differ."""
    vectors = _units(50, 200, seed=5)
    query = _units(1, 200, seed=6)[0]
    distance = hamming(pack_signs(vectors), pack_signs(query))
    expected = ((vectors > 0) != (query > 0)).sum(axis=1)
    assert distance.tolist() == expected.tolist()
    assert distance.dtype == np.uint32


@pytest.mark.parametrize("dim", [4, 64, 100, 384])
def test_rotation_is_fixed_and_keeps_cosines(dim: int) -> None:
    """One orthogonal matrix a block: cosines and lengths are unchanged."""
    size = block_size(dim)
    assert size == (64 if dim == 384 else dim)
    matrix = rotation(size)
    assert matrix is rotation(size)
    assert matrix.dtype == np.float32
    assert not matrix.flags.writeable
    np.testing.assert_allclose(matrix @ matrix.T, np.eye(size), atol=1e-5)
    vectors = _units(20, dim, seed=7)
    turned = rotate(vectors)
    np.testing.assert_allclose(turned @ turned.T, vectors @ vectors.T, atol=1e-5)


def test_rotation_spreads_an_outlier_dimension() -> None:
    """A vector along one axis is spread over its block, so its signs say more."""
    axis = np.zeros((1, 384), dtype=np.float32)
    axis[0, 130] = 1.0
    turned = rotate(axis)[0]
    assert float(np.abs(turned).max()) < 0.5
    assert np.count_nonzero(turned[128:192]) == 64
    assert not turned[:128].any()
    assert not turned[192:].any()
