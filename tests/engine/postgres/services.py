"""Helpers of the store services' tests: each backend's store with its log and queue.

`Side` is an open store of one backend with the conversation log and the
digestion queue `conversation_log` and `digest_queue` give for it, the
scopes its erase listeners heard and its listeners' calls; `talk` saves
one conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    MessageRole,
    NewMessage,
)
from custom_components.memory.engine.postgres import (
    AnyConversationLog,
    AnyDigestQueue,
    AnyStore,
    conversation_log,
    digest_queue,
)
from tests.engine.conftest import FakeClock
from tests.engine.postgres.stores import Heard

ANNA = "person.anna"
BEN = "person.ben"
KITCHEN = "kitchen"
HALL = "hall"


@dataclass
class Side:
    """An open store, its log and queue, and what its erase listeners heard."""

    store: AnyStore
    log: AnyConversationLog
    queue: AnyDigestQueue
    is_postgres: bool
    heard: list[frozenset[str]] = field(default_factory=list)
    # The store's listeners: called after each committed write.
    changes: Heard = field(default_factory=Heard)


async def side_of(store: AnyStore, *, is_postgres: bool) -> Side:
    """Build the log and queue of an open store, listening to its erases."""
    side = Side(store, conversation_log(store), digest_queue(store), is_postgres)

    async def listen(scopes: frozenset[str]) -> None:
        side.heard.append(scopes)

    store.add_erase_listener(listen)
    store.add_listener(side.changes)
    return side


def now_of(clock: FakeClock) -> datetime:
    """Return the clock's time as a datetime."""
    return datetime.fromtimestamp(clock(), UTC)


async def talk(  # noqa: PLR0913 - a conversation's own fields, defaulted
    log: AnyConversationLog,
    conversation_id: str,
    at: datetime,
    said: Sequence[tuple[MessageRole, str] | tuple[MessageRole, str, str]],
    *,
    scope: str = HOUSEHOLD,
    device_id: str | None = None,
    user_id: str | None = None,
    ended: bool = False,
    language: str = "",
) -> int:
    """Save a conversation (a message may name its own scope); return its row id."""
    messages = [
        NewMessage(
            role=entry[0],
            content=entry[1],
            created_at=at + timedelta(seconds=n),
            scope=entry[2] if len(entry) == 3 else scope,
            device_id=device_id,
            user_id=user_id,
            language=language,
        )
        for n, entry in enumerate(said)
    ]
    info = ConversationInfo(
        conversation_id=conversation_id,
        started_at=at,
        scope=scope,
        device_id=device_id,
        user_id=user_id,
        ended_at=at + timedelta(seconds=len(said)) if ended else None,
    )
    return (await log.save([(None, info, messages)]))[0]
