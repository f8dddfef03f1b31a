"""Digestion bookkeeping: which conversations wait, their transcript, what to skip.

A conversation is digested once it has ended (or gone idle): its transcript
goes to an LLM that returns candidate memories. This module keeps the queue
on the `conversations.digest_*` columns (pending → done or skipped; a
failure stays pending with a growing backoff, so nothing is lost), renders
transcripts with message ids the candidates can cite, and decides which
conversations are not worth an LLM call at all: too few words from the user,
or nothing but device commands ("turn on the kitchen light", see
`device_commands.py`).

A conversation that goes on after it was digested (the idle trigger fired
mid-way) is due again for its new messages only.

When two people spoke in one conversation (one continued the other's), each
speaker's messages (what they said and the replies they got) are digested
apart (`by_speaker`), so what one person said never reaches an LLM call
whose memories may go to another person. A reply goes with whoever spoke
last, and may repeat the other person's words ("Anna said her PIN is …"):
the transcript marks every assistant line as context (`ASSISTANT`,
`Transcript.context_ids`), and a memory citing one is never stored.

A conversation's language (`DigestQueue.language`) is the one most of its
user messages were spoken in: digestion writes its memories in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
import json
import re
import sqlite3
from typing import Final

from ..conversations import (
    ConversationRecord,
    MessageRole,
    StoredMessage,
    conversation_fields,
)
from ..languages import language_code
from ..models import HOUSEHOLD, from_timestamp, to_timestamp
from ..sql import IDS, placeholders, read_one, rows_in
from ..store import DatabaseAccess
from ..text import fence_safe
from .device_commands import (
    MAX_COMMAND_WORDS,
    is_device_command,
    is_intent_tool,
    says_something_personal,
    word_count,
)

# Retry after a failure: 1, 2, 4, ... minutes, at most 6 hours apart.
BACKOFF_BASE_SECONDS: Final = 60.0
BACKOFF_MAX_SECONDS: Final = 6 * 3600.0
# A transcript longer than this keeps its end (the newest messages).
MAX_TRANSCRIPT_CHARS: Final = 24_000
# A single message longer than this is cut in the transcript.
MAX_LINE_CHARS: Final = 2_000
# How an assistant line is labelled: what it says helps read the speaker's
# words, and is never a fact of its own.
ASSISTANT: Final = "assistant (context)"


class DigestState(StrEnum):
    """Where a conversation is in digestion."""

    PENDING = "pending"
    DONE = "done"
    SKIPPED = "skipped"


class SkipReason(StrEnum):
    """Why a conversation needs no LLM call."""

    EMPTY = "empty"
    TOO_SHORT = "too_short"
    DEVICE_COMMANDS = "device_commands"
    AGENT_OPTED_OUT = "agent_opted_out"
    DEVICE_OPTED_OUT = "device_opted_out"


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingConversation(ConversationRecord):
    """A conversation row with its digestion state."""

    state: DigestState
    attempts: int
    next_at: datetime | None
    error: str | None
    digested_at: datetime | None


_COLUMNS: Final = (
    "id, conversation_id, scope, agent_id, user_id, device_id, started_at, "
    "updated_at, ended_at, digest_state, digest_attempts, digest_next_at, "
    "digest_error, digested_at"
)
# Pending, or done but with messages newer than its digestion.
_WAITING: Final = (
    "(digest_state = 'pending' OR (digest_state = 'done' AND digested_at IS NOT NULL "
    "AND EXISTS (SELECT 1 FROM conversation_messages m WHERE m.conversation = "
    "conversations.id AND m.role = 'user' AND m.created_at > conversations.digested_at)))"
)


def _row_to_pending(row: sqlite3.Row) -> PendingConversation:
    next_at = row["digest_next_at"]
    return PendingConversation(
        **conversation_fields(row),
        state=DigestState(row["digest_state"]),
        attempts=row["digest_attempts"],
        next_at=from_timestamp(next_at) if next_at else None,
        error=row["digest_error"],
        digested_at=from_timestamp(row["digested_at"]),
    )


def backoff_seconds(attempts: int) -> float:
    """Wait before retry number `attempts` (1 = after the first failure)."""
    exponent = min(max(attempts - 1, 0), 30)
    return float(min(BACKOFF_BASE_SECONDS * 2**exponent, BACKOFF_MAX_SECONDS))


class DigestQueue:
    """The digestion state of conversations, in the memory database."""

    def __init__(self, store: DatabaseAccess) -> None:
        """Use a database's connections; it must be open before any call.

        `store` offers `store.DatabaseAccess`: the `Database`, or the
        `MemoryStore` facade the Home Assistant side passes.
        """
        self._store = store

    async def due(
        self, now: datetime, *, idle_before: datetime | None, limit: int = 20
    ) -> list[PendingConversation]:
        """Conversations to digest now, oldest first.

        Ended ones, and open ones last updated before `idle_before` (None:
        only ended ones); each only once its backoff has passed.
        """
        idle = to_timestamp(idle_before)
        rows = await self._store.reader.execute_fetchall(
            f"SELECT {_COLUMNS} FROM conversations WHERE {_WAITING} "  # noqa: S608
            "AND digest_next_at <= ? AND (ended_at IS NOT NULL OR updated_at <= ?) "
            "ORDER BY updated_at, id LIMIT ?",
            (to_timestamp(now), idle if idle is not None else -1.0, limit),
        )
        return [_row_to_pending(row) for row in rows]

    async def waiting(self, *, limit: int = 1000) -> list[PendingConversation]:
        """Every conversation not digested yet (ended or not), oldest first."""
        rows = await self._store.reader.execute_fetchall(
            f"SELECT {_COLUMNS} FROM conversations WHERE {_WAITING} "  # noqa: S608
            "ORDER BY updated_at, id LIMIT ?",
            (limit,),
        )
        return [_row_to_pending(row) for row in rows]

    async def still_waiting(self, ids: Sequence[int]) -> set[int]:
        """Which of these conversation rows still wait for digestion."""
        if not ids:
            return set()
        rows = await self._store.reader.execute_fetchall(
            f"SELECT id FROM conversations WHERE id IN ({placeholders(len(ids))}) "  # noqa: S608
            f"AND {_WAITING}",
            list(ids),
        )
        return {int(row[0]) for row in rows}

    async def speakers(self, ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        """Return the scopes that spoke in these rows, first speaker first.

        A row with no message left is absent from the result.
        """
        unique = sorted(set(ids))
        found: dict[int, tuple[str, ...]] = {}
        for row in await rows_in(
            self._store.reader,
            "SELECT conversation, scope FROM conversation_messages "  # noqa: S608
            f"WHERE conversation IN ({IDS}) "
            "GROUP BY conversation, scope ORDER BY conversation, min(id)",
            unique,
        ):
            found[int(row[0])] = (*found.get(int(row[0]), ()), str(row[1]))
        return found

    async def language(self, row_id: int) -> str:
        """Return the language most of a conversation's user messages were in.

        A primary subtag ("de" for "de-DE" and "de-AT" alike); a tie goes to
        the one spoken last; '' when no user message has a language.
        """
        rows = await self._store.reader.execute_fetchall(
            "SELECT language, count(*), max(id) FROM conversation_messages "
            "WHERE conversation = ? AND role = 'user' AND language != '' "
            "GROUP BY language",
            (row_id,),
        )
        counts: dict[str, tuple[int, int]] = {}
        for tag, count, last in rows:
            if code := language_code(str(tag), default=""):
                before, latest = counts.get(code, (0, 0))
                counts[code] = (before + int(count), max(latest, int(last)))
        return max(counts, key=counts.__getitem__, default="")

    async def count_by_state(self) -> dict[str, int]:
        """Conversations per digestion state (diagnostics)."""
        rows = await self._store.reader.execute_fetchall(
            "SELECT digest_state, count(*) FROM conversations GROUP BY digest_state"
        )
        return {str(row[0]): int(row[1]) for row in rows}

    async def count_waiting(self) -> int:
        """How many conversations wait for digestion."""
        row = await read_one(
            self._store.reader,
            f"SELECT count(*) FROM conversations WHERE {_WAITING}",  # noqa: S608
        )
        return int(row[0]) if row else 0

    async def get(self, row_id: int) -> PendingConversation | None:
        """One conversation row by id."""
        row = await read_one(
            self._store.reader,
            f"SELECT {_COLUMNS} FROM conversations WHERE id = ?",  # noqa: S608
            (row_id,),
        )
        return _row_to_pending(row) if row else None

    async def find(self, conversation_id: str) -> list[PendingConversation]:
        """Return the rows of a Home Assistant conversation id, newest first."""
        rows = await self._store.reader.execute_fetchall(
            f"SELECT {_COLUMNS} FROM conversations "  # noqa: S608
            "WHERE conversation_id = ? ORDER BY id DESC",
            (conversation_id,),
        )
        return [_row_to_pending(row) for row in rows]

    async def mark_done(self, row_id: int, *, when: datetime) -> None:
        """Digested: its messages up to `when` are done with."""
        await self._set(row_id, DigestState.DONE, when=when)

    async def mark_skipped(
        self, row_id: int, *, when: datetime, reason: SkipReason | None = None
    ) -> None:
        """Not worth an LLM call; kept only for search and the mirror.

        `reason` is kept (in `digest_error`) for the panel to say why.
        """
        await self._set(row_id, DigestState.SKIPPED, when=when, note=reason)

    async def _set(
        self,
        row_id: int,
        state: DigestState,
        *,
        when: datetime,
        note: str | None = None,
    ) -> None:
        async with self._store.transaction() as conn:
            await conn.execute(
                "UPDATE conversations SET digest_state = ?, digest_attempts = 0, "
                "digest_next_at = 0, digest_error = ?, digested_at = ? "
                "WHERE id = ?",
                (
                    str(state),
                    None if note is None else str(note),
                    to_timestamp(when),
                    row_id,
                ),
            )

    async def mark_failed(self, row_id: int, *, error: str, now: datetime) -> datetime:
        """Stay pending, one more attempt, due again after a backoff; returns when.

        `error` names the kind of failure, never content.
        """
        async with self._store.transaction() as conn:
            row = await read_one(
                conn,
                "UPDATE conversations SET digest_state = 'pending', "
                "digest_attempts = digest_attempts + 1, digest_error = ? "
                "WHERE id = ? RETURNING digest_attempts",
                (error, row_id),
            )
            attempts = int(row[0]) if row else 1
            retry = to_timestamp(now) or 0.0
            retry += backoff_seconds(attempts)
            await conn.execute(
                "UPDATE conversations SET digest_next_at = ? WHERE id = ?",
                (retry, row_id),
            )
        at = from_timestamp(retry)
        assert at is not None  # noqa: S101 - a float always converts
        return at

    async def defer(self, row_id: int, until: datetime, *, error: str) -> None:
        """Stay pending until `until` without counting an attempt (a rate limit)."""
        async with self._store.transaction() as conn:
            await conn.execute(
                "UPDATE conversations SET digest_state = 'pending', "
                "digest_next_at = ?, digest_error = ? WHERE id = ?",
                (to_timestamp(until), error, row_id),
            )


# -- transcripts ------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Transcript:
    """What an LLM reads of a conversation."""

    text: str
    # Ids of the messages shown, which candidates may cite.
    message_ids: frozenset[int]
    # Those of them that are assistant replies: context, never a memory's
    # source (a reply may repeat what someone else said).
    context_ids: frozenset[int] = frozenset()
    user_messages: tuple[str, ...]
    # Scopes of the people who spoke (HOUSEHOLD for a satellite or automation).
    speakers: tuple[str, ...]
    tool_names: tuple[str, ...]

    @property
    def user_words(self) -> int:
        """How many words the user(s) said."""
        return sum(len(_WORD.findall(text)) for text in self.user_messages)


_WORD: Final = re.compile(r"\w+", re.UNICODE)


def _clip(text: str, limit: int) -> str:
    text = fence_safe(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tool_names(data: str) -> list[str]:
    try:
        calls = json.loads(data)
    except ValueError:
        return []
    if not isinstance(calls, list):
        return []
    return [
        str(call["tool_name"])
        for call in calls
        if isinstance(call, dict) and call.get("tool_name")
    ]


def by_speaker(
    messages: Sequence[StoredMessage],
) -> list[tuple[str, list[StoredMessage]]]:
    """Split a conversation into each speaker's messages, first speaker first.

    A message carries the scope of who was speaking when it was said, so a
    speaker's part holds what they said and the replies they got. A reply
    may quote the other speaker: it is context in the part's transcript
    (`render_transcript`), never a source of its memories.
    """
    parts: dict[str, list[StoredMessage]] = {}
    for message in messages:
        parts.setdefault(message.scope, []).append(message)
    return list(parts.items())


def render_transcript(
    messages: Sequence[StoredMessage],
    *,
    names: dict[str, str] | None = None,
    since: datetime | None = None,
) -> Transcript:
    """Render user and assistant messages, one a line, with their ids.

    Each line is `fence_safe`: what someone said cannot start a line of its
    own, hide words, or close the tag the transcript is shown in.

    `names` maps a speaker's scope to how the LLM should call them; tool
    results are left out (entity dumps are not memories), and with `since`
    only messages after it are shown. Assistant lines are labelled as
    context (`ASSISTANT`) and their ids kept apart (`context_ids`).
    """
    names = names or {}
    lines: list[str] = []
    ids: set[int] = set()
    replies: set[int] = set()
    users: list[str] = []
    speakers: list[str] = []
    tools: list[str] = []
    for message in messages:
        if since is not None and message.created_at <= since:
            continue
        if message.role == MessageRole.ASSISTANT:
            tools.extend(_tool_names(message.data))
        if message.role == MessageRole.TOOL_RESULT or not message.content.strip():
            continue
        if message.role == MessageRole.USER:
            who = names.get(
                message.scope, "user" if message.scope == HOUSEHOLD else message.scope
            )
            users.append(message.content)
            if message.scope not in speakers:
                speakers.append(message.scope)
        else:
            who = ASSISTANT
            replies.add(message.id)
        lines.append(
            f"[{message.id}] {fence_safe(who)}: {_clip(message.content, MAX_LINE_CHARS)}"
        )
        ids.add(message.id)
    text = "\n".join(lines)
    while len(text) > MAX_TRANSCRIPT_CHARS and len(lines) > 1:
        lines.pop(0)
        text = "\n".join(lines)
    shown = {int(line[1 : line.index("]")]) for line in lines}
    return Transcript(
        text=text,
        message_ids=frozenset(ids & shown),
        context_ids=frozenset(replies & shown),
        user_messages=tuple(users),
        speakers=tuple(speakers),
        tool_names=tuple(tools),
    )


# -- what is not worth an LLM call -----------------------------------------


def skip_reason(transcript: Transcript, *, min_user_words: int) -> SkipReason | None:
    """Why a transcript is not worth an LLM call, or None when it is."""
    if not transcript.user_messages:
        return SkipReason.EMPTY
    if transcript.user_words < min_user_words:
        return SkipReason.TOO_SHORT
    if all(is_device_command(text) for text in transcript.user_messages):
        return SkipReason.DEVICE_COMMANDS
    # An agent that only called Home Assistant's intents, for someone who
    # said nothing about themselves, was only commanding devices.
    if (
        transcript.tool_names
        and all(is_intent_tool(name) for name in transcript.tool_names)
        and not any(says_something_personal(t) for t in transcript.user_messages)
        and all(word_count(t) <= MAX_COMMAND_WORDS for t in transcript.user_messages)
    ):
        return SkipReason.DEVICE_COMMANDS
    return None
