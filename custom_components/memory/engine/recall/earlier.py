"""The speaker's recent conversations, for the "Earlier" lines of a new conversation.

Home Assistant starts a new chat session after a few idle minutes, and a
voice satellite often for every request: without this, a conversation
begins knowing nothing of what the same person said ten minutes ago.
`earlier_talks` finds the same speaker's conversations of the last hours,
each as its summary memory (digestion's) or, before digestion ran, its last
turns shortened; `earlier_line` says one with the time relative, in the
conversation's language (Babel's CLDR data: "vor 20 Minuten", "20 minut
temu").

Privacy: "the same speaker" is a person's own conversations (their scope),
or, for a satellite nobody is identified at, the household conversations of
that satellite only; a turn with neither device nor user has none. Only
messages and summaries in that scope are read: never another person's words
in the same conversation, never tool results; codes redacted on request.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Literal

from babel import Locale, UnknownLocaleError
from babel.dates import format_timedelta

from ..languages import DEFAULT_LANGUAGE
from ..models import HOUSEHOLD, MemoryType, to_timestamp
from ..privacy import redacted
from ..sql import IDS, rows_in
from ..store import DatabaseAccess
from ..text import cut_to_tokens, estimate_tokens, fence_safe

# The last messages of a conversation that stand in for its summary...
TURNS: Final = 4
# ... each cut to about this many tokens.
TURN_TOKENS: Final = 20
LINE_PREFIX: Final = "Earlier"

_locales: dict[str, Locale] = {}


@dataclass(frozen=True, slots=True)
class EarlierTalk:
    """One earlier conversation as the "Earlier" part shows it."""

    conversation: int
    conversation_id: str
    # When the speaker's last message in it was said.
    at: datetime
    # Its summary memory's content, else its last turns shortened.
    text: str
    summary_id: int | None
    # Primary subtag of its messages ('' unknown).
    language: str


def _key(language: str) -> str:
    """Return Babel's spelling of a language tag ("de-DE" -> "de_DE")."""
    return language.strip().replace("-", "_") or DEFAULT_LANGUAGE


def _locale_now(language: str) -> Locale:
    """Return the Babel locale of a tag ("de-DE", "pt_BR", "nb"); English if unknown."""
    key = _key(language)
    if (cached := _locales.get(key)) is not None:
        return cached
    try:
        locale = Locale.parse(key)
        # Loads the locale's data now (a file read), not inside a format call.
        _ = locale.plural_form
    except UnknownLocaleError, ValueError, TypeError:
        locale = (
            _locale_now(DEFAULT_LANGUAGE) if key != DEFAULT_LANGUAGE else Locale("en")
        )
    _locales[key] = locale
    return locale


async def load_language(language: str) -> None:
    """Read a language's locale data in a worker thread (the event loop must not)."""
    if _key(language) not in _locales:
        await asyncio.to_thread(_locale_now, language)


def relative_time(delta: timedelta, language: str) -> str:
    """Say how long ago `delta` was: "20 minutes ago", "vor 20 Minuten".

    Minutes under an hour, hours under a day, days beyond; anything under a
    minute (or a clock that went back) is "1 minute ago".
    """
    seconds = max(delta.total_seconds(), 60.0)
    granularity: Literal["minute", "hour", "day"] = (
        "minute" if seconds < 3600 else "hour" if seconds < 86400 else "day"
    )
    return str(
        format_timedelta(
            -timedelta(seconds=seconds),
            granularity=granularity,
            threshold=1.0,
            add_direction=True,
            locale=_locale_now(language),
        )
    )


def earlier_line(
    talk: EarlierTalk, now: datetime, language: str, max_tokens: int
) -> str:
    """One "Earlier, 20 minutes ago: …" line, fence-safe, within `max_tokens` ('' if none)."""
    prefix = f"{LINE_PREFIX}, {fence_safe(relative_time(now - talk.at, language))}: "
    room = max_tokens - estimate_tokens(prefix)
    text = cut_to_tokens(fence_safe(talk.text), room) if room > 0 else ""
    return prefix + text if text else ""


def _time(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


async def earlier_talks(
    store: DatabaseAccess,
    *,
    scope: str,
    device_id: str | None,
    user_id: str | None,
    since: datetime,
    exclude: str | None,
    limit: int = 3,
    redact: bool,
) -> list[EarlierTalk]:
    """Return the same speaker's conversations updated since `since`, newest first.

    `scope` a person: that person's conversations, from any device. HOUSEHOLD:
    the household conversations of `device_id` (a satellite), or without a
    device of `user_id`; neither: none. `exclude` is the current
    conversation's id.
    """
    clauses = ["c.scope = ?", "c.updated_at >= ?"]
    params: list[object] = [scope, to_timestamp(since)]
    if scope == HOUSEHOLD:
        if device_id:
            clauses.append("c.device_id = ?")
            params.append(device_id)
        elif user_id:
            clauses.append("c.device_id IS NULL AND c.user_id = ?")
            params.append(user_id)
        else:
            return []
    if exclude:
        clauses.append("c.conversation_id != ?")
        params.append(exclude)
    reader = store.reader
    # Only fixed clauses are joined; every value is a parameter.
    where = " AND ".join(clauses)
    sql = (
        "SELECT c.id, c.conversation_id, c.started_at, c.updated_at "  # noqa: S608
        f"FROM conversations c WHERE {where} "
        "ORDER BY c.updated_at DESC, c.id DESC LIMIT ?"
    )
    conversations = list(await reader.execute_fetchall(sql, [*params, limit]))
    if not conversations:
        return []
    started = min(float(row[2]) for row in conversations)
    # The active summary of each, in the speaker's scope, written after it
    # started (a conversation id Home Assistant reused has an older one).
    summaries: dict[str, tuple[int, str, float, str]] = {}
    for row in await rows_in(
        reader,
        "SELECT id, conversation_id, content, created_at, language FROM memories "  # noqa: S608
        "WHERE status = 'active' AND type = ? AND scope = ? AND created_at >= ? "
        f"AND conversation_id IN ({IDS}) ORDER BY id",
        sorted({str(row[1]) for row in conversations}),
        before=[str(MemoryType.SUMMARY), scope, started],
    ):
        summaries[str(row[1])] = (int(row[0]), str(row[2]), float(row[3]), str(row[4]))
    talks: list[EarlierTalk] = []
    for row_id, conversation_id, started_at, _updated_at in conversations:
        turns, language, said_at = await _turns(store, int(row_id), scope)
        if said_at is None:
            continue  # nothing this speaker said (only someone else's words)
        summary = summaries.get(str(conversation_id))
        if summary is not None and summary[2] >= float(started_at):
            text, summary_id, language = summary[1], summary[0], summary[3]
        else:
            text, summary_id = turns, None
        talks.append(
            EarlierTalk(
                conversation=int(row_id),
                conversation_id=str(conversation_id),
                at=_time(said_at),
                text=redacted(text) if redact else text,
                summary_id=summary_id,
                language=language,
            )
        )
    return talks


async def _turns(
    store: DatabaseAccess, conversation: int, scope: str
) -> tuple[str, str, float | None]:
    """Return the last user and assistant messages of one scope, shortened.

    With their language and when the last of them was said (None: none).
    """
    rows = list(
        await store.reader.execute_fetchall(
            "SELECT role, content, language, created_at FROM conversation_messages "
            "WHERE conversation = ? AND scope = ? AND role IN ('user', 'assistant') "
            "AND content != '' ORDER BY id DESC LIMIT ?",
            (conversation, scope, TURNS),
        )
    )
    said = [
        f"{row[0]}: {cut_to_tokens(' '.join(str(row[1]).split()), TURN_TOKENS)}"
        for row in reversed(rows)
    ]
    language = next((str(row[2]) for row in rows if row[2]), "")
    said_at = max((float(row[3]) for row in rows), default=None)
    text = "; ".join(line for line in said if not line.endswith(": "))
    return text, language, said_at
