"""Performance of the memory engine: writes, search latency, RSS, disk size.

Run from the repository root in the Python 3.14 environment:

    python bench/engine.py                           # 1k, 10k, 100k; 3 runs
    python bench/engine.py --sizes 1000,10000 --runs 5 --json out.json
    python bench/engine.py --sizes 100k,1M --backends numpy,auto \
        --compare OLD/custom_components/memory   # interleaved against another engine

For every size it builds one database (numpy backend, `add_many` in batches)
and reuses it for both backends: sqlite-vec builds its `vec0` table from the
stored vectors on its first open, timed apart. Every search run and every
write run is a fresh subprocess, so the resident memory of one configuration
never leaks into another's numbers, and each figure is the median over
`--runs` runs. Query embedding is excluded: query vectors are made up front.

`--match-budget N` searches with another bound on the rows a keyword MATCH
scores (`MemoryStore.match_budget`), on both engines.

With `--compare DIR` (a folder holding another version's `engine` package)
each size is built once per engine (the same corpus and queries from the
same seed, each database by its own engine, so schemas may differ) and the
two engines' search runs alternate, this tree first in even runs and the
other first in odd ones: both see the same load over the session.

The data is synthetic but shaped like a household's memories: sentences of
8 to 30 words whose words follow a Zipf-like law, each written about one of
64 topics; 384-dimensional unit vectors clustered like sentence embeddings
(a shared direction, topic and sub-topic centroids, noise, a few outlier
dimensions), so that int8 quantisation and top-k behave as on real data.
Queries are a question word plus two or three words of a target memory and a
vector near that memory's, searched in the household scope plus one person's,
as the assistant does.

The engine is imported without Home Assistant so RSS is the engine's own.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
from pathlib import Path
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

REPO: Final = Path(__file__).resolve().parent.parent
# `--engine DIR` (a folder holding an `engine` package) compares two versions.
ENGINE_ENV: Final = "MEMORY_BENCH_ENGINE_DIR"
ENGINE_DIR: Final = os.environ.get(ENGINE_ENV) or str(
    REPO / "custom_components" / "memory"
)
sys.path.insert(0, ENGINE_DIR)

if TYPE_CHECKING:
    from bench._machine import cpu_model
    from custom_components.memory.engine import (
        HOUSEHOLD,
        MemoryStore,
        MemoryType,
        NewMemory,
        Origin,
        SearchQuery,
        Source,
    )
else:
    from _machine import cpu_model
    from engine import (
        HOUSEHOLD,
        MemoryStore,
        MemoryType,
        NewMemory,
        Origin,
        SearchQuery,
        Source,
    )

type FloatMatrix = npt.NDArray[np.float32]

MODEL: Final = "bench"
DIM: Final = 384
TOPICS: Final = 64
SUBTOPICS: Final = 16
PERSONS: Final = ("person.anna", "person.ben", "person.clara", "person.david")
MODES: Final = ("keyword", "vector", "hybrid")
# "auto" is the engine's default: the numpy index (since #25, faster than
# vec0 at every size measured); the table says which it chose.
BACKENDS: Final = ("numpy", "sqlite-vec", "auto")
LIMIT: Final = 10
SEED: Final = 20_260_101
MIB: Final = 1024 * 1024
RESULT_PREFIX: Final = "BENCH-RESULT "
# The label of this tree's engine when `--compare` adds another.
THIS: Final = "this tree"

# Targets from the issues (#1, #13), on a 2-core machine, query embedding
# excluded: hybrid p95 with the numpy index; `auto` within a factor of it;
# keyword-only p95.
TARGET_HYBRID_P95_MS: Final = {10_000: 10.0, 100_000: 15.0, 1_000_000: 60.0}
TARGET_AUTO_FACTOR: Final = 1.1
TARGET_KEYWORD_P95_MS: Final = {100_000: 5.0}
TARGET_ADD_PER_S: Final = 2000.0
TARGET_INDEX_RSS_MIB: Final = 100.0
TARGET_INDEX_RSS_SIZE: Final = 100_000
# Issue #25: the numpy index's arrays at most 0.3 x those of the int8 index
# it replaced (444 bytes a 384-dim row: 42.3 MiB at 100k).
TARGET_INDEX_SHARE: Final = 0.3
INT8_INDEX_BYTES_PER_ROW: Final = 384 + 48 + 4 + 8  # codes, sign bits, scale, id

# -- synthetic household memories -------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_DOMAINS: Final = tuple(
    """
allergic allergy nuts peanuts gluten lactose medicine pills tablets doctor dentist appointment vitamins inhaler asthma prescription pharmacy checkup vaccine clinic glasses hearing aid migraine
breakfast lunch dinner recipe pasta pizza soup salad coffee tea milk bread cheese vegetarian vegan spicy dessert chocolate oven fridge freezer leftovers groceries
monday tuesday wednesday thursday friday saturday sunday morning evening weekend birthday anniversary holiday calendar meeting practice lesson pickup dropoff reminder week month
garden lawn mower roses tomatoes hedge compost watering sprinkler shed seeds soil fence greenhouse herbs basil tulips pruning weeds rake hose patio
car tyres garage parking fuel charging charger battery service inspection insurance keys bicycle helmet scooter license trip motorway wipers oil mechanic
dog cat puppy kitten vet food bowl walk leash litter fish aquarium hamster rabbit cage grooming flea collar treats feeding
heating thermostat radiator boiler temperature degrees warm cold bedroom bathroom guest room floor ventilation humidity window blinds shutters cooling fan
light lights lamp bulb dimmer brightness porch hallway kitchen living room scene sunset motion sensor switch ceiling night reading
cleaning vacuum robot mop laundry washing machine dryer dishwasher detergent towels sheets ironing trash recycling bins collection bathroom windows dusting
school homework teacher class exam math reading piano violin football swimming tutor report backpack uniform lunchbox bus excursion parents evening
work office remote commute laptop meeting boss colleague shift project deadline conference travel client desk printer monitor headphones
travel flight train hotel passport luggage suitcase airport vacation beach mountains ski camping tent booking tickets visa map
shopping list store supermarket market delivery order package discount coupon receipt return bakery butcher pharmacy hardware
music playlist speaker radio podcast volume spotify jazz rock classical concert guitar headphones song album alarm
sports gym running yoga cycling tennis match training marathon swimming stretching weights coach team score fitness
repair plumber electrician leak faucet sink roof gutter paint wall door lock alarm smoke detector fuse router wifi password
""".strip().splitlines()
)
_PEOPLE: Final = _words(
    "Anna Ben Clara David Grandma Grandpa Emma Felix Oma Uncle Tom Aunt Lisa "
    "Mia Noah We Our family The kids"
)
_VERBS: Final = _words(
    "likes prefers needs wants keeps has takes uses bought moved fixed checks "
    "forgets remembers hates loves booked cancelled asked said"
)
_GLUE: Final = _words(
    "the the the a a in on at for with and and to of every before after "
    "when not only usually always never near about from"
)
_QUESTIONS: Final = _words("when what where does which who is how")
_SYLLABLES: Final = _words(
    "ka lo mi ren tor sa vel dun pri nok ha ze bri lum tas ger fol "
    "mar qui sto ben dra vik po ru"
)
_TYPES: Final = ("fact", "preference", "instruction", "event", "fact", "fact")
_TAGS: Final = _words(
    "health food schedule garden car pets heating lights chores school work "
    "travel shopping music sports repairs"
)


def _unit_rows(matrix: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.asarray(matrix / norms, dtype=np.float64)


class Corpus:
    """Vocabulary, topics and embedding geometry, all from one seed."""

    def __init__(self, seed: int = SEED) -> None:
        """Make the vocabulary (Zipf ranks) and the vector space's centroids."""
        rng = np.random.default_rng(seed)
        real = list(dict.fromkeys(" ".join(_DOMAINS).split()))
        rng.shuffle(real)
        synthetic: dict[str, None] = {}
        while len(synthetic) < 3600:
            count = int(rng.integers(2, 4))
            word = "".join(rng.choice(_SYLLABLES, size=count))
            if word not in real:
                synthetic[word] = None
        self.words: list[str] = real + list(synthetic)
        # Zipf-Mandelbrot ranks: the real words are the common ones.
        ranks = np.arange(len(self.words), dtype=np.float64)
        weights = 1.0 / (ranks + 2.7) ** 1.07
        self.word_p = weights / weights.sum()
        index = {word: i for i, word in enumerate(self.words)}
        tail = np.arange(len(real), len(self.words))
        self.topic_words: list[npt.NDArray[np.int64]] = []
        for topic in range(TOPICS):
            domain = [index[w] for w in _DOMAINS[topic % len(_DOMAINS)].split()]
            picked = rng.permutation(domain)[:30]
            names = rng.choice(tail, size=50 - len(picked), replace=False)
            self.topic_words.append(np.concatenate([picked, names]).astype(np.int64))
        topic_ranks = np.arange(50, dtype=np.float64)
        topic_weights = 1.0 / (topic_ranks + 1.5)
        self.topic_p = topic_weights / topic_weights.sum()
        # Geometry: anisotropic like real sentence embeddings.
        self.shared = _unit_rows(rng.normal(size=DIM))
        self.topic_c = _unit_rows(rng.normal(size=(TOPICS, DIM)))
        self.sub_c = _unit_rows(rng.normal(size=(TOPICS, SUBTOPICS, DIM)))
        scale = np.exp(rng.normal(0.0, 0.35, size=DIM))
        scale[rng.choice(DIM, size=6, replace=False)] *= 4.0
        self.dim_scale = scale

    def memories(
        self, count: int, seed: int
    ) -> tuple[list[str], list[str], FloatMatrix, npt.NDArray[np.int64]]:
        """`count` distinct texts, their scopes, unit vectors and topics."""
        rng = np.random.default_rng(seed)
        topics = rng.integers(0, TOPICS, size=count)
        subtopics = rng.integers(0, SUBTOPICS, size=count)
        lengths = np.clip(
            np.rint(rng.gamma(4.0, 3.6, size=count)).astype(np.int64) + 6, 8, 30
        )
        total = int(lengths.sum())
        kinds = rng.random(total)
        glob = rng.choice(len(self.words), size=total, p=self.word_p)
        in_topic = rng.choice(50, size=total, p=self.topic_p)
        glue = rng.choice(len(_GLUE), size=total)
        numbers = rng.integers(1, 60, size=total)
        texts: list[str] = []
        seen: set[str] = set()
        pos = 0
        for i in range(count):
            topic_words = self.topic_words[int(topics[i])]
            words = [
                _PEOPLE[int(rng.integers(len(_PEOPLE)))],
                _VERBS[int(rng.integers(len(_VERBS)))],
            ]
            for j in range(pos, pos + int(lengths[i]) - 2):
                kind = kinds[j]
                if kind < 0.28:
                    words.append(_GLUE[int(glue[j])])
                elif kind < 0.62:
                    words.append(self.words[int(topic_words[in_topic[j]])])
                elif kind < 0.66:
                    words.append(str(int(numbers[j])))
                else:
                    words.append(self.words[int(glob[j])])
            pos += int(lengths[i])
            text = " ".join(words) + "."
            while text.casefold() in seen:
                text = text[:-1] + f" {self.words[int(rng.integers(500))]}."
            seen.add(text.casefold())
            texts.append(text)
        scopes = [
            HOUSEHOLD if roll < 0.6 else PERSONS[int(roll * 10) % len(PERSONS)]
            for roll in rng.random(count)
        ]
        noise = rng.normal(size=(count, DIM)) / np.sqrt(DIM)
        weight = rng.uniform(0.8, 1.2, size=(count, 1))
        vectors = (
            0.35 * self.shared
            + weight * self.topic_c[topics]
            + 0.7 * self.sub_c[topics, subtopics]
            + 0.8 * noise
        ) * self.dim_scale
        return texts, scopes, _unit_rows(vectors).astype(np.float32), topics

    def queries(
        self,
        count: int,
        texts: list[str],
        scopes: list[str],
        vectors: FloatMatrix,
        seed: int,
    ) -> dict[str, Any]:
        """Make queries near random memories, with the exact top-k as truth."""
        rng = np.random.default_rng(seed)
        scope_array = np.asarray(scopes)
        query_texts: list[str] = []
        query_scopes: list[list[str]] = []
        targets: list[int] = []
        truth: list[list[int]] = []
        query_vectors = np.empty((count, DIM), dtype=np.float32)
        stop = set(_GLUE) | set(_PEOPLE) | set(_VERBS)
        for k in range(count):
            person = PERSONS[int(rng.integers(len(PERSONS)))]
            allowed = np.flatnonzero(
                (scope_array == HOUSEHOLD) | (scope_array == person)
            )
            target = int(rng.choice(allowed))
            words = [
                word
                for word in texts[target].rstrip(".").split()
                if word not in stop and not word.isdigit()
            ] or texts[target].split()
            picked = rng.choice(words, size=min(len(words), int(rng.integers(2, 4))))
            question = _QUESTIONS[int(rng.integers(len(_QUESTIONS)))]
            query_texts.append(" ".join([question, *map(str, picked)]))
            noise = _unit_rows(rng.normal(size=DIM) * self.dim_scale)
            query = _unit_rows(vectors[target] + 0.5 * noise).astype(np.float32)
            query_vectors[k] = query
            # The product over every row, then the allowed ones: no copy of
            # the allowed rows (a gigabyte at 1M memories).
            scores = (vectors @ query)[allowed]
            best = allowed[np.argsort(-scores, kind="stable")[:LIMIT]]
            query_scopes.append([HOUSEHOLD, person])
            targets.append(target)
            truth.append([int(row) for row in best])
        return {
            "texts": query_texts,
            "scopes": query_scopes,
            "targets": targets,
            "truth": truth,
            "vectors": query_vectors,
        }


def _geometry(vectors: FloatMatrix, topics: npt.NDArray[np.int64]) -> dict[str, float]:
    """Cosine statistics showing the vectors are clustered, not noise."""
    rng = np.random.default_rng(1)
    sample = rng.choice(len(vectors), size=min(500, len(vectors)), replace=False)
    sims = vectors[sample] @ vectors.T
    sims[np.arange(len(sample)), sample] = -1.0
    same = topics[sample][:, None] == topics[None, :]
    off_diag = sims > -1.0
    return {
        "cos_random_mean": float(sims[~same & off_diag].mean()),
        "cos_same_topic_mean": float(sims[same & off_diag].mean()),
        "cos_nearest_mean": float(sims.max(axis=1).mean()),
    }


# -- measurements in a worker process ----------------------------------------


def _proc_status() -> dict[str, float]:
    """VmRSS and VmHWM (peak) of this process, in MiB."""
    values: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _sep, rest = line.partition(":")
        if key in {"VmRSS", "VmHWM"}:
            values[key] = int(rest.split()[0]) / 1024
    return values


def _remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _read_json(path: str) -> Any:
    return json.loads(Path(path).read_text())


def _write_json(path: str, data: Any) -> None:
    Path(path).write_text(json.dumps(data))


def _db_bytes(path: Path) -> int:
    return sum(
        Path(f"{path}{suffix}").stat().st_size
        for suffix in ("", "-wal")
        if Path(f"{path}{suffix}").exists()
    )


def _new_memories(texts: list[str], scopes: list[str]) -> list[NewMemory]:
    rng = np.random.default_rng(7)
    source = Source(origin=Origin.IMPORT)
    memories = []
    for i, (text, scope) in enumerate(zip(texts, scopes, strict=True)):
        tags: tuple[str, ...] = ()
        if i % 3 == 0:
            tags = tuple(rng.choice(_TAGS, size=int(rng.integers(1, 3)), replace=False))
        memories.append(
            NewMemory(
                content=text,
                source=source,
                type=MemoryType(_TYPES[i % len(_TYPES)]),
                scope=scope,
                tags=tags,
            )
        )
    return memories


def _vector_index(store: Any) -> object:
    """Return the store's memory vector index, in this engine or an older one.

    The parts hold it since the store became a facade (`store.vectors.index`);
    before, the store was the end of a subclass chain (`store._index`). The
    benchmark compares both side by side.
    """
    vectors = getattr(store, "vectors", None)
    if vectors is not None:
        return getattr(vectors, "index", None)
    return getattr(store, "_index", None)


async def _bulk_add(
    store: MemoryStore, memories: list[NewMemory], vectors: FloatMatrix, batch: int
) -> tuple[float, list[int]]:
    """Add in `add_many` batches; return the seconds taken and the new ids."""
    ids: list[int] = []
    start = time.perf_counter()
    for first in range(0, len(memories), batch):
        results = await store.add_many(
            memories[first : first + batch],
            vectors=list(vectors[first : first + batch]),
        )
        ids.extend(result.item.id for result in results)
    return time.perf_counter() - start, ids


async def task_build(spec: dict[str, Any]) -> dict[str, Any]:
    """Build the database of one size (numpy backend) and its query set."""
    size = int(spec["size"])
    _remove_db(Path(spec["db"]))  # an interrupted build's leftovers
    corpus = Corpus()
    texts, scopes, vectors, topics = corpus.memories(size, seed=SEED + size)
    memories = _new_memories(texts, scopes)
    store = MemoryStore(spec["db"], model=MODEL, vector_backend="numpy")
    await store.open()
    seconds, ids = await _bulk_add(store, memories, vectors, int(spec["batch"]))
    await store.close()
    if len(set(ids)) != size:
        raise RuntimeError("some generated memories were de-duplicated")
    queries = corpus.queries(
        int(spec["queries"]), texts, scopes, vectors, seed=SEED + size + 1
    )
    id_array = np.asarray(ids, dtype=np.int64)
    np.save(spec["vectors"], queries.pop("vectors"))
    queries["targets"] = [int(id_array[row]) for row in queries["targets"]]
    queries["truth"] = [[int(id_array[row]) for row in top] for top in queries["truth"]]
    _write_json(spec["queries_file"], queries)
    return {
        "seconds": seconds,
        "per_second": size / seconds,
        "db_bytes": _db_bytes(Path(spec["db"])),
        "mean_words": float(np.mean([len(text.split()) for text in texts])),
        **_geometry(vectors, topics),
    }


async def task_open(spec: dict[str, Any]) -> dict[str, Any]:
    """Open once (sqlite-vec builds its vec0 table here) and close."""
    store = MemoryStore(spec["db"], model=MODEL, vector_backend=spec["backend"])
    start = time.perf_counter()
    await store.open()
    seconds = time.perf_counter() - start
    backend = store.vector_backend
    await store.close()
    db_bytes = _db_bytes(Path(spec["db"]))
    return {"seconds": seconds, "backend": backend, "db_bytes": db_bytes}


def _percentiles(latencies: list[float]) -> dict[str, float]:
    values = np.asarray(latencies) * 1000.0
    return {
        "p50_ms": float(np.percentile(values, 50)),
        "p95_ms": float(np.percentile(values, 95)),
        "mean_ms": float(values.mean()),
    }


async def task_search(spec: dict[str, Any]) -> dict[str, Any]:
    """Open, then time every query of each mode after a warm-up."""
    queries = _read_json(spec["queries_file"])
    vectors = np.load(spec["vectors"])
    plans: dict[str, list[SearchQuery]] = {
        mode: [
            SearchQuery(
                text="" if mode == "vector" else text,
                vector=None if mode == "keyword" else vectors[k],
                scopes=tuple(queries["scopes"][k]),
                limit=LIMIT,
            )
            for k, text in enumerate(queries["texts"])
        ]
        for mode in spec["modes"]
    }
    gc.collect()
    before = _proc_status()
    store = MemoryStore(spec["db"], model=MODEL, vector_backend=spec["backend"])
    start = time.perf_counter()
    await store.open()
    open_seconds = time.perf_counter() - start
    if spec["backend"] != "auto" and store.vector_backend != spec["backend"]:
        raise RuntimeError(f"asked for {spec['backend']}, got {store.vector_backend}")
    if spec.get("budget"):
        store.match_budget = int(spec["budget"])
    loaded = _proc_status()
    result: dict[str, Any] = {
        "used": store.vector_backend,
        "open_s": open_seconds,
        "rss_before_mib": before["VmRSS"],
        "rss_open_mib": loaded["VmRSS"],
        "index_rss_mib": loaded["VmRSS"] - before["VmRSS"],
        "peak_open_mib": loaded["VmHWM"],
        # The index's own arrays (numpy; vec0 keeps its codes in the file).
        "index_mib": getattr(_vector_index(store), "nbytes", 0) / MIB,
    }
    for mode, plan in plans.items():
        for query in plan[: int(spec["warmup"])]:
            await store.search(query)
        latencies: list[float] = []
        cpu: list[float] = []
        recall = found = 0.0
        for k, query in enumerate(plan):
            tick, tock = time.perf_counter(), time.process_time()
            hits = await store.search(query)
            latencies.append(time.perf_counter() - tick)
            # CPU of all this process's threads: steadier than wall time
            # when other work shares the machine.
            cpu.append(time.process_time() - tock)
            ids = [hit.item.id for hit in hits]
            found += queries["targets"][k] in ids
            recall += len(set(ids) & set(queries["truth"][k])) / LIMIT
        result[mode] = {
            **_percentiles(latencies),
            "cpu_mean_ms": float(np.mean(cpu)) * 1000.0,
            "target_at_10": found / len(plan),
            "recall_at_10": recall / len(plan),
        }
    await store.close()
    after = _proc_status()
    result["rss_search_mib"] = after["VmRSS"]
    result["peak_mib"] = after["VmHWM"]
    return result


async def task_add(spec: dict[str, Any]) -> dict[str, Any]:
    """Bulk `add_many` into a fresh database, then single `add` calls."""
    bulk, single = int(spec["count"]), int(spec["single"])
    texts, scopes, vectors, _topics = Corpus().memories(bulk + single, seed=99)
    memories = _new_memories(texts, scopes)
    db = Path(spec["db"])
    store = MemoryStore(db, model=MODEL, vector_backend=spec["backend"])
    await store.open()
    try:
        seconds, _ids = await _bulk_add(
            store, memories[:bulk], vectors[:bulk], int(spec["batch"])
        )
        latencies: list[float] = []
        for memory, vector in zip(memories[bulk:], vectors[bulk:], strict=True):
            tick = time.perf_counter()
            await store.add(memory, vector=vector)
            latencies.append(time.perf_counter() - tick)
    finally:
        await store.close()
        _remove_db(db)
    return {
        "bulk_per_s": bulk / seconds,
        "single_per_s": len(latencies) / sum(latencies),
        "single": _percentiles(latencies),
    }


TASKS: Final = {
    "build": task_build,
    "open": task_open,
    "search": task_search,
    "add": task_add,
}


def worker(spec_json: str) -> None:
    """Entry point of a worker subprocess: run one task, print its result."""
    spec = json.loads(spec_json)
    try:
        result = asyncio.run(TASKS[spec["task"]](spec))
    except Exception:  # noqa: BLE001 - reported to the parent, then out
        # An engine's worker threads left open by the failure would keep
        # the process alive, and the parent would wait for it forever.
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    print(RESULT_PREFIX + json.dumps(result), flush=True)


# -- orchestration -----------------------------------------------------------


def _run_worker(
    spec: dict[str, Any],
    script: Path | None = None,
    prefix: str = RESULT_PREFIX,
) -> dict[str, Any]:
    """Run one task of `script` (this one by default) in a fresh subprocess.

    The task prints its result as JSON on a line starting with `prefix`;
    the load average around the run is added to it. `bench/peers.py` runs
    its own tasks through here too.
    """
    load = os.getloadavg()[0]
    env = dict(os.environ)
    if spec.get("engine"):
        # The worker imports this engine package instead of the default one.
        env[ENGINE_ENV] = str(spec["engine"])
    script = script or Path(__file__)
    proc = subprocess.run(  # noqa: S603 - our own script, our own arguments
        [sys.executable, str(script.resolve()), "--worker", json.dumps(spec)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env=env,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise RuntimeError(f"worker {spec['task']} failed ({proc.returncode})")
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(prefix):
            result: dict[str, Any] = json.loads(line.removeprefix(prefix))
            result["load"] = max(load, os.getloadavg()[0])
            return result
    raise RuntimeError(f"worker {spec['task']} printed no result")


def _median_tree(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median of every number across runs, keeping the nesting."""
    merged: dict[str, Any] = {}
    for key, value in runs[0].items():
        if isinstance(value, dict):
            merged[key] = _median_tree([run[key] for run in runs])
        elif isinstance(value, int | float):
            merged[key] = statistics.median(run[key] for run in runs)
        else:
            merged[key] = value
    return merged


def _log(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


def _environment() -> dict[str, Any]:
    model = cpu_model(platform.processor() or platform.machine())
    try:
        import sqlite_vec  # noqa: PLC0415 - optional

        conn = sqlite3.connect(":memory:")
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        vec_version = str(conn.execute("SELECT vec_version()").fetchone()[0])
        conn.close()
    except ImportError, sqlite3.Error, AttributeError:
        vec_version = "not available"
    return {
        "engine": os.environ.get(ENGINE_ENV) or ENGINE_DIR,
        "load_average": os.getloadavg(),
        "cpu": model,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "sqlite_vec": vec_version,
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "unset"),
    }


def _sides(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(label, engine folder): this tree's engine first ("" label), then `--compare`."""
    sides = [("", os.environ.get(ENGINE_ENV) or ENGINE_DIR)]
    if args.compare is not None:
        sides.append((args.compare_label, str(args.compare.resolve())))
    return sides


def _build(
    args: argparse.Namespace, workdir: Path, size: int, sides: list[tuple[str, str]]
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, Any]]]:
    """Build (or, with `--data`, reuse) one database of `size` per engine."""
    files: dict[str, dict[str, str]] = {}
    builds: dict[str, dict[str, Any]] = {}
    for label, engine in sides:
        name = f"{size}-{label}" if label else str(size)
        folder = args.data or workdir
        files[label] = {
            "db": str(folder / f"memories-{name}.db"),
            "queries_file": str(folder / f"queries-{name}.json"),
            "vectors": str(folder / f"queries-{name}.npy"),
            "engine": engine,
        }
        done = folder / f"build-{name}.json"
        if args.data is not None and done.exists():
            # Built by an earlier run with `--data`: same seed, same data.
            # The load it was built at is not this run's.
            builds[label] = _read_json(str(done)) | {"reused": True}
            builds[label].pop("load", None)
            _log(f"{size}: reusing {files[label]['db']}")
            continue
        _log(f"{size}: building ({label or THIS})")
        builds[label] = _run_worker(
            {"task": "build", "size": size, "batch": args.batch}
            | {"queries": args.queries}
            | files[label]
        )
        if args.data is not None:
            _write_json(str(done), builds[label])
        _log(f"{size}: built at {builds[label]['per_second']:.0f} memories/s")
    return files, builds


def run_all(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Build each size, search it with each backend, then time writes."""
    report: dict[str, Any] = {
        "environment": _environment(),
        "settings": {
            "sizes": args.sizes,
            "backends": args.backends,
            "runs": args.runs,
            "queries": args.queries,
            "warmup": args.warmup,
            "batch": args.batch,
            "add_count": args.add_count,
            "single_count": args.single_count,
            "limit": LIMIT,
            "writes": args.writes,
            "dim": DIM,
        },
        "sizes": {},
        "writes": {},
    }
    sides = _sides(args)
    report["settings"]["engines"] = {label or THIS: path for label, path in sides}
    for size in args.sizes:
        files, builds = _build(args, workdir, size, sides)
        entry: dict[str, Any] = {"build": builds[""], "backends": {}}
        if len(sides) > 1:
            entry["builds"] = {label or THIS: build for label, build in builds.items()}
        opened: dict[str, dict[str, Any]] = {}
        for backend in args.backends:
            runs: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in sides}
            first_open: dict[str, Any] = {}
            for label, _engine in sides:
                if backend != "numpy" and label not in opened:
                    # sqlite-vec builds its vec0 table on the first open.
                    opened[label] = _run_worker(
                        {"task": "open", "backend": backend} | files[label]
                    )
                    first_open[label] = opened[label]
            for run in range(args.runs):
                # Rotated: this tree first in even runs, the other in odd.
                for label, _engine in sides if run % 2 == 0 else sides[::-1]:
                    _log(
                        f"{size}: {backend} ({label or THIS}) search run "
                        f"{run + 1}/{args.runs}"
                    )
                    runs[label].append(
                        _run_worker(
                            {"task": "search", "backend": backend, "modes": MODES}
                            | {"warmup": args.warmup, "budget": args.match_budget}
                            | files[label]
                        )
                    )
            for label, _engine in sides:
                key = f"{backend} [{label}]" if label else backend
                entry["backends"][key] = {
                    "backend": backend,
                    "engine": label or THIS,
                    "median": _median_tree(runs[label]),
                    "runs": runs[label],
                    "first_open": first_open.get(label),
                    "db_bytes": _db_bytes(Path(files[label]["db"])),
                }
        report["sizes"][str(size)] = entry
        if not args.keep and args.data is None:
            for side in files.values():
                _remove_db(Path(side["db"]))
    # Writes into an empty database: "auto" would only repeat sqlite-vec.
    for backend in (name for name in args.backends if name != "auto" and args.writes):
        writes: list[dict[str, Any]] = []
        for run in range(args.runs):
            _log(f"writes: {backend} run {run + 1}/{args.runs}")
            writes.append(
                _run_worker(
                    {"task": "add", "backend": backend, "batch": args.batch}
                    | {"count": args.add_count, "single": args.single_count}
                    | {"db": str(workdir / f"add-{backend}.db")}
                )
            )
        report["writes"][backend] = {"median": _median_tree(writes), "runs": writes}
    return report


# -- report --------------------------------------------------------------------


def _fmt(value: float, digits: int = 1) -> str:
    return f"{value:,.{digits}f}"


def _max_load(node: Any) -> float:
    """Highest load average seen around any worker (see `_run_worker`)."""
    if isinstance(node, dict):
        own = float(node["load"]) if "load" in node else 0.0
        return max([own, *(_max_load(value) for value in node.values())])
    if isinstance(node, list):
        return max([0.0, *(_max_load(value) for value in node)])
    return 0.0


def _label(key: str, data: dict[str, Any]) -> str:
    """Name the backend asked for, for "auto" the one it chose, and the engine."""
    backend = str(data.get("backend", key))
    used = data["median"].get("used", backend)
    name = f"auto ({used})" if backend == "auto" else backend
    engine = data.get("engine", THIS)
    return name if engine == THIS else f"{name} [{engine}]"


def _own(entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Return this tree's results of one size by backend (not `--compare`'s)."""
    return {
        str(data.get("backend", key)): data
        for key, data in entry["backends"].items()
        if data.get("engine", THIS) == THIS
    }


def _targets(report: dict[str, Any]) -> list[tuple[str, str, bool]]:
    rows: list[tuple[str, str, bool]] = []
    for size, limit in TARGET_HYBRID_P95_MS.items():
        entry = report["sizes"].get(str(size))
        if entry is None:
            continue
        own = _own(entry)
        numpy_p95 = (
            own["numpy"]["median"]["hybrid"]["p95_ms"] if "numpy" in own else None
        )
        for backend, data in own.items():
            value = data["median"]["hybrid"]["p95_ms"]
            label = _label(backend, data)
            if backend == "numpy" or numpy_p95 is None:
                rows.append(
                    (
                        f"hybrid p95 ≤ {limit:g} ms at {size:,} ({label})",
                        f"{_fmt(value, 2)} ms",
                        value <= limit,
                    )
                )
            else:
                bound = TARGET_AUTO_FACTOR * numpy_p95
                rows.append(
                    (
                        (
                            f"hybrid p95 ≤ {TARGET_AUTO_FACTOR:g} × numpy's "
                            f"({_fmt(bound, 2)} ms) at {size:,} ({label})"
                        ),
                        f"{_fmt(value, 2)} ms",
                        value <= bound,
                    )
                )
    for size, limit in TARGET_KEYWORD_P95_MS.items():
        entry = report["sizes"].get(str(size))
        for backend, data in _own(entry).items() if entry else ():
            value = data["median"]["keyword"]["p95_ms"]
            rows.append(
                (
                    f"keyword p95 ≤ {limit:g} ms at {size:,} ({_label(backend, data)})",
                    f"{_fmt(value, 2)} ms",
                    value <= limit,
                )
            )
    for backend, data in report["writes"].items():
        value = data["median"]["bulk_per_s"]
        rows.append(
            (
                f"bulk add ≥ {TARGET_ADD_PER_S:,.0f} memories/s ({backend})",
                f"{_fmt(value, 0)} /s",
                value >= TARGET_ADD_PER_S,
            )
        )
    entry = report["sizes"].get(str(TARGET_INDEX_RSS_SIZE))
    if entry is not None:
        for backend, data in _own(entry).items():
            value = data["median"]["index_rss_mib"]
            label = _label(backend, data)
            rows.append(
                (
                    (
                        f"RSS of the {TARGET_INDEX_RSS_SIZE:,} index ≤ "
                        f"{TARGET_INDEX_RSS_MIB:g} MiB ({label})"
                    ),
                    f"{_fmt(value)} MiB",
                    value <= TARGET_INDEX_RSS_MIB,
                )
            )
    if entry is not None and "numpy" in _own(entry):
        arrays = _own(entry)["numpy"]["median"].get("index_mib")
        bound = TARGET_INDEX_SHARE * TARGET_INDEX_RSS_SIZE * INT8_INDEX_BYTES_PER_ROW
        if arrays is not None:
            rows.append(
                (
                    (
                        f"numpy index arrays at {TARGET_INDEX_RSS_SIZE:,} ≤ "
                        f"{TARGET_INDEX_SHARE:g} × the int8 index's "
                        f"({_fmt(bound / MIB)} MiB)"
                    ),
                    f"{_fmt(arrays)} MiB",
                    arrays * MIB <= bound,
                )
            )
    return rows


def _comparison(report: dict[str, Any]) -> list[str]:
    """Other engine → this tree, per size, backend and mode (medians; p95 of each run)."""
    lines = [
        "",
        (
            "Interleaved: the other engine → this tree (medians; each run's p95 "
            "in run order; target@10 = the memory a query was made from in the top 10):"
        ),
        "",
        (
            "| memories | backend | mode | p50 | p95 | CPU per query | "
            "p95 of each run | target@10 |"
        ),
        "|---:|---|---|---|---|---|---|---|",
    ]
    for size, entry in report["sizes"].items():
        others = {
            str(data["backend"]): data
            for data in entry["backends"].values()
            if data.get("engine", THIS) != THIS
        }
        for backend, data in _own(entry).items():
            other = others.get(backend)
            if other is None:
                continue
            for mode in MODES:
                old, new = other["median"][mode], data["median"][mode]

                def pair(key: str, old: Any = old, new: Any = new) -> str:
                    return f"{_fmt(old[key], 2)} → {_fmt(new[key], 2)}"

                per_run = (
                    ", ".join(_fmt(run[mode]["p95_ms"], 1) for run in other["runs"])
                    + " → "
                    + ", ".join(_fmt(run[mode]["p95_ms"], 1) for run in data["runs"])
                )
                lines.append(
                    f"| {int(size):,} | {_label(backend, data)} | {mode} | "
                    f"{pair('p50_ms')} | {pair('p95_ms')} | {pair('cpu_mean_ms')} | "
                    f"{per_run} | {_fmt(old['target_at_10'], 3)} → "
                    f"{_fmt(new['target_at_10'], 3)} |"
                )
    return lines


def markdown(report: dict[str, Any], command: str) -> str:
    """Render the report as Markdown tables."""
    env, settings = report["environment"], report["settings"]
    lines = [
        f"Command: `{command}`",
        "",
        (
            f"Machine: {env['cpu']}, {env['cores']} cores; Python {env['python']}, "
            f"numpy {env['numpy']}, SQLite {env['sqlite']}, sqlite-vec "
            f"{env['sqlite_vec']}; OPENBLAS_CORETYPE {env['openblas_coretype']}; "
            f"load average {env['load_average'][0]:.2f} at start, "
            f"{report.get('load_end', [0.0])[0]:.2f} at end, at most "
            f"{_max_load(report):.2f} around a run."
        ),
        "",
        (
            f"Median of {settings['runs']} runs, each a fresh process; "
            f"{settings['queries']} queries per mode after {settings['warmup']} "
            f"warm-up queries; limit {settings['limit']}; {settings['dim']}-dim "
            "vectors; query embedding excluded. Latencies in ms."
        ),
        "",
        (
            "| memories | backend | keyword p50 | keyword p95 | vector p50 | "
            "vector p95 | hybrid p50 | hybrid p95 | open (s) | index RSS (MiB) | "
            "RSS after open (MiB) | peak RSS (MiB) | DB (MiB) | vector recall@10 |"
        ),
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, entry in report["sizes"].items():
        for backend, data in entry["backends"].items():
            med = data["median"]
            cells = [f"{int(size):,}", _label(backend, data)]
            for mode in MODES:
                cells += [_fmt(med[mode]["p50_ms"], 2), _fmt(med[mode]["p95_ms"], 2)]
            cells += [
                _fmt(med["open_s"], 2),
                _fmt(med["index_rss_mib"]),
                _fmt(med["rss_open_mib"]),
                _fmt(med["peak_mib"]),
                _fmt(data["db_bytes"] / MIB),
                _fmt(med["vector"]["recall_at_10"], 3),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        (
            "CPU time per query (all threads, mean ms; steadier than latency "
            "on a busy machine) and how often the memory a query was made "
            "from is in the top 10:"
        ),
        "",
        (
            "| memories | backend | keyword CPU | vector CPU | hybrid CPU | "
            "keyword target@10 | vector target@10 | hybrid target@10 |"
        ),
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for size, entry in report["sizes"].items():
        for backend, data in entry["backends"].items():
            med = data["median"]
            cells = [f"{int(size):,}", _label(backend, data)]
            cells += [_fmt(med[mode]["cpu_mean_ms"], 2) for mode in MODES]
            cells += [_fmt(med[mode]["target_at_10"], 3) for mode in MODES]
            lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        (
            "| memories | build with `add_many` (memories/s, 1 run) | "
            "sqlite-vec first open, builds vec0 (s) | mean words | "
            "cos random / same topic / nearest |"
        ),
        "|---:|---:|---:|---:|---|",
    ]
    for size, entry in report["sizes"].items():
        build = entry["build"]
        first = next(
            (
                data["first_open"]
                for data in _own(entry).values()
                if data.get("first_open")
            ),
            None,
        )
        lines.append(
            f"| {int(size):,} | {_fmt(build['per_second'], 0)} | "
            f"{_fmt(first['seconds'], 2) if first else '-'} | "
            f"{_fmt(build['mean_words'])} | "
            f"{build['cos_random_mean']:.2f} / {build['cos_same_topic_mean']:.2f}"
            f" / {build['cos_nearest_mean']:.2f} |"
        )
    if any(data.get("engine", THIS) != THIS for data in _all_runs(report)):
        lines += _comparison(report)
    if report["writes"]:
        lines += [
            "",
            (
                f"Writes into a fresh database: {settings['add_count']:,} memories "
                f"with vectors by `add_many` in batches of {settings['batch']}, then "
                f"{settings['single_count']} single `add` calls."
            ),
            "",
            (
                "| backend | add_many (memories/s) | add (memories/s) | add p50 (ms) "
                "| add p95 (ms) |"
            ),
            "|---|---:|---:|---:|---:|",
        ]
    for backend, data in report["writes"].items():
        med = data["median"]
        lines.append(
            f"| {backend} | {_fmt(med['bulk_per_s'], 0)} | "
            f"{_fmt(med['single_per_s'], 0)} | {_fmt(med['single']['p50_ms'], 2)}"
            f" | {_fmt(med['single']['p95_ms'], 2)} |"
        )
    rows = _targets(report)
    if rows:
        lines += ["", "| target | measured | |", "|---|---:|---|"]
        lines += [
            f"| {name} | {value} | {'pass' if ok else '**FAIL**'} |"
            for name, value, ok in rows
        ]
    return "\n".join(lines) + "\n"


def _all_runs(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        data
        for entry in report["sizes"].values()
        for data in entry["backends"].values()
    ]


def _sizes(text: str) -> list[int]:
    sizes = [
        int(part.replace("_", "").lower().replace("k", "000").replace("m", "000000"))
        for part in text.split(",")
    ]
    if not sizes or min(sizes) < 100:
        raise argparse.ArgumentTypeError("sizes are at least 100")
    return sizes


def _backends(text: str) -> list[str]:
    backends = [part.strip() for part in text.split(",")]
    if not set(backends) <= set(BACKENDS):
        raise argparse.ArgumentTypeError(f"backends are {', '.join(BACKENDS)}")
    return backends


def main() -> None:
    """Parse arguments, run everything, print Markdown and maybe JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=_sizes, default=[1000, 10_000, 100_000])
    parser.add_argument("--backends", type=_backends, default=list(BACKENDS))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument(
        "--match-budget",
        type=int,
        help="rows a keyword MATCH may find (default: the engine's MATCH_BUDGET)",
    )
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--add-count", type=int, default=10_000)
    parser.add_argument("--single-count", type=int, default=500)
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: temp)")
    parser.add_argument("--keep", action="store_true", help="keep the databases")
    parser.add_argument(
        "--data",
        type=Path,
        help=(
            "folder that keeps each size's databases and queries, reused when "
            "present (the engine must be the same; the queries count too)"
        ),
    )
    parser.add_argument("--json", type=Path, help="also write the full results")
    parser.add_argument(
        "--engine", type=Path, help="folder with the `engine` package to measure"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        help="folder with another `engine` package, run interleaved with this one",
    )
    parser.add_argument(
        "--compare-label", default="before", help="its name in the tables"
    )
    parser.add_argument(
        "--no-writes", dest="writes", action="store_false", help="skip the write runs"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    if args.engine is not None:
        os.environ[ENGINE_ENV] = str(args.engine.resolve())
    load = os.getloadavg()[0]
    if load > 0.5:
        _log(f"warning: load average {load:.2f}: other work skews the numbers")
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    if args.data is not None:
        args.data = args.data.resolve()
        args.data.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="engine-bench-", dir=args.workdir))
    shown: list[str] = []
    skip = False
    for arg in sys.argv[1:]:
        if skip or arg.startswith(("--workdir", "--data")):
            skip = arg in {"--workdir", "--data"}
            continue
        shown.append(arg)
    command = " ".join(["python bench/engine.py", *shown])
    started = time.perf_counter()
    try:
        report = run_all(args, workdir)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    report["seconds"] = time.perf_counter() - started
    report["load_end"] = os.getloadavg()
    _log(f"done in {report['seconds']:.0f} s")
    print(markdown(report, command.strip()))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
