"""The conversation log's calls on SQLite and on PostgreSQL, their results compared.

`LogBoth` runs each call on a SQLite `ConversationLog` and on a
`PostgresConversationLog` and asserts equal results once SQLite's row and
message ids are read as PostgreSQL's, the same error for a refused call,
and, after each write, the same stored messages (every field, the language,
the analysed terms), the same conversations, and the same keyword index:
FTS5's own vocabulary of `conversation_messages_fts` (rows and instances of
each term, both columns) against the `message_terms` postings, and its row
count against the totals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from custom_components.memory.engine import StoreError
from custom_components.memory.engine.conversations import (
    ConversationEntry,
    ConversationLog,
    ConversationPage,
    StoredConversation,
    StoredMessage,
)
from custom_components.memory.engine.postgres import PostgresConversationLog
from custom_components.memory.engine.store import decode_cursor
from tests.engine.conftest import sql


class LogBoth:
    """A SQLite conversation log and a PostgreSQL one, driven by the same calls."""

    def __init__(
        self, lite: ConversationLog, path: Path, pool: Any, pg: PostgresConversationLog
    ) -> None:
        """Hold both logs; `rows` and `msgs` map SQLite's ids to PostgreSQL's."""
        self.lite = lite
        self.path = path
        self.pool = pool
        self.pg = pg
        self.rows: dict[int, int] = {}
        self.msgs: dict[int, int] = {}

    def row(self, row_id: int) -> int:
        """PostgreSQL's row id of SQLite's (an unknown one as it is)."""
        return self.rows.get(row_id, row_id)

    def msg(self, message_id: int) -> int:
        """PostgreSQL's message id of SQLite's (an unknown one as it is)."""
        return self.msgs.get(message_id, message_id)

    async def call[L, P](
        self, lite: Callable[[], Awaitable[L]], pg: Callable[[], Awaitable[P]]
    ) -> tuple[L, P]:
        """Run both; an error on either must be the same error on both (raised)."""
        errors: list[StoreError | None] = []
        results: list[Any] = []
        for run in (lite, pg):
            try:
                results.append(await run())
                errors.append(None)
            except StoreError as err:
                results.append(None)
                errors.append(err)
        lite_error, pg_error = errors
        if lite_error is not None or pg_error is not None:
            assert type(pg_error) is type(lite_error), errors
            assert str(pg_error) == str(lite_error)
            assert pg_error is not None
            assert lite_error is not None
            assert pg_error.placeholders == lite_error.placeholders
            raise lite_error
        return cast("L", results[0]), cast("P", results[1])

    # -- equality with ids translated -------------------------------------------

    def same_message(self, lite: StoredMessage, pg: StoredMessage) -> None:
        """Assert two messages equal but for their ids; learn the ids."""
        assert self.msgs.setdefault(lite.id, pg.id) == pg.id
        assert pg == replace(lite, id=pg.id, conversation=self.row(lite.conversation))

    def same_conversation(
        self,
        lite: StoredConversation | ConversationEntry,
        pg: StoredConversation | ConversationEntry,
    ) -> None:
        """Assert two conversations (or panel entries) equal but for their ids."""
        assert self.rows.setdefault(lite.id, pg.id) == pg.id
        if isinstance(lite, ConversationEntry):
            first = lite.first_message
            lite = replace(
                lite, first_message=None if first is None else self.msg(first)
            )
        assert pg == replace(lite, id=pg.id)

    def same_page(self, lite: ConversationPage, pg: ConversationPage) -> None:
        """Assert two pages equal: entries, total, and cursors at the same row."""
        assert len(lite.items) == len(pg.items)
        for a, b in zip(lite.items, pg.items, strict=True):
            self.same_conversation(a, b)
        assert pg.total == lite.total
        assert (lite.cursor is None) == (pg.cursor is None)
        if lite.cursor is not None and pg.cursor is not None:
            key, row_id = decode_cursor(lite.cursor)
            assert decode_cursor(pg.cursor) == (key, self.row(row_id))

    # -- the tables ---------------------------------------------------------------

    async def check_tables(self) -> None:
        """Assert that both logs hold the same messages, rows and keyword index."""
        lite_ids = [
            int(r[0]) for r in sql(self.path, "SELECT id FROM conversation_messages")
        ]
        lite_messages = await self.lite.get_messages(lite_ids)
        pg_messages = await self.pg.get_messages([self.msg(i) for i in lite_ids])
        assert len(pg_messages) == len(lite_messages) == len(lite_ids)
        for message_id, message in lite_messages.items():
            self.same_message(message, pg_messages[self.msg(message_id)])
        lite_rows = await self.lite.conversations(limit=100_000)
        pg_rows = await self.pg.conversations(limit=100_000)
        assert len(lite_rows) == len(pg_rows)
        for a, b in zip(lite_rows, pg_rows, strict=True):
            self.same_conversation(a, b)
        async with self.pool.acquire() as connection:
            pg_terms = await connection.fetch(
                "SELECT id, language, terms, analysed FROM conversation_messages"
            )
            pg_vocab = await connection.fetch(
                "SELECT term, count(*), sum(tf + tf_data) FROM message_terms "
                "GROUP BY term"
            )
            pg_total = await connection.fetchval(
                "SELECT coalesce(sum(rows), 0) FROM message_term_totals"
            )
            pg_tokens = await connection.fetchval(
                "SELECT coalesce(sum(tokens), 0) FROM message_term_totals"
            )
        lite_terms = sql(
            self.path, "SELECT id, language, terms, analysed FROM conversation_messages"
        )
        assert {tuple(r) for r in pg_terms} == {
            (self.msg(r[0]), *r[1:]) for r in lite_terms
        }
        lite_vocab = sql(
            self.path, "SELECT term, doc, cnt FROM conversation_messages_fts_vocab"
        )
        pg_set = {tuple(r) for r in pg_vocab}
        lite_set = {tuple(r) for r in lite_vocab}
        assert pg_set == lite_set, (
            sorted(pg_set - lite_set)[:20],
            sorted(lite_set - pg_set)[:20],
        )
        assert pg_total == len(lite_ids)
        assert pg_tokens == sum(int(r[2]) for r in lite_vocab)
