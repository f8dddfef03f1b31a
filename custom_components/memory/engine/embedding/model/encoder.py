"""Built-in sentence encoder: BERT-family models run in plain numpy.

Home Assistant OS (Alpine/musl, often a Raspberry Pi) has no wheels for torch
or onnxruntime, yet semantic recall should work without Ollama or a cloud
account. A 6-layer MiniLM is small enough to run as a few dozen float32 matrix
products, so this module implements BERT inference with numpy alone: the
`.safetensors` weights are memory-mapped (a dozen lines of format, no extra
package, `encoder_files`) and `tokenizers` (musllinux wheels) splits the text
(a large sentencepiece vocabulary through `encoder_unigram`, which keeps it
compact); the numeric kernels are in `encoder_math`.

The API is synchronous and thread-safe: Home Assistant calls `encode` from its
executor (`aencode` does that for async callers). Weights load on first use and
`close()` drops them again, so an idle installation pays nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor
import ctypes
import functools
import math
import os
from pathlib import Path
import threading
from typing import Self

import numpy as np
from tokenizers import Tokenizer

from ...vectors import use_one_blas_thread
from .files import BertConfig, EncoderError, EncoderSettings, Layer, load_weights
from .numerics import ACTIVATIONS, F32, I64, gelu, layer_norm
from .pins import ModelSpec
from .unigram import UnigramError, UnigramTokenizer

DEFAULT_BATCH_SIZE = 32
# Tokens per forward pass: bounds the activations (about 12 kB per token for a
# 384-wide model) so that long texts cost time, not memory.
DEFAULT_MAX_BATCH_TOKENS = 1024
# Rows of the feed-forward block processed at once: its 4x-wide intermediate
# then stays in cache, which makes the element-wise GELU several times cheaper.
_FFN_ROWS = 256
# Rows per GELU call: its three scratch arrays then fit in a core's L2 cache.
_GELU_ROWS = 64


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
        self.tokenizer: Tokenizer | None = None
        self.unigram: UnigramTokenizer | None = None
        try:
            # A sentencepiece vocabulary (XLM-R's 250k pieces) in a compact
            # form; everything else through the library.
            self.unigram = UnigramTokenizer(tokenizer_path)
            self.unigram.enable_truncation(self.max_len)
        except UnigramError, OSError:
            self.unigram = None
        if self.unigram is None:
            try:
                self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
            except Exception as err:  # tokenizers raises plain Exception
                raise EncoderError(f"cannot read {tokenizer_path.name}: {err}") from err
            # tokenizer.json may carry its own padding/truncation (MiniLM's
            # says 128): sentence-transformers overrides both, and so do we.
            self.tokenizer.no_padding()
            self.tokenizer.enable_truncation(max_length=self.max_len)
        self.weights = load_weights(
            folder / (spec.weights_file if spec else "model.safetensors"), self.config
        )
        self.activation = ACTIVATIONS[self.config.hidden_act]

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        if self.unigram is not None:
            return self.unigram.encode_batch_ids(texts)
        assert self.tokenizer is not None  # noqa: S101 - one of the two is set
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
        x = w.word.take(ids)
        x += w.position[positions]
        x += w.token_type
        layer_norm(x, w.ln_g, w.ln_b, cfg.layer_norm_eps)
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
            layer_norm(x, layer.ln1_g, layer.ln1_b, cfg.layer_norm_eps)
            x += self._feed_forward(x, layer, out=k)
            layer_norm(x, layer.ln2_g, layer.ln2_b, cfg.layer_norm_eps)
        if self.settings.pooling == "cls":
            pooled = np.take(x, starts, axis=0)
        else:
            pooled = np.add.reduceat(x, starts, axis=0)
            pooled /= lengths[:, None].astype(np.float32)
        if self.settings.normalize:
            norms = np.sqrt(np.einsum("ij,ij->i", pooled, pooled))
            pooled /= np.maximum(norms, np.float32(1e-12))[:, None]
        return pooled

    def _feed_forward(self, x: F32, layer: Layer, out: F32) -> F32:
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
            use_one_blas_thread()  # see `vectors.threads`
            self._model = _Model(self.folder, self.spec)
        return self._model

    def close(self) -> None:
        """Drop the weights (what of the mapped files was read); `encode` reloads.

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

    def prefix(self, *, query: bool) -> str:
        """Give what goes before a text: E5's "query: " / "passage: ", else nothing."""
        if self.spec is None:
            return ""
        return self.spec.query_prefix if query else self.spec.passage_prefix

    def encode(self, texts: Sequence[str], *, query: bool = False) -> F32:
        """Embed texts: float32 array (len(texts), dims), rows in input order.

        Texts go through the model packed end to end in groups of at most
        `batch_size` texts and `max_batch_tokens` tokens, so no work is spent
        on padding. Texts longer than the model's maximum are truncated, as
        sentence-transformers does. `query` marks search questions for models
        that embed them differently from what is searched (the spec's
        prefixes); the others ignore it.

        Raises:
            EncoderError: the model cannot be loaded.

        """
        if isinstance(texts, str):
            raise TypeError("encode takes a sequence of texts, not one string")
        if prefix := self.prefix(query=query):
            texts = [prefix + text for text in texts]
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

    def encode_one(self, text: str, *, query: bool = False) -> F32:
        """Embed one text: float32 array (dims,)."""
        return self.encode([text], query=query).reshape(-1)

    async def aencode(
        self,
        texts: Sequence[str],
        executor: Executor | None = None,
        *,
        query: bool = False,
    ) -> F32:
        """`encode` in `executor` (the loop's default when None), for async code."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            executor, functools.partial(self.encode, texts, query=query)
        )


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_BATCH_TOKENS",
    "BertConfig",
    "BertEncoder",
    "EncoderError",
    "EncoderSettings",
    "gelu",
]
