"""Hybrid message search on PostgreSQL ranks as SQLite's does: ids, order, scores.

The same conversations are saved into a SQLite `ConversationLog` and a
PostgreSQL one (`conversation_log` of a real `PostgresStore`), the same
message vectors written through each backend's job store (some replaced
later, as a re-embedding does), and the same queries asked of both: words
and a vector, words alone, a vector alone, another model's vector (keywords
only on both), with scope sets and a time filter, enough matches of one
word to fill the keyword pool (so pooled messages outside it get their
bm25 afterwards). Every answer must hold the same messages in the same
order with the same signals, scores within 1e-9, and a person's query
never a message of another person, by keywords or by meaning.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    MemoryStore,
    MessageHit,
    MessageQuery,
    MessageRole,
    NewMessage,
)
from custom_components.memory.engine.embedding import SqliteJobs
from custom_components.memory.engine.postgres import (
    AnyConversationLog,
    PostgresStore,
    conversation_log,
)
from tests.engine.conftest import FakeClock, StoreFactory
from tests.engine.postgres.stores import PgStores
from tests.postgres_server import START_TIMEOUT

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT * 4),
]

MODEL = "parity-model"
DIM = 24
T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
ANNA = "person.anna"
BEN = "person.ben"
PEOPLE = (ANNA, BEN, HOUSEHOLD)
# Messages a conversation: three of them hold fewer vectors than the
# semantic pool's candidates (SEMANTIC_POOL times HYBRID_OVERSAMPLE), so
# SQLite's int8 index proposes them all and its scores are exact; above
# that its candidates are approximate (pgvector's exact scan is not), and
# the pools may part at their tail.
TURNS = 30
WORDS = ("roses", "tomatoes", "hedge", "kitchen", "window", "boiler", "ladder")
SCOPE_SETS: tuple[tuple[str, ...] | None, ...] = (
    None,
    (ANNA,),
    (BEN, HOUSEHOLD),
    (ANNA, HOUSEHOLD),
)


@pytest.fixture
async def pg_store(postgres_database: str, clock: FakeClock) -> AsyncIterator[Any]:
    """Open a PostgresStore on a fresh database, with the test's model."""
    stores = PgStores(postgres_database, clock)
    try:
        yield await stores.open(model=MODEL)
    finally:
        await stores.close_all()


def _text(n: int) -> str:
    """Return a message's text: most speak of the garden, each of two more words."""
    garden = "the garden" if n % 4 else "the house"
    return f"About {garden}: {WORDS[n % len(WORDS)]} and {WORDS[(n * 3) % 7]} {n}"


async def _fill(log: AnyConversationLog) -> list[int]:
    """Save the same three conversations; return the messages' ids in order."""
    ids: list[int] = []
    for c, scope in enumerate(PEOPLE):
        messages = [
            NewMessage(
                role=MessageRole.USER if n % 3 else MessageRole.ASSISTANT,
                content=_text(c * TURNS + n),
                created_at=T0 + timedelta(minutes=c * TURNS + n),
                scope=scope,
            )
            for n in range(TURNS)
        ]
        info = ConversationInfo(conversation_id=f"c{c}", started_at=T0, scope=scope)
        [key] = await log.save([(None, info, messages)])
        ids += [message.id for message in await log.messages(key)]
    return ids


def _same(
    lite: list[MessageHit], pg: list[MessageHit], ids: dict[int, int], label: str
) -> None:
    """Assert the same messages, order and signals, scores within 1e-9."""
    assert [ids[hit.message.id] for hit in lite] == [hit.message.id for hit in pg], (
        label
    )
    for a, b in zip(lite, pg, strict=True):
        assert a.matched == b.matched, label
        assert abs(a.score - b.score) <= 1e-9, (label, a.score, b.score)


async def test_hybrid_message_search_matches_sqlite(
    store_factory: StoreFactory, pg_store: PostgresStore
) -> None:
    """Every query ranks the same messages with the same scores on both backends."""
    lite_store: MemoryStore = await store_factory(model=MODEL)
    lite = ConversationLog(lite_store)
    pg = conversation_log(pg_store)
    lite_ids = await _fill(lite)
    pg_ids = await _fill(pg)
    ids = dict(zip(lite_ids, pg_ids, strict=True))
    scope_of = {pg_id: PEOPLE[n // TURNS] for n, pg_id in enumerate(pg_ids)}
    rng = np.random.default_rng(26)
    matrix = rng.standard_normal((len(lite_ids), DIM)).astype(np.float32)
    lite_jobs, pg_jobs = SqliteJobs(lite_store), pg_store.embedding_jobs("ha-test")
    # Tool-less user and assistant turns all get a vector, all but the last
    # few, then some are replaced (a re-embedding): a new place in the order.
    first = {i: matrix[n] for n, i in enumerate(lite_ids[:-6])}
    assert await lite_jobs.store_message_vectors(MODEL, first, 0.0) == sorted(first)
    stored = await pg_jobs.store_message_vectors(
        MODEL, {ids[i]: v for i, v in first.items()}, 0.0
    )
    assert stored == sorted(ids[i] for i in first)
    again = {lite_ids[n]: -matrix[n] for n in (2, 40, 77)}
    await lite_jobs.store_message_vectors(MODEL, again, 1.0)
    await pg_jobs.store_message_vectors(
        MODEL, {ids[i]: v for i, v in again.items()}, 1.0
    )

    queries: list[tuple[str, Any]] = [
        (text, matrix[n] + rng.standard_normal(DIM).astype(np.float32) * 0.3)
        for n, text in (
            (5, "garden"),
            (33, "garden roses"),
            (61, "kitchen window"),
            (70, "boiler"),
            (12, "nothing like it"),
            (40, ""),
            (2, "*"),
        )
    ]
    queries += [("garden hedge", None), ("ladder", np.ones(DIM + 2))]
    checked = 0
    for text, vector in queries:
        for scopes in SCOPE_SETS:
            for since, limit, floor in (
                (None, 10, 0.0),
                (T0 + timedelta(minutes=45), 5, 0.0),
                (None, 50, 0.3),
            ):
                query = MessageQuery(
                    text=text,
                    vector=vector,
                    scopes=scopes,
                    since=since,
                    limit=limit,
                    min_score=floor,
                )
                label = f"{text!r} {scopes} {since} {limit}"
                pg_hits = await pg.search(query)
                _same(await lite.search(query), pg_hits, ids, label)
                if scopes is not None:
                    assert {scope_of[h.message.id] for h in pg_hits} <= set(scopes)
                checked += len(pg_hits)
    assert checked > 500  # the queries found something to compare
