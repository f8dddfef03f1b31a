"""Issue #25: the engine's hybrid search side by side with its peers.

Run from the repository root in the Python 3.14 environment:

    python bench/peers.py                                # 10k, 100k; 5 runs
    python bench/peers.py --sizes 10k,100k,300k --data bench/out/peers-data \
        --engine bench/out/wt-peers/custom_components/memory

Five systems search the same corpus with the same queries and the same
384-dimensional query vectors, those of bench/engine.py (its `Corpus`, its
build and its `--data` cache are imported, not copied):

- `ours`: the engine's `MemoryStore.search` with text and vector (hybrid),
  numpy backend, through bench/engine.py's own search worker, which also
  times keyword-only and vector-only searches;
- `auto`: the same with the default backend (`auto`);
- `openclaw`: a model of OpenClaw's memory manager (`src/memory/` of
  openclaw/openclaw): a `chunks` table, an FTS5 table over the chunk text
  and a sqlite-vec `vec0` table; hybrid = `vec0` KNN top-k joined to
  `chunks` + FTS5 bm25 top-k, merged by weighted score (see `OpenClaw`);
- `brute`: vector-only brute force, the float32 matrix @ query, then
  `argpartition` top-k (no scopes);
- `floor`: the float32 scan floor, `matrix @ query` alone (no top-k): the
  time numpy needs to read the float32 matrix once.

Every system runs in its own subprocess for every run; runs are rotated
(run r starts with the r-th system) so all see the same load over the
session, and every figure is the median over `--runs` runs of a run's
p50 or p95. Query embedding is excluded. The printed Markdown has the
latencies, the ratios the #25 targets use and the targets' verdicts.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import functools
import hashlib
import importlib.util
import io
import json
import os
from pathlib import Path
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from types import ModuleType
from typing import Any, Final

import numpy as np
import numpy.typing as npt

REPO: Final = Path(__file__).resolve().parent.parent
# Read by bench/engine.py when it is imported: the engine package to measure.
ENGINE_ENV: Final = "MEMORY_BENCH_ENGINE_DIR"
RESULT_PREFIX: Final = "PEERS-RESULT "
SYSTEMS: Final = ("ours", "auto", "openclaw", "brute", "floor")
LABELS: Final = {
    "ours": "ours, numpy",
    "auto": "ours, `auto`",
    "openclaw": "OpenClaw-style FTS5 + vec0",
    "brute": "vector-only numpy brute force",
    "floor": "float32 scan floor",
}

# OpenClaw's defaults (src/memory: hybrid.ts, manager-search.ts, the search
# in manager.ts): 0.7 vector + 0.3 text, 4 x maxResults candidates from each
# side (at most 200), results below 0.35 dropped; a vec0 KNN with a source
# filter asks for 10 x its limit (at most 2,000) before the filter.
OC_VECTOR_WEIGHT: Final = 0.7
OC_TEXT_WEIGHT: Final = 0.3
OC_CANDIDATE_MULTIPLIER: Final = 4
OC_MIN_SCORE: Final = 0.35
OC_SNIPPET_CHARS: Final = 700
OC_SOURCE: Final = "memory"
OC_TOKEN: Final = re.compile(r"\w+")

# Issue #25's targets: hybrid p50 and p95 at most this share of the
# OpenClaw-style search's; hybrid p95 at most 1.5 x the brute force's;
# `auto` at most 1.1 x numpy; hybrid p95 at most 3 x the scan floor.
TARGET_VS_OPENCLAW: Final = {10_000: 0.5, 100_000: 0.1, 300_000: 0.1}
TARGET_VS_BRUTE: Final = (1.5, (100_000, 1_000_000))
TARGET_AUTO: Final = 1.1
TARGET_VS_FLOOR: Final = (3.0, (1_000_000,))

type FloatMatrix = npt.NDArray[np.float32]


@functools.cache
def bench_engine() -> ModuleType:
    """bench/engine.py (a file, not a package: `engine` is the engine's name).

    It imports the engine package named by MEMORY_BENCH_ENGINE_DIR, so that
    variable must be set before the first call.
    """
    sys.path.insert(0, str(REPO / "bench"))  # its `_machine` neighbour
    spec = importlib.util.spec_from_file_location(
        "bench_engine", REPO / "bench" / "engine.py"
    )
    assert spec is not None and spec.loader is not None  # noqa: S101
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _log(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


def _stats(
    latencies: list[float], cpu: list[float], found: int, hits: int = 0
) -> dict[str, float]:
    values = np.asarray(latencies) * 1000.0
    return {
        "p50_ms": float(np.percentile(values, 50)),
        "p95_ms": float(np.percentile(values, 95)),
        "mean_ms": float(values.mean()),
        "cpu_mean_ms": float(np.mean(cpu)) * 1000.0,
        "target_at_10": found / len(latencies),
        "hits_mean": hits / len(latencies),
    }


def _timed[T](
    run: Callable[[int], list[T]], count: int, warmup: int, targets: list[T]
) -> dict[str, float]:
    """Run query k = 0..count-1 after `warmup` untimed ones; time each."""
    for k in range(min(warmup, count)):
        run(k)
    latencies: list[float] = []
    cpu: list[float] = []
    found = hits = 0
    for k in range(count):
        tick, tock = time.perf_counter(), time.process_time()
        ids = run(k)
        latencies.append(time.perf_counter() - tick)
        cpu.append(time.process_time() - tock)
        found += targets[k] in ids
        hits += len(ids)
    return _stats(latencies, cpu, found, hits)


# -- the OpenClaw-style store --------------------------------------------------


def _connect_vec(path: str, *, uri: bool = False) -> sqlite3.Connection:
    import sqlite_vec  # noqa: PLC0415 - a bench-only dependency

    conn = sqlite3.connect(path, uri=uri)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn


OC_SCHEMA: Final = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)
    """,
    """
    CREATE TABLE chunks (
      id TEXT PRIMARY KEY,
      path TEXT NOT NULL,
      source TEXT NOT NULL DEFAULT 'memory',
      start_line INTEGER NOT NULL,
      end_line INTEGER NOT NULL,
      hash TEXT NOT NULL,
      model TEXT NOT NULL,
      dims INTEGER,
      text TEXT NOT NULL,
      embedding TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    )
    """,
    """
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
      text,
      id UNINDEXED,
      path UNINDEXED,
      source UNINDEXED,
      model UNINDEXED,
      start_line UNINDEXED,
      end_line UNINDEXED
    )
    """,
    "CREATE INDEX idx_chunks_path ON chunks(path)",
    "CREATE INDEX idx_chunks_source ON chunks(source)",
)


def build_openclaw(
    path: Path, ids: list[int], texts: list[str], vectors: FloatMatrix, model: str
) -> None:
    """Write OpenClaw's index of the corpus: one chunk per memory.

    As OpenClaw does: `chunks` keeps the embedding as JSON text, `chunks_fts`
    the text (unicode61), `chunks_vec` (vec0) the float32 vector under the
    chunk's TEXT id. The chunk id is the engine's memory id, so hits compare.
    """
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    conn = _connect_vec(str(path))
    conn.execute("PRAGMA journal_mode=WAL")
    for statement in OC_SCHEMA:
        conn.execute(statement)
    conn.execute(
        "CREATE VIRTUAL TABLE chunks_vec USING vec0("
        f"id TEXT PRIMARY KEY, embedding FLOAT[{vectors.shape[1]}])"
    )
    now = int(time.time() * 1000)
    batch = 2000
    for first in range(0, len(ids), batch):
        block = vectors[first : first + batch]
        text = io.StringIO()
        np.savetxt(text, block, fmt="%.7g", delimiter=",")
        embeddings = [f"[{line}]" for line in text.getvalue().splitlines()]
        rows = []
        for k, memory_id in enumerate(ids[first : first + batch]):
            line = first + k + 1
            body = texts[first + k]
            rows.append(
                (
                    str(memory_id),
                    f"memory/{line // 500:04d}.md",
                    OC_SOURCE,
                    line,
                    line,
                    hashlib.sha256(body.encode()).hexdigest(),
                    model,
                    vectors.shape[1],
                    body,
                    embeddings[k],
                    now,
                )
            )
        with conn:
            conn.executemany(
                "INSERT INTO chunks (id, path, source, start_line, end_line, hash, "
                "model, dims, text, embedding, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.executemany(
                "INSERT INTO chunks_fts (text, id, path, source, model, "
                "start_line, end_line) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(r[8], r[0], r[1], r[2], r[6], r[3], r[4]) for r in rows],
            )
            conn.executemany(
                "INSERT INTO chunks_vec (id, embedding) VALUES (?, ?)",
                [(row[0], block[k].tobytes()) for k, row in enumerate(rows)],
            )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


class OpenClaw:
    """OpenClaw's memory search over its SQLite index, modelled faithfully.

    - keyword: the query's word tokens, each quoted, joined by AND
      (`buildFtsQuery`); `SELECT ..., bm25(chunks_fts) AS rank FROM
      chunks_fts WHERE chunks_fts MATCH ? AND model = ? AND source IN (?)
      ORDER BY rank LIMIT candidates`; score = r / (1 + r) with r = -rank
      (`bm25RankToScore`);
    - vector: `WITH knn AS (SELECT c.*, vec_distance_cosine(v.embedding, ?)
      AS dist FROM chunks_vec v JOIN chunks c ON c.id = v.id WHERE
      c.model = ? AND c.source IN (?) AND v.embedding MATCH ? AND k = ?)
      SELECT ... ORDER BY dist LIMIT candidates`, k = 10 x candidates
      (the source filter is on); score = 1 - dist;
    - hybrid: both with candidates = 4 x limit, union by chunk id, score =
      0.7 vector + 0.3 text, sorted, below 0.35 dropped, the first `limit`
      (`mergeHybridResults`). Snippets are cut to 700 characters.
    """

    def __init__(self, path: str, model: str, limit: int) -> None:
        """Open the index read-only with sqlite-vec loaded."""
        self.conn = _connect_vec(f"file:{path}?mode=ro", uri=True)
        self.model = model
        self.limit = limit
        self.candidates = min(200, max(1, limit * OC_CANDIDATE_MULTIPLIER))

    @staticmethod
    def fts_query(raw: str) -> str | None:
        """OpenClaw's `buildFtsQuery`: quoted word tokens joined by AND."""
        tokens = [token for token in OC_TOKEN.findall(raw) if token]
        if not tokens:
            return None
        return " AND ".join('"' + token.replace('"', "") + '"' for token in tokens)

    @staticmethod
    def text_score(rank: float) -> float:
        """OpenClaw's `bm25RankToScore` (FTS5's bm25 is negative, lower better)."""
        if not np.isfinite(rank):
            return 1 / (1 + 999)
        if rank < 0:
            return -rank / (1 - rank)
        return 1 / (1 + rank)

    def keyword(self, text: str, limit: int) -> list[tuple[str, float, str]]:
        """FTS5 bm25 top `limit`: (id, text score, snippet)."""
        query = self.fts_query(text)
        if query is None:
            return []
        rows = self.conn.execute(
            "SELECT id, path, source, start_line, end_line, text, "
            "bm25(chunks_fts) AS rank FROM chunks_fts "
            "WHERE chunks_fts MATCH ? AND model = ? AND source IN (?) "
            "ORDER BY rank ASC LIMIT ?",
            (query, self.model, OC_SOURCE, limit),
        ).fetchall()
        return [
            (row[0], self.text_score(row[6]), row[5][:OC_SNIPPET_CHARS]) for row in rows
        ]

    def vector(self, vector: FloatMatrix, limit: int) -> list[tuple[str, float, str]]:
        """vec0 KNN joined to `chunks`: (id, 1 - cosine distance, snippet)."""
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        knn_k = min(2000, max(limit, limit * 10))
        rows = self.conn.execute(
            "WITH knn AS (\n"
            "  SELECT c.id, c.path, c.start_line, c.end_line, c.text,\n"
            "         c.source, vec_distance_cosine(v.embedding, ?) AS dist\n"
            "    FROM chunks_vec v\n"
            "    JOIN chunks c ON c.id = v.id\n"
            "   WHERE c.model = ? AND c.source IN (?)\n"
            "     AND v.embedding MATCH ? AND k = ?\n"
            ")\n"
            "SELECT id, path, start_line, end_line, text, source, dist\n"
            "  FROM knn ORDER BY dist ASC LIMIT ?",
            (blob, self.model, OC_SOURCE, blob, knn_k, limit),
        ).fetchall()
        return [(row[0], 1.0 - row[6], row[4][:OC_SNIPPET_CHARS]) for row in rows]

    def hybrid(self, text: str, vector: FloatMatrix) -> list[tuple[str, float]]:
        """Keyword and vector candidates merged by weighted score."""
        keyword = self.keyword(text, self.candidates)
        vectors = self.vector(vector, self.candidates)
        merged: dict[str, list[float]] = {}
        for chunk_id, score, _snippet in vectors:
            merged[chunk_id] = [score, 0.0]
        for chunk_id, score, _snippet in keyword:
            merged.setdefault(chunk_id, [0.0, 0.0])[1] = score
        scored = sorted(
            (
                (chunk_id, OC_VECTOR_WEIGHT * v + OC_TEXT_WEIGHT * t)
                for chunk_id, (v, t) in merged.items()
            ),
            key=lambda item: -item[1],
        )
        return [item for item in scored if item[1] >= OC_MIN_SCORE][: self.limit]


# -- workers -------------------------------------------------------------------


def _queries(spec: dict[str, Any]) -> tuple[dict[str, Any], FloatMatrix]:
    queries = json.loads(Path(spec["queries_file"]).read_text())
    vectors: FloatMatrix = np.load(spec["vectors"])
    return queries, vectors


def task_build(spec: dict[str, Any]) -> dict[str, Any]:
    """Make the peers' data from the engine's corpus: matrix, ids, OpenClaw DB."""
    be = bench_engine()
    size = int(spec["size"])
    start = time.perf_counter()
    texts, _scopes, vectors, _topics = be.Corpus().memories(size, seed=be.SEED + size)
    uri = f"file:{spec['db']}?mode=ro"
    with sqlite3.connect(uri, uri=True) as conn:
        by_text = dict(
            conn.execute("SELECT content, id FROM memories WHERE status = 'active'")
        )
    conn.close()
    ids = [int(by_text[text]) for text in texts]
    np.save(spec["matrix"], vectors)
    np.save(spec["ids"], np.asarray(ids, dtype=np.int64))
    corpus_s = time.perf_counter() - start
    if not spec["openclaw"]:  # not measured: 6.4 GiB and minutes at 1M
        return {"corpus_s": corpus_s}
    start = time.perf_counter()
    build_openclaw(Path(spec["openclaw_db"]), ids, texts, vectors, be.MODEL)
    seconds = time.perf_counter() - start
    return {
        "corpus_s": corpus_s,
        "openclaw_s": seconds,
        "openclaw_per_s": size / seconds,
        "openclaw_mib": Path(spec["openclaw_db"]).stat().st_size / 1024 / 1024,
    }


def task_openclaw(spec: dict[str, Any]) -> dict[str, Any]:
    """Time the OpenClaw-style keyword, vector and hybrid searches."""
    queries, vectors = _queries(spec)
    limit = int(spec["limit"])
    store = OpenClaw(spec["openclaw_db"], bench_engine().MODEL, limit)
    count, warmup = len(queries["texts"]), int(spec["warmup"])
    targets = [str(target) for target in queries["targets"]]
    texts = queries["texts"]

    def keyword(k: int) -> list[str]:
        return [row[0] for row in store.keyword(texts[k], limit)]

    def vector(k: int) -> list[str]:
        return [row[0] for row in store.vector(vectors[k], limit)]

    def hybrid(k: int) -> list[str]:
        return [row[0] for row in store.hybrid(texts[k], vectors[k])]

    result = {
        mode: _timed(run, count, warmup, targets)
        for mode, run in (("keyword", keyword), ("vector", vector), ("hybrid", hybrid))
        if mode in spec.get("modes", ("keyword", "vector", "hybrid"))
    }
    store.conn.close()
    return result


def task_brute(spec: dict[str, Any]) -> dict[str, Any]:
    """Time vector-only brute force (matrix @ query, argpartition top-k)."""
    queries, vectors = _queries(spec)
    matrix: FloatMatrix = np.ascontiguousarray(np.load(spec["matrix"]))
    ids: npt.NDArray[np.int64] = np.load(spec["ids"])
    limit = int(spec["limit"])

    def search(k: int) -> list[int]:
        scores = matrix @ vectors[k]
        top = np.argpartition(-scores, limit)[:limit]
        top = top[np.argsort(-scores[top])]
        return [int(i) for i in ids[top]]

    return {
        "vector": _timed(
            search, len(queries["texts"]), int(spec["warmup"]), queries["targets"]
        )
    }


def task_floor(spec: dict[str, Any]) -> dict[str, Any]:
    """Time one pass of numpy over the float32 matrix (matrix @ query only)."""
    queries, vectors = _queries(spec)
    matrix: FloatMatrix = np.ascontiguousarray(np.load(spec["matrix"]))
    out = np.empty(len(matrix), dtype=np.float32)
    count, warmup = len(queries["texts"]), int(spec["warmup"])
    for k in range(min(warmup, count)):
        np.matmul(matrix, vectors[k], out=out)
    latencies: list[float] = []
    cpu: list[float] = []
    for k in range(count):
        tick, tock = time.perf_counter(), time.process_time()
        np.matmul(matrix, vectors[k], out=out)
        latencies.append(time.perf_counter() - tick)
        cpu.append(time.process_time() - tock)
    return {"scan": _stats(latencies, cpu, 0)}


TASKS: Final = {
    "build": task_build,
    "openclaw": task_openclaw,
    "brute": task_brute,
    "floor": task_floor,
}


def worker(spec_json: str) -> None:
    """Entry point of a worker subprocess: run one task, print its result."""
    spec = json.loads(spec_json)
    result = TASKS[spec["task"]](spec)
    print(RESULT_PREFIX + json.dumps(result), flush=True)


# -- orchestration -------------------------------------------------------------


def _run_peer(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one task of this script in a fresh subprocess (bench/engine.py's runner)."""
    result: dict[str, Any] = bench_engine()._run_worker(  # noqa: SLF001 - our own bench
        spec, Path(__file__), RESULT_PREFIX
    )
    return result


def _run_system(
    system: str, files: dict[str, str], args: argparse.Namespace
) -> dict[str, Any]:
    be = bench_engine()
    common = {"warmup": args.warmup, "limit": be.LIMIT} | files
    if system in {"ours", "auto"}:
        # bench/engine.py's own search worker: keyword, vector and hybrid.
        backend = "numpy" if system == "ours" else "auto"
        result: dict[str, Any] = be._run_worker(  # noqa: SLF001 - our own bench
            {"task": "search", "backend": backend, "modes": be.MODES} | common
        )
        return result
    if system == "openclaw" and not args.openclaw_stages:
        common["modes"] = ["hybrid"]
    return _run_peer({"task": system} | common)


def _peer_files(folder: Path, size: int) -> dict[str, str]:
    return {
        "matrix": str(folder / f"peers-matrix-{size}.npy"),
        "ids": str(folder / f"peers-ids-{size}.npy"),
        "openclaw_db": str(folder / f"peers-openclaw-{size}.db"),
    }


def measure_size(
    args: argparse.Namespace, workdir: Path, size: int, engine: str
) -> dict[str, Any]:
    """Build (or reuse) one size's data, then run every system, rotated."""
    be = bench_engine()
    folder = args.data or workdir
    engine_files, builds = be._build(args, workdir, size, [("", engine)])  # noqa: SLF001
    files = engine_files[""] | _peer_files(folder, size)
    done = folder / f"peers-build-{size}.json"
    openclaw = "openclaw" in args.systems
    reuse = json.loads(done.read_text()) if args.data and done.exists() else None
    if reuse is not None and (not openclaw or "openclaw_s" in reuse):
        build = reuse | {"reused": True}
        _log(f"{size}: reusing the peers' data")
    else:
        what = "float32 matrix, OpenClaw DB" if openclaw else "float32 matrix"
        _log(f"{size}: building the peers' data ({what})")
        build = _run_peer({"task": "build", "size": size, "openclaw": openclaw} | files)
        if args.data is not None:
            done.write_text(json.dumps(build))
        if openclaw:
            _log(f"{size}: OpenClaw DB built at {build['openclaw_per_s']:.0f} chunks/s")
    systems = list(args.systems)
    runs: dict[str, list[dict[str, Any]]] = {system: [] for system in systems}
    for run in range(args.runs):
        shift = run % len(systems)
        for system in systems[shift:] + systems[:shift]:
            _log(f"{size}: {system} run {run + 1}/{args.runs}")
            runs[system].append(_run_system(system, files, args))
    return {
        "engine_build": builds[""],
        "peers_build": build,
        "systems": {
            system: {"median": be._median_tree(results), "runs": results}  # noqa: SLF001
            for system, results in runs.items()
        },
    }


# -- report --------------------------------------------------------------------


def _fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _get(entry: dict[str, Any], system: str, mode: str, key: str) -> float | None:
    data = entry["systems"].get(system)
    if data is None:
        return None
    value = data["median"].get(mode, {}).get(key)
    return None if value is None else float(value)


def _ratio(top: float | None, bottom: float | None) -> float | None:
    return None if top is None or bottom is None or bottom == 0 else top / bottom


def _pair(entry: dict[str, Any], system: str, mode: str) -> str:
    p50, p95 = _get(entry, system, mode, "p50_ms"), _get(entry, system, mode, "p95_ms")
    return "–" if p50 is None else f"{_fmt(p50, 2)} / {_fmt(p95, 2)}"


def _max_load(node: Any) -> float:
    if isinstance(node, dict):
        own = float(node["load"]) if "load" in node else 0.0
        return max([own, *(_max_load(value) for value in node.values())])
    if isinstance(node, list):
        return max([0.0, *(_max_load(value) for value in node)])
    return 0.0


def ratios(entry: dict[str, Any]) -> dict[str, float | None]:
    """Compute the ratios the #25 targets use, for one size."""
    ours50, ours95 = (
        _get(entry, "ours", "hybrid", key) for key in ("p50_ms", "p95_ms")
    )
    return {
        "vs_openclaw_p50": _ratio(ours50, _get(entry, "openclaw", "hybrid", "p50_ms")),
        "vs_openclaw_p95": _ratio(ours95, _get(entry, "openclaw", "hybrid", "p95_ms")),
        "vs_brute_p95": _ratio(ours95, _get(entry, "brute", "vector", "p95_ms")),
        "vs_floor_p95": _ratio(ours95, _get(entry, "floor", "scan", "p50_ms")),
        "auto_vs_numpy_p95": _ratio(_get(entry, "auto", "hybrid", "p95_ms"), ours95),
    }


def targets(report: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """Issue #25's targets for the sizes measured: (target, measured, pass)."""
    rows: list[tuple[str, str, bool]] = []
    for size_key, entry in report["sizes"].items():
        size, ratio = int(size_key), ratios(entry)
        share = TARGET_VS_OPENCLAW.get(size)
        for pct in ("p50", "p95"):
            value = ratio[f"vs_openclaw_{pct}"]
            if share is not None and value is not None:
                rows.append(
                    (
                        f"{size:,}: hybrid {pct} ≤ {share:g} × OpenClaw-style",
                        f"{value:.2f} ×",
                        value <= share,
                    )
                )
        for key, bound, sizes, label in (
            ("vs_brute_p95", *TARGET_VS_BRUTE, "hybrid p95 ≤ {:g} × brute force p95"),
            (
                "auto_vs_numpy_p95",
                TARGET_AUTO,
                None,
                "`auto` hybrid p95 ≤ {:g} × numpy's",
            ),
            ("vs_floor_p95", *TARGET_VS_FLOOR, "hybrid p95 ≤ {:g} × the scan floor"),
        ):
            value = ratio[key]
            if (sizes is None or size in sizes) and value is not None:
                rows.append(
                    (
                        f"{size:,}: {label.format(bound)}",
                        f"{value:.2f} ×",
                        value <= bound,
                    )
                )
    return rows


def markdown(report: dict[str, Any], command: str) -> str:
    """Render the report: latencies, ratios, stages, quality, targets."""
    env, settings = report["environment"], report["settings"]
    lines = [
        f"Command: `{command}`",
        "",
        (
            f"Machine: {env['cpu']}, {env['cores']} cores; Python {env['python']}, "
            f"numpy {env['numpy']}, SQLite {env['sqlite']}, sqlite-vec "
            f"{env['sqlite_vec']}; engine {env['engine']}; load average "
            f"{env['load_average'][0]:.2f} at start, {report['load_end'][0]:.2f} "
            f"at end, at most {_max_load(report):.2f} around a run."
        ),
        "",
        (
            f"Median of {settings['runs']} runs per system, each a fresh process, "
            f"rotated; {settings['queries']} queries per mode after "
            f"{settings['warmup']} warm-up queries; limit {settings['limit']}; "
            f"{settings['dim']}-dim vectors; query embedding excluded. "
            "p50 / p95 in ms (the floor: p50 of `matrix @ query`)."
        ),
        "",
        (
            "| memories | ours, numpy | ours, `auto` | OpenClaw-style FTS5 + vec0 | "
            "vector-only numpy brute force | float32 scan floor | "
            "ours / OpenClaw p50 | ours / OpenClaw p95 | ours p95 / brute p95 | "
            "ours p95 / floor | `auto` / numpy p95 |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, entry in report["sizes"].items():
        ratio = ratios(entry)
        lines.append(
            f"| {int(size):,} | {_pair(entry, 'ours', 'hybrid')} | "
            f"{_pair(entry, 'auto', 'hybrid')} | {_pair(entry, 'openclaw', 'hybrid')}"
            f" | {_pair(entry, 'brute', 'vector')} | "
            f"{_fmt(_get(entry, 'floor', 'scan', 'p50_ms'), 2)} | "
            + " | ".join(
                _fmt(ratio[key], 2) + (" ×" if ratio[key] is not None else "")
                for key in (
                    "vs_openclaw_p50",
                    "vs_openclaw_p95",
                    "vs_brute_p95",
                    "vs_floor_p95",
                    "auto_vs_numpy_p95",
                )
            )
            + " |"
        )
    lines += [
        "",
        (
            "Stages alone, top 10 (p50 / p95 ms; ours through "
            "`MemoryStore.search` with text only or vector only; OpenClaw's "
            "FTS5 query and its vec0 query for 10 results, k = 100, where its "
            "hybrid asks each for 40, k = 400) and how often the memory a query "
            "was made from is in the top 10 (hybrid; brute force: vector, no "
            "scopes):"
        ),
        "",
        (
            "| memories | ours keyword | ours vector | OpenClaw keyword (FTS5) | "
            "OpenClaw keyword hits (of 10) | OpenClaw vector (vec0) | "
            "target@10 ours / `auto` / OpenClaw / brute |"
        ),
        "|---:|---:|---:|---:|---:|---:|---|",
    ]
    for size, entry in report["sizes"].items():
        found = [
            _get(entry, system, mode, "target_at_10")
            for system, mode in (
                ("ours", "hybrid"),
                ("auto", "hybrid"),
                ("openclaw", "hybrid"),
                ("brute", "vector"),
            )
        ]
        lines.append(
            f"| {int(size):,} | {_pair(entry, 'ours', 'keyword')} | "
            f"{_pair(entry, 'ours', 'vector')} | {_pair(entry, 'openclaw', 'keyword')}"
            f" | {_fmt(_get(entry, 'openclaw', 'keyword', 'hits_mean'))} | "
            f"{_pair(entry, 'openclaw', 'vector')} | "
            + " / ".join(_fmt(value, 3) for value in found)
            + " |"
        )
    lines += [
        "",
        (
            "| memories | engine build (memories/s) | OpenClaw DB build (chunks/s) | "
            "OpenClaw DB (MiB) |"
        ),
        "|---:|---:|---:|---:|",
    ]
    for size, entry in report["sizes"].items():
        engine_build, peers = entry["engine_build"], entry["peers_build"]
        lines.append(
            f"| {int(size):,} | {_fmt(engine_build['per_second'], 0)}"
            f"{' (reused)' if engine_build.get('reused') else ''} | "
            f"{_fmt(peers.get('openclaw_per_s'), 0)}"
            f"{' (reused)' if peers.get('reused') else ''} | "
            f"{_fmt(peers.get('openclaw_mib'), 0)} |"
        )
    lines += [
        "",
        (
            "CPU time per query (mean ms, all threads; steadier than latency "
            "on a loaded machine) and the same ratios by CPU:"
        ),
        "",
        (
            "| memories | ours, numpy | ours, `auto` | OpenClaw-style | brute force "
            "| scan floor | ours / OpenClaw | ours / brute | ours / floor |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, entry in report["sizes"].items():
        cpu = [
            _get(entry, system, mode, "cpu_mean_ms")
            for system, mode in (
                ("ours", "hybrid"),
                ("auto", "hybrid"),
                ("openclaw", "hybrid"),
                ("brute", "vector"),
                ("floor", "scan"),
            )
        ]
        lines.append(
            f"| {int(size):,} | "
            + " | ".join(_fmt(value, 2) for value in cpu)
            + " | "
            + " | ".join(
                _fmt(_ratio(cpu[0], other), 2) for other in (cpu[2], cpu[3], cpu[4])
            )
            + " |"
        )
    rows = targets(report)
    if rows:
        lines += ["", "| #25 target | measured | |", "|---|---:|---|"]
        lines += [
            f"| {name} | {value} | {'pass' if ok else '**FAIL**'} |"
            for name, value, ok in rows
        ]
    return "\n".join(lines) + "\n"


def _systems(text: str) -> list[str]:
    systems = [part.strip() for part in text.split(",") if part.strip()]
    if not systems or not set(systems) <= set(SYSTEMS):
        raise argparse.ArgumentTypeError(f"systems are {', '.join(SYSTEMS)}")
    return systems


def _engine_dir(argv: list[str]) -> str:
    """`--engine DIR` (before bench/engine.py is imported), else the env's or ours."""
    for k, arg in enumerate(argv):
        if arg == "--engine" and k + 1 < len(argv):
            return str(Path(argv[k + 1]).resolve())
        if arg.startswith("--engine="):
            return str(Path(arg.partition("=")[2]).resolve())
    return os.environ.get(ENGINE_ENV) or str(REPO / "custom_components" / "memory")


def main() -> None:
    """Parse arguments, measure every size, print Markdown and maybe JSON."""
    engine = _engine_dir(sys.argv[1:])
    os.environ[ENGINE_ENV] = engine
    be = bench_engine()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=be._sizes, default=[10_000, 100_000])  # noqa: SLF001
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument(
        "--systems",
        type=_systems,
        default=list(SYSTEMS),
        help=f"which to run (default {','.join(SYSTEMS)})",
    )
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: temp)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch data")
    parser.add_argument(
        "--data",
        type=Path,
        help=(
            "folder keeping each size's data, reused when present; the same "
            "as bench/engine.py's --data (the engine must be the same)"
        ),
    )
    parser.add_argument(
        "--no-openclaw-stages",
        dest="openclaw_stages",
        action="store_false",
        help="time the OpenClaw-style hybrid only, not its keyword and vector stages",
    )
    parser.add_argument("--json", type=Path, help="also write the full results")
    parser.add_argument(
        "--engine", type=Path, help="folder with the `engine` package to measure"
    )
    parser.add_argument(
        "--report",
        type=Path,
        help="print the Markdown of an earlier run's --json and stop",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    if args.report is not None:
        earlier = json.loads(args.report.read_text())
        print(markdown(earlier, earlier.get("command", "python bench/peers.py")))
        return
    load = os.getloadavg()[0]
    if load > 0.5:
        _log(f"warning: load average {load:.2f}: other work skews the numbers")
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    if args.data is not None:
        args.data = args.data.resolve()
        args.data.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="peers-bench-", dir=args.workdir))
    shown: list[str] = []
    skip = False
    for arg in sys.argv[1:]:
        if skip or arg.startswith(("--workdir", "--data", "--json")):
            skip = arg in {"--workdir", "--data", "--json"}
            continue
        shown.append(arg)
    command = " ".join(["python bench/peers.py", *shown])
    report: dict[str, Any] = {
        "environment": be._environment() | {"engine": engine},  # noqa: SLF001
        "settings": {
            "sizes": args.sizes,
            "runs": args.runs,
            "queries": args.queries,
            "warmup": args.warmup,
            "limit": be.LIMIT,
            "dim": be.DIM,
            "systems": args.systems,
            "openclaw_stages": args.openclaw_stages,
        },
        "sizes": {},
    }
    started = time.perf_counter()
    try:
        for size in args.sizes:
            report["sizes"][str(size)] = measure_size(args, workdir, size, engine)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    report["seconds"] = time.perf_counter() - started
    report["load_end"] = os.getloadavg()
    report["command"] = command
    _log(f"done in {report['seconds']:.0f} s")
    print(markdown(report, command))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
