"""What a model folder holds for the built-in encoder: config, settings, weights.

Reads `config.json` and sentence-transformers' pooling files, maps the
`.safetensors` layer weights read-only (a dozen lines of format, no extra
package) and reads the token-embedding table by rows with `pread`, so the
model costs only the pages it touches.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .numerics import ACTIVATIONS, F32
from .pins import ModelSpec, Pooling


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
        if act not in ACTIVATIONS:
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
        sbert = read_json(folder / "sentence_bert_config.json")
        if isinstance(sbert.get("max_seq_length"), int):
            max_len = min(max_len, sbert["max_seq_length"])
        pool = read_json(folder / "1_Pooling" / "config.json")
        if pool.get("pooling_mode_cls_token") and not pool.get(
            "pooling_mode_mean_tokens"
        ):
            pooling = "cls"
        modules = folder / "modules.json"
        normalize = modules.is_file() and "models.Normalize" in modules.read_text(
            encoding="utf-8"
        )
        return cls(max_len, pooling, normalize)


def read_json(path: Path) -> dict[str, Any]:
    """Read a JSON object from `path`; empty when the file is missing."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise EncoderError(f"cannot read {path.name}: {err}") from err
    return value if isinstance(value, dict) else {}


@dataclass(slots=True)
class Layer:
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


class EmbeddingRows:
    """The token-embedding table, read row by row from the file with `pread`.

    Mapping it would do as well in principle, but the kernel maps a whole
    fault-around window (64 kB) for every row touched: with XLM-R's 250k
    rows spread over 384 MB, a few thousand distinct tokens made 90 MB of
    it resident. Reading only the rows a batch needs keeps them out of the
    process (the page cache still serves them, and may drop them).
    """

    def __init__(self, path: Path, offset: int, shape: tuple[int, int]) -> None:
        """Rows of float32 little-endian values at `offset` of `path`."""
        self.path = path
        self.offset = offset
        self.shape = shape
        self._row_bytes = shape[1] * 4

    def take(self, ids: npt.NDArray[np.int64]) -> F32:
        """Rows `ids` (any order, repeats allowed) as a new (len(ids), H) array."""
        unique, inverse = np.unique(ids, return_inverse=True)
        if not len(unique):
            return np.empty((0, self.shape[1]), dtype=np.float32)
        if not 0 <= int(unique[0]) <= int(unique[-1]) < self.shape[0]:
            raise IndexError("token id outside the embedding table")
        rows = np.empty((len(unique), self.shape[1]), dtype=np.float32)
        buffer = memoryview(rows).cast("B")
        size = self._row_bytes
        values = unique.tolist()
        with self.path.open("rb", buffering=0) as stream:
            fd = stream.fileno()
            first = 0
            while first < len(values):
                # One read for each run of consecutive ids.
                last = first + 1
                while last < len(values) and values[last] == values[last - 1] + 1:
                    last += 1
                want = (last - first) * size
                got = os.preadv(
                    fd,
                    [buffer[first * size : last * size]],
                    self.offset + values[first] * size,
                )
                if got != want:
                    raise EncoderError(f"{self.path.name}: embedding table cut short")
                first = last
        return rows[inverse.reshape(-1)]


class ArrayRows:
    """An embedding table already in memory (converted from float16/bfloat16)."""

    def __init__(self, table: F32) -> None:
        """Wrap the (vocab, H) array."""
        self.table = table
        self.shape = table.shape

    def take(self, ids: npt.NDArray[np.int64]) -> F32:
        """Rows `ids` as a new array."""
        return np.take(self.table, ids, axis=0)


@dataclass(slots=True)
class Weights:
    """The whole model's tensors, as views of the mapped file."""

    word: EmbeddingRows | ArrayRows  # (vocab, H), read per batch
    position: F32  # (max positions, H)
    token_type: F32  # (H,): every text is segment 0
    ln_g: F32
    ln_b: F32
    layers: list[Layer]


_DTYPES: dict[str, str] = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "BF16": "<u2"}
_MAX_HEADER = 100 * 1024 * 1024


class TensorFile:
    """Tensors of a `.safetensors` file, memory-mapped and read-only.

    float32 tensors are views of the file: nothing is copied (the
    token-embedding table is read by rows instead, `rows`), and under memory
    pressure the kernel can drop the pages and read them back instead of
    swapping. Other float types are converted on access. The format is a
    little-endian u64 header length, a JSON header of names, dtypes, shapes
    and byte offsets, then the data.
    """

    def __init__(self, path: Path) -> None:
        """Map `path` and read its header; `EncoderError` if it is no safetensors file."""
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
        self._path = path
        self._start = 8 + size
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

    def rows(self, name: str) -> EmbeddingRows | ArrayRows:
        """Give a (vocab, H) table to read by rows: from the file when float32."""
        table = self(name)
        entry = self._entries[self._prefix + name]
        if entry["dtype"] != "F32" or table.ndim != 2:
            return ArrayRows(table)
        begin = int(entry["data_offsets"][0])
        return EmbeddingRows(
            self._path, self._start + begin, (table.shape[0], table.shape[1])
        )


def load_weights(path: Path, config: BertConfig) -> Weights:
    """Map the weights as (in, out) views, the layout `x @ w` wants.

    The transposes are free (BLAS reads a transposed matrix as it is), so no
    weight is copied and the whole model costs only the pages it touches.
    """
    read = TensorFile(path)
    hidden = config.hidden_size
    layers = []
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}."
        a = p + "attention."
        layers.append(
            Layer(
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
    weights = Weights(
        word=read.rows("embeddings.word_embeddings.weight"),
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
