"""The numpy vector index against the exact scan: recall, memory, scan time (#25).

Run from the repository root in the Python 3.14 environment:

    python bench/vector_index.py --sizes 10000,100000 \
        --locomo ../shared/bench/locomo

For each set it fills a `NumpyIndex` with unit vectors, asks it for the 200
candidates the store asks for (`SEMANTIC_POOL` x `SEMANTIC_OVERSAMPLE`),
re-scores them exactly as the store does, and compares with the exact scan
of every vector: recall@10 (the results) and recall@50 (the semantic pool
fusion sees). Sets: bench/engine.py's synthetic corpus (queries near a
memory, as there), and LoCoMo's all-MiniLM-L6-v2 vectors (its questions
against its turns, facts and summaries). Also the index's arrays and the
CPU time of `knn` per query (one thread; medians and p95).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
import sys
import time
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

REPO: Final = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from custom_components.memory.engine.search.semantic import (  # noqa: E402
    SEMANTIC_OVERSAMPLE,
    SEMANTIC_POOL,
)
from custom_components.memory.engine.vectors.index import NumpyIndex  # noqa: E402

if TYPE_CHECKING:
    from bench.engine import Corpus

type Floats = npt.NDArray[np.float32]

CANDIDATES: Final = SEMANTIC_POOL * SEMANTIC_OVERSAMPLE
MIB: Final = 1024 * 1024
SEED: Final = 20_261_126


def _corpus() -> type[Corpus]:
    """bench/engine.py's Corpus (a file, not a package: `engine` is taken)."""
    spec = importlib.util.spec_from_file_location(
        "bench_engine", REPO / "bench/engine.py"
    )
    assert spec is not None and spec.loader is not None  # noqa: S101
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    corpus: type[Corpus] = module.Corpus
    return corpus


def _unit(matrix: npt.NDArray[Any]) -> Floats:
    units: Floats = (matrix / np.linalg.norm(matrix, axis=-1, keepdims=True)).astype(
        np.float32
    )
    return units


def synthetic(size: int, queries: int) -> tuple[Floats, Floats]:
    """bench/engine.py's memories of `size` and queries near some of them."""
    corpus = _corpus()()
    seed = 20_260_101 + size  # bench/engine.py's seed for this size
    texts, scopes, vectors, _topics = corpus.memories(size, seed=seed)
    made = corpus.queries(queries, texts, scopes, vectors, seed=seed + 1)
    query_vectors: Floats = made["vectors"]
    return vectors, query_vectors


def locomo(folder: Path) -> tuple[Floats, Floats]:
    """LoCoMo's MiniLM vectors: questions as queries, every other text stored."""
    texts = json.loads((folder / "minilm_dev.texts.json").read_text("utf-8"))
    vectors = _unit(np.load(folder / "minilm_dev.vectors.npy").astype(np.float32))
    conversations = json.loads((folder / "locomo10_dev.json").read_text("utf-8"))
    questions = {qa["question"] for conv in conversations for qa in conv["qa"]}
    asked = np.asarray([text in questions for text in texts])
    return vectors[~asked], vectors[asked]


def measure(vectors: Floats, queries: Floats) -> dict[str, float]:
    """Fill an index, query it, re-score its candidates, compare with exact."""
    index = NumpyIndex(vectors.shape[1], capacity=len(vectors))
    start = time.process_time()
    for first in range(0, len(vectors), 4096):
        rows = range(first, min(first + 4096, len(vectors)))
        index.add_sync(list(rows), vectors[first : rows.stop])
    build = time.process_time() - start
    # Timed apart from the exact scans: BLAS threads that scan still spin
    # (and count as this process's CPU) during the next call.
    cpu: list[float] = []
    candidates = []
    for query in queries:
        tick = time.process_time()
        candidates.append(index.knn_sync(query, CANDIDATES))
        cpu.append(time.process_time() - tick)
    recall10 = recall50 = 0.0
    for query, found in zip(queries, candidates, strict=True):
        ids = np.asarray([item_id for item_id, _score in found])
        rescored = ids[np.argsort(-(vectors[ids] @ query), kind="stable")]
        exact = np.argsort(-(vectors @ query), kind="stable")
        recall10 += len(set(rescored[:10]) & set(exact[:10])) / 10
        recall50 += len(set(rescored[:50]) & set(exact[:50])) / 50
    ms = np.asarray(cpu) * 1000.0
    return {
        "rows": float(len(vectors)),
        "queries": float(len(queries)),
        "recall_at_10": recall10 / len(queries),
        "recall_at_50": recall50 / len(queries),
        "index_mib": index.nbytes / MIB,
        # int8 codes, a scale, an id and sign bits a row: the index before #25.
        "int8_index_mib": len(vectors) * (vectors.shape[1] * 9 // 8 + 12) / MIB,
        "float32_mib": vectors.nbytes / MIB,
        "build_cpu_s": build,
        "knn_cpu_p50_ms": float(np.percentile(ms, 50)),
        "knn_cpu_p95_ms": float(np.percentile(ms, 95)),
    }


def markdown(results: dict[str, dict[str, float]]) -> str:
    """One row a set."""
    lines = [
        f"{CANDIDATES} candidates re-scored exactly; recall against the exact scan.",
        "",
        (
            "| set | vectors | queries | recall@10 | recall@50 | index (MiB) | "
            "int8 index (MiB) | float32 (MiB) | build CPU (s) | "
            "knn CPU p50 / p95 (ms) |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['rows']:,.0f} | {r['queries']:,.0f} | "
            f"{r['recall_at_10']:.4f} | {r['recall_at_50']:.4f} | "
            f"{r['index_mib']:.2f} | {r['int8_index_mib']:.2f} | "
            f"{r['float32_mib']:.1f} | {r['build_cpu_s']:.2f} | "
            f"{r['knn_cpu_p50_ms']:.2f} / {r['knn_cpu_p95_ms']:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Measure the sets asked for and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(size) for size in text.split(",")],
        default=[10_000, 100_000],
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--locomo", type=Path, help="folder of LoCoMo's MiniLM files")
    parser.add_argument("--json", type=Path, help="also write the results")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    for size in args.sizes:
        vectors, queries = synthetic(size, args.queries)
        results[f"bench/engine.py {size:,}"] = measure(vectors, queries)
    if args.locomo:
        vectors, queries = locomo(args.locomo)
        results["LoCoMo MiniLM"] = measure(vectors, queries)
    print(markdown(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
