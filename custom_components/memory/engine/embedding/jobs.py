"""The embedding job tables: what is queued, due, cached, failed and stored.

Each memory gets a job per model in `embedding_jobs` (pending, ready or error
with its message), each embedded conversation message one in
`message_embedding_jobs`, so work survives a restart. `embedding_queue.py`
drives these functions; they only read and write the tables.

A ready job's `text_hash` is the hash of exactly the text its vector was made
from (secrets redacted), written when the vector is: so a cache hit never
hands out the vector of an unredacted text. The hash written when a job is
queued is provisional (the unredacted text's, cheap to compute for a whole
rebuild) and read by nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
import hashlib
from typing import Final

import aiosqlite
import numpy as np

from ..conversations import EMBEDDED_MAX_CHARS, EMBEDDED_MESSAGES_SQL, embedding_text
from ..models import Vector
from ..privacy import redacted
from ..sql import placeholders, read_one
from ..store import DatabaseAccess
from .providers import DimensionChangedError, ProviderError

JOB_PENDING: Final = "pending"
JOB_READY: Final = "ready"
JOB_ERROR: Final = "error"

# Item failures (the provider refused a text): retries after 30 s, 2 min,
# 8 min, 32 min, then the job is left in `error` (still found by keywords).
MAX_ATTEMPTS: Final = 5
RETRY_BASE: Final = 30.0
RETRY_FACTOR: Final = 4.0
_ENQUEUE_CHUNK: Final = 1000
_ERROR_CHARS: Final = 300
# Redaction reads this much of a text, more than is ever embedded (memories
# have at most 2,000 characters), so a cut never parts a value from its label.
_REDACTION_WINDOW: Final = 2 * EMBEDDED_MAX_CHARS


def text_hash(text: str) -> bytes:
    """Hash a text as the cache keys it (with the model)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def _same(text: str) -> str:
    return text


@dataclass(frozen=True, slots=True)
class JobTables:
    """Where one kind of text keeps its jobs: SQL identifiers, never values."""

    name: str
    items: str  # the table of texts
    jobs: str
    key: str  # the jobs' (and vectors') column naming the text's row
    vectors: str
    rebuilds: str
    where: str  # which rows of `items` (alias m) are embedded at all
    text: Callable[[str], str]  # what of a row's content is embedded


MEMORIES: Final = JobTables(
    name="memories",
    items="memories",
    jobs="embedding_jobs",
    key="memory_id",
    vectors="embeddings",
    rebuilds="embedding_rebuilds",
    where="1",
    text=_same,
)
MESSAGES: Final = JobTables(
    name="messages",
    items="conversation_messages",
    jobs="message_embedding_jobs",
    key="message_id",
    vectors="message_embeddings",
    rebuilds="message_embedding_rebuilds",
    where=EMBEDDED_MESSAGES_SQL,
    text=embedding_text,
)
# Memories first: a batch of messages is taken only when no memory is due.
KINDS: Final = (MEMORIES, MESSAGES)


def sent_text(kind: JobTables, content: str) -> str:
    """Return what is sent to the provider for a row: its text, secrets redacted.

    Redacted before it is cut to what is embedded.
    """
    return kind.text(redacted(content[:_REDACTION_WINDOW]))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueStatus:
    """Counts of one model's jobs (never any content).

    `pending`, `ready`, `failed` and `rebuilding` are about memories; the
    `messages_` fields about the log. `progress` (the progress sensor's state)
    covers both: message search stays keyword-only until its rebuild is done.
    """

    model: str
    pending: int = 0
    ready: int = 0
    failed: int = 0
    rebuilding: bool = False
    messages_pending: int = 0
    messages_ready: int = 0
    messages_failed: int = 0
    messages_rebuilding: bool = False

    @property
    def total(self) -> int:
        """Memories with a job for this model."""
        return self.pending + self.ready + self.failed

    @property
    def messages_total(self) -> int:
        """Messages with a job for this model."""
        return self.messages_pending + self.messages_ready + self.messages_failed

    @property
    def progress(self) -> float:
        """Share of all jobs, memories and messages, done (ready or given up).

        In percent; 100 when there is nothing to embed.
        """
        total = self.total + self.messages_total
        if not total:
            return 100.0
        done = self.ready + self.failed + self.messages_ready + self.messages_failed
        return round(100.0 * done / total, 1)


@dataclass(frozen=True, slots=True)
class Job:
    """One due job: the row it embeds, the text sent and that text's hash."""

    item_id: int
    content: str
    text_hash: bytes
    attempts: int


async def count_missing(
    store: DatabaseAccess, model: str, *, messages: bool = False
) -> int:
    """Memories (or embedded messages) with no vector of `model` yet.

    What switching to `model` costs; messages that are never embedded (tool
    results, one-word replies) do not count.
    """
    kind = MESSAGES if messages else MEMORIES
    row = await read_one(
        store.reader,
        f"SELECT count(*) FROM {kind.items} m WHERE {kind.where} AND NOT EXISTS "  # noqa: S608
        f"(SELECT 1 FROM {kind.vectors} e WHERE e.model = ? AND e.{kind.key} = m.id)",
        (model,),
    )
    return int(row[0]) if row else 0


async def model_dimensions(conn: aiosqlite.Connection, model: str) -> int | None:
    """Return the vector length recorded for `model`, if it stored any vector."""
    row = await read_one(
        conn, "SELECT dim FROM embedding_models WHERE model = ?", (model,)
    )
    return int(row[0]) if row is not None else None


async def _exists(conn: aiosqlite.Connection, sql: str, model: str) -> bool:
    row = await read_one(conn, f"SELECT EXISTS ({sql})", (model,))
    return bool(row and row[0])


async def has_jobs(conn: aiosqlite.Connection, kind: JobTables, model: str) -> bool:
    """Whether `model` was ever used on this kind of text."""
    sql = f"SELECT 1 FROM {kind.jobs} WHERE model = ?"  # noqa: S608
    return await _exists(conn, sql, model)


async def start_rebuild(
    conn: aiosqlite.Connection, kind: JobTables, model: str, total: int, now: float
) -> None:
    """Record that `total` existing texts are being embedded by `model`."""
    await conn.execute(
        f"INSERT OR IGNORE INTO {kind.rebuilds} (model, total, "  # noqa: S608
        "started_at) VALUES (?, ?, ?)",
        (model, total, now),
    )


async def is_rebuilding(
    conn: aiosqlite.Connection, kind: JobTables, model: str
) -> bool:
    """Whether a rebuild of this kind by `model` is still under way."""
    sql = f"SELECT 1 FROM {kind.rebuilds} WHERE model = ?"  # noqa: S608
    return await _exists(conn, sql, model)


async def finish_rebuilds(
    conn: aiosqlite.Connection, kinds: Iterable[JobTables], model: str
) -> dict[JobTables, bool]:
    """End the rebuilds with no pending job left; return which still run."""
    running = {}
    for kind in kinds:
        await conn.execute(
            f"DELETE FROM {kind.rebuilds} WHERE model = ? AND NOT EXISTS "  # noqa: S608
            f"(SELECT 1 FROM {kind.jobs} WHERE model = ? AND state = 'pending')",
            (model, model),
        )
        running[kind] = await is_rebuilding(conn, kind, model)
    return running


async def enqueue(
    conn: aiosqlite.Connection,
    kind: JobTables,
    model: str,
    *,
    after: int,
    clock: Callable[[], float],
) -> tuple[int, int]:
    """Queue texts with an id above `after` that have no job yet.

    Returns how many were queued and the highest id now looked at (the
    newest row of the table, queued or not embedded at all).
    """
    added = 0
    last = after
    while True:
        rows = list(
            await conn.execute_fetchall(
                f"SELECT m.id, m.content FROM {kind.items} m WHERE m.id > ? "  # noqa: S608
                f"AND {kind.where} AND NOT EXISTS (SELECT 1 FROM {kind.jobs} j "
                f"WHERE j.model = ? AND j.{kind.key} = m.id) ORDER BY m.id LIMIT ?",
                (last, model, _ENQUEUE_CHUNK),
            )
        )
        if not rows:
            break
        now = clock()
        await conn.executemany(
            f"INSERT OR IGNORE INTO {kind.jobs} ({kind.key}, model, "  # noqa: S608
            "text_hash, state, updated_at) VALUES (?, ?, ?, 'pending', ?)",
            [(row[0], model, text_hash(kind.text(row[1])), now) for row in rows],
        )
        added += len(rows)
        last = int(rows[-1][0])
    row = await read_one(
        conn,
        f"SELECT coalesce(max(id), 0) FROM {kind.items}",  # noqa: S608
    )
    newest = int(row[0]) if row else 0
    return added, max(last, newest)


async def newest_ids(reader: aiosqlite.Connection) -> dict[JobTables, int]:
    """Return the highest id of each kind's table (0 when empty)."""
    row = await read_one(
        reader,
        "SELECT (SELECT coalesce(max(id), 0) FROM memories), "
        "(SELECT coalesce(max(id), 0) FROM conversation_messages)",
    )
    assert row is not None  # noqa: S101 - a SELECT of two values
    return {kind: int(newest) for kind, newest in zip(KINDS, row, strict=True)}


async def due_jobs(
    reader: aiosqlite.Connection,
    kind: JobTables,
    model: str,
    *,
    batch_size: int,
    now: float,
) -> list[Job]:
    """Fresh jobs in a batch; a job that failed before goes alone."""
    base = (
        f"SELECT j.{kind.key}, m.content, j.attempts "  # noqa: S608
        f"FROM {kind.jobs} j JOIN {kind.items} m ON m.id = j.{kind.key} "
        "WHERE j.model = ? AND j.state = 'pending' "
    )
    rows = list(
        await reader.execute_fetchall(
            base + f"AND j.attempts = 0 ORDER BY j.{kind.key} LIMIT ?",
            (model, batch_size),
        )
    )
    if not rows:
        rows = list(
            await reader.execute_fetchall(
                base + "AND j.attempts > 0 AND j.next_attempt_at <= ? "
                f"ORDER BY j.next_attempt_at, j.{kind.key} LIMIT 1",
                (model, now),
            )
        )
    jobs = []
    for row in rows:
        text = sent_text(kind, str(row[1]))
        jobs.append(Job(int(row[0]), text, text_hash(text), int(row[2])))
    return jobs


async def next_due(reader: aiosqlite.Connection, model: str) -> float | None:
    """When the earliest pending job (of either kind) is due, if any is."""
    row = await read_one(
        reader,
        "SELECT min(due) FROM (SELECT min(next_attempt_at) AS due FROM "
        "embedding_jobs WHERE model = ? AND state = 'pending' UNION ALL "
        "SELECT min(next_attempt_at) FROM message_embedding_jobs "
        "WHERE model = ? AND state = 'pending')",
        (model, model),
    )
    if row is None or row[0] is None:
        return None
    return float(row[0])


async def cached_vectors(
    reader: aiosqlite.Connection, model: str, hashes: Sequence[bytes]
) -> dict[bytes, Vector]:
    """Vectors this model already made for the same texts, of either kind."""
    marks = placeholders(len(hashes))
    sql = " UNION ALL ".join(
        f"SELECT j.text_hash, e.vector FROM {kind.jobs} j "  # noqa: S608
        f"JOIN {kind.vectors} e ON e.model = j.model AND e.{kind.key} = "
        f"j.{kind.key} WHERE j.model = ? AND j.text_hash IN ({marks})"
        for kind in KINDS
    )
    args = [arg for _kind in KINDS for arg in (model, *hashes)]
    rows = await reader.execute_fetchall(sql, args)
    return {bytes(row[0]): np.frombuffer(row[1], dtype=np.float32) for row in rows}


async def mark_ready(
    conn: aiosqlite.Connection,
    kind: JobTables,
    model: str,
    hashes: Mapping[int, bytes],
    now: float,
) -> None:
    """Mark these rows' jobs ready, with the hash of the text embedded."""
    await conn.executemany(
        f"UPDATE {kind.jobs} SET state = 'ready', attempts = 0, "  # noqa: S608
        f"error = NULL, text_hash = ?, updated_at = ? WHERE model = ? "
        f"AND {kind.key} = ?",
        [(digest, now, model, item_id) for item_id, digest in hashes.items()],
    )


async def record_failure(
    conn: aiosqlite.Connection,
    kind: JobTables,
    model: str,
    jobs: Sequence[Job],
    error: ProviderError,
    now: float,
) -> None:
    """Back off these jobs; after `MAX_ATTEMPTS` leave them in `error`."""
    message = str(error)[:_ERROR_CHARS]
    for job in jobs:
        attempts = job.attempts + 1
        state = JOB_ERROR if attempts >= MAX_ATTEMPTS else JOB_PENDING
        delay = RETRY_BASE * RETRY_FACTOR ** (attempts - 1)
        await conn.execute(
            f"UPDATE {kind.jobs} SET state = ?, attempts = ?, "  # noqa: S608
            "next_attempt_at = ?, error = ?, updated_at = ? "
            f"WHERE model = ? AND {kind.key} = ?",
            (state, attempts, now + delay, message, now, model, job.item_id),
        )


def vector_length(
    model: str, vectors: Mapping[int, Vector], recorded: int | None
) -> int | DimensionChangedError:
    """Return the length every vector of `model` must have, or the error if one differs.

    `recorded` is the model's known length (None: its first vectors, whose
    shortest length it becomes).
    """
    dims = {len(vector) for vector in vectors.values()}
    expected = recorded if recorded is not None else min(dims)
    if dims != {expected}:
        return DimensionChangedError(
            f"{model} made {expected}-dimensional vectors, now {sorted(dims)}",
            expected=str(expected),
            got=",".join(str(dim) for dim in sorted(dims)),
        )
    return expected


async def store_message_vectors(
    conn: aiosqlite.Connection,
    model: str,
    vectors: Mapping[int, Vector],
    now: float,
) -> list[int] | DimensionChangedError:
    """Write unit vectors of messages that still exist; returns their ids.

    Or, when the vectors' length differs from the model's, the error (and
    nothing is written). The conversation log's index reads them from the
    table (by id) on its next semantic search.
    """
    recorded = await model_dimensions(conn, model)
    expected = vector_length(model, vectors, recorded)
    if isinstance(expected, DimensionChangedError):
        return expected
    if recorded is None:
        await conn.execute(
            "INSERT INTO embedding_models (model, dim, created_at) VALUES (?, ?, ?)",
            (model, expected, now),
        )
    ids = sorted(vectors)
    found = await conn.execute_fetchall(
        "SELECT id FROM conversation_messages "  # noqa: S608
        f"WHERE id IN ({placeholders(len(ids))})",
        ids,
    )
    alive = [int(row[0]) for row in found]
    await conn.executemany(
        "INSERT OR REPLACE INTO message_embeddings (message_id, model, "
        "vector) VALUES (?, ?, ?)",
        [
            (
                item_id,
                model,
                (vectors[item_id] / np.linalg.norm(vectors[item_id]))
                .astype(np.float32)
                .tobytes(),
            )
            for item_id in alive
        ],
    )
    return alive


async def queue_status(
    reader: aiosqlite.Connection,
    model: str,
    *,
    rebuilding: bool,
    messages_rebuilding: bool,
) -> QueueStatus:
    """Count this model's jobs by state, memories and messages apart."""
    rows = await reader.execute_fetchall(
        "SELECT 'memories', state, count(*) FROM embedding_jobs WHERE model = ? "
        "GROUP BY state UNION ALL SELECT 'messages', state, count(*) FROM "
        "message_embedding_jobs WHERE model = ? GROUP BY state",
        (model, model),
    )
    counts = {(str(row[0]), str(row[1])): int(row[2]) for row in rows}
    return QueueStatus(
        model=model,
        pending=counts.get(("memories", JOB_PENDING), 0),
        ready=counts.get(("memories", JOB_READY), 0),
        failed=counts.get(("memories", JOB_ERROR), 0),
        rebuilding=rebuilding,
        messages_pending=counts.get(("messages", JOB_PENDING), 0),
        messages_ready=counts.get(("messages", JOB_READY), 0),
        messages_failed=counts.get(("messages", JOB_ERROR), 0),
        messages_rebuilding=messages_rebuilding,
    )
