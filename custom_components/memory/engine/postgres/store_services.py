"""What the integration builds on a store, for either backend: its log and queue.

`conversation_log(store)` is the conversation log of a store's database,
`digest_queue(store)` its digestion queue: `ConversationLog` and
`DigestQueue` on a `MemoryStore` (SQLite), `PostgresConversationLog` and
`PostgresDigestQueue` on a `PostgresStore`, with the same calls, results
and errors. The one way the integration gets them, so nothing above the
engine asks which backend it runs on. Here, in the postgres room, because
`conversations` and `digestion` must not know PostgreSQL (the rooms below
never import this one). Build them once the store is open: the PostgreSQL
ones hold its pool.

On PostgreSQL the log names itself with the store's `sender` (the
store's feed leaves its notices out, as its own), so each write calls the
store's `changed` (its listeners) after it commits and an erase then
awaits its `erased` (its erase listeners), as SQLite's `ConversationLog`
and `DigestQueue` tell theirs through the database. The queue claims with
the store's `instance` (and notifies as its `sender`), so two Home Assistants on one database never digest one
conversation twice. The log searches the store's model's message vectors.
"""

from __future__ import annotations

from ..conversations import ConversationLog
from ..digestion import DigestQueue
from ..memory_store import MemoryStore
from .conversations import PostgresConversationLog
from .digest_queue import PostgresDigestQueue
from .store import PostgresStore

type AnyStore = MemoryStore | PostgresStore
type AnyConversationLog = ConversationLog | PostgresConversationLog
type AnyDigestQueue = DigestQueue | PostgresDigestQueue


def conversation_log(store: AnyStore) -> AnyConversationLog:
    """Return the conversation log of an open store's database."""
    if isinstance(store, PostgresStore):
        return PostgresConversationLog(
            store.pool,
            language=store.language,
            model=store.model,
            instance=store.sender,
            erased=store.erased,
            changed=store.changed,
            readings=store.readings,
        )
    return ConversationLog(store)


def digest_queue(store: AnyStore) -> AnyDigestQueue:
    """Return the digestion queue of an open store's database."""
    if isinstance(store, PostgresStore):
        return PostgresDigestQueue(
            store.pool,
            instance=store.instance,
            sender=store.sender,
            changed=store.changed,
        )
    return DigestQueue(store)
