"""What a move between SQLite and PostgreSQL copies: tables, columns, checks.

`TABLES` are the tables both schemas have, in the order a copy writes them
(a row's parents before it), each with the columns both hold and the key
its rows are read in. PostgreSQL keeps a few columns of its own, made there
(`pg_only`): each row's token count and a message's `data` tokens (the
postings' triggers and `message_search.data_tokens`), and the jobs'
claims (leases of one instance, never carried over). `check_columns`
refuses a table whose columns are not exactly these on either side, so a
column a later migration adds is never dropped by a copy that does not
know it.

The memories' vectors are not in `TABLES`: SQLite keeps float32 blobs per
model in `embeddings` (with `embedding_models`, their dimensions, and
`embedding_codes`, the numpy index's codes), PostgreSQL one `vector(DIM)`
column in `memory_vectors`; `transfer` converts them.

Every other table is derived (made again on the destination from what it
copied: FTS5's index and the postings by triggers, `embedding_models` and
`embedding_codes` from the vectors) or skipped, reported with its row count.
`Checksum` hashes the rows of `CHECKED` in key order on both sides;
`POSTINGS` pairs FTS5's vocabulary with the postings it should equal.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
import hashlib
import json
from typing import Any, Final

from ..embedding import JOB_PENDING, JOB_READY
from ..errors import TransferError

# PostgreSQL's own columns of the job tables: one instance's claim.
_CLAIMS: Final = ("claimed_by", "claimed_until")
_JOB: Final = (
    "model",
    "text_hash",
    "state",
    "attempts",
    "next_attempt_at",
    "error",
    "updated_at",
)
_REBUILD: Final = ("model", "total", "started_at")
# Rows a batch reads and writes.
BATCH: Final = 2000


@dataclass(frozen=True, slots=True)
class Table:
    """One table both schemas have: its shared columns and the order rows are read in."""

    name: str
    columns: tuple[str, ...]
    order: str
    # `id` is an identity (PostgreSQL) / AUTOINCREMENT (SQLite) column.
    identity: bool = False
    pg_only: tuple[str, ...] = ()
    # A job table: the column naming the row its vector is of.
    job_key: str | None = None

    def select(self, extra: str = "") -> str:
        """Return the read of every row (the table as `j`), in key order, `extra` last."""
        columns = ", ".join((*self.columns, extra) if extra else self.columns)
        return f"SELECT {columns} FROM {self.name} j ORDER BY {self.order}"  # noqa: S608


def _jobs(name: str, key: str) -> Table:
    return Table(name, (key, *_JOB), f"model, {key}", pg_only=_CLAIMS, job_key=key)


MEMORIES: Final = Table(
    "memories",
    (
        "id",
        "scope",
        "type",
        "content",
        "content_key",
        "tags",
        "status",
        "superseded_by",
        "valid_from",
        "valid_to",
        "expires_at",
        "created_at",
        "updated_at",
        "last_recalled_at",
        "recall_count",
        "origin",
        "conversation_id",
        "agent_id",
        "device_id",
        "user_id",
        "topic",
        "confidence",
        "message_id",
        "language",
        "terms",
        "analysed",
    ),
    "id",
    identity=True,
    pg_only=("term_count",),
)
MESSAGES: Final = Table(
    "conversation_messages",
    (
        "id",
        "conversation",
        "role",
        "content",
        "data",
        "tool_name",
        "tool_call_id",
        "scope",
        "agent_id",
        "user_id",
        "device_id",
        "created_at",
        "language",
        "terms",
        "analysed",
    ),
    "id",
    identity=True,
    pg_only=("data_terms", "term_count"),
)
TABLES: Final[tuple[Table, ...]] = (
    MEMORIES,
    Table("memory_tags", ("memory_id", "tag"), "memory_id, tag"),
    Table(
        "conversations",
        (
            "id",
            "conversation_id",
            "scope",
            "agent_id",
            "user_id",
            "device_id",
            "started_at",
            "updated_at",
            "ended_at",
            "digest_state",
            "digest_attempts",
            "digest_next_at",
            "digest_error",
            "digested_at",
        ),
        "id",
        identity=True,
    ),
    MESSAGES,
    _jobs("embedding_jobs", "memory_id"),
    Table("embedding_rebuilds", _REBUILD, "model"),
    _jobs("message_embedding_jobs", "message_id"),
    Table("message_embedding_rebuilds", _REBUILD, "model"),
)

# The vectors: SQLite's table and PostgreSQL's (`vectors.TABLE`).
SQLITE_VECTORS: Final = "embeddings"
PG_VECTORS: Final = "memory_vectors"
# The messages' vectors: SQLite's table and PostgreSQL's (`message_vectors`).
SQLITE_MESSAGE_VECTORS: Final = "message_embeddings"
PG_MESSAGE_VECTORS: Final = "message_vectors"
# SQLite tables made again from the vectors on the way back.
SQLITE_DERIVED: Final = frozenset({"embedding_models", "embedding_codes"})
# PostgreSQL tables the triggers keep, and the schema's version.
PG_DERIVED: Final = frozenset(
    {
        "memory_terms",
        "memory_term_totals",
        "message_terms",
        "message_term_totals",
        "memory_vector_changes",
        "memory_schema",
    }
)
# The destination is empty when these hold no row (store_settings is not
# data: a new SQLite store has one; claims are leases).
SQLITE_DATA: Final = (
    *(table.name for table in TABLES),
    SQLITE_VECTORS,
    SQLITE_MESSAGE_VECTORS,
    *sorted(SQLITE_DERIVED),
)
PG_DATA: Final = (
    *(table.name for table in TABLES),
    "digest_claims",
    PG_MESSAGE_VECTORS,
)

# What `Checksum` hashes of each table, in key order, on both sides.
CHECKED: Final[Mapping[str, str]] = {
    "memories": "SELECT id, content_key, status, superseded_by FROM memories ORDER BY id",
    "conversation_messages": (
        "SELECT id, conversation, role, content FROM conversation_messages ORDER BY id"
    ),
}


@dataclass(frozen=True, slots=True)
class Postings:
    """A keyword index: FTS5's vocabulary on SQLite, its postings on PostgreSQL."""

    name: str
    sqlite_vocab: str
    pg_vocab: str
    pg_totals: str


POSTINGS: Final = (
    Postings(
        "memories",
        "SELECT term, doc, cnt FROM memories_fts_vocab",
        "SELECT term, count(*), sum(tf) FROM memory_terms GROUP BY term",
        "SELECT coalesce(sum(rows), 0), coalesce(sum(tokens), 0) "
        "FROM memory_term_totals",
    ),
    Postings(
        "conversation_messages",
        "SELECT term, doc, cnt FROM conversation_messages_fts_vocab",
        "SELECT term, count(*), sum(tf + tf_data) FROM message_terms GROUP BY term",
        "SELECT coalesce(sum(rows), 0), coalesce(sum(tokens), 0) "
        "FROM message_term_totals",
    ),
)


def same_postings(
    fts: Iterable[Any], postings: Iterable[Any], rows: int, totals: Any
) -> bool:
    """Say whether postings hold each term in as many rows, as often, as FTS5 does.

    `rows` is the table's row count (FTS5 indexes every row), `totals` the
    postings' (rows, tokens) sums.
    """
    vocab = {(str(r[0]), int(r[1]), int(r[2])) for r in fts}
    held = {(str(r[0]), int(r[1]), int(r[2])) for r in postings}
    tokens = sum(count for _term, _docs, count in vocab)
    return held == vocab and (int(totals[0]), int(totals[1])) == (rows, tokens)


class Checksum:
    """sha256 over rows, each a JSON list on its own line (ints, texts, None)."""

    def __init__(self) -> None:
        """Start empty."""
        self._hash = hashlib.sha256()

    def add(self, rows: Iterable[Any]) -> None:
        """Hash more rows, in order."""
        for row in rows:
            line = json.dumps(list(row), ensure_ascii=False, separators=(",", ":"))
            self._hash.update(line.encode("utf-8") + b"\n")

    def hexdigest(self) -> str:
        """Return the digest of every row added."""
        return self._hash.hexdigest()


def check_columns(table: Table, found: Iterable[str], *, postgres: bool) -> None:
    """Raise `TransferError` unless a side's table has exactly the expected columns."""
    have = set(found)
    known = set(table.columns) | (set(table.pg_only) if postgres else set())
    side = "PostgreSQL" if postgres else "SQLite"
    missing = sorted(set(table.columns) - have)
    unknown = sorted(have - known)
    if missing or unknown:
        raise TransferError(
            f"{side}'s {table.name} does not have the columns this version copies",
            error=(
                f"{side} {table.name}: missing {', '.join(missing) or '-'};"
                f" not copied {', '.join(unknown) or '-'}"
            ),
        )


def settle_job(row: tuple[Any, ...], has_vector: bool) -> tuple[tuple[Any, ...], bool]:
    """Return a job row as the destination stores it, and whether it is pending again.

    A ready job says its vector is stored: one whose vector the destination
    does not get (a model left out) is pending again, so
    the embedding worker makes the vector there.
    """
    key, model, digest, state, *_rest, updated = row
    if state != JOB_READY or has_vector:
        return row, False
    return (key, model, digest, JOB_PENDING, 0, 0.0, None, updated), True


def write_rows(
    table: Table, rows: Iterable[Any], models: Collection[str]
) -> tuple[list[tuple[Any, ...]], int]:
    """Rows as the destination stores them, and how many jobs went back to pending.

    A job table's rows end with whether the job's vector is stored on the
    source; it travels only if its model is among `models` (`settle_job`).
    """
    if table.job_key is None:
        return [tuple(row) for row in rows], 0
    records: list[tuple[Any, ...]] = []
    reset = 0
    for row in rows:
        *job, has = row
        settled, was_reset = settle_job(tuple(job), bool(has) and job[1] in models)
        records.append(settled)
        reset += was_reset
    return records, reset
