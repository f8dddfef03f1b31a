"""Readable views of the memory database: Markdown export and profile reads.

`memory.export` mirrors what the database holds as Markdown a person can
read: `MEMORY.md` (active memories by scope and type) and one file per day
of captured conversation. Stored text is data, never markup: it is made one
line and every character Markdown or HTML could act on is escaped, so a
memory cannot forge a heading, a link, an image or a tag.

The reads here use only the store's `MemorySource` calls and the log's
`ConversationSource` ones, which SQLite and PostgreSQL both answer; the
profile keeper uses them to pick what a profile is distilled from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
import re
from typing import Final

from ..conversations import MessageRole, StoredConversation, StoredMessage
from ..models import HOUSEHOLD, MemoryItem, MemoryType
from ..store import BrowseQuery
from .sources import ConversationSource, MemorySource

MEMORY_FILE: Final = "MEMORY.md"
CONVERSATIONS_FOLDER: Final = "conversations"
DAY_FILE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
# Tool results can be long entity dumps: the mirror keeps their start only.
MAX_TOOL_CHARS: Final = 300
# Conversations an export reads at most (retention bounds them anyway).
MAX_CONVERSATIONS: Final = 100_000

# The order types appear in MEMORY.md: what shapes answers most first.
TYPE_ORDER: Final = (
    MemoryType.PROFILE,
    MemoryType.INSTRUCTION,
    MemoryType.PREFERENCE,
    MemoryType.FACT,
    MemoryType.EVENT,
    MemoryType.SUMMARY,
    MemoryType.OTHER,
)
TYPE_HEADINGS: Final = {
    MemoryType.PROFILE: "Profile",
    MemoryType.INSTRUCTION: "Instructions",
    MemoryType.PREFERENCE: "Preferences",
    MemoryType.FACT: "Facts",
    MemoryType.EVENT: "Events",
    MemoryType.SUMMARY: "Conversation summaries",
    MemoryType.OTHER: "Other",
}
ROLE_NAMES: Final = {
    MessageRole.USER: "User",
    MessageRole.ASSISTANT: "Assistant",
    MessageRole.TOOL_RESULT: "Tool result",
}

# Line breaks, other control characters, and invisible or direction-changing
# characters (as recall's fence does): one visible line per stored text.
_UNSAFE: Final = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]+"
)
# Punctuation that CommonMark (and GitHub's tables and strikethrough) acts on
# anywhere in a line; a backslash makes each one literal. `(` only follows
# an (escaped) `]` in a link, and `.` and `:` only matter at a line's start.
_INLINE: Final = re.compile(r"([\\`*_\[\]!|~#])")
# What starts a block (list item, thematic break, setext underline,
# numbered list) at the start of the text, which follows a list marker.
_BLOCK_MARK: Final = re.compile(r"^([+\-=])")
_NUMBERED: Final = re.compile(r"^(\d+)([.)])")
_HTML: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def escape_markdown(text: str) -> str:
    """Make stored text plain Markdown text on one line.

    Markdown punctuation is backslash-escaped and `&`, `<`, `>` become
    entities, so no heading, list, link, image, emphasis, code, table or
    HTML can come from the text; it renders exactly as it was stored.
    """
    text = " ".join(_UNSAFE.sub(" ", text).split())
    text = _INLINE.sub(r"\\\1", text)
    text = _NUMBERED.sub(r"\1\\\2", _BLOCK_MARK.sub(r"\\\1", text))
    return "".join(_HTML.get(char, char) for char in text)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _scope_order(scope: str) -> tuple[bool, str]:
    return (scope != HOUSEHOLD, scope)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationDay:
    """The messages of one local day, grouped by the conversation they are in."""

    day: date
    conversations: tuple[tuple[StoredConversation, tuple[StoredMessage, ...]], ...]

    @property
    def file_name(self) -> str:
        """`2026-03-14.md`: sorts by date, and a later export replaces it."""
        return f"{self.day.isoformat()}.md"


def render_memories(
    items: Iterable[MemoryItem],
    *,
    label: Callable[[str], str],
    exported_at: datetime,
    timezone: tzinfo,
) -> str:
    """Render MEMORY.md: scopes (household first), then types, oldest first."""
    by_scope: dict[str, dict[MemoryType, list[MemoryItem]]] = {}
    count = 0
    for item in items:
        by_scope.setdefault(item.scope, {}).setdefault(item.type, []).append(item)
        count += 1
    local = exported_at.astimezone(timezone)
    lines = [
        "# Memory",
        "",
        f"Active memories exported {local.strftime('%Y-%m-%d %H:%M')}: {count}.",
    ]
    for scope in sorted(by_scope, key=_scope_order):
        lines += ["", f"## {escape_markdown(label(scope))}"]
        kinds = by_scope[scope]
        for kind in TYPE_ORDER:
            if kind not in kinds:
                continue
            lines += ["", f"### {TYPE_HEADINGS[kind]}", ""]
            for item in sorted(kinds[kind], key=lambda i: (i.created_at, i.id)):
                lines.append(_memory_line(item, timezone))
    return "\n".join(lines) + "\n"


def _memory_line(item: MemoryItem, timezone: tzinfo) -> str:
    created = item.created_at.astimezone(timezone).date().isoformat()
    details = [f"\\#{item.id}, {created}"]
    if item.tags:
        details.append("tags: " + ", ".join(escape_markdown(tag) for tag in item.tags))
    if item.expires_at is not None:
        expires = item.expires_at.astimezone(timezone).date().isoformat()
        details.append(f"until {expires}")
    return f"- {escape_markdown(item.content)} ({'; '.join(details)})"


def group_by_day(
    conversations: Sequence[tuple[StoredConversation, Sequence[StoredMessage]]],
    timezone: tzinfo,
) -> list[ConversationDay]:
    """Split conversations into local days (one spanning midnight is in both)."""
    days: dict[date, dict[int, tuple[StoredConversation, list[StoredMessage]]]] = {}
    for conversation, messages in conversations:
        for message in messages:
            day = message.created_at.astimezone(timezone).date()
            _conv, kept = days.setdefault(day, {}).setdefault(
                conversation.id, (conversation, [])
            )
            kept.append(message)
    result: list[ConversationDay] = []
    for day in sorted(days):
        chosen = sorted(
            days[day].values(), key=lambda pair: (pair[1][0].created_at, pair[0].id)
        )
        result.append(
            ConversationDay(
                day=day,
                conversations=tuple(
                    (conv, tuple(sorted(kept, key=lambda m: (m.created_at, m.id))))
                    for conv, kept in chosen
                ),
            )
        )
    return result


def render_day(
    day: ConversationDay, *, label: Callable[[str], str], timezone: tzinfo
) -> str:
    """Render one day's conversations, each under its start time and speaker."""
    lines = [f"# Conversations on {day.day.isoformat()}"]
    for conversation, messages in day.conversations:
        start = messages[0].created_at.astimezone(timezone).strftime("%H:%M")
        about = [escape_markdown(label(conversation.scope))]
        if conversation.agent_id:
            about.append(f"agent {escape_markdown(conversation.agent_id)}")
        lines += ["", f"## {start}, {', '.join(about)}", ""]
        for message in messages:
            lines.append(_message_line(message, timezone))
    return "\n".join(lines) + "\n"


def _message_line(message: StoredMessage, timezone: tzinfo) -> str:
    moment = message.created_at.astimezone(timezone).strftime("%H:%M:%S")
    who = ROLE_NAMES[message.role]
    if message.role == MessageRole.TOOL_RESULT and message.tool_name:
        who = f"{who} ({escape_markdown(message.tool_name)})"
    text = message.content
    if message.role == MessageRole.TOOL_RESULT:
        text = _cut(text or message.data, MAX_TOOL_CHARS)
    elif not text.strip() and message.data:
        text = "[tool call] " + _cut(message.data, MAX_TOOL_CHARS)
    return f"- {moment} **{who}**: {escape_markdown(text)}"


# -- reads ------------------------------------------------------------------


async def active_memories(
    store: MemorySource,
    scopes: Sequence[str] | None,
    *,
    types: Sequence[MemoryType] | None = None,
    now: datetime,
) -> list[MemoryItem]:
    """Every active memory of these scopes (None: all) unexpired at `now`, by id."""
    if types is not None and not types:
        return []
    query = BrowseQuery(
        scopes=None if scopes is None else tuple(scopes),
        types=tuple(types or ()),
        status="active",
    )
    return await store.browse_all(query, now=now)


async def changed_since(
    store: MemorySource,
    scope: str,
    since: datetime | None,
    *,
    types: Sequence[MemoryType],
) -> int:
    """How many memories of a scope were added or changed after `since`.

    Archived and superseded ones count (their `updated_at` moves when they
    go); purged ones are gone and do not, which only delays a refresh.
    """
    return await store.count_changed(scope, since, types=types)


async def memory_scopes(store: MemorySource) -> list[str]:
    """Scopes that have active memories or an active profile, household first."""
    return sorted(await store.active_scopes(), key=_scope_order)


async def conversations_with_messages(
    log: ConversationSource, scopes: Sequence[str] | None
) -> list[tuple[StoredConversation, list[StoredMessage]]]:
    """Read the kept conversations of these scopes (None: all) with messages.

    A message is kept only if its own scope is one of `scopes` too.
    """
    allowed = None if scopes is None else tuple(scopes)
    found = await log.conversations(scopes=allowed, limit=MAX_CONVERSATIONS)
    by_conversation = await log.messages_of([conv.id for conv in found])
    result: list[tuple[StoredConversation, list[StoredMessage]]] = []
    for conversation in found:
        messages = [
            message
            for message in by_conversation.get(conversation.id, ())
            if allowed is None or message.scope in allowed
        ]
        if messages:
            result.append((conversation, messages))
    return result
