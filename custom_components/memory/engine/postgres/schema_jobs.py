"""The PostgreSQL schema of the embedding jobs and the work claims.

`embedding_jobs`, `embedding_rebuilds`, `message_embedding_jobs` and
`message_embedding_rebuilds` hold what SQLite's tables of the same names hold
(`engine/store/schema.py`), column for column: `text_hash` is `bytea` (SQLite's
BLOB), times `double precision`. Two columns are PostgreSQL's own, the claim
of one instance on a job (`jobs.py`): `claimed_by` (the instance's name) and
`claimed_until` (seconds since the epoch, when the claim lapses). The trigger
`memories_reworded_jobs` is SQLite's migration 11: a memory whose content
changes gets its jobs pending again, and here also loses their claims (an
instance embedding the old text then finds nothing to mark ready).

`digest_claims` is the digestion queue's claim (`digest_queue.py`), a table
of its own so that `conversations` keeps exactly SQLite's columns.

The message jobs and the digestion claims name rows of `conversation_messages`
and `conversations`, which another migration step creates; `jobs_step` makes
them without foreign keys, and `conversation_links` (to run once both steps
have: appended to whichever comes later) adds them with SQLite's `ON DELETE
CASCADE`, so purging a message takes its job along.
"""

from __future__ import annotations

_JOB_COLUMNS = """
    model text NOT NULL,
    text_hash bytea NOT NULL,
    state text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'ready', 'error')),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at double precision NOT NULL DEFAULT 0,
    error text,
    updated_at double precision NOT NULL,
    claimed_by text,
    claimed_until double precision
"""


def _jobs(table: str, key: str, references: str) -> tuple[str, ...]:
    return (
        (
            f"CREATE TABLE {table} ({key} bigint NOT NULL {references},"
            f"{_JOB_COLUMNS}, PRIMARY KEY (model, {key}))"
        ),
        f"CREATE INDEX {table}_due ON {table} (model, state, attempts, next_attempt_at)",
        f"CREATE INDEX {table}_text ON {table} (model, text_hash)",
        f"CREATE INDEX {table}_{key.removesuffix('_id')} ON {table} ({key})",
    )


def _rebuilds(table: str) -> str:
    return (
        f"CREATE TABLE {table} (model text PRIMARY KEY, total integer NOT NULL, "
        "started_at double precision NOT NULL)"
    )


def jobs_step() -> tuple[str, ...]:
    """Return the migration step that adds the job tables and claims."""
    return (
        *_jobs(
            "embedding_jobs",
            "memory_id",
            "REFERENCES memories(id) ON DELETE CASCADE",
        ),
        _rebuilds("embedding_rebuilds"),
        *_jobs("message_embedding_jobs", "message_id", ""),
        _rebuilds("message_embedding_rebuilds"),
        """
        CREATE TABLE digest_claims (
            conversation bigint PRIMARY KEY,
            claimed_by text NOT NULL,
            claimed_until double precision NOT NULL
        )
        """,
        """
        CREATE FUNCTION memories_reworded_jobs() RETURNS trigger
            LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE embedding_jobs SET state = 'pending', attempts = 0,
                next_attempt_at = 0, error = NULL, updated_at = NEW.updated_at,
                claimed_by = NULL, claimed_until = NULL
            WHERE memory_id = NEW.id;
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER memories_reworded_jobs AFTER UPDATE OF content ON memories
            FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content)
            EXECUTE FUNCTION memories_reworded_jobs()
        """,
    )


def conversation_links() -> tuple[str, ...]:
    """Return the foreign keys to the conversation tables (run after both steps).

    Rows already orphaned (a message purged before the keys existed) go first.
    """
    return (
        (
            "DELETE FROM message_embedding_jobs j WHERE NOT EXISTS "
            "(SELECT 1 FROM conversation_messages m WHERE m.id = j.message_id)"
        ),
        (
            "DELETE FROM digest_claims d WHERE NOT EXISTS "
            "(SELECT 1 FROM conversations c WHERE c.id = d.conversation)"
        ),
        (
            "ALTER TABLE message_embedding_jobs ADD CONSTRAINT "
            "message_embedding_jobs_message_fk FOREIGN KEY (message_id) "
            "REFERENCES conversation_messages(id) ON DELETE CASCADE"
        ),
        (
            "ALTER TABLE digest_claims ADD CONSTRAINT digest_claims_conversation_fk "
            "FOREIGN KEY (conversation) REFERENCES conversations(id) ON DELETE CASCADE"
        ),
    )
