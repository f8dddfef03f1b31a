"""Each model's vector count and change count, kept by triggers: a stamp read in O(1).

The cosine scale's sample (`search_vectors.VectorSample`) must be drawn
again when any instance writes the model's vectors. Counting the model's
rows at every search (`count(*), max(memory_id)`) costs a scan that grows
with the table: 12.5 of 75 ms of a hybrid search at 100k rows under load,
52-90 ms at 1M (docs/benchmarks/postgres.md). Instead triggers on
`memory_vectors` keep `memory_vector_changes (model, rows, changes)` as
rows of deltas, one per model a writing statement touches (transition
tables): its rows added minus removed, and 1 change. The stamp is their
sums, read through the index on `model`; `compact` folds the deltas into
one row a model now and then, so a read sums a bounded handful of rows.

Why deltas rather than one counter row a model: a row every writer
updates is locked by each until it commits, so writers of the model
queue behind one another, and a purge of memories (whose cascade deletes
vectors, then waits for the counter) could deadlock with an insert of
vectors (which holds the counter, then waits for the memory's key share).
Appending a row locks nothing another writer needs, as
`memory_term_totals` does for bm25 (`bm25.totals_ddl`).

Why a change count rather than `max(memory_id)`: the sum of changes
grows with every committed statement that inserts, replaces or deletes
a vector of the model, and folding keeps the sums, so two reads give the
same stamp only if nothing of the model was committed between them. A
count and highest id miss a vector replaced, or one deleted and one
added below the highest.

`TRACK_CHANGES` attaches the triggers to `memory_vectors` once (schema
step 5 -> 6 for a table made before it, `vectors.create_vector_table` for
one made after) and counts the rows already there, under a lock that
makes writers wait meanwhile: no vector is counted twice or missed.
"""

from __future__ import annotations

from typing import Any, Final

CHANGES: Final = "memory_vector_changes"
# Deltas kept before a search folds them (`compact_if_many`).
COMPACT_AFTER: Final = 64
# pg_try_advisory_xact_lock's key for folding: one instance folds at a time
# and the others skip it, so no two folds wait on each other's rows
# ("memoryV" in ASCII).
COMPACT_LOCK: Final = 0x6D656D6F727956

TRACK_CHANGES: Final = """
DO $do$
BEGIN
    IF to_regclass('memory_vectors') IS NULL OR EXISTS (
        SELECT 1 FROM pg_trigger WHERE tgname = 'memory_vectors_changes_insert'
            AND tgrelid = to_regclass('memory_vectors')
    ) THEN
        RETURN;
    END IF;
    -- Writers of vectors wait from here to the commit; a second instance
    -- attaching at the same time finds the triggers once it has the lock.
    LOCK TABLE memory_vectors IN SHARE ROW EXCLUSIVE MODE;
    IF EXISTS (
        SELECT 1 FROM pg_trigger WHERE tgname = 'memory_vectors_changes_insert'
            AND tgrelid = to_regclass('memory_vectors')
    ) THEN
        RETURN;
    END IF;
    CREATE TABLE IF NOT EXISTS memory_vector_changes (
        model text NOT NULL,
        rows bigint NOT NULL,
        changes bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS memory_vector_changes_model
        ON memory_vector_changes (model);
    CREATE OR REPLACE FUNCTION memory_vectors_changes() RETURNS trigger
        LANGUAGE plpgsql AS $fn$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO memory_vector_changes (model, rows, changes)
                SELECT model, count(*), 1 FROM added GROUP BY model;
        ELSIF TG_OP = 'DELETE' THEN
            INSERT INTO memory_vector_changes (model, rows, changes)
                SELECT model, -count(*), 1 FROM removed GROUP BY model;
        ELSE
            INSERT INTO memory_vector_changes (model, rows, changes)
                SELECT model, sum(n), 1 FROM (
                    SELECT model, 1 AS n FROM added
                    UNION ALL
                    SELECT model, -1 AS n FROM removed
                ) AS moved
                GROUP BY model;
        END IF;
        RETURN NULL;
    END
    $fn$;
    CREATE TRIGGER memory_vectors_changes_insert AFTER INSERT ON memory_vectors
        REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION memory_vectors_changes();
    CREATE TRIGGER memory_vectors_changes_delete AFTER DELETE ON memory_vectors
        REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION memory_vectors_changes();
    CREATE TRIGGER memory_vectors_changes_update AFTER UPDATE ON memory_vectors
        REFERENCING OLD TABLE AS removed NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION memory_vectors_changes();
    -- The rows already there (a table of an older schema, or one made again
    -- while deltas of its predecessor remain): the difference, one change.
    INSERT INTO memory_vector_changes (model, rows, changes)
        SELECT model, coalesce(held.rows, 0) - coalesce(counted.rows, 0), 1
        FROM (
            SELECT model, count(*) AS rows FROM memory_vectors GROUP BY model
        ) AS held
        FULL JOIN (
            SELECT model, sum(rows) AS rows FROM memory_vector_changes
            GROUP BY model
        ) AS counted USING (model);
END
$do$
"""

# The model's ($1) stamp: its vectors, its changes, and the deltas summed.
STAMP: Final = (
    f"SELECT coalesce(sum(rows), 0), coalesce(sum(changes), 0), count(*) "  # noqa: S608
    f"FROM {CHANGES} WHERE model = $1"
)

_COMPACT: Final = f"""
WITH gone AS (DELETE FROM {CHANGES} RETURNING model, rows, changes)
INSERT INTO {CHANGES} (model, rows, changes)
    SELECT model, sum(rows), sum(changes) FROM gone GROUP BY model
"""  # noqa: S608 - the table's name is the room's own constant


async def compact(connection: Any) -> bool:
    """Fold every model's deltas into one row each; say whether it was done.

    In the caller's transaction when it has one, else in its own. Another
    instance folding at the same moment holds the advisory lock: this one
    then leaves it to that one rather than wait.
    """
    if connection.is_in_transaction():
        return await _compact(connection)
    async with connection.transaction():
        return await _compact(connection)


async def _compact(connection: Any) -> bool:
    if not await connection.fetchval(
        "SELECT pg_try_advisory_xact_lock($1)", COMPACT_LOCK
    ):
        return False
    await connection.execute(_COMPACT)
    return True


async def read_stamp(connection: Any, model: str) -> tuple[int, int]:
    """Return the model's `(vectors, changes)`; fold the deltas when many.

    Two reads give the same stamp only when no statement writing the
    model's vectors committed between them (module docstring).
    """
    rows, changes, deltas = await connection.fetchrow(STAMP, model)
    if int(deltas) > COMPACT_AFTER:
        await compact(connection)
    return int(rows), int(changes)
