"""Message keyword search on PostgreSQL, with the bm25 of `conversation_messages_fts`.

The SQLite log ranks a MATCH of analysed terms (compound heads as prefixes,
`"term"*`) with `bm25(conversation_messages_fts, 1.0, 0.3)`: two columns,
`terms` (the analysed content) and `data` (tool calls and results).
`PostgresMessageSearch.keywords` takes the same terms and prefixes and
returns the same hits `(id, bm25, coverage)` as `keywords.PostgresKeywords`
does for memories, from the `message_terms` postings (`schema_conversations`).

FTS5's bm25 with column weights (`fts5_aux.c`): a term's frequency in a row
is the sum of its instances' column weights (tf · 1.0 + tf_data · 0.3), the
row's length dl its tokens in every column, unweighted, avgdl the token
total over N, and n (for idf) the rows holding the term in either column.
A query term is looked for in both columns, as a MATCH without a column
filter is. Only then are rows filtered (scopes, since), as the MATCH scores
against its whole index before the join filters. A common term's postings
are not all read where the MATCH does not need them: `keyword_side` reads
them only from its `newest` bound on (SQLite's MATCH budget) and
`keyword_of` only its messages', n then counted from the postings' index
(`bm25.scored_ctes`' `within`, `bm25.index_counts_sql` for the engine's idf
weights), as the memories' search does.

`matches` is the search of a query with words: the engine's keyword query
(`search.keyword_query`, its numbers from `message_terms` through
`search_keywords.PgTermCounts`) ranked by that bm25, the hits SQLite's
keyword side gives; `keyword_side` returns the keyword query with them and
`keyword_of` scores given messages by it (the hybrid search's completion,
`message_hybrid`). `recent` is the search of a query with no words (empty or `*`): the newest
messages passing the filters, each scored 1.0, as `MessageCorpus.recent`.
`data_tokens` reads a message's `data` as `unicode61 remove_diacritics 2`
does (SQLite's own tokenizer, in memory), for the `data_terms` column the
postings are made from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import functools
import re
import sqlite3
import threading
from typing import Any, Final

from ..conversations import MESSAGE_COLUMNS, MessageHit, MessageQuery, row_to_message
from ..languages import language_code
from ..models import to_timestamp
from ..search import (
    KEYWORD_OVERFETCH,
    KEYWORD_POOL,
    MATCH_BUDGET,
    KeywordQuery,
    keyword_query,
)
from ..store import validate_limit
from .bm25 import KeywordHit, index_counts_sql, query_flags, ranked_hits, ranking_sql
from .search_keywords import PgTermCounts, lowest_cte, match_terms

# FTS5 column weights of `conversation_messages_fts`: terms, data (as
# `conversations.search.BM25_WEIGHTS`).
TERMS_WEIGHT: Final = 1.0
DATA_WEIGHT: Final = 0.3
_ASCII_SEPARATORS: Final = re.compile(r"[^a-z0-9]+")

_TF: Final = "sum(tf)::float8 * $3::float8 + sum(tf_data)::float8 * $4::float8"
_FILTERS: Final = (
    "($8::text[] IS NULL OR m.scope = ANY($8::text[]))"
    " AND ($9::float8 IS NULL OR m.created_at >= $9::float8)"
)


def _ranking(
    *, where: str, limit: str, within: str | None = None, before: str = ""
) -> str:
    """Return `bm25.ranking_sql` over the messages' postings, with its own filters."""
    return ranking_sql(
        terms="message_terms",
        key="message_id",
        columns=("tf", "tf_data"),
        tf=_TF,
        totals="message_term_totals",
        rows="conversation_messages",
        where=where,
        limit=limit,
        within=within,
        before=before,
    )


_SEARCH: Final = _ranking(where=_FILTERS, limit="$10")
# The MATCH of `keyword_side`: as `_SEARCH`, each term's postings read only
# from the `lowest` row on, that of the MATCH's $11-th newest (0: every
# row), as FTS5 reads the SQLite log's MATCH with its `newest` bound; n is
# then counted from the postings' index (`bm25.scored_ctes`' `within`).
_BOUNDED: Final = _ranking(
    where=_FILTERS,
    limit="$10",
    within=">= (SELECT id FROM lowest)",
    before=lowest_cte("message_terms", "message_id", "$11"),
)
# The bm25 of given messages ($8), whatever their filters: `keyword_of`.
# Only their own postings are read.
_OF: Final = _ranking(
    where="m.id = ANY($8::int8[])", limit="ALL", within="= ANY($8::int8[])"
)
# The index's rows and each term's (`counts_sql`'s), counted from the
# postings' index.
_INDEX_COUNTS: Final = index_counts_sql(
    terms="message_terms", key="message_id", totals="message_term_totals"
)
_TOTAL_ROWS: Final = "SELECT coalesce(sum(rows), 0) FROM message_term_totals"
_RECENT: Final = (
    f"SELECT {MESSAGE_COLUMNS} FROM conversation_messages m "  # noqa: S608
    "JOIN conversations c ON c.id = m.conversation "
    "WHERE ($1::text[] IS NULL OR m.scope = ANY($1::text[])) "
    "AND ($2::float8 IS NULL OR m.created_at >= $2::float8) "
    "ORDER BY m.created_at DESC, m.id DESC LIMIT $3"
)


def data_tokens(data: str) -> str:
    """Return a message's `data` as unicode61 (remove_diacritics 2) tokenizes it.

    The tokens FTS5 indexes, space separated, as the `data_terms` column
    holds them. ASCII is read here (letters and digits lower-cased, anything
    else a separator); any other text by SQLite's own tokenizer, in a
    private in-memory FTS5 table: its folding of every script (which marks
    it drops, which it splits on) has no short rule to copy.
    """
    if data.isascii():
        return " ".join(_ASCII_SEPARATORS.sub(" ", data.lower()).split())
    with _TOKENIZER_LOCK:
        tokenizer = _tokenizer()
        tokenizer.execute("INSERT INTO data (rowid, text) VALUES (1, ?)", (data,))
        try:
            rows = tokenizer.execute(
                "SELECT term FROM data_tokens ORDER BY offset"
            ).fetchall()
        finally:
            tokenizer.execute("DELETE FROM data WHERE rowid = 1")
    return " ".join(str(row[0]) for row in rows)


_TOKENIZER_LOCK: Final = threading.Lock()


@functools.cache
def _tokenizer() -> sqlite3.Connection:
    """Return the in-memory FTS5 table `data_tokens` reads tokens from."""
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    connection.execute(
        "CREATE VIRTUAL TABLE data USING fts5(text, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    connection.execute(
        "CREATE VIRTUAL TABLE data_tokens USING fts5vocab(data, 'instance')"
    )
    return connection


class PostgresMessageSearch:
    """Keyword search over the `message_terms` postings of one database."""

    # Rows a keyword MATCH may find, as the SQLite log's `MessageCorpus`.
    match_budget: int = MATCH_BUDGET

    def __init__(self, pool: Any) -> None:
        """Hold the asyncpg pool of a database `schema.migrate` set up."""
        self._pool = pool
        self._counts = PgTermCounts("message_terms")

    async def matches(
        self, query: MessageQuery, default: str
    ) -> list[tuple[int, float, float]]:
        """Keyword hits `(id, bm25, coverage)` of a query with words, best first."""
        return (await self.keyword_side(query, default))[0]

    async def keyword_side(
        self, query: MessageQuery, default: str
    ) -> tuple[list[tuple[int, float, float]], KeywordQuery | None]:
        """Keyword hits `(id, bm25, coverage)` best first, and the keyword query.

        SQLite's: the engine's `keyword_query` (in the query's language and
        `default`, compound heads as prefixes, numbers from `message_terms`),
        its MATCH terms ranked by bm25 (`keywords`), terms outside the MATCH
        ranked in as `KeywordQuery.rest` does, each hit's coverage by
        `KeywordQuery.hit`. Bounded as FTS5 bounds it: a MATCH whose rarest
        terms are in more rows than `match_budget` ranks only its newest
        `match_budget` rows (`KeywordQuery.newest`), whose postings alone
        are read (`_BOUNDED`).
        """
        pool = max(KEYWORD_POOL, query.limit)
        async with self._pool.acquire() as connection:
            keywords = await keyword_query(
                connection,
                query.text.strip(),
                [language_code(query.language, default), default],
                vocab=self._counts,
                total=int(await connection.fetchval(_TOTAL_ROWS)),
                budget=self.match_budget,
                index="message_terms",
            )
            if keywords is None:
                return [], None
            terms, flags = match_terms(keywords.expression)
            hits = await ranked_hits(
                connection,
                (_BOUNDED, _INDEX_COUNTS),
                (terms, flags),
                (TERMS_WEIGHT, DATA_WEIGHT),
                (
                    None if query.scopes is None else list(query.scopes),
                    to_timestamp(query.since),
                    pool * KEYWORD_OVERFETCH if keywords.others else pool,
                    keywords.newest,
                ),
            )
            rows = await connection.fetch(
                "SELECT id, terms FROM conversation_messages WHERE id = ANY($1::int8[])",
                [hit.id for hit in hits],
            )
        held = {int(row[0]): str(row[1]) for row in rows}
        scored = [
            (hit.id, hit.bm25 - keywords.rest(held.get(hit.id, ""))) for hit in hits
        ]
        if keywords.others:
            scored = sorted(scored, key=lambda pair: (pair[1], pair[0]))[:pool]
        found = [keywords.hit(key, bm25, held.get(key, "")) for key, bm25 in scored]
        return found, keywords

    async def keyword_of(
        self, keywords: KeywordQuery | None, ids: Sequence[int]
    ) -> list[tuple[int, float, float]]:
        """Keyword hits among `ids` (which passed the filters already).

        `HybridSearch.keyword_of`: the MATCH's bm25 of these rows, and rows
        it does not find scored on the terms outside it (`KeywordQuery.hits`).
        """
        if keywords is None or not ids:
            return []
        terms, flags = match_terms(keywords.expression)
        async with self._pool.acquire() as connection:
            found = await ranked_hits(
                connection,
                (_OF, _INDEX_COUNTS),
                (terms, flags),
                (TERMS_WEIGHT, DATA_WEIGHT),
                (list(ids),),
            )
            rows = await connection.fetch(
                "SELECT id, terms FROM conversation_messages WHERE id = ANY($1::int8[])",
                list(ids),
            )
        bm25 = {hit.id: hit.bm25 for hit in found}
        return keywords.hits(
            (int(row[0]), bm25.get(int(row[0])), str(row[1]), None) for row in rows
        )

    async def keywords(
        self,
        terms: Sequence[str],
        *,
        prefixes: Iterable[str] = (),
        scopes: Sequence[str] | None = None,
        since: float | None = None,
        limit: int | None = None,
    ) -> list[KeywordHit]:
        """Messages holding any of `terms` (those in `prefixes`: a term they begin).

        Ranked by FTS5's bm25 over the whole index, then ids; only messages
        of `scopes` (None: every scope; empty: none) created at or after
        `since`; at most `limit` (None: all).
        """
        query = query_flags(terms, prefixes)
        if not query[0] or (scopes is not None and not scopes):
            return []
        async with self._pool.acquire() as connection:
            return await ranked_hits(
                connection,
                (_SEARCH, _INDEX_COUNTS),
                query,
                (TERMS_WEIGHT, DATA_WEIGHT),
                (None if scopes is None else list(scopes), since, limit),
            )

    async def recent(self, query: MessageQuery) -> list[MessageHit]:
        """Return the newest messages the query's filters keep (a query with no words).

        The SQLite log's answer to an empty (or `*`) query: the same
        messages in the same order, each scored 1.0.
        """
        validate_limit(query.limit)
        if query.scopes is not None and not query.scopes:
            return []
        async with self._pool.acquire() as connection:
            records = await connection.fetch(
                _RECENT,
                None if query.scopes is None else list(query.scopes),
                to_timestamp(query.since),
                query.limit,
            )
        return [MessageHit(message=row_to_message(row), score=1.0) for row in records]
