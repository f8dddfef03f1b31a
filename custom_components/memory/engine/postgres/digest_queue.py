"""The digestion queue on PostgreSQL, as `engine/digestion/queue.py` on SQLite.

`PostgresDigestQueue` has `DigestQueue`'s methods with the same arguments,
results and states (the `conversations.digest_*` columns: pending, done or
skipped; a failure stays pending with the same backoff), and returns the
same `PendingConversation`s; transcripts and skip rules are the SQLite
module's (`render_transcript`, `skip_reason`), which read no SQL.

Several Home Assistants may share the database, so `due` also claims what
it returns, in one statement: the due rows are picked `FOR NO KEY UPDATE
SKIP LOCKED` (passing over a row another `due` holds; a message being
added to it, whose foreign key shares the row, neither waits nor is
waited for) and a row of
`digest_claims` written for each, `(conversation, claimed_by, claimed_until)`,
by `INSERT ... ON CONFLICT DO UPDATE ... WHERE` the existing claim has lapsed
or is this instance's own: that check reads the latest committed claim, so
two instances never both get one conversation while a claim holds. A
statement whose snapshot predates another's committed claims has its
claims on those rows refused: `due` then asks again for what is left
(`CLAIM_ROUNDS`), so its LIMIT is not spent on them. A row
another instance holds is not due to this one; this instance's own are
(calling `due` twice returns what SQLite's returns). `mark_done`,
`mark_skipped`, `mark_failed` and `defer` end the claim with the state
change, in one transaction, which also sends a `DIGESTION_CHANGED` notice
(the row's scope and id) so other instances' panels follow.

A crashed instance's claims lapse after `LEASE_SECONDS` (longer than an
LLM call takes), when any instance may claim those conversations again;
started again under the same name it may claim them at once, or drop them
all with `release_claims`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Final

from ..conversations import conversation_fields
from ..digestion import DigestState, PendingConversation, SkipReason, backoff_seconds
from ..languages import language_code
from ..models import from_timestamp, to_timestamp
from .notify import ChangeKind, notify

# How long a digestion claim holds: an LLM call times out well before this.
LEASE_SECONDS: Final = 900.0
# Statements `due` runs at most: each after the first asks for what the
# one before could not claim (rows other instances claimed meanwhile).
CLAIM_ROUNDS: Final = 3

_COLUMNS: Final = (
    "id, conversation_id, scope, agent_id, user_id, device_id, started_at, "
    "updated_at, ended_at, digest_state, digest_attempts, digest_next_at, "
    "digest_error, digested_at"
)
# Pending, or done but with messages newer than its digestion (SQLite's).
_WAITING: Final = (
    "(digest_state = 'pending' OR (digest_state = 'done' AND digested_at IS NOT NULL "
    "AND EXISTS (SELECT 1 FROM conversation_messages m WHERE m.conversation = "
    "conversations.id AND m.role = 'user' AND m.created_at > conversations.digested_at)))"
)
# $1 now, $2 idle before, $3 limit, $4 instance, $5 lease, $6 ids already got.
_CLAIM: Final = (
    f"WITH picked AS (SELECT id FROM conversations WHERE {_WAITING} "  # noqa: S608
    "AND digest_next_at <= $1 AND (ended_at IS NOT NULL OR updated_at <= $2) "
    "AND NOT EXISTS (SELECT 1 FROM digest_claims d WHERE d.conversation = "
    "conversations.id AND d.claimed_until > $1 AND d.claimed_by <> $4) "
    "AND id <> ALL($6::int8[]) "
    "ORDER BY updated_at, id LIMIT $3 FOR NO KEY UPDATE SKIP LOCKED), "
    "claimed AS (INSERT INTO digest_claims (conversation, claimed_by, "
    "claimed_until) SELECT id, $4, $1::float8 + $5::float8 FROM picked "
    "ON CONFLICT (conversation) DO UPDATE SET claimed_by = excluded.claimed_by, "
    "claimed_until = excluded.claimed_until WHERE digest_claims.claimed_until "
    "<= $1 OR digest_claims.claimed_by = $4 RETURNING conversation) "
    # One row at least, with how many were picked: more than were claimed
    # means rows claimed meanwhile by another instance were passed over.
    "SELECT p.picked, c.* FROM (SELECT count(*) AS picked FROM picked) AS p "
    "LEFT JOIN conversations AS c ON c.id IN (SELECT conversation FROM claimed)"
)
_RELEASE: Final = "DELETE FROM digest_claims WHERE conversation = $1"


def _row_to_pending(row: Any) -> PendingConversation:
    next_at = row["digest_next_at"]
    return PendingConversation(
        **conversation_fields(row),
        state=DigestState(row["digest_state"]),
        attempts=row["digest_attempts"],
        next_at=from_timestamp(next_at) if next_at else None,
        error=row["digest_error"],
        digested_at=from_timestamp(row["digested_at"]),
    )


class PostgresDigestQueue:
    """The digestion state of conversations, in a PostgreSQL database."""

    def __init__(
        self,
        pool: Any,
        *,
        instance: str,
        lease: float = LEASE_SECONDS,
        changed: Callable[[], None] | None = None,
        sender: str | None = None,
    ) -> None:
        """Hold an asyncpg pool and this instance's name (unique per Home Assistant).

        `sender` names this queue in its change notices (its store's
        `sender`; default `instance`).

        `changed` is called after each state change commits (a store's
        `changed`: its listeners, as SQLite's queue tells its database's).
        """
        self._pool = pool
        self.instance = instance
        self._sender = instance if sender is None else sender
        self.lease = lease
        self._changed = changed or (lambda: None)

    async def due(
        self, now: datetime, *, idle_before: datetime | None, limit: int = 20
    ) -> list[PendingConversation]:
        """Claim and return conversations to digest now, oldest first.

        Ended ones, and open ones last updated before `idle_before` (None:
        only ended ones); each only once its backoff has passed, and not
        while another instance's claim on it holds.
        """
        idle = to_timestamp(idle_before)
        rows: list[Any] = []
        # A statement whose snapshot predates another instance's claims
        # picks rows the claim then refuses, spending its LIMIT on them; the
        # next statement sees those claims, so ask again for what is left.
        for _ in range(CLAIM_ROUNDS):
            got = await self._pool.fetch(
                _CLAIM,
                to_timestamp(now),
                idle if idle is not None else -1.0,
                limit - len(rows),
                self.instance,
                self.lease,
                [int(row["id"]) for row in rows],
            )
            claimed = [row for row in got if row["id"] is not None]
            rows.extend(claimed)
            if got[0]["picked"] == len(claimed) or len(rows) >= limit:
                break
        rows.sort(key=lambda row: (row["updated_at"], row["id"]))
        return [_row_to_pending(row) for row in rows]

    async def release_claims(self) -> int:
        """Drop every claim this instance holds (it starts again); return how many."""
        status = await self._pool.execute(
            "DELETE FROM digest_claims WHERE claimed_by = $1", self.instance
        )
        return int(status.split()[-1])

    async def waiting(self, *, limit: int = 1000) -> list[PendingConversation]:
        """Every conversation not digested yet (ended or not), oldest first."""
        rows = await self._pool.fetch(
            f"SELECT {_COLUMNS} FROM conversations WHERE {_WAITING} "  # noqa: S608
            "ORDER BY updated_at, id LIMIT $1",
            limit,
        )
        return [_row_to_pending(row) for row in rows]

    async def still_waiting(self, ids: Sequence[int]) -> set[int]:
        """Which of these conversation rows still wait for digestion."""
        if not ids:
            return set()
        rows = await self._pool.fetch(
            "SELECT id FROM conversations WHERE id = ANY($1::int8[]) "  # noqa: S608
            f"AND {_WAITING}",
            list(ids),
        )
        return {int(row[0]) for row in rows}

    async def speakers(self, ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        """Return the scopes that spoke in these rows, first speaker first.

        A row with no message left is absent from the result.
        """
        rows = await self._pool.fetch(
            "SELECT conversation, scope FROM conversation_messages "
            "WHERE conversation = ANY($1::int8[]) "
            "GROUP BY conversation, scope ORDER BY conversation, min(id)",
            sorted(set(ids)),
        )
        found: dict[int, tuple[str, ...]] = {}
        for row in rows:
            found[int(row[0])] = (*found.get(int(row[0]), ()), str(row[1]))
        return found

    async def language(self, row_id: int) -> str:
        """Return the language most of a conversation's user messages were in.

        A primary subtag ("de" for "de-DE" and "de-AT" alike); a tie goes to
        the one spoken last; '' when no user message has a language.
        """
        rows = await self._pool.fetch(
            "SELECT language, count(*), max(id) FROM conversation_messages "
            "WHERE conversation = $1 AND role = 'user' AND language <> '' "
            "GROUP BY language",
            row_id,
        )
        counts: dict[str, tuple[int, int]] = {}
        for tag, count, last in rows:
            if code := language_code(str(tag), default=""):
                before, latest = counts.get(code, (0, 0))
                counts[code] = (before + int(count), max(latest, int(last)))
        return max(counts, key=counts.__getitem__, default="")

    async def count_by_state(self) -> dict[str, int]:
        """Conversations per digestion state (diagnostics)."""
        rows = await self._pool.fetch(
            "SELECT digest_state, count(*) FROM conversations GROUP BY digest_state"
        )
        return {str(row[0]): int(row[1]) for row in rows}

    async def count_waiting(self) -> int:
        """How many conversations wait for digestion."""
        count = await self._pool.fetchval(
            f"SELECT count(*) FROM conversations WHERE {_WAITING}"  # noqa: S608
        )
        return int(count)

    async def get(self, row_id: int) -> PendingConversation | None:
        """One conversation row by id."""
        row = await self._pool.fetchrow(
            f"SELECT {_COLUMNS} FROM conversations WHERE id = $1",  # noqa: S608
            row_id,
        )
        return _row_to_pending(row) if row else None

    async def find(self, conversation_id: str) -> list[PendingConversation]:
        """Return the rows of a Home Assistant conversation id, newest first."""
        rows = await self._pool.fetch(
            f"SELECT {_COLUMNS} FROM conversations "  # noqa: S608
            "WHERE conversation_id = $1 ORDER BY id DESC",
            conversation_id,
        )
        return [_row_to_pending(row) for row in rows]

    async def mark_done(self, row_id: int, *, when: datetime) -> None:
        """Digested: its messages up to `when` are done with."""
        await self._set(row_id, DigestState.DONE, when=when)

    async def mark_skipped(
        self, row_id: int, *, when: datetime, reason: SkipReason | None = None
    ) -> None:
        """Not worth an LLM call; `reason` kept (in `digest_error`) for the panel."""
        await self._set(row_id, DigestState.SKIPPED, when=when, note=reason)

    async def _set(
        self,
        row_id: int,
        state: DigestState,
        *,
        when: datetime,
        note: str | None = None,
    ) -> None:
        async with self._pool.acquire() as connection, connection.transaction():
            scope = await connection.fetchval(
                "UPDATE conversations SET digest_state = $1, digest_attempts = 0, "
                "digest_next_at = 0, digest_error = $2, digested_at = $3 "
                "WHERE id = $4 RETURNING scope",
                str(state),
                None if note is None else str(note),
                to_timestamp(when),
                row_id,
            )
            await self._release(connection, row_id, scope)
        self._changed()

    async def mark_failed(self, row_id: int, *, error: str, now: datetime) -> datetime:
        """Stay pending, one more attempt, due again after a backoff; returns when.

        `error` names the kind of failure, never content.
        """
        async with self._pool.acquire() as connection, connection.transaction():
            row = await connection.fetchrow(
                "UPDATE conversations SET digest_state = 'pending', "
                "digest_attempts = digest_attempts + 1, digest_error = $1 "
                "WHERE id = $2 RETURNING digest_attempts, scope",
                error,
                row_id,
            )
            retry = to_timestamp(now) or 0.0
            retry += backoff_seconds(int(row[0]) if row is not None else 1)
            await connection.execute(
                "UPDATE conversations SET digest_next_at = $1 WHERE id = $2",
                retry,
                row_id,
            )
            await self._release(connection, row_id, None if row is None else row[1])
        self._changed()
        at = from_timestamp(retry)
        assert at is not None  # noqa: S101 - a float always converts
        return at

    async def defer(self, row_id: int, until: datetime, *, error: str) -> None:
        """Stay pending until `until` without counting an attempt (a rate limit)."""
        async with self._pool.acquire() as connection, connection.transaction():
            scope = await connection.fetchval(
                "UPDATE conversations SET digest_state = 'pending', "
                "digest_next_at = $1, digest_error = $2 WHERE id = $3 RETURNING scope",
                to_timestamp(until),
                error,
                row_id,
            )
            await self._release(connection, row_id, scope)
        self._changed()

    async def _release(self, connection: Any, row_id: int, scope: Any) -> None:
        """End the claim on a row and tell other instances its state changed.

        In the caller's transaction; `scope` None: no such row, nothing told.
        """
        await connection.execute(_RELEASE, row_id)
        if scope is not None:
            await notify(
                connection,
                ChangeKind.DIGESTION_CHANGED,
                instance=self._sender,
                scopes=(str(scope),),
                ids=(row_id,),
            )
