"""Start-up of the memory store with a cold page cache: what set-up waits for.

Run from the repository root in the Python 3.14 environment:

    python bench/startup.py                              # 10k and 100k, 5 runs
    python bench/startup.py --engine /tmp/before/custom_components/memory \
        --build-engine /tmp/before/custom_components/memory

`--engine DIR` (a folder holding an `engine` package, e.g. an older
checkout's `custom_components/memory`) is measured against this checkout's,
run for run, interleaved, each on its own copy of the same database (built
once per size by `bench/engine.py`'s builder: 384-dimension vectors, the
numpy backend, closed cleanly; `--build-engine DIR` builds it with another
engine, such as the older one: a newer schema does not open in an older
engine, an older one migrates).

Each run is a fresh process that opens the store the way set-up does
(`open(defer_index=True)` where the engine has it, else `open()`), reads
the statistics the sensors' first refresh reads, runs start-up's expiry, and
reports: `open`, `setup` (all three: what set-up waits for) and `index` (until
the vector index is loaded: in the background, after set-up, where the
engine defers it), `cpu` (the process's CPU seconds until then) and `rss`
(its resident memory then, MiB); the warm-up run of each copy before the
timed ones (its first open: a migration, work done once) is reported as
`first`. Before each run the database's pages are dropped from the
page cache with `posix_fadvise(POSIX_FADV_DONTNEED)` (not `drop_caches`,
which would empty the cache of everyone sharing the machine); the script
checks once that a read after the drop is slower than a warm one.
Each figure is the median over `--runs`; the load average is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
from pathlib import Path
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parent.parent
THIS_ENGINE: Final = REPO / "custom_components" / "memory"
RESULT_PREFIX: Final = "STARTUP-RESULT "
SUFFIXES: Final = ("", "-wal", "-shm")
MODEL: Final = "bench"  # bench/engine.py's model name
TARGET_SECONDS: Final = 0.5
TARGET_SIZE: Final = 100_000


def drop_from_cache(db: Path) -> None:
    """Evict the database files' pages from the page cache (ours only)."""
    for suffix in SUFFIXES:
        path = Path(f"{db}{suffix}")
        if not path.exists():
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)  # only clean pages can be dropped
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _read_seconds(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as file:
        while file.read(1 << 20):
            pass
    return time.perf_counter() - start


def cache_drop_works(db: Path) -> dict[str, float]:
    """Read the file warm, then after a drop: the drop must make it slower."""
    _read_seconds(db)
    warm = _read_seconds(db)
    drop_from_cache(db)
    cold = _read_seconds(db)
    return {"warm_read_s": warm, "cold_read_s": cold}


async def measure(db: str, backend: str) -> dict[str, Any]:
    """Open as set-up does; time open, set-up's reads, and the index load."""
    from engine import MemoryStore  # type: ignore[import-not-found]  # noqa: PLC0415

    store = MemoryStore(db, model=MODEL, vector_backend=backend)
    deferred = "defer_index" in inspect.signature(store.open).parameters
    start = time.perf_counter()
    cpu_start = time.process_time()
    if deferred:
        await store.open(defer_index=True)
    else:
        await store.open()
    opened = time.perf_counter()
    await store.stats()
    await store.expire_due()
    setup = time.perf_counter()
    if deferred:
        await store.load_index()
    ready = time.perf_counter()
    cpu = time.process_time() - cpu_start
    rss = _rss_mib()
    check = getattr(store, "last_check", None)
    await store.close()
    return {
        "open": opened - start,
        "setup": setup - start,
        "index": ready - start,
        "cpu": cpu,
        "rss": rss,
        "check": getattr(check, "kind", "full"),
        "backend": store.vector_backend,
    }


def _rss_mib() -> float:
    """Resident memory of this process now (Linux), MiB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def worker(spec_json: str) -> None:
    """Entry point of a measuring subprocess."""
    spec = json.loads(spec_json)
    # bench/engine.py would shadow the `engine` package.
    here = Path(__file__).resolve().parent
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != here]
    sys.path.insert(0, spec["engine"])
    result = asyncio.run(measure(spec["db"], spec["backend"]))
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def _run(args: list[str], env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(  # noqa: S603 - our own scripts, our own arguments
        [sys.executable, *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env=env,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise RuntimeError(f"{args[0]} failed ({proc.returncode})")
    return proc.stdout


def run_once(engine: Path, db: Path, backend: str) -> dict[str, Any]:
    """Drop the cache, then open in a fresh process."""
    drop_from_cache(db)
    load = os.getloadavg()[0]
    spec = {"engine": str(engine), "db": str(db), "backend": backend}
    out = _run([str(Path(__file__).resolve()), "--worker", json.dumps(spec)])
    for line in reversed(out.splitlines()):
        if line.startswith(RESULT_PREFIX):
            result: dict[str, Any] = json.loads(line.removeprefix(RESULT_PREFIX))
            result["load"] = max(load, os.getloadavg()[0])
            return result
    raise RuntimeError("the worker printed no result")


def build(db: Path, size: int, engine: Path = THIS_ENGINE) -> None:
    """Build a database of `size` memories with bench/engine.py's builder."""
    spec = {
        "task": "build",
        "size": size,
        "batch": 500,
        "queries": 1,
        "db": str(db),
        "queries_file": str(db.with_suffix(".queries.json")),
        "vectors": str(db.with_suffix(".queries.npy")),
    }
    env = {**os.environ, "MEMORY_BENCH_ENGINE_DIR": str(engine)}
    _run([str(REPO / "bench" / "engine.py"), "--worker", json.dumps(spec)], env)


def _log(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


def run_all(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Every size, backend and engine, interleaved run by run."""
    engines = {"this": THIS_ENGINE}
    if args.engine is not None:
        engines["other"] = args.engine.resolve()
    report: dict[str, Any] = {
        "load_average_start": os.getloadavg(),
        "engines": {name: str(path) for name, path in engines.items()},
        "sizes": {},
    }
    for size in args.sizes:
        source = workdir / f"built-{size}.db"
        _log(f"{size}: building")
        build(source, size, args.build_engine.resolve())
        entry: dict[str, Any] = {
            "db_mib": source.stat().st_size / 2**20,
            "cache": cache_drop_works(source),
        }
        for backend in args.backends:
            copies = {}
            first = {}
            for name, engine in engines.items():
                copy = workdir / f"{name}-{size}.db"
                for suffix in SUFFIXES:
                    if Path(f"{source}{suffix}").exists():
                        shutil.copyfile(f"{source}{suffix}", f"{copy}{suffix}")
                # Steady state: sqlite-vec's table built, a clean close.
                first[name] = run_once(engine, copy, backend)
                copies[name] = copy
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in engines}
            for run in range(args.runs):
                for name, engine in engines.items():
                    runs[name].append(run_once(engine, copies[name], backend))
                _log(f"{size} {backend}: run {run + 1}/{args.runs}")
            entry[backend] = {name: _summary(results) for name, results in runs.items()}
            for name, result in first.items():
                entry[backend][name]["first"] = result
            for copy in copies.values():
                for suffix in (*SUFFIXES, ".clean"):
                    Path(f"{copy}{suffix}").unlink(missing_ok=True)
        report["sizes"][str(size)] = entry
    report["load_average_end"] = os.getloadavg()
    return report


def _summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {
        key: statistics.median(run[key] for run in results)
        for key in ("open", "setup", "index", "cpu", "rss")
    }
    summary["load"] = [round(run["load"], 2) for run in results]
    summary["check"] = results[0]["check"]
    summary["backend"] = results[0]["backend"]
    return summary


def print_report(report: dict[str, Any]) -> None:
    """Print a Markdown table of the medians."""
    print(f"engines: {report['engines']}")
    print(
        f"load average: start {report['load_average_start']}, "
        f"end {report['load_average_end']}"
    )
    print()
    print(
        "| memories | backend | engine | check | open | set-up | index loaded "
        "| CPU | RSS | first open: index loaded, CPU |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size, entry in report["sizes"].items():
        for engines in entry.values():
            if not isinstance(engines, dict) or "this" not in engines:
                continue
            for name, row in engines.items():
                print(
                    f"| {int(size):,} | {row['backend']} | {name} | {row['check']} "
                    f"| {row['open']:.3f} s | {row['setup']:.3f} s "
                    f"| {row['index']:.3f} s | {row['cpu']:.3f} s "
                    f"| {row['rss']:.1f} MiB | {row['first']['index']:.3f} s, "
                    f"{row['first']['cpu']:.3f} s |"
                )
    for size, entry in report["sizes"].items():
        print(
            f"{size}: database {entry['db_mib']:.1f} MiB; read warm "
            f"{entry['cache']['warm_read_s']:.3f} s, after the drop "
            f"{entry['cache']['cold_read_s']:.3f} s"
        )
    big = report["sizes"].get(str(TARGET_SIZE), {})
    for backend, engines in big.items():
        if isinstance(engines, dict) and "this" in engines:
            seconds = engines["this"]["setup"]
            verdict = "pass" if seconds <= TARGET_SECONDS else "FAIL"
            print(
                f"target: set-up at {TARGET_SIZE:,} ({backend}) <= "
                f"{TARGET_SECONDS} s: {seconds:.3f} s {verdict}"
            )


def main() -> None:
    """Parse the arguments and run, or be a worker."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[10_000, 100_000],
    )
    parser.add_argument(
        "--backends",
        type=lambda text: text.split(","),
        default=["numpy", "auto"],
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--engine", type=Path, help="another engine's folder")
    parser.add_argument(
        "--build-engine",
        type=Path,
        default=THIS_ENGINE,
        help="the engine that builds the databases (default: this checkout's)",
    )
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: temp)")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    with tempfile.TemporaryDirectory(dir=args.workdir) as scratch:
        report = run_all(args, Path(scratch))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    print_report(report)


if __name__ == "__main__":
    main()
