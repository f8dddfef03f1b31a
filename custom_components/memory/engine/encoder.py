"""Built-in sentence encoder: BERT-family models run in plain numpy.

Home Assistant OS (Alpine/musl, often a Raspberry Pi) has no wheels for torch
or onnxruntime, yet semantic recall should work without Ollama or a cloud
account. A 6-layer MiniLM is small enough to run as a few dozen float32 matrix
products, so this module implements BERT inference with numpy alone: the
`.safetensors` weights are memory-mapped (a dozen lines of format, no extra
package) and `tokenizers` (musllinux wheels) splits the text.

The API is synchronous and thread-safe: Home Assistant calls `encode` from its
executor (`aencode` does that for async callers). Weights load on first use and
`close()` drops them again, so an idle installation pays nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor
import ctypes
from dataclasses import dataclass
import json
import math
import os
from pathlib import Path
import threading
from typing import Any, Self

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from .model_files import ModelSpec, Pooling

type F32 = npt.NDArray[np.float32]
type I64 = npt.NDArray[np.int64]

DEFAULT_BATCH_SIZE = 32
# Tokens per forward pass: bounds the activations (about 12 kB per token for a
# 384-wide model) so that long texts cost time, not memory.
DEFAULT_MAX_BATCH_TOKENS = 1024
# Rows of the feed-forward block processed at once: its 4x-wide intermediate
# then stays in cache, which makes the element-wise GELU several times cheaper.
_FFN_ROWS = 256

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
# Rows per GELU call: its three scratch arrays then fit in a core's L2 cache.
_GELU_ROWS = 64


class EncoderError(Exception):
    """The model folder cannot be used (missing, unsupported or damaged)."""


@dataclass(frozen=True, slots=True)
class BertConfig:
    """Architecture numbers, read from the model's `config.json`."""

    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    layer_norm_eps: float
    max_position_embeddings: int
    hidden_act: str

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        """Parse and check that the model is one this encoder can run."""
        try:
            raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise EncoderError(f"cannot read {path.name}: {err}") from err
        position = raw.get("position_embedding_type", "absolute")
        act = raw.get("hidden_act", "gelu")
        if raw.get("model_type", "bert") != "bert" or position != "absolute":
            raise EncoderError(
                f"unsupported model: {raw.get('model_type')}/{position} (BERT only)"
            )
        if act not in _ACTIVATIONS:
            raise EncoderError(f"unsupported activation: {act}")
        try:
            config = cls(
                hidden_size=int(raw["hidden_size"]),
                num_layers=int(raw["num_hidden_layers"]),
                num_heads=int(raw["num_attention_heads"]),
                intermediate_size=int(raw["intermediate_size"]),
                layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
                max_position_embeddings=int(raw.get("max_position_embeddings", 512)),
                hidden_act=act,
            )
        except (KeyError, TypeError, ValueError) as err:
            raise EncoderError(f"incomplete {path.name}: {err}") from err
        if config.hidden_size % config.num_heads:
            raise EncoderError("hidden size is not a multiple of the head count")
        return config


@dataclass(frozen=True, slots=True)
class EncoderSettings:
    """How token vectors become one text vector (sentence-transformers' files)."""

    max_seq_length: int
    pooling: Pooling = "mean"
    normalize: bool = True

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> EncoderSettings:
        """Take the settings pinned in a model spec."""
        return cls(spec.max_seq_length, spec.pooling, spec.normalize)

    @classmethod
    def from_folder(cls, folder: Path, config: BertConfig) -> EncoderSettings:
        """Read a sentence-transformers folder; BERT defaults where files lack.

        Lets a model without a spec entry (a local folder) encode as
        sentence-transformers would.
        """
        max_len = config.max_position_embeddings
        pooling: Pooling = "mean"
        sbert = _read_json(folder / "sentence_bert_config.json")
        if isinstance(sbert.get("max_seq_length"), int):
            max_len = min(max_len, sbert["max_seq_length"])
        pool = _read_json(folder / "1_Pooling" / "config.json")
        if pool.get("pooling_mode_cls_token") and not pool.get(
            "pooling_mode_mean_tokens"
        ):
            pooling = "cls"
        modules = folder / "modules.json"
        normalize = modules.is_file() and "models.Normalize" in modules.read_text(
            encoding="utf-8"
        )
        return cls(max_len, pooling, normalize)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise EncoderError(f"cannot read {path.name}: {err}") from err
    return value if isinstance(value, dict) else {}


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


_ACTIVATIONS = {
    "gelu": gelu,
    "gelu_new": _gelu_tanh,
    "gelu_pytorch_tanh": _gelu_tanh,
    "relu": _relu,
}


def _layer_norm(x: F32, gamma: F32, beta: F32, eps: float) -> F32:
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


@dataclass(slots=True)
class _Layer:
    """One transformer block; `*_w` are (in, out) views of the file."""

    q_w: F32
    q_b: F32
    k_w: F32
    k_b: F32
    v_w: F32
    v_b: F32
    out_w: F32
    out_b: F32
    ln1_g: F32
    ln1_b: F32
    ffn_in_w: F32
    ffn_in_b: F32
    ffn_out_w: F32
    ffn_out_b: F32
    ln2_g: F32
    ln2_b: F32


@dataclass(slots=True)
class _Weights:
    word: F32  # (vocab, H)
    position: F32  # (max positions, H)
    token_type: F32  # (H,): every text is segment 0
    ln_g: F32
    ln_b: F32
    layers: list[_Layer]


_DTYPES: dict[str, str] = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "BF16": "<u2"}
_MAX_HEADER = 100 * 1024 * 1024


class _TensorFile:
    """Tensors of a `.safetensors` file, memory-mapped and read-only.

    float32 tensors are views of the file: nothing is copied, untouched rows of
    the 30k-token embedding table never become resident, and under memory
    pressure the kernel can drop the pages and read them back instead of
    swapping. Other float types are converted on access. The format is a
    little-endian u64 header length, a JSON header of names, dtypes, shapes
    and byte offsets, then the data.
    """

    def __init__(self, path: Path) -> None:
        try:
            with path.open("rb") as stream:
                size = int.from_bytes(stream.read(8), "little")
                if not 2 <= size <= _MAX_HEADER:
                    raise EncoderError(f"{path.name} is not a safetensors file")
                header = json.loads(stream.read(size))
            data: npt.NDArray[np.uint8] = np.memmap(path, dtype=np.uint8, mode="r")
        except (OSError, ValueError) as err:
            raise EncoderError(f"cannot open {path.name}: {err}") from err
        if not isinstance(header, dict):
            raise EncoderError(f"{path.name} is not a safetensors file")
        header.pop("__metadata__", None)
        self._name = path.name
        self._data = data[8 + size :]
        self._entries: dict[str, Any] = header
        self._prefix = (
            "bert." if "bert.embeddings.word_embeddings.weight" in header else ""
        )

    def __call__(self, name: str) -> F32:
        """Tensor `name` (prefix `bert.` added when the file uses it) as float32."""
        full = self._prefix + name
        entry = self._entries.get(full)
        if not isinstance(entry, dict):
            raise EncoderError(f"weights lack tensor {full}")
        try:
            begin, end = (int(v) for v in entry["data_offsets"])
            shape = tuple(int(v) for v in entry["shape"])
            dtype = np.dtype(_DTYPES[entry["dtype"]])
        except (KeyError, TypeError, ValueError) as err:
            raise EncoderError(f"{self._name}: unusable entry {full}") from err
        if not 0 <= begin <= end <= len(self._data) or (
            end - begin != math.prod(shape) * dtype.itemsize
        ):
            raise EncoderError(f"{self._name}: {full} lies outside the file")
        raw = self._data[begin:end].view(dtype).reshape(shape)
        if entry["dtype"] == "BF16":  # the top half of a float32
            return (raw.astype(np.uint32) << 16).view(np.float32)
        if dtype != np.float32 or not raw.flags.aligned:
            return raw.astype(np.float32)
        return raw


def _load_weights(path: Path, config: BertConfig) -> _Weights:
    """Map the weights as (in, out) views, the layout `x @ w` wants.

    The transposes are free (BLAS reads a transposed matrix as it is), so no
    weight is copied and the whole model costs only the pages it touches.
    """
    read = _TensorFile(path)
    hidden = config.hidden_size
    layers = []
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}."
        a = p + "attention."
        layers.append(
            _Layer(
                q_w=read(a + "self.query.weight").T,
                q_b=read(a + "self.query.bias"),
                k_w=read(a + "self.key.weight").T,
                k_b=read(a + "self.key.bias"),
                v_w=read(a + "self.value.weight").T,
                v_b=read(a + "self.value.bias"),
                out_w=read(a + "output.dense.weight").T,
                out_b=read(a + "output.dense.bias"),
                ln1_g=read(a + "output.LayerNorm.weight"),
                ln1_b=read(a + "output.LayerNorm.bias"),
                ffn_in_w=read(p + "intermediate.dense.weight").T,
                ffn_in_b=read(p + "intermediate.dense.bias"),
                ffn_out_w=read(p + "output.dense.weight").T,
                ffn_out_b=read(p + "output.dense.bias"),
                ln2_g=read(p + "output.LayerNorm.weight"),
                ln2_b=read(p + "output.LayerNorm.bias"),
            )
        )
    weights = _Weights(
        word=read("embeddings.word_embeddings.weight"),
        position=read("embeddings.position_embeddings.weight"),
        token_type=read("embeddings.token_type_embeddings.weight")[0],
        ln_g=read("embeddings.LayerNorm.weight"),
        ln_b=read("embeddings.LayerNorm.bias"),
        layers=layers,
    )
    square = (hidden, hidden)
    if (
        weights.word.shape[1] != hidden
        or weights.position.shape[1] != hidden
        or any(
            layer.q_w.shape != square
            or layer.ffn_in_w.shape != (hidden, config.intermediate_size)
            for layer in layers
        )
    ):
        raise EncoderError("weights do not match config.json")
    return weights


class _Model:
    """Loaded tokenizer + weights; only used under the encoder's lock."""

    def __init__(self, folder: Path, spec: ModelSpec | None) -> None:
        config_name = spec.config_file if spec else "config.json"
        self.config = BertConfig.from_file(folder / config_name)
        self.settings = (
            EncoderSettings.from_spec(spec)
            if spec
            else EncoderSettings.from_folder(folder, self.config)
        )
        self.max_len = min(
            self.settings.max_seq_length, self.config.max_position_embeddings
        )
        tokenizer_path = folder / (spec.tokenizer_file if spec else "tokenizer.json")
        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as err:  # tokenizers raises plain Exception
            raise EncoderError(f"cannot read {tokenizer_path.name}: {err}") from err
        # tokenizer.json may carry its own padding/truncation (MiniLM's says
        # 128): sentence-transformers overrides both, and so do we.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_len)
        self.weights = _load_weights(
            folder / (spec.weights_file if spec else "model.safetensors"), self.config
        )
        self.activation = _ACTIVATIONS[self.config.hidden_act]

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        if len(texts) == 1:
            return [self.tokenizer.encode(texts[0]).ids]
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))]

    def forward(self, ids: I64, lengths: I64) -> F32:
        """Pooled vectors of texts packed end to end, without padding.

        `ids` holds the token ids of all texts one after another, `lengths`
        how many belong to each. Every dense layer works on token rows alone,
        so packing spends no work on padding; only attention needs the text
        boundaries, and it runs text by text.
        """
        cfg, w = self.config, self.weights
        hidden, heads = cfg.hidden_size, cfg.num_heads
        head = hidden // heads
        scale = np.float32(1.0 / math.sqrt(head))
        ends = np.cumsum(lengths)
        starts = ends - lengths
        spans = list(zip(starts.tolist(), ends.tolist(), strict=True))
        positions = np.arange(len(ids)) - np.repeat(starts, lengths)
        x = w.word[ids]
        x += w.position[positions]
        x += w.token_type
        _layer_norm(x, w.ln_g, w.ln_b, cfg.layer_norm_eps)
        ctx = np.empty_like(x)
        for layer in w.layers:
            q = x @ layer.q_w
            q += layer.q_b
            q *= scale
            k = x @ layer.k_w
            k += layer.k_b
            v = x @ layer.v_w
            v += layer.v_b
            for start, end in spans:
                n = end - start
                # (n, H) -> (heads, n, head): views, no copies.
                qh = q[start:end].reshape(n, heads, head).transpose(1, 0, 2)
                kh = k[start:end].reshape(n, heads, head).transpose(1, 2, 0)
                vh = v[start:end].reshape(n, heads, head).transpose(1, 0, 2)
                scores = qh @ kh
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                out = ctx[start:end].reshape(n, heads, head).transpose(1, 0, 2)
                np.matmul(scores, vh, out=out)
            attn = np.matmul(ctx, layer.out_w, out=q)
            attn += layer.out_b
            x += attn
            _layer_norm(x, layer.ln1_g, layer.ln1_b, cfg.layer_norm_eps)
            x += self._feed_forward(x, layer, out=k)
            _layer_norm(x, layer.ln2_g, layer.ln2_b, cfg.layer_norm_eps)
        if self.settings.pooling == "cls":
            pooled = np.take(x, starts, axis=0)
        else:
            pooled = np.add.reduceat(x, starts, axis=0)
            pooled /= lengths[:, None].astype(np.float32)
        if self.settings.normalize:
            norms = np.sqrt(np.einsum("ij,ij->i", pooled, pooled))
            pooled /= np.maximum(norms, np.float32(1e-12))[:, None]
        return pooled

    def _feed_forward(self, x: F32, layer: _Layer, out: F32) -> F32:
        """GELU(x @ w1 + b1) @ w2 + b2 into `out`, a block of rows at a time.

        Blocks keep the 4x-wide intermediate small; the activation then runs
        on slices small enough for the cache, which halves its cost.
        """
        rows = x.shape[0]
        block = min(rows, _FFN_ROWS)
        inner = np.empty((block, layer.ffn_in_w.shape[1]), dtype=np.float32)
        part = min(block, _GELU_ROWS)
        s1, s2, s3 = (np.empty((part, inner.shape[1]), np.float32) for _ in "123")
        for start in range(0, rows, block):
            stop = min(start + block, rows)
            h = np.matmul(x[start:stop], layer.ffn_in_w, out=inner[: stop - start])
            h += layer.ffn_in_b
            for first in range(0, stop - start, part):
                piece = h[first : first + part]
                n = len(piece)
                self.activation(piece, (s1[:n], s2[:n], s3[:n]))
            np.matmul(h, layer.ffn_out_w, out=out[start:stop])
        out += layer.ffn_out_b
        return out


def _release_heap() -> None:
    """Hand freed memory back to the OS, which glibc's malloc would keep.

    The tokenizer and the activations leave some 15 MB of free heap behind;
    musl (Home Assistant OS) returns it by itself and has no malloc_trim.
    """
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except AttributeError, OSError, TypeError:
        return
    trim(0)


class BertEncoder:
    """Sentence embeddings from a BERT-family model folder, numpy only.

    Thread-safe: calls are serialised (the matrix products already use every
    core through BLAS). Nothing is read until the first `encode` or `load`;
    `close` frees the arrays and a later `encode` reloads them.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        spec: ModelSpec | None = None,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
    ) -> None:
        """Remember where the model is; no file is read yet.

        Args:
            folder: Holds config.json, tokenizer.json and model.safetensors.
            spec: Pooling, normalisation and maximum length; read from the
                sentence-transformers files in `folder` when None.
            batch_size: Most texts per forward pass.
            max_batch_tokens: Most padded tokens per forward pass (memory cap).

        """
        if batch_size < 1 or max_batch_tokens < 1:
            raise ValueError("batch_size and max_batch_tokens must be positive")
        self.folder = Path(folder)
        self.spec = spec
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self._lock = threading.Lock()
        self._model: _Model | None = None

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory."""
        return self._model is not None

    @property
    def dims(self) -> int:
        """Length of the vectors, known without loading the weights."""
        if self.spec is not None:
            return self.spec.dims
        if self._model is not None:
            return self._model.config.hidden_size
        return BertConfig.from_file(self.folder / "config.json").hidden_size

    def load(self) -> None:
        """Read tokenizer and weights now instead of on first use.

        Raises:
            EncoderError: the folder lacks a file or holds an unsupported model.

        """
        with self._lock:
            self._loaded_model()

    def _loaded_model(self) -> _Model:
        if self._model is None:
            self._model = _Model(self.folder, self.spec)
        return self._model

    def close(self) -> None:
        """Drop the weights (about 90 MB for MiniLM-L6); `encode` reloads.

        Waits for a running `encode`, so call it from the executor too.
        """
        with self._lock:
            if self._model is not None:
                self._model = None
                _release_heap()

    unload = close

    def __enter__(self) -> Self:
        """Use as a context manager that frees the weights on exit."""
        return self

    def __exit__(self, *_exc: object) -> None:
        """Free the weights."""
        self.close()

    def encode(self, texts: Sequence[str]) -> F32:
        """Embed texts: float32 array (len(texts), dims), rows in input order.

        Texts go through the model packed end to end in groups of at most
        `batch_size` texts and `max_batch_tokens` tokens, so no work is spent
        on padding. Texts longer than the model's maximum are truncated, as
        sentence-transformers does.

        Raises:
            EncoderError: the model cannot be loaded.

        """
        if isinstance(texts, str):
            raise TypeError("encode takes a sequence of texts, not one string")
        with self._lock:
            model = self._loaded_model()
            out = np.empty((len(texts), model.config.hidden_size), dtype=np.float32)
            ids = model.token_ids(texts)
            for first, last in self._groups([len(t) for t in ids]):
                group = ids[first:last]
                packed = np.fromiter(
                    (i for t in group for i in t),
                    dtype=np.int64,
                    count=sum(len(t) for t in group),
                )
                lengths = np.fromiter((len(t) for t in group), dtype=np.int64)
                out[first:last] = model.forward(packed, lengths)
            return out

    def _groups(self, lengths: list[int]) -> Iterator[tuple[int, int]]:
        """Consecutive [first, last) runs within both per-pass limits."""
        first = tokens = 0
        for index, length in enumerate(lengths):
            if index > first and (
                index - first >= self.batch_size
                or tokens + length > self.max_batch_tokens
            ):
                yield first, index
                first, tokens = index, 0
            tokens += length
        if first < len(lengths):
            yield first, len(lengths)

    def encode_one(self, text: str) -> F32:
        """Embed one text: float32 array (dims,)."""
        return self.encode([text]).reshape(-1)

    async def aencode(
        self, texts: Sequence[str], executor: Executor | None = None
    ) -> F32:
        """`encode` in `executor` (the loop's default when None), for async code."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(executor, self.encode, texts)
