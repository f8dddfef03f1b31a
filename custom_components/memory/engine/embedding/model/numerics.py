"""The numeric kernels of the built-in encoder: activations and layer norm, in place.

Each works on float32 arrays in place, so the transformer's hot loop
allocates nothing (`encoder._Model.forward` calls them).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

type F32 = npt.NDArray[np.float32]
type I64 = npt.NDArray[np.int64]

# GELU is x * Phi(x) with the exact erf, as BERT was trained. numpy has no erf,
# so: Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7 on erf), rewritten as
#   gelu(x) = relu(x) - |x| * q(t) * exp(-x^2 / 2),  t = 1 / (|x| + 1/p')
# with p' = p / sqrt 2 and q's coefficients pre-scaled (halved, times p'^-k)
# to save passes. Max |error| vs math.erf: 3.3e-7 (test_gelu_matches_erf).
_GELU_P = 0.3275911 / math.sqrt(2.0)
_GELU_INV_P = np.float32(1.0 / _GELU_P)
_GELU_Q = tuple(  # highest power first, for Horner
    np.float32(0.5 * c / _GELU_P**k)
    for k, c in (
        (5, 1.061405429),
        (4, -1.453152027),
        (3, 1.421413741),
        (2, -0.284496736),
        (1, 0.254829592),
    )
)


def gelu(x: F32, scratch: tuple[F32, F32, F32] | None = None) -> F32:
    """Exact (erf) GELU in place on `x`, with float32 error below 1e-6.

    `scratch`: three arrays shaped like `x`, so the hot loop allocates nothing.
    """
    s1, s2, s3 = scratch or (np.empty_like(x), np.empty_like(x), np.empty_like(x))
    ax = np.abs(x, out=s1)
    t = np.add(ax, _GELU_INV_P, out=s2)
    np.reciprocal(t, out=t)
    q = np.multiply(t, _GELU_Q[0], out=s3)
    for coeff in _GELU_Q[1:]:
        q += coeff
        q *= t
    e = np.multiply(x, x, out=t)
    e *= np.float32(-0.5)
    np.exp(e, out=e)
    q *= e
    q *= ax
    np.maximum(x, 0.0, out=x)
    x -= q
    return x


def _gelu_tanh(x: F32, scratch: tuple[F32, F32, F32] | None = None) -> F32:
    """Apply the tanh approximation some checkpoints were trained with."""
    inner = np.multiply(x, x, out=scratch[0] if scratch else None)
    inner *= np.float32(0.044715)
    inner += 1.0
    inner *= x
    inner *= np.float32(math.sqrt(2.0 / math.pi))
    np.tanh(inner, out=inner)
    inner += 1.0
    inner *= np.float32(0.5)
    x *= inner
    return x


def _relu(x: F32, scratch: tuple[F32, F32, F32] | None = None) -> F32:
    return np.maximum(x, 0.0, out=x)


ACTIVATIONS = {
    "gelu": gelu,
    "gelu_new": _gelu_tanh,
    "gelu_pytorch_tanh": _gelu_tanh,
    "relu": _relu,
}


def layer_norm(x: F32, gamma: F32, beta: F32, eps: float) -> F32:
    """LayerNorm over the last axis, in place on `x`."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    np.reciprocal(var, out=var)
    x *= var[:, None]
    x *= gamma
    x += beta
    return x
