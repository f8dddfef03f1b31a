"""The secret detector's recheck on PostgreSQL: `embedding.secret_recheck`'s reads and writes.

`PostgresStore.secret_checks()` hands the pass a `PostgresSecretChecks`,
as a SQLite store's pass uses `SqliteSecretChecks`: the same settings in
`store_settings` (schema step 4 -> 5), the same rows (`jobs.EMBEDDED_WHERE`),
the ready jobs of the rows that hold a secret, and the stale ones put back
to pending in one transaction with the progress. A job put back loses its
claim, as a reworded memory's does, so the instance that embeds it next is
whichever claims it. Its `kinds` are SQLite's, memories and messages
(whose vectors are `message_vectors`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ..embedding import KINDS, Batch, JobTables, Stale
from .jobs import EMBEDDED_WHERE

_UPSERT: Final = (
    "INSERT INTO store_settings (name, value) VALUES ($1, $2) "
    "ON CONFLICT (name) DO UPDATE SET value = excluded.value"
)


class PostgresSecretChecks:
    """The pass's reads and writes on one database."""

    kinds: Final = KINDS

    def __init__(self, pool: Any) -> None:
        """Hold the store's pool."""
        self._pool = pool

    async def setting(self, name: str) -> int:
        """Return a setting of `store_settings` (0 when unset)."""
        value = await self._pool.fetchval(
            "SELECT value FROM store_settings WHERE name = $1", name
        )
        return 0 if value is None else int(value)

    async def rows(
        self, kind: JobTables, after: int, limit: int
    ) -> list[tuple[int, str]]:
        """Return the next embedded rows above `after`: id and content."""
        records = await self._pool.fetch(
            f"SELECT m.id, m.content FROM {kind.items} m "  # noqa: S608
            f"WHERE m.id > $1 AND {EMBEDDED_WHERE[kind.name]} ORDER BY m.id LIMIT $2",
            after,
            limit,
        )
        return [(int(record[0]), str(record[1])) for record in records]

    async def ready_jobs(self, kind: JobTables, ids: Sequence[int]) -> list[Stale]:
        """Return the ready jobs of these rows: id, model, hash."""
        if not ids:
            return []
        records = await self._pool.fetch(
            f"SELECT {kind.key}, model, text_hash FROM {kind.jobs} "  # noqa: S608
            f"WHERE state = 'ready' AND {kind.key} = ANY($1::int8[])",
            list(ids),
        )
        return [
            (int(record[0]), str(record[1]), bytes(record[2])) for record in records
        ]

    async def write(self, batch: Batch) -> None:
        """Queue the batch's stale jobs again and record its progress, at once.

        A job embedded again since it was read (its hash changed) is left alone.
        """
        settings, cleared = batch.progress()
        async with self._pool.acquire() as conn, conn.transaction():
            if batch.kind is not None and batch.stale:
                kind = batch.kind
                await conn.executemany(
                    f"UPDATE {kind.jobs} SET state = 'pending', attempts = 0, "  # noqa: S608
                    "next_attempt_at = 0, error = NULL, claimed_by = NULL, "
                    f"claimed_until = NULL WHERE {kind.key} = $1 AND model = $2 "
                    "AND state = 'ready' AND text_hash = $3",
                    batch.stale,
                )
            await conn.executemany(_UPSERT, list(settings.items()))
            if cleared:
                await conn.execute(
                    "DELETE FROM store_settings WHERE name = ANY($1::text[])", cleared
                )
