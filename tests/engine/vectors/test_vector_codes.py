"""Unit tests of the binary codes the numpy index keeps (engine/vector_codes)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from custom_components.memory.engine.vectors import CosineScale, codes
from custom_components.memory.engine.vectors.codes import (
    CHUNK_ROWS,
    block_size,
    code_blob_size,
    code_fingerprint,
    codes_from_blobs,
    codes_to_blobs,
    encode,
    encode_unit,
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
    """The distance is the number of dimensions whose signs differ.

    The rows' words are given column by column, as the index keeps them.
    """
    for dim in (200, 384, 1024):
        vectors = _units(50, dim, seed=5)
        query = _units(1, dim, seed=6)[0]
        columns = np.ascontiguousarray(pack_signs(vectors).T)
        distance = hamming(columns, pack_signs(query))
        expected = ((vectors > 0) != (query > 0)).sum(axis=1)
        assert distance.tolist() == expected.tolist()


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


@pytest.mark.parametrize("dim", [16, 100, 384])
def test_stored_codes_round_trip(dim: int) -> None:
    """A stored code is the bits' bytes and the factor: read back bit for bit."""
    words, factors = encode_unit(_units(5, dim, seed=dim))
    blobs = codes_to_blobs(words, factors)
    assert [len(blob) for blob in blobs] == [code_blob_size(dim)] * 5
    assert code_blob_size(384) == 52
    assert blobs[0][:8] == words[0, :1].tobytes()
    assert blobs[0][-4:] == np.float32(factors[0]).astype("<f4").tobytes()
    read_words, read_factors = codes_from_blobs(b"".join(blobs), dim)
    assert read_words.tobytes() == words.tobytes()
    assert read_factors.tobytes() == factors.tobytes()
    assert read_words.flags.c_contiguous
    assert codes_to_blobs(*codes_from_blobs(b"", dim)) == []


def test_fingerprint_names_the_rotation_and_layout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another seed or version gives another fingerprint; the same, the same."""
    first = code_fingerprint(384)
    assert 0 <= first < 2**63
    assert code_fingerprint(384) == first
    assert code_fingerprint(768) != first
    for name, value in (("ROTATION_SEED", 1), ("CODES_VERSION", 2)):
        with monkeypatch.context() as patch:
            patch.setattr(codes, name, value)
            rotation.cache_clear()
            code_fingerprint.cache_clear()
            assert code_fingerprint(384) != first, name
    rotation.cache_clear()
    code_fingerprint.cache_clear()
    assert code_fingerprint(384) == first


@pytest.mark.parametrize("count", [0, 5, 512, 513, 3000])
def test_scale_chosen_by_position_is_the_sample_of_every_row(count: int) -> None:
    """`choose` + `fill` keep the rows, and give the scale, that `add` would."""
    rows = _units(count, 24, seed=count)
    offered = CosineScale()
    for start in range(0, count, 700):
        offered.add(rows[start : start + 700])
    chosen = CosineScale()
    positions = chosen.choose(count, 24)
    chosen.fill(rows[positions] if positions else np.zeros((0, 24), np.float32))
    query = _units(1, 24, seed=99)[0]
    assert chosen.count == offered.count == count
    assert chosen.scale(query) == offered.scale(query)
    more = _units(50, 24, seed=7)
    offered.add(more)
    chosen.add(more)
    assert chosen.scale(query) == offered.scale(query)
    with pytest.raises(ValueError, match="one row per slot"):
        chosen.fill(rows[:1])
