"""Issue #26: the engine on PostgreSQL side by side with SQLite, same corpus.

Run from the repository root in the Python 3.14 environment:

    python bench/pg_engine.py --sizes 100k --runs 3 --json out.json
    python bench/pg_engine.py --sizes 1k --runs 1 --queries 10 --url URL

The corpus and the queries are bench/engine.py's (its `Corpus`, its
`_new_memories`, imported, not copied): for each size the same memories,
in the same order, go into a fresh SQLite file (`MemoryStore`, numpy
index) and a fresh PostgreSQL database (`PostgresMemories.add_many`, then
`PostgresSearch.set_vectors`, pgvector: exact below `HNSW_THRESHOLD` rows,
the HNSW index built when a batch crosses it, then kept up by each insert),
both through the same loop (`add_many` then `set_vectors`, `--batch`
memories at a time), timed once at each size; both get ids 1..N, which is
checked. `--pg-bulk` loads PostgreSQL with no HNSW index and builds it once
after the load (its seconds are in the load's rate), as a move of a large
store would: inserting a million rows into a live HNSW graph slows to
about 135 a second. The bulk add rate is measured apart, `--runs` times, on fresh
stores of `--add-count` memories (below the HNSW threshold by default),
SQLite and PostgreSQL interleaved; its figure is the median of the runs.

Then the same queries (a question word and words of a target memory, a
vector near it, scopes household + one person, limit 10) run on both in
three modes, keyword-only, vector-only and hybrid, in runs that alternate
SQLite, PostgreSQL, SQLite, ... (`--runs` each, `--warmup` untimed queries
before each mode); every figure is the median over the runs of a run's
p50 or p95 (wall time of `search`, query embedding excluded; PostgreSQL's
is a client over 127.0.0.1, its server's CPU is not in the client's CPU).
Agreement: for each mode, the share of queries whose top 10 are the same
ids in the same order on both, the same set, and the recall@10 of
PostgreSQL's top 10 against SQLite's. Both are approximate at 100k
(SQLite's 1-bit codes re-scored, pgvector's HNSW), so some differ.

It starts its own PostgreSQL 18 + pgvector (`script/postgres start DIR`)
unless `--url` names a superuser's URL, makes one database per store and
drops it after; the process lowers its priority (nice 10) and the server it
starts inherits it. `PgStore`, a `MemoryStore`-like face over the
PostgreSQL parts, is what bench/pg_recall.py runs the recall benches on.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator, Mapping, Sequence
import contextlib
import functools
import importlib.util
import json
import os
from pathlib import Path
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit
import uuid

import asyncpg
import numpy as np
import numpy.typing as npt

REPO: Final = Path(__file__).resolve().parent.parent
# `engine` is the engine package, not bench/engine.py beside this script.
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from bench._machine import cpu_model
    from custom_components.memory.engine import (
        AddResult,
        MemoryStore,
        NewMemory,
        SearchHit,
        SearchQuery,
    )
    from custom_components.memory.engine.postgres import (
        PgVectorIndex,
        PostgresMemories,
        PostgresSearch,
        migrate,
        register_vector,
    )
    from custom_components.memory.engine.postgres.hnsw_builds import (
        stop_builds,
        wait_builds,
    )
    from custom_components.memory.engine.postgres.vectors import HNSW_THRESHOLD
else:
    from _machine import cpu_model
    from engine import AddResult, MemoryStore, NewMemory, SearchHit, SearchQuery
    from engine.postgres import (
        PgVectorIndex,
        PostgresMemories,
        PostgresSearch,
        migrate,
        register_vector,
    )
    from engine.postgres.hnsw_builds import stop_builds, wait_builds
    from engine.postgres.vectors import HNSW_THRESHOLD

type FloatMatrix = npt.NDArray[np.float32]

MODES: Final = ("keyword", "vector", "hybrid")
BACKENDS: Final = ("sqlite", "postgres")
LABELS: Final = {"sqlite": "SQLite", "postgres": "PostgreSQL"}
LIMIT: Final = 10
DIM: Final = 384
MIB: Final = 1024 * 1024
# The seed of the bulk-add rows (bench/engine.py's `task_add` uses the same).
ADD_SEED: Final = 99
# `--pg-bulk`'s in-line threshold: out of reach, the index is built after.
BULK_THRESHOLD: Final = 1 << 62


@functools.cache
def bench_engine() -> ModuleType:
    """bench/engine.py (a file: `engine` is the engine package's name)."""
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


# -- PostgreSQL: a server, a database, a store ---------------------------------


def database_url(url: str, name: str) -> str:
    """Return `url` naming database `name` instead of its own."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def server(directory: Path, action: str) -> str:
    """`script/postgres start|stop DIR`; return the URL start prints last."""
    done = subprocess.run(  # noqa: S603  # our own script, fixed arguments
        [str(REPO / "script/postgres"), action, str(directory)],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


@contextlib.contextmanager
def postgres(url: str | None) -> Iterator[str]:
    """Yield `url`, or that of a server of our own, stopped at the end."""
    if url:
        yield url
        return
    with tempfile.TemporaryDirectory(prefix="pg-engine-") as folder:
        started = server(Path(folder), "start")
        try:
            yield started
        finally:
            server(Path(folder), "stop")


class PgStore:
    """The PostgreSQL parts behind `MemoryStore`'s face, in a database of their own.

    `open` makes a fresh database (with `vector`) on the server of
    `admin_url`, migrates it and opens a pool; `close` drops it. `add_many`
    adds through `PostgresMemories.add_many`, then stores the vectors of the
    memories it created through `PostgresSearch.set_vectors`, as
    `MemoryStore.add_many(..., vectors=)` stores those of its new items.
    The signature takes `MemoryStore`'s (a path, ignored), so a bench that
    builds stores by `engine.MemoryStore(...)` can build these instead.
    """

    def __init__(
        self,
        admin_url: str,
        _path: object = None,
        *,
        model: str,
        vector_backend: str = "pgvector",
        language: str | None = None,
        dim: int = DIM,
        hnsw_threshold: int = HNSW_THRESHOLD,
    ) -> None:
        """Hold the settings; nothing is made before `open`.

        `hnsw_threshold`: the rows at which the HNSW index is built (in the
        background, as the store does; `build_after_load` waits for it);
        `--pg-bulk` sets it out of reach and builds the index once after the
        load (`PgVectorIndex.build_hnsw`).
        """
        del vector_backend
        self.hnsw_threshold = hnsw_threshold
        self.admin_url = admin_url
        self.model = model
        self.language = language
        self.dim = dim
        self.name = f"bench_{uuid.uuid4().hex[:12]}"
        self.url = database_url(admin_url, self.name)
        self._pool: Any = None
        self._memories: PostgresMemories | None = None
        self._search: PostgresSearch | None = None
        self.index: PgVectorIndex | None = None

    async def open(self) -> None:
        """Create the database, migrate it, open the pool, create the vector table."""
        admin = await asyncpg.connect(self.admin_url)
        try:
            await admin.execute(f'CREATE DATABASE "{self.name}"')
        finally:
            await admin.close()
        connection = await asyncpg.connect(self.url)
        try:
            await connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
            await migrate(connection)
        finally:
            await connection.close()
        self._pool = await asyncpg.create_pool(
            self.url, min_size=2, max_size=4, init=register_vector
        )
        kwargs: dict[str, Any] = {"language": self.language} if self.language else {}
        self._memories = PostgresMemories(self._pool, **kwargs)
        self.index = PgVectorIndex(
            self._pool, self.model, self.dim, threshold=self.hnsw_threshold
        )
        await self.index.create()
        self._search = PostgresSearch(self._pool, vectors=self.index, **kwargs)

    @property
    def search_part(self) -> PostgresSearch:
        """The open store's `PostgresSearch`."""
        assert self._search is not None, "open the store first"  # noqa: S101
        return self._search

    async def add_many(
        self,
        memories: Sequence[NewMemory],
        *,
        vectors: Sequence[npt.ArrayLike | None] | None = None,
    ) -> list[AddResult]:
        """Add memories, then the vectors of those created (`MemoryStore`'s way)."""
        assert self._memories is not None, "open the store first"  # noqa: S101
        results = await self._memories.add_many(memories)
        if vectors is not None:
            await self.set_vectors(
                {
                    result.item.id: vector
                    for result, vector in zip(results, vectors, strict=True)
                    if result.created and vector is not None
                }
            )
        return results

    async def set_vectors(self, vectors: Mapping[int, npt.ArrayLike]) -> None:
        """`PostgresSearch.set_vectors`."""
        await self.search_part.set_vectors(vectors)

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        """`PostgresSearch.search`."""
        return await self.search_part.search(query)

    async def size_bytes(self) -> int:
        """Return the database's size on disk (`pg_database_size`)."""
        async with self._pool.acquire() as connection:
            return int(
                await connection.fetchval("SELECT pg_database_size($1)", self.name)
            )

    async def close(self) -> None:
        """Close the pool and drop the database."""
        if self._pool is not None:
            await stop_builds(self._pool)
            await self._pool.close()
            self._pool = None
        admin = await asyncpg.connect(self.admin_url)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        finally:
            await admin.close()


# -- loading -------------------------------------------------------------------


type Store = MemoryStore | PgStore


def _remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _sqlite_bytes(path: Path) -> int:
    return sum(
        Path(f"{path}{suffix}").stat().st_size
        for suffix in ("", "-wal")
        if Path(f"{path}{suffix}").exists()
    )


async def load(
    store: Store, memories: Sequence[NewMemory], vectors: FloatMatrix, batch: int
) -> dict[str, Any]:
    """`add_many` then `set_vectors`, `batch` memories at a time; seconds and ids.

    The slowest batch is reported too: on PostgreSQL the one that crossed
    the HNSW threshold also built the index.
    """
    ids: list[int] = []
    slowest = adding = 0.0
    start = time.perf_counter()
    for first in range(0, len(memories), batch):
        tick = time.perf_counter()
        results = await store.add_many(memories[first : first + batch])
        added = time.perf_counter()
        new = [result.item.id for result in results]
        await store.set_vectors(
            dict(zip(new, vectors[first : first + batch], strict=True))
        )
        ids.extend(new)
        adding += added - tick
        slowest = max(slowest, time.perf_counter() - tick)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "per_second": len(memories) / seconds,
        "add_many_s": adding,
        "set_vectors_s": seconds - adding,
        "slowest_batch_s": slowest,
        "ids": ids,
    }


async def build_after_load(store: Store) -> float:
    """Have a loaded PostgreSQL store's HNSW index built; return the seconds waited.

    The index a load took past the threshold is built in the background:
    searches are timed once it is there. A bulk load's is built now.
    """
    assert isinstance(store, PgStore) and store.index is not None  # noqa: S101
    start = time.perf_counter()
    await wait_builds(store.index._pool)  # noqa: SLF001
    if await store.index.count() < HNSW_THRESHOLD:
        return 0.0
    await store.index.build_hnsw()
    return time.perf_counter() - start


async def open_store(
    backend: str, url: str, path: Path, model: str, *, bulk: bool = False
) -> Store:
    """Open a fresh store of `backend`: a SQLite file at `path`, or a database.

    `bulk`: PostgreSQL builds no HNSW index while loading (see `PgStore`).
    """
    store: Store
    if backend == "sqlite":
        _remove_db(path)
        store = MemoryStore(path, model=model, vector_backend="numpy")
    else:
        store = PgStore(
            url, model=model, hnsw_threshold=BULK_THRESHOLD if bulk else HNSW_THRESHOLD
        )
    await store.open()
    return store


async def close_store(store: Store, path: Path) -> None:
    """Close a store; remove its SQLite file (PostgreSQL drops its database)."""
    await store.close()
    if isinstance(store, MemoryStore):
        _remove_db(path)


async def add_rates(
    args: argparse.Namespace, url: str, workdir: Path
) -> dict[str, Any]:
    """Bulk add into fresh stores, `args.runs` times, SQLite and PostgreSQL in turn."""
    engine = bench_engine()
    texts, scopes, vectors, _topics = engine.Corpus().memories(
        args.add_count, seed=ADD_SEED
    )
    memories = engine._new_memories(texts, scopes)  # noqa: SLF001
    runs: dict[str, list[float]] = {backend: [] for backend in BACKENDS}
    for run in range(args.runs):
        for backend in BACKENDS:
            path = workdir / f"add-{run}.db"
            store = await open_store(backend, url, path, engine.MODEL)
            try:
                loaded = await load(store, memories, vectors, args.batch)
            finally:
                await close_store(store, path)
            runs[backend].append(loaded["per_second"])
            _log(f"add {args.add_count:,}: {backend} {loaded['per_second']:,.0f}/s")
    return {
        "count": args.add_count,
        "runs": runs,
        "median": {backend: statistics.median(r) for backend, r in runs.items()},
    }


# -- searching -----------------------------------------------------------------


def plans(
    queries: dict[str, Any], vectors: FloatMatrix
) -> dict[str, list[SearchQuery]]:
    """Each mode's queries: text only, vector only (empty text), both."""
    return {
        mode: [
            SearchQuery(
                text="" if mode == "vector" else text,
                vector=None if mode == "keyword" else vectors[k],
                scopes=tuple(queries["scopes"][k]),
                limit=LIMIT,
            )
            for k, text in enumerate(queries["texts"])
        ]
        for mode in MODES
    }


def server_cpu(database: str) -> dict[int, float]:
    """CPU seconds (user + system) of each local server process serving `database`.

    Read from /proc: the backends' titles name their database. Empty when
    the server is elsewhere (`--url` on another machine).
    """
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            title = (proc / "cmdline").read_bytes()
            if not title.startswith(b"postgres: ") or database.encode() not in title:
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(proc.name)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _spent(before: dict[int, float], after: dict[int, float]) -> float:
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


async def search_run(
    store: Store,
    planned: dict[str, list[SearchQuery]],
    queries: dict[str, Any],
    warmup: int,
) -> dict[str, Any]:
    """Time every query of each mode after `warmup` untimed ones; keep the ids."""
    result: dict[str, Any] = {}
    for mode, plan in planned.items():
        for query in plan[:warmup]:
            await store.search(query)
        latencies: list[float] = []
        cpu: list[float] = []
        found: list[list[int]] = []
        database = store.name if isinstance(store, PgStore) else None
        served = server_cpu(database) if database else {}
        for query in plan:
            tick, tock = time.perf_counter(), time.process_time()
            hits = await store.search(query)
            latencies.append(time.perf_counter() - tick)
            cpu.append(time.process_time() - tock)
            found.append([hit.item.id for hit in hits])
        ms = np.asarray(latencies) * 1000.0
        server_ms = (
            _spent(served, server_cpu(database)) * 1000.0 / len(plan)
            if database
            else 0.0
        )
        result[mode] = {
            "p50_ms": float(np.percentile(ms, 50)),
            "p95_ms": float(np.percentile(ms, 95)),
            "mean_ms": float(ms.mean()),
            "client_cpu_ms": float(np.mean(cpu)) * 1000.0,
            # The server's processes of this database (0 for SQLite: in-process).
            "server_cpu_ms": server_ms,
            "target_at_10": float(
                np.mean(
                    [t in ids for t, ids in zip(queries["targets"], found, strict=True)]
                )
            ),
            "recall_at_10": float(
                np.mean(
                    [
                        len(set(ids) & set(truth)) / LIMIT
                        for ids, truth in zip(found, queries["truth"], strict=True)
                    ]
                )
            ),
            "ids": found,
        }
    return result


def agreement(sqlite: list[list[int]], pg: list[list[int]]) -> dict[str, float]:
    """Compare top 10s: same order, same set, PG's recall@10 of SQLite's."""
    pairs = list(zip(sqlite, pg, strict=True))
    return {
        "identical": float(np.mean([a == b for a, b in pairs])),
        "same_set": float(np.mean([set(a) == set(b) for a, b in pairs])),
        "recall_at_10": float(
            np.mean([len(set(a) & set(b)) / max(len(a), 1) for a, b in pairs])
        ),
    }


def _median_modes(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return {
        mode: {
            key: statistics.median(run[mode][key] for run in runs)
            for key in runs[0][mode]
            if key != "ids"
        }
        for mode in MODES
    }


def checkpoint(args: argparse.Namespace, size: int, entry: dict[str, Any]) -> None:
    """Write what one size has so far beside `--json` (a long run may be cut)."""
    if args.json is not None:
        path = args.json.with_suffix(f".{size}.partial.json")
        path.write_text(json.dumps(entry) + "\n")


async def measure_size(
    args: argparse.Namespace, url: str, workdir: Path, size: int
) -> dict[str, Any]:
    """Load one size on both, search both in alternating runs."""
    engine = bench_engine()
    corpus = engine.Corpus()
    _log(f"{size:,}: making the corpus")
    texts, scopes, vectors, _topics = corpus.memories(size, seed=engine.SEED + size)
    memories = engine._new_memories(texts, scopes)  # noqa: SLF001
    entry: dict[str, Any] = {"load": {}, "runs": {b: [] for b in BACKENDS}}
    path = workdir / f"memories-{size}.db"
    stores: dict[str, Store] = {}
    try:
        for backend in BACKENDS:
            _log(f"{size:,}: loading {backend}")
            stores[backend] = await open_store(
                backend, url, path, engine.MODEL, bulk=args.pg_bulk
            )
            loaded = await load(stores[backend], memories, vectors, args.batch)
            if backend == "postgres":
                built = await build_after_load(stores[backend])
                if args.pg_bulk:
                    loaded["hnsw_build_s"] = built
                    loaded["per_second"] = size / (loaded["seconds"] + built)
            ids = loaded.pop("ids")
            if ids != list(range(1, size + 1)):
                raise RuntimeError(f"{backend} did not number the memories 1..{size}")
            entry["load"][backend] = loaded
            _log(f"{size:,}: {backend} loaded at {loaded['per_second']:,.0f}/s")
            checkpoint(args, size, entry)
        pg = stores["postgres"]
        assert isinstance(pg, PgStore) and pg.index is not None  # noqa: S101
        entry["load"]["postgres"]["hnsw"] = await pg.index.has_hnsw()
        entry["load"]["postgres"]["index_mib"] = await pg.index.index_bytes() / MIB
        entry["load"]["postgres"]["db_mib"] = await pg.size_bytes() / MIB
        async with pg.search_part._pool.acquire() as connection:  # noqa: SLF001
            await connection.execute("VACUUM ANALYZE")
        entry["load"]["sqlite"]["db_mib"] = _sqlite_bytes(path) / MIB
        queries = corpus.queries(
            args.queries, texts, scopes, vectors, seed=engine.SEED + size + 1
        )
        query_vectors = queries.pop("vectors")
        # Rows are numbered 1..N on both (checked above).
        queries["targets"] = [int(row) + 1 for row in queries["targets"]]
        queries["truth"] = [[int(row) + 1 for row in top] for top in queries["truth"]]
        planned = plans(queries, query_vectors)
        for run in range(args.runs):
            for backend in BACKENDS:
                _log(f"{size:,}: {backend} search run {run + 1}/{args.runs}")
                entry["runs"][backend].append(
                    await search_run(stores[backend], planned, queries, args.warmup)
                    | {"load": os.getloadavg()[0]}
                )
                checkpoint(args, size, entry)
    finally:
        for backend, store in stores.items():
            await close_store(store, path if backend == "sqlite" else workdir)
    last = {backend: entry["runs"][backend][-1] for backend in BACKENDS}
    entry["agreement"] = {
        mode: agreement(last["sqlite"][mode]["ids"], last["postgres"][mode]["ids"])
        for mode in MODES
    }
    entry["median"] = {b: _median_modes(entry["runs"][b]) for b in BACKENDS}
    for runs in entry["runs"].values():
        for run in runs:
            for mode in MODES:
                run[mode].pop("ids")
    return entry


# -- report --------------------------------------------------------------------


def environment() -> dict[str, Any]:
    """Machine, versions and load."""
    import sqlite3  # noqa: PLC0415

    return {
        "cpu": cpu_model(platform.processor() or platform.machine()),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "load_average": os.getloadavg(),
    }


async def server_version(url: str) -> str:
    """PostgreSQL's and pgvector's versions."""
    connection = await asyncpg.connect(url)
    try:
        version = await connection.fetchval("SHOW server_version")
        vector = await connection.fetchval(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        )
    finally:
        await connection.close()
    return f"PostgreSQL {version}, pgvector {vector}"


async def run_all(args: argparse.Namespace, url: str, workdir: Path) -> dict[str, Any]:
    """Every size, then the bulk add rates."""
    report: dict[str, Any] = {
        "environment": environment() | {"server": await server_version(url)},
        "settings": {
            key: getattr(args, key)
            for key in ("sizes", "runs", "queries", "warmup", "batch", "add_count")
        }
        | {"limit": LIMIT},
        "sizes": {},
    }
    for size in args.sizes:
        report["sizes"][str(size)] = await measure_size(args, url, workdir, size)
    if args.add_count:
        report["add"] = await add_rates(args, url, workdir)
    report["load_end"] = os.getloadavg()
    return report


def _max_load(report: dict[str, Any]) -> float:
    return float(
        max(
            [
                run["load"]
                for entry in report["sizes"].values()
                for runs in entry["runs"].values()
                for run in runs
            ]
            or [0.0]
        )
    )


def markdown(report: dict[str, Any]) -> str:
    """Render the tables: load, latencies per mode, agreement, bulk add rate."""
    env, settings = report["environment"], report["settings"]
    lines = [
        f"Command: `{report.get('command', 'python bench/pg_engine.py')}`",
        "",
        (
            f"Machine: {env['cpu']}, {env['cores']} cores; Python {env['python']}, "
            f"numpy {env['numpy']}, SQLite {env['sqlite']}; {env['server']}; "
            f"load average {env['load_average'][0]:.2f} at start, "
            f"{report['load_end'][0]:.2f} at end, at most {_max_load(report):.2f} "
            "after a search run."
        ),
        "",
        (
            f"Median of {settings['runs']} runs per backend, alternating SQLite, "
            f"PostgreSQL; {settings['queries']} queries per mode after "
            f"{settings['warmup']} warm-up queries; limit {settings['limit']}. "
            "p50 / p95 in ms. CPU a query: this process's (every thread) plus, "
            "for PostgreSQL, its server's processes of the database (mean ms); "
            "steadier than wall time on a busy machine."
        ),
        "",
        (
            "| memories | backend | keyword p50 / p95 | vector p50 / p95 | "
            "hybrid p50 / p95 | CPU a query, keyword / vector / hybrid (ms) | "
            "hybrid target@10 | vector recall@10 (exact) |"
        ),
        "|---:|---|---|---|---|---|---:|---:|",
    ]
    for size, entry in report["sizes"].items():
        for backend in BACKENDS:
            med = entry["median"][backend]
            cells = [f"{int(size):,}", LABELS[backend]]
            cells += [
                f"{med[mode]['p50_ms']:.2f} / {med[mode]['p95_ms']:.2f}"
                for mode in MODES
            ]
            cells += [
                " / ".join(
                    f"{med[mode]['client_cpu_ms'] + med[mode].get('server_cpu_ms', 0):.1f}"
                    for mode in MODES
                ),
                f"{med['hybrid']['target_at_10']:.3f}",
                f"{med['vector']['recall_at_10']:.4f}",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        (
            "Top 10 of the last run, PostgreSQL against SQLite: identical "
            "(same ids, same order) / same set / recall@10 of PostgreSQL's "
            "against SQLite's:"
        ),
        "",
        "| memories | keyword | vector | hybrid |",
        "|---:|---|---|---|",
    ]
    for size, entry in report["sizes"].items():
        cells = [
            f"{a['identical']:.3f} / {a['same_set']:.3f} / {a['recall_at_10']:.4f}"
            for a in (entry["agreement"][mode] for mode in MODES)
        ]
        lines.append(f"| {int(size):,} | " + " | ".join(cells) + " |")
    lines += [
        "",
        (
            f"Loading each size (one run; `add_many` then `set_vectors`, batches "
            f"of {settings['batch']}):"
        ),
        "",
        (
            "| memories | backend | memories/s | seconds | of which `add_many` / "
            "`set_vectors` (s) | slowest batch (s) | HNSW | HNSW index (MiB) | "
            "database (MiB) |"
        ),
        "|---:|---|---:|---:|---|---:|---|---:|---:|",
    ]
    for size, entry in report["sizes"].items():
        for backend in BACKENDS:
            load_ = entry["load"][backend]
            hnsw = ("yes" if load_["hnsw"] else "no") if "hnsw" in load_ else "–"
            if load_.get("hnsw_build_s"):
                hnsw += f", built after the load in {load_['hnsw_build_s']:.1f} s"
            index = f"{load_['index_mib']:.1f}" if "index_mib" in load_ else "–"
            split = (
                f"{load_['add_many_s']:.1f} / {load_['set_vectors_s']:.1f}"
                if "add_many_s" in load_
                else "–"
            )
            lines.append(
                f"| {int(size):,} | {LABELS[backend]} | {load_['per_second']:,.0f} | "
                f"{load_['seconds']:.1f} | {split} | "
                f"{load_['slowest_batch_s']:.2f} | {hnsw} | "
                f"{index} | {load_['db_mib']:.1f} |"
            )
    if "add" in report:
        add = report["add"]
        lines += [
            "",
            (
                f"Bulk add into a fresh store, {add['count']:,} memories with "
                f"vectors ({settings['runs']} runs each, interleaved; memories/s):"
            ),
            "",
            "| backend | median | runs |",
            "|---|---:|---|",
        ]
        lines.extend(
            f"| {LABELS[backend]} | {add['median'][backend]:,.0f} | "
            + ", ".join(f"{rate:,.0f}" for rate in add["runs"][backend])
            + " |"
            for backend in BACKENDS
        )
    return "\n".join(lines) + "\n"


def _sizes(text: str) -> list[int]:
    return [
        int(part.replace("_", "").lower().replace("k", "000").replace("m", "000000"))
        for part in text.split(",")
    ]


def main() -> None:
    """Parse arguments, start a server (unless --url), measure, print Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=_sizes, default=[100_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--add-count", type=int, default=10_000)
    parser.add_argument(
        "--pg-bulk",
        action="store_true",
        help="load PostgreSQL without its HNSW index, then build it once",
    )
    parser.add_argument(
        "--url", help="a superuser's URL instead of a server of our own"
    )
    parser.add_argument("--workdir", type=Path, help="folder for the SQLite files")
    parser.add_argument("--json", type=Path, help="also write the full results")
    parser.add_argument("--report", type=Path, help="print the tables of a --json")
    args = parser.parse_args()
    if args.report is not None:
        print(markdown(json.loads(args.report.read_text())))
        return
    os.nice(10)
    shown: list[str] = []
    skip = False
    for arg in sys.argv[1:]:  # no URL (a password) nor scratch folder
        if not skip and not arg.startswith(("--url", "--workdir")):
            shown.append(arg)
        skip = arg in {"--url", "--workdir"}
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="pg-engine-", dir=args.workdir))
    started = time.perf_counter()
    try:
        with postgres(args.url) as url:
            report = asyncio.run(run_all(args, url, workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report["seconds"] = time.perf_counter() - started
    report["command"] = " ".join(["python bench/pg_engine.py", *shown])
    _log(f"done in {report['seconds']:.0f} s")
    print(markdown(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
