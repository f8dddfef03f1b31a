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
The rows are read through the store (`EarlierReads`, the store room's
`earlier`), so the lines come alike from SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Literal, Protocol

from babel import Locale, UnknownLocaleError
from babel.dates import format_timedelta

from ..languages import DEFAULT_LANGUAGE
from ..models import HOUSEHOLD, to_timestamp
from ..privacy import redacted
from ..store import EarlierConversation, EarlierQuery, EarlierTurn
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


class EarlierReads(Protocol):
    """What `earlier_talks` reads: `MemoryStore` and `PostgresStore` both offer it."""

    async def earlier(self, query: EarlierQuery) -> list[EarlierConversation]:
        """Return a speaker's recent conversations, their summaries and last turns."""
        ...


async def earlier_talks(
    store: EarlierReads,
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
    if scope == HOUSEHOLD and not device_id and not user_id:
        return []
    query = EarlierQuery(
        scope=scope,
        device_id=device_id,
        user_id=user_id,
        since=float(to_timestamp(since) or 0.0),
        exclude=exclude,
        limit=limit,
        turns=TURNS,
    )
    talks: list[EarlierTalk] = []
    for conversation in await store.earlier(query):
        turns, language, said_at = _turns(conversation.turns)
        if said_at is None:
            continue  # nothing this speaker said (only someone else's words)
        # Its summary counts if written after it started (a conversation
        # id Home Assistant reused has an older one).
        summary = conversation.summary
        if summary is not None and summary.created_at >= conversation.started_at:
            text, summary_id, language = summary.content, summary.id, summary.language
        else:
            text, summary_id = turns, None
        talks.append(
            EarlierTalk(
                conversation=conversation.id,
                conversation_id=conversation.conversation_id,
                at=_time(said_at),
                text=redacted(text) if redact else text,
                summary_id=summary_id,
                language=language,
            )
        )
    return talks


def _turns(rows: Sequence[EarlierTurn]) -> tuple[str, str, float | None]:
    """Return the last user and assistant messages (newest first given), shortened.

    With their language and when the last of them was said (None: none).
    """
    said = [
        f"{row.role}: {cut_to_tokens(' '.join(row.content.split()), TURN_TOKENS)}"
        for row in reversed(rows)
    ]
    language = next((row.language for row in rows if row.language), "")
    said_at = max((row.created_at for row in rows), default=None)
    text = "; ".join(line for line in said if not line.endswith(": "))
    return text, language, said_at
