"""The embedding job tables on PostgreSQL, as `engine/embedding/jobs.py` on SQLite.

Each function is the SQLite module's function of the same name, with the
same arguments (the engine's `JobTables`, `MEMORIES` or `MESSAGES`, name the
kind) and the same states and results: `conn` is an asyncpg connection (in
the caller's transaction where SQLite's takes the write connection) or a
pool. The job's `Job`, `QueueStatus`, states, backoff and hashes are the
SQLite module's own.

Several Home Assistants may share the database, so `due_jobs` also claims
what it returns: in one statement it picks the due jobs `FOR UPDATE SKIP
LOCKED` (a job another instance is claiming right now is passed over, never
waited for) and sets `claimed_by` (this instance's name, unique to each Home
Assistant) and `claimed_until` (`now` plus the lease). A job claimed by
another instance is not due until its claim lapses; the instance's own claims
are due to it again, so one instance calling twice gets what SQLite's
`due_jobs` gets. `mark_ready` and `record_failure` with `instance` touch only
jobs that instance still holds, and release them; a memory reworded
meanwhile (the trigger `memories_reworded_jobs` sets its job pending and
drops the claim) is left pending, for its new text.

A crashed instance's claims are released two ways: when their lease lapses
(`LEASE_SECONDS`, longer than any provider call) any instance claims them
again; and when the same instance starts again it may claim them at once
(its own), or drop them all with `release_claims`. Instances' clocks are
the `now` they pass (NTP-synchronised Home Assistants differ by far less
than a lease).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from ..conversations import MIN_EMBEDDED_CHARS
from ..embedding import (
    JOB_ERROR,
    JOB_PENDING,
    JOB_READY,
    KINDS,
    MAX_ATTEMPTS,
    MEMORIES,
    MESSAGES,
    RETRY_BASE,
    RETRY_FACTOR,
    Job,
    JobTables,
    ProviderError,
    QueueStatus,
    sent_text,
    text_hash,
)

# How long a claim holds: a provider call times out well before this.
LEASE_SECONDS: Final = 600.0
_ENQUEUE_CHUNK: Final = 1000
_ERROR_CHARS: Final = 300

# Which rows of a kind's table are embedded (alias m): SQLite's `where`
# (`conversations.EMBEDDED_MESSAGES_SQL`) in PostgreSQL's words.
EMBEDDED_WHERE: Final = {
    MEMORIES.name: "true",
    MESSAGES.name: (
        "m.role IN ('user', 'assistant') AND "
        f"length(btrim(m.content, E' \\t\\n\\r')) >= {MIN_EMBEDDED_CHARS}"
    ),
}
# A claim this instance ($n) may take: none, lapsed ($now), or its own.
_CLAIMABLE: Final = (
    "(j.claimed_until IS NULL OR j.claimed_until <= {now} OR j.claimed_by = {me})"
)


def _claimable(now: str, me: str) -> str:
    return _CLAIMABLE.format(now=now, me=me)


async def has_jobs(conn: Any, kind: JobTables, model: str) -> bool:
    """Whether `model` was ever used on this kind of text."""
    return bool(
        await conn.fetchval(
            f"SELECT EXISTS (SELECT 1 FROM {kind.jobs} WHERE model = $1)",  # noqa: S608
            model,
        )
    )


async def start_rebuild(
    conn: Any, kind: JobTables, model: str, total: int, now: float
) -> None:
    """Record that `total` existing texts are being embedded by `model`."""
    await conn.execute(
        f"INSERT INTO {kind.rebuilds} (model, total, started_at) "  # noqa: S608
        "VALUES ($1, $2, $3) ON CONFLICT (model) DO NOTHING",
        model,
        total,
        now,
    )


async def is_rebuilding(conn: Any, kind: JobTables, model: str) -> bool:
    """Whether a rebuild of this kind by `model` is still under way."""
    return bool(
        await conn.fetchval(
            f"SELECT EXISTS (SELECT 1 FROM {kind.rebuilds} WHERE model = $1)",  # noqa: S608
            model,
        )
    )


async def finish_rebuilds(
    conn: Any, kinds: Iterable[JobTables], model: str
) -> dict[JobTables, bool]:
    """End the rebuilds with no pending job left; return which still run."""
    running = {}
    for kind in kinds:
        await conn.execute(
            f"DELETE FROM {kind.rebuilds} WHERE model = $1 AND NOT EXISTS "  # noqa: S608
            f"(SELECT 1 FROM {kind.jobs} WHERE model = $1 AND state = 'pending')",
            model,
        )
        running[kind] = await is_rebuilding(conn, kind, model)
    return running


async def enqueue(
    conn: Any,
    kind: JobTables,
    model: str,
    *,
    after: int,
    clock: Callable[[], float],
) -> tuple[int, int]:
    """Queue texts with an id above `after` that have no job yet.

    Returns how many were queued and the highest id now looked at. Two
    instances queueing at once: `ON CONFLICT DO NOTHING` keeps one job.
    """
    added = 0
    last = after
    while True:
        rows = await conn.fetch(
            f"SELECT m.id, m.content FROM {kind.items} m WHERE m.id > $1 "  # noqa: S608
            f"AND {EMBEDDED_WHERE[kind.name]} AND NOT EXISTS (SELECT 1 FROM {kind.jobs} j "
            f"WHERE j.model = $2 AND j.{kind.key} = m.id) ORDER BY m.id LIMIT $3",
            last,
            model,
            _ENQUEUE_CHUNK,
        )
        if not rows:
            break
        await conn.execute(
            f"INSERT INTO {kind.jobs} ({kind.key}, model, text_hash, state, "  # noqa: S608
            "updated_at) SELECT item, $2, digest, 'pending', $4 "
            "FROM unnest($1::int8[], $3::bytea[]) AS job(item, digest) "
            "ON CONFLICT DO NOTHING",
            [row[0] for row in rows],
            model,
            [text_hash(kind.text(row[1])) for row in rows],
            clock(),
        )
        added += len(rows)
        last = int(rows[-1][0])
    newest = await conn.fetchval(
        f"SELECT coalesce(max(id), 0) FROM {kind.items}"  # noqa: S608
    )
    return added, max(last, int(newest))


async def newest_ids(conn: Any) -> dict[JobTables, int]:
    """Return the highest id of each kind's table (0 when empty)."""
    row = await conn.fetchrow(
        "SELECT (SELECT coalesce(max(id), 0) FROM memories), "
        "(SELECT coalesce(max(id), 0) FROM conversation_messages)"
    )
    return {kind: int(newest) for kind, newest in zip(KINDS, row, strict=True)}


def _claim_sql(kind: JobTables, *, fresh: bool) -> str:
    """Claim due jobs: $1 model, $2 limit, $3 now, $4 instance, $5 lease."""
    order = f"j.{kind.key}" if fresh else f"j.next_attempt_at, j.{kind.key}"
    due = "j.attempts = 0" if fresh else "j.attempts > 0 AND j.next_attempt_at <= $3"
    return (
        f"WITH picked AS (SELECT j.{kind.key} AS item FROM {kind.jobs} j "  # noqa: S608
        f"JOIN {kind.items} m ON m.id = j.{kind.key} "
        f"WHERE j.model = $1 AND j.state = 'pending' AND {due} "
        f"AND {_claimable('$3', '$4')} ORDER BY {order} LIMIT $2 "
        f"FOR UPDATE OF j SKIP LOCKED) "
        f"UPDATE {kind.jobs} j SET claimed_by = $4, claimed_until = $3::float8 + $5::float8 "
        f"FROM picked, {kind.items} m WHERE j.model = $1 "
        f"AND j.{kind.key} = picked.item AND m.id = picked.item "
        f"RETURNING j.{kind.key}, m.content, j.attempts"
    )


async def due_jobs(
    conn: Any,
    kind: JobTables,
    model: str,
    *,
    batch_size: int,
    now: float,
    instance: str,
    lease: float = LEASE_SECONDS,
) -> list[Job]:
    """Claim fresh jobs in a batch; a job that failed before goes alone.

    The jobs SQLite's `due_jobs` returns, less those another instance holds
    (see the module's docstring), claimed by `instance` until `now + lease`.
    """
    rows = await conn.fetch(
        _claim_sql(kind, fresh=True), model, batch_size, now, instance, lease
    )
    if rows:
        rows = sorted(rows, key=lambda row: int(row[0]))
    else:
        rows = await conn.fetch(
            _claim_sql(kind, fresh=False), model, 1, now, instance, lease
        )
    jobs = []
    for row in rows:
        text = sent_text(kind, str(row[1]))
        jobs.append(Job(int(row[0]), text, text_hash(text), int(row[2])))
    return jobs


async def release_claims(conn: Any, instance: str) -> int:
    """Drop every claim `instance` holds (it starts again); return how many."""
    released = 0
    for kind in KINDS:
        status = await conn.execute(
            f"UPDATE {kind.jobs} SET claimed_by = NULL, claimed_until = NULL "  # noqa: S608
            "WHERE claimed_by = $1",
            instance,
        )
        released += int(status.split()[-1])
    return released


async def next_due(
    conn: Any, model: str, *, instance: str | None = None
) -> float | None:
    """When the earliest pending job (of either kind) is due, if any is.

    A job another instance holds is due when its claim lapses, if later.
    """
    due = (
        "greatest(next_attempt_at, CASE WHEN claimed_by IS DISTINCT FROM $2 "
        "THEN coalesce(claimed_until, 0) ELSE 0 END)"
    )
    value = await conn.fetchval(
        f"SELECT min(due) FROM (SELECT min({due}) AS due FROM embedding_jobs "  # noqa: S608
        "WHERE model = $1 AND state = 'pending' UNION ALL "
        f"SELECT min({due}) FROM message_embedding_jobs "
        "WHERE model = $1 AND state = 'pending') AS each_kind",
        model,
        instance,
    )
    return None if value is None else float(value)


def _held(kind: JobTables, at: int) -> str:
    """Return the condition that instance ${at} (if named) still holds a job."""
    return f"AND (${at}::text IS NULL OR {kind.jobs}.claimed_by = ${at}::text)"


async def mark_ready(
    conn: Any,
    kind: JobTables,
    model: str,
    hashes: Mapping[int, bytes],
    now: float,
    *,
    instance: str | None = None,
) -> list[int]:
    """Mark these rows' jobs ready, with the hash of the text embedded.

    With `instance`, only the jobs it still holds; returns the ids marked.
    """
    ids = list(hashes)
    rows = await conn.fetch(
        f"UPDATE {kind.jobs} SET state = 'ready', attempts = 0, error = NULL, "  # noqa: S608
        "text_hash = job.digest, updated_at = $3, claimed_by = NULL, "
        "claimed_until = NULL FROM unnest($1::int8[], $2::bytea[]) "
        f"AS job(item, digest) WHERE model = $4 AND {kind.key} = job.item "
        f"{_held(kind, 5)} RETURNING {kind.key}",
        ids,
        [hashes[item_id] for item_id in ids],
        now,
        model,
        instance,
    )
    return sorted(int(row[0]) for row in rows)


async def record_failure(
    conn: Any,
    kind: JobTables,
    model: str,
    jobs: Sequence[Job],
    error: ProviderError,
    now: float,
    *,
    instance: str | None = None,
) -> None:
    """Back off these jobs; after `MAX_ATTEMPTS` leave them in `error`.

    With `instance`, only the jobs it still holds; their claims are dropped.
    """
    message = str(error)[:_ERROR_CHARS]
    rows = []
    for job in jobs:
        attempts = job.attempts + 1
        state = JOB_ERROR if attempts >= MAX_ATTEMPTS else JOB_PENDING
        delay = RETRY_BASE * RETRY_FACTOR ** (attempts - 1)
        rows.append((state, attempts, now + delay, message, now, model, job.item_id))
    await conn.executemany(
        f"UPDATE {kind.jobs} SET state = $1, attempts = $2, "  # noqa: S608
        "next_attempt_at = $3, error = $4, updated_at = $5, claimed_by = NULL, "
        f"claimed_until = NULL WHERE model = $6 AND {kind.key} = $7 "
        f"{_held(kind, 8)}",
        [(*row, instance) for row in rows],
    )


async def queue_status(
    conn: Any,
    model: str,
    *,
    rebuilding: bool,
    messages_rebuilding: bool,
) -> QueueStatus:
    """Count this model's jobs by state, memories and messages apart."""
    rows = await conn.fetch(
        "SELECT 'memories', state, count(*) FROM embedding_jobs WHERE model = $1 "
        "GROUP BY state UNION ALL SELECT 'messages', state, count(*) FROM "
        "message_embedding_jobs WHERE model = $1 GROUP BY state",
        model,
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
