"""Conversation-log search with message vectors: latency and index memory.

Run from the repository root in the Python 3.14 environment:

    python bench/messages.py                        # 1k and 10k messages
    python bench/messages.py --sizes 10000 --queries 200 --dim 768

Builds a conversation log of N messages (synthetic sentences of 6 to 25
Zipf-distributed words, half of them in one person's scope) with unit vectors
clustered by topic, written straight into `message_embeddings` as the queue
would, then measures `ConversationLog.search` as `memory.search` runs it
(household plus one person): keyword only, and hybrid with a query vector.
Reports the median and p95 latency, the time the first hybrid search takes to
load the in-memory index, and the bytes that index holds.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
import statistics
import sys
import tempfile
import time
from typing import Any, Final

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    MemoryStore,
    MessageQuery,
    MessageRole,
    NewMessage,
)

MODEL: Final = "bench/model@384"
PERSON: Final = "person.anna"
TOPICS: Final = 64
VOCABULARY: Final = 5_000
START: Final = datetime(2026, 1, 1, tzinfo=UTC)


def _words(rng: np.random.Generator, count: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.3, count), VOCABULARY)
    return [f"w{int(rank)}" for rank in ranks]


def _vectors(
    rng: np.random.Generator, topics: npt.NDArray[np.int64], dim: int
) -> npt.NDArray[np.float32]:
    centroids = rng.standard_normal((TOPICS, dim)).astype(np.float32)
    shared = rng.standard_normal(dim).astype(np.float32)
    matrix = (
        0.5 * shared
        + centroids[topics]
        + 0.8 * rng.standard_normal((len(topics), dim)).astype(np.float32)
    )
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    units: npt.NDArray[np.float32] = (matrix / norms).astype(np.float32)
    return units


async def _build(
    store: MemoryStore, size: int, dim: int, rng: np.random.Generator
) -> tuple[list[str], npt.NDArray[np.float32]]:
    log = ConversationLog(store)
    topics = rng.integers(0, TOPICS, size)
    texts = [" ".join(_words(rng, int(rng.integers(6, 26)))) for _ in range(size)]
    batch: list[tuple[int | None, ConversationInfo, list[NewMessage]]] = []
    for start in range(0, size, 20):
        scope = PERSON if (start // 20) % 2 else HOUSEHOLD
        when = START + timedelta(minutes=start)
        batch.append(
            (
                None,
                ConversationInfo(
                    conversation_id=f"c{start}", started_at=when, scope=scope
                ),
                [
                    NewMessage(
                        role=MessageRole.USER if i % 2 == 0 else MessageRole.ASSISTANT,
                        content=texts[i],
                        created_at=when + timedelta(seconds=i - start),
                        scope=scope,
                    )
                    for i in range(start, min(start + 20, size))
                ],
            )
        )
    await log.save(batch)
    vectors = _vectors(rng, topics, dim)
    async with store.transaction() as conn:
        await conn.execute(
            "INSERT INTO embedding_models (model, dim, created_at) VALUES (?, ?, 0)",
            (MODEL, dim),
        )
        await conn.executemany(
            "INSERT INTO message_embeddings (message_id, model, vector) "
            "VALUES (?, ?, ?)",
            [(i + 1, MODEL, vectors[i].tobytes()) for i in range(size)],
        )
    return texts, vectors


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(1000 * statistics.median(ordered), 2),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


async def _measure(size: int, dim: int, queries: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore(
            Path(folder) / "memory.db", model=MODEL, vector_backend="numpy"
        )
        await store.open()
        try:
            texts, vectors = await _build(store, size, dim, rng)
            log = ConversationLog(store)
            targets = rng.integers(0, size, queries)
            asks = [
                (
                    " ".join(texts[t].split()[:3]),
                    (vectors[t] + 0.3 * rng.standard_normal(dim)).astype(np.float32),
                )
                for t in targets
            ]
            scopes = (HOUSEHOLD, PERSON)
            started = time.perf_counter()
            await log.search(
                MessageQuery(text=asks[0][0], vector=asks[0][1], scopes=scopes)
            )
            load = time.perf_counter() - started
            results: dict[str, Any] = {
                "messages": size,
                "dim": dim,
                "index_load_ms": round(1000 * load, 1),
                "index_bytes": log.index_bytes,
            }
            for name, with_vector in (("keyword", False), ("hybrid", True)):
                samples = []
                for text, vector in asks:
                    query = MessageQuery(
                        text=text, vector=vector if with_vector else None, scopes=scopes
                    )
                    started = time.perf_counter()
                    await log.search(query)
                    samples.append(time.perf_counter() - started)
                results[name] = _summary(samples)
            return results
        finally:
            await store.close()


def main() -> None:
    """Measure each size and print one line of JSON per size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    for size in (int(value) for value in args.sizes.split(",")):
        print(asyncio.run(_measure(size, args.dim, args.queries, args.seed)))


if __name__ == "__main__":
    main()
