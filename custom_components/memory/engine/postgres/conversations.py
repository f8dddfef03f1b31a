"""The conversation log on PostgreSQL: save, end, erase; its reads and search.

`PostgresConversationLog` answers the calls of the SQLite `ConversationLog`
(`conversations.log`) with the same results and errors: validation first
(`validate_scope`, a conversation needs an id), texts cut as there (`cut`),
each message's language and analysed terms made by the same functions
(`language_code`, `index_terms`, `ANALYSIS_VERSION`), a row kept by who
started it, and a row erased meanwhile (retention) started anew when there
is anything new to keep. Its reads are `PostgresConversationReads`, its
keyword search `PostgresMessageSearch`, and with the store's embedding
model its message vectors `PgMessageVectors` (written by the embedding
queue, `PostgresJobs`).

Each write is one transaction, and each that changes something sends its
change notice (`notify`) in it: messages appended (`MESSAGES_ADDED`, the
conversation rows), conversations ended (`CONVERSATIONS_ENDED`), messages
erased (`MESSAGES_PURGED`, their ids, `erased`). Scopes and ids only: never
a message's text. Its own store hears it through `changed` and `erased`
(`store_services` wires them), since the store's feed leaves out its own
instance's notices. A search is SQLite's hybrid one (`message_hybrid`):
keywords, and with a query vector the model's message vectors, fused. An
erase takes the messages' vectors along (on delete cascade). An erase is one
transaction here (SQLite's takes two), so no other instance sees a row
emptied but not yet gone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
import logging
from typing import Any, Final

from ..conversations import (
    ConversationEntry,
    ConversationInfo,
    ConversationPage,
    ConversationQuery,
    MessageHit,
    MessageQuery,
    NewMessage,
    StoredConversation,
    StoredMessage,
    cut,
)
from ..errors import InvalidInputError
from ..languages import ANALYSIS_VERSION, DEFAULT_LANGUAGE, index_terms, language_code
from ..models import MemoryItem, to_timestamp
from ..store import validate_scope
from ..vectors import Readings
from .conversation_reads import PostgresConversationReads
from .message_hybrid import message_search
from .message_search import PostgresMessageSearch, data_tokens
from .message_vectors import PgMessageVectors
from .notify import ChangeKind, notify
from .schema_conversations import COMPACT_MESSAGE_TOTALS

_LOGGER = logging.getLogger(__name__)

_INSERT_CONVERSATION: Final = (
    "INSERT INTO conversations (conversation_id, scope, agent_id, user_id, "
    "device_id, started_at, updated_at, ended_at) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id"
)
# Who started it stays; someone continuing it speaks in messages.
_CONTINUE: Final = (
    "UPDATE conversations SET agent_id = coalesce(agent_id, $1), "
    "updated_at = greatest(updated_at, $2), ended_at = coalesce($3, ended_at) "
    "WHERE id = $4 RETURNING id"
)
_INSERT_MESSAGE: Final = (
    "INSERT INTO conversation_messages (conversation, role, content, data, "
    "tool_name, tool_call_id, scope, agent_id, user_id, device_id, created_at, "
    "language, terms, analysed, data_terms) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
)
_DROP_EMPTY: Final = (
    "DELETE FROM conversations WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM "
    "conversation_messages m WHERE m.conversation = conversations.id)"
)
# Message totals' deltas kept before a write folds them.
_COMPACT_AFTER: Final = 64


class PostgresConversationLog:
    """The conversation log of one PostgreSQL database, over an asyncpg pool."""

    def __init__(
        self,
        pool: Any,
        *,
        language: str = DEFAULT_LANGUAGE,
        model: str | None = None,
        instance: str | None = None,
        erased: Callable[[Iterable[str]], Awaitable[None]] | None = None,
        changed: Callable[[], None] | None = None,
        readings: Readings | None = None,
    ) -> None:
        """Hold the pool, the default language of texts, and the instance's name.

        `model` is the embedding model whose message vectors a search with a
        query vector uses (None: keywords only).

        `changed` is called after each write commits, then `erased` awaited
        with the scopes whose messages an erase took (a store's `changed`
        and `erased`: its listeners, as SQLite's log tells its database's).
        `readings` is how well the model reads each language (the store's;
        None: its own, never measured).
        """
        self._pool = pool
        self.language = language
        self.readings = readings or Readings(language)
        self.instance = instance
        self._tell_erased = erased
        self._tell_changed = changed
        self.reads = PostgresConversationReads(pool)
        self.keywords = PostgresMessageSearch(pool)
        self.vectors = None if model is None else PgMessageVectors(pool, model)

    # -- writes -------------------------------------------------------------

    async def save(
        self, batch: Sequence[tuple[int | None, ConversationInfo, Sequence[NewMessage]]]
    ) -> list[int]:
        """Save conversations and append their messages, in one transaction.

        Each entry is `(row id or None for a new conversation, info,
        messages)`; returns the row ids in the same order. Everything is
        validated before anything is written.
        """
        for _key, info, messages in batch:
            validate_scope(info.scope)
            if not info.conversation_id:
                raise InvalidInputError("a conversation needs an id")
            for message in messages:
                validate_scope(message.scope)
        keys: list[int] = []
        scopes: set[str] = set()
        async with self._pool.acquire() as connection, connection.transaction():
            for key, info, messages in batch:
                keys.append(await self._save_one(connection, key, info, messages))
                scopes.add(info.scope)
                scopes.update(message.scope for message in messages)
            if keys:
                await self._compact(connection)
                await notify(
                    connection,
                    ChangeKind.MESSAGES_ADDED,
                    instance=self.instance,
                    scopes=scopes,
                    ids=keys,
                )
        self._changed()
        return keys

    async def _save_one(
        self,
        connection: Any,
        key: int | None,
        info: ConversationInfo,
        messages: Sequence[NewMessage],
    ) -> int:
        started = to_timestamp(info.started_at)
        times = [to_timestamp(message.created_at) for message in messages]
        ended = to_timestamp(info.ended_at)
        updated = max(value for value in (started, ended, *times) if value is not None)
        if key is None:
            key = int(
                await connection.fetchval(
                    _INSERT_CONVERSATION,
                    info.conversation_id,
                    info.scope,
                    info.agent_id,
                    info.user_id,
                    info.device_id,
                    started,
                    updated,
                    ended,
                )
            )
        elif (
            await connection.fetchval(_CONTINUE, info.agent_id, updated, ended, key)
            is None
        ):
            # Erased meanwhile (retention): start it anew if there is
            # anything new to keep; an empty row is not worth one.
            if not messages:
                return key
            return await self._save_one(connection, None, info, messages)
        rows = []
        for message, created in zip(messages, times, strict=True):
            language = language_code(message.language, default="")
            content = cut(message.content)
            data = cut(message.data)
            rows.append(
                (
                    key,
                    str(message.role),
                    content,
                    data,
                    message.tool_name,
                    message.tool_call_id,
                    message.scope,
                    message.agent_id,
                    message.user_id,
                    message.device_id,
                    created,
                    language,
                    index_terms(content, language or self.language),
                    ANALYSIS_VERSION,
                    data_tokens(data),
                )
            )
        if rows:
            await connection.executemany(_INSERT_MESSAGE, rows)
        return key

    @staticmethod
    async def _compact(connection: Any) -> None:
        """Fold the message totals' deltas once there are many."""
        deltas = await connection.fetchval("SELECT count(*) FROM message_term_totals")
        if deltas > _COMPACT_AFTER:
            await connection.execute(COMPACT_MESSAGE_TOTALS)

    async def close_open(self) -> int:
        """End conversations left open, when last updated; return how many."""
        async with self._pool.acquire() as connection, connection.transaction():
            rows = await connection.fetch(
                "UPDATE conversations SET ended_at = updated_at "
                "WHERE ended_at IS NULL RETURNING id, scope"
            )
            if rows:
                await notify(
                    connection,
                    ChangeKind.CONVERSATIONS_ENDED,
                    instance=self.instance,
                    scopes={str(row["scope"]) for row in rows},
                    ids=[int(row["id"]) for row in rows],
                )
        self._changed()
        return len(rows)

    async def _erased(self, connection: Any, rows: Sequence[Any]) -> list[int]:
        """Send the notice of erased messages (rows of id, scope); return their ids."""
        ids = sorted(int(row["id"]) for row in rows)
        if ids:
            await self._compact(connection)
            await notify(
                connection,
                ChangeKind.MESSAGES_PURGED,
                instance=self.instance,
                scopes={str(row["scope"]) for row in rows},
                ids=ids,
                erased=True,
            )
        return ids

    async def purge(self, ids: Sequence[int]) -> list[int]:
        """Erase messages by id, leaving no copy of their text; returns the ids.

        Unknown ids are ignored (a message may already be gone to retention).
        """
        unique = sorted(set(ids))
        if not unique:
            return []
        async with self._pool.acquire() as connection, connection.transaction():
            rows = await connection.fetch(
                "DELETE FROM conversation_messages WHERE id = ANY($1::int8[]) "
                "RETURNING id, scope",
                unique,
            )
            erased = await self._erased(connection, rows)
        await self._told(rows)
        return erased

    def _changed(self) -> None:
        """Call `changed`: a write committed."""
        if self._tell_changed is not None:
            self._tell_changed()

    async def _told(self, rows: Sequence[Any]) -> None:
        """Tell of a committed erase: `changed`, then `erased` with the rows' scopes."""
        self._changed()
        if rows and self._tell_erased is not None:
            await self._tell_erased({str(row["scope"]) for row in rows})

    async def erase(self, row_id: int, scopes: tuple[str, ...] | None) -> list[int]:
        """Erase a conversation's messages of these scopes (None: all); return their ids.

        The row goes with its last message; memories it gave stay.
        """
        async with self._pool.acquire() as connection, connection.transaction():
            rows = await connection.fetch(
                "DELETE FROM conversation_messages WHERE conversation = $1 "
                "AND ($2::text[] IS NULL OR scope = ANY($2::text[])) "
                "RETURNING id, scope",
                row_id,
                None if scopes is None else list(scopes),
            )
            erased = await self._erased(connection, rows)
            await connection.execute(_DROP_EMPTY, row_id)
        await self._told(rows)
        return erased

    async def purge_before(self, cutoff: datetime) -> int:
        """Erase messages older than `cutoff`, and conversations left empty.

        Retention: returns how many messages went. A conversation that still
        has newer messages stays.
        """
        before = to_timestamp(cutoff)
        async with self._pool.acquire() as connection, connection.transaction():
            rows = await connection.fetch(
                "DELETE FROM conversation_messages WHERE created_at < $1 "
                "RETURNING id, scope",
                before,
            )
            await connection.execute(
                "DELETE FROM conversations WHERE updated_at < $1 AND NOT EXISTS "
                "(SELECT 1 FROM conversation_messages m "
                "WHERE m.conversation = conversations.id)",
                before,
            )
            erased = await self._erased(connection, rows)
        await self._told(rows)
        _LOGGER.debug("Retention erased %s messages", len(erased))
        return len(erased)

    # -- reads (`PostgresConversationReads`) ----------------------------------

    async def conversations(
        self,
        *,
        scopes: tuple[str, ...] | None = None,
        since: datetime | None = None,
        ended: bool | None = None,
        limit: int = 100,
    ) -> list[StoredConversation]:
        """Conversations updated since a time, newest first."""
        return await self.reads.conversations(
            scopes=scopes, since=since, ended=ended, limit=limit
        )

    async def messages(self, conversation: int) -> list[StoredMessage]:
        """Every message of one conversation (by row id), oldest first."""
        return await self.reads.messages(conversation)

    async def messages_of(
        self, conversations: Sequence[int]
    ) -> dict[int, list[StoredMessage]]:
        """Every message of these conversations (by row id), oldest first in each."""
        return await self.reads.messages_of(conversations)

    async def get_messages(self, ids: Sequence[int]) -> dict[int, StoredMessage]:
        """Messages by id; missing ids are absent from the result."""
        return await self.reads.get_messages(ids)

    async def page(self, query: ConversationQuery) -> ConversationPage:
        """One page of conversations with their digestion state (the panel's list)."""
        return await self.reads.page(query)

    async def count(self, query: ConversationQuery) -> int:
        """How many conversations a query selects (the panel's backlog count)."""
        return await self.reads.count(query)

    async def entry(
        self, row_id: int, scopes: tuple[str, ...] | None
    ) -> ConversationEntry | None:
        """One conversation as the panel lists it; None when no scope spoke in it."""
        return await self.reads.entry(row_id, scopes)

    async def produced(
        self, rows: Sequence[int], scopes: tuple[str, ...] | None
    ) -> dict[int, list[int]]:
        """Return the ids of the memories (in these scopes) each conversation gave."""
        return await self.reads.produced(rows, scopes)

    async def source_of(self, item: MemoryItem) -> tuple[int, int | None] | None:
        """Return the conversation row and message a memory came from, if still kept."""
        return await self.reads.source_of(item)

    async def search(self, query: MessageQuery) -> list[MessageHit]:
        """Find messages by keywords and meaning, scored like memories (0..1, best first).

        SQLite's `ConversationLog.search` (`message_hybrid.message_search`):
        a query with no words and no vector lists the newest messages.
        """
        return await message_search(
            query,
            (self.language, self.readings),
            self.keywords,
            self.vectors,
            self.get_messages,
        )

    @property
    def index_bytes(self) -> int:
        """Memory held by a message vector index: none here (pgvector's, on the server)."""
        return 0
