"""Message vectors on either backend: embedded by the queue, searched by meaning.

`backend` is a real `MemoryStore` or a real `PostgresStore` on a fresh
database, the provider a real Ollama-speaking server
(`tests/provider_servers.py`), the log `conversation_log(store)`. On each:
user and assistant messages get vectors (`message_embeddings`,
`message_vectors`) and tool results and "OK." do not; a question sharing no
word with a message finds it by meaning; a person's query never finds
another person's message by its vector; an erased message's vector goes
with it; a text embedded once as a memory costs no call as a message; a
vector of another length is refused. On PostgreSQL alone: the schema step
is idempotent; the HNSW index of a model's message vectors is built at the
threshold, used by the planner, and keeps the exact top-k; a copy back to
SQLite leaves out what SQLite cannot hold (a model's message vectors of
another length than its memories'); a message vector made from a secret
is made again redacted after the recheck; a search cancelled while its
keywords wait leaves no vector read running.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    MemoryStore,
    MessageQuery,
    MessageRole,
    NewMessage,
    Signal,
)
from custom_components.memory.engine.embedding import EmbeddingQueue
from custom_components.memory.engine.embedding.job_store import job_store
from custom_components.memory.engine.embedding.jobs import text_hash
from custom_components.memory.engine.embedding.providers import (
    DimensionChangedError,
    OllamaProvider,
)
from custom_components.memory.engine.embedding.secret_recheck import recheck
from custom_components.memory.engine.postgres import (
    AnyConversationLog,
    PostgresConversationLog,
    PostgresStore,
    conversation_log,
    migrate,
    postgres_to_sqlite,
)
from custom_components.memory.engine.postgres.hnsw_builds import wait_builds
from custom_components.memory.engine.postgres.message_vectors import (
    MESSAGE_VECTORS_STEP,
    PgMessageVectors,
    index_name,
)
from custom_components.memory.engine.privacy import redacted
from tests.engine.conftest import PROVIDER_MODEL, FakeClock, memory, run_until_idle, sql
from tests.engine.postgres.stores import Store
from tests.postgres_server import START_TIMEOUT
from tests.provider_servers import FakeEmbeddingServer, fake_vector

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT * 4),
]

MODEL = PROVIDER_MODEL
DIM = 32
T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
ANNA = "person.anna"
BEN = "person.ben"
QUESTION = "peanut allergy"  # no word (or stem) of "Mia is allergic to nuts"


@pytest.fixture
def backend(provider_store: Store) -> Store:
    """Give a store of each backend in turn, filing vectors under the provider's model."""
    return provider_store


def _queue(store: Store, provider: OllamaProvider, clock: FakeClock) -> EmbeddingQueue:
    return EmbeddingQueue(store, provider, MODEL, clock=clock, dimensions=DIM)


def said(
    content: str,
    role: MessageRole = MessageRole.USER,
    *,
    scope: str = HOUSEHOLD,
    minutes: float = 0,
) -> NewMessage:
    """Make a message said `minutes` after T0."""
    return NewMessage(
        role=role,
        content=content,
        created_at=T0 + timedelta(minutes=minutes),
        scope=scope,
    )


async def save(
    log: AnyConversationLog,
    messages: Sequence[NewMessage],
    scope: str = HOUSEHOLD,
    conversation: str = "c",
) -> list[int]:
    """Save one new conversation; return its messages' ids, in order."""
    info = ConversationInfo(conversation_id=conversation, started_at=T0, scope=scope)
    [key] = await log.save([(None, info, messages)])
    return [message.id for message in await log.messages(key)]


async def search(
    log: AnyConversationLog,
    queue: EmbeddingQueue | None,
    text: str,
    scopes: tuple[str, ...] | None = None,
    limit: int = 10,
) -> list[tuple[int, tuple[Signal, ...]]]:
    """Search the log as `memory.search` does; return ids and signals."""
    vector = None if queue is None else await queue.query_vector(text, messages=True)
    hits = await log.search(
        MessageQuery(text=text, vector=vector, scopes=scopes, limit=limit)
    )
    return [(hit.message.id, hit.matched) for hit in hits]


async def embedded(store: Store) -> set[int]:
    """Return the ids of the messages holding a vector of the model."""
    if isinstance(store, MemoryStore):
        rows = await store.reader.execute_fetchall(
            "SELECT message_id FROM message_embeddings WHERE model = ?", (MODEL,)
        )
        return {int(row[0]) for row in rows}
    async with store.pool.acquire() as connection:
        records = await connection.fetch(
            "SELECT message_id FROM message_vectors WHERE model = $1", MODEL
        )
    return {int(record[0]) for record in records}


async def test_messages_are_embedded_and_found_by_meaning(
    backend: Store,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """User and assistant messages get vectors and are found by meaning, in scope."""
    log = conversation_log(backend)
    queue = _queue(backend, provider, clock)
    assert await queue.start() == 0
    nuts, reply, tool, short, bins = await save(
        log,
        [
            said("Mia is allergic to nuts", scope=ANNA),
            said("I will keep that in mind", MessageRole.ASSISTANT, scope=ANNA),
            said('{"kitchen lights": "on"}', MessageRole.TOOL_RESULT, scope=ANNA),
            said("  OK.  ", MessageRole.ASSISTANT, scope=ANNA, minutes=0.3),
            said("The bins go out on Thursday", scope=ANNA, minutes=1),
        ],
        scope=ANNA,
    )
    [bens] = await save(log, [said("Ben is allergic to nuts too", scope=BEN)], BEN, "b")
    assert await run_until_idle(queue, steps=1000) is None
    status = await queue.status()
    assert (status.messages_ready, status.messages_pending) == (4, 0)
    assert embedding_server.embedded == 4
    assert await embedded(backend) == {nuts, reply, bins, bens}

    # No shared word: keywords find nothing, the vector finds it.
    assert await search(log, None, QUESTION) == []
    assert await search(log, queue, QUESTION, limit=1) in (
        [(nuts, (Signal.SEMANTIC,))],
        [(bens, (Signal.SEMANTIC,))],
    )
    # A person's query never reaches another person's message by meaning.
    for scopes, own in (((ANNA, HOUSEHOLD), nuts), ((BEN, HOUSEHOLD), bens)):
        found = await search(log, queue, QUESTION, scopes=scopes)
        assert found[0] == (own, (Signal.SEMANTIC,))
        assert {nuts, bens} - {own} & {item_id for item_id, _s in found} == set()
    hits = await log.search(
        MessageQuery(
            text="rubbish bins",
            vector=await queue.query_vector("rubbish bins", messages=True),
        )
    )
    assert hits[0].message.id == bins
    assert hits[0].matched == (Signal.KEYWORD, Signal.SEMANTIC)
    assert hits[0].score == pytest.approx(1.0)
    # Tool results stay keyword-searchable.
    assert [h.message.id for h in await log.search(MessageQuery(text="kitchen"))] == [
        tool
    ]
    assert short not in await embedded(backend)

    # An erased message takes its vector along.
    await log.purge([nuts])
    assert await embedded(backend) == {reply, bins, bens}
    assert await search(log, queue, QUESTION, scopes=(ANNA,)) != [
        (nuts, (Signal.SEMANTIC,))
    ]


async def test_the_cache_spans_memories_and_messages(
    backend: Store,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A message repeating an embedded memory, and the other way round: no call."""
    log = conversation_log(backend)
    queue = _queue(backend, provider, clock)
    await queue.start()
    await backend.add(memory("Mia is allergic to nuts"))
    await run_until_idle(queue, steps=1000)
    assert embedding_server.embedded == 1
    first, second = await save(
        log, [said("Mia is allergic to nuts"), said(" Mia is allergic to nuts\n")]
    )
    await run_until_idle(queue, steps=1000)
    assert embedding_server.embedded == 1
    assert await embedded(backend) == {first, second}

    await save(log, [said("The guest room stays at 19 degrees")], conversation="d")
    await run_until_idle(queue, steps=1000)
    calls = embedding_server.embedded
    await backend.add(memory("The guest room stays at 19 degrees"))
    await run_until_idle(queue, steps=1000)
    assert embedding_server.embedded == calls
    assert (await queue.status()).ready == 2


async def test_a_vector_of_another_length_is_refused(
    backend: Store, provider: OllamaProvider, clock: FakeClock
) -> None:
    """The model's length is kept: another is an error, and nothing is written."""
    log = conversation_log(backend)
    one, two = await save(
        log, [said("Mia is allergic to nuts"), said("The bins go out on Thursday")]
    )
    jobs = job_store(backend, "ha-test")
    assert await jobs.model_dimensions(MODEL) is None
    vector = np.ones(DIM, dtype=np.float32)
    assert await jobs.store_message_vectors(MODEL, {one: vector}, 0.0) == [one]
    assert await jobs.model_dimensions(MODEL) == DIM
    refused = await jobs.store_message_vectors(
        MODEL, {two: np.ones(DIM + 1, dtype=np.float32)}, 0.0
    )
    assert isinstance(refused, DimensionChangedError)
    assert refused.placeholders == {"expected": str(DIM), "got": str(DIM + 1)}
    # A message gone meanwhile is left out.
    await log.purge([two])
    assert await jobs.store_message_vectors(MODEL, {two: vector}, 0.0) == []
    assert await embedded(backend) == {one}


@pytest.mark.parametrize("backend_url", ["postgres"], indirect=True)
async def test_the_schema_step_is_idempotent(backend: Store) -> None:
    """The step runs again harmlessly; a new database is at its version."""
    assert isinstance(backend, PostgresStore)
    async with backend.pool.acquire() as connection:
        assert await migrate(connection) == 7
        async with connection.transaction():
            for statement in MESSAGE_VECTORS_STEP:
                await connection.execute(statement)
        assert await connection.fetchval("SELECT count(*) FROM message_vectors") == 0


@pytest.mark.parametrize("backend_url", ["postgres"], indirect=True)
async def test_hnsw_above_the_threshold(backend: Store) -> None:
    """At the threshold the model's index is built and used; the top-k stays exact."""
    assert isinstance(backend, PostgresStore)
    log = conversation_log(backend)
    assert isinstance(log, PostgresConversationLog)
    rows = 2000
    ids = await save(log, [said(f"message {i}") for i in range(rows)])
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((rows, 16)).astype(np.float32)
    jobs = job_store(backend, "ha-test")
    assert await jobs.store_message_vectors(
        MODEL, {item_id: matrix[n] for n, item_id in enumerate(ids)}, 0.0
    ) == sorted(ids)
    vectors = PgMessageVectors(backend.pool, MODEL, threshold=rows, ef_search=100)
    other = PgMessageVectors(backend.pool, "another model", threshold=1)
    assert not await other.maybe_build()  # no vector of its own
    query = (matrix[3] / np.linalg.norm(matrix[3])).astype(np.float32)
    exact = await vectors.knn(query, 10)
    units = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    cosines = units @ query
    # The semantic pool: 200 proposed of 2000, scored exactly...
    pool = await vectors.semantic_pool(query, ("true", []), 50)
    best = sorted(range(rows), key=lambda n: (-cosines[n], ids[n]))
    assert [item_id for item_id, _c in pool] == [ids[n] for n in best[:50]]
    # ...and a selective filter's whole subset, when it keeps too few of them.
    subset = ids[1500:1530]
    where = ("m.id = ANY($2::int8[])", [subset])
    pool = await vectors.semantic_pool(query, where, 50)
    assert sorted(item_id for item_id, _c in pool) == sorted(subset)
    assert [c for _i, c in pool] == sorted((c for _i, c in pool), reverse=True)
    assert not await vectors.has_hnsw()  # the queue built none: 2000 < 20000
    assert index_name(MODEL) not in str(await vectors.knn(query, 10, explain=True))
    assert await vectors.maybe_build()  # started in the background
    assert not await vectors.maybe_build()  # once
    await wait_builds(backend.pool)
    assert await vectors.has_hnsw()
    assert not await vectors.maybe_build()  # built
    assert index_name(MODEL) in str(await vectors.knn(query, 10, explain=True))
    found = await vectors.knn(query, 10)
    assert isinstance(found, list)
    assert isinstance(exact, list)
    assert found[0][0] == ids[3]
    assert len({i for i, _c in found} & {i for i, _c in exact}) >= 9
    # Beyond ef_search the iterative scan still gives k rows.
    assert len(await vectors.knn(query, 1200)) == 1200


@pytest.mark.parametrize("backend_url", ["postgres"], indirect=True)
async def test_back_to_sqlite_leaves_out_a_dimension_sqlite_cannot_hold(
    backend: Store, tmp_path: Path, clock: FakeClock
) -> None:
    """A model's message vectors of another length than its memories' stay behind.

    SQLite keeps one dimension a model: they are reported skipped and their
    ready jobs go back to pending; another model's travel, with its row in
    `embedding_models`.
    """
    assert isinstance(backend, PostgresStore)
    log = conversation_log(backend)
    [one] = await save(log, [said("Mia is allergic to nuts")])
    jobs = job_store(backend, "ha-test")
    # The message vectors came first, then memories of the same model at 16.
    assert await jobs.store_message_vectors(
        MODEL, {one: np.ones(8, dtype=np.float32)}, 0.0
    ) == [one]
    assert await jobs.store_message_vectors(
        "other", {one: np.ones(4, dtype=np.float32)}, 0.0
    ) == [one]
    await backend.add(memory("The bins go out on Thursday"), vector=np.ones(16))
    async with backend.pool.acquire() as connection:
        await connection.execute(
            "INSERT INTO message_embedding_jobs (message_id, model, text_hash, "
            "state, updated_at) VALUES ($1, $2, $3, 'ready', 0)",
            one,
            MODEL,
            b"\0" * 32,
        )

    back = tmp_path / "back.db"
    report = await postgres_to_sqlite(backend.pool, back, clock=clock)

    assert report.skipped == {"digest_claims": 0, f"message_vectors:{MODEL}": 1}
    assert report.reset_jobs == {"message_embedding_jobs": 1}
    assert report.tables["message_embeddings"].written == 1
    assert sql(back, "SELECT model, message_id FROM message_embeddings") == [
        ("other", one)
    ]
    assert set(sql(back, "SELECT model, dim FROM embedding_models")) == {
        ("other", 4),
        (MODEL, 16),
    }
    assert sql(back, "SELECT state FROM message_embedding_jobs") == [("pending",)]


@pytest.mark.parametrize("backend_url", ["postgres"], indirect=True)
async def test_a_message_vector_made_from_a_secret_is_made_again_redacted(
    backend: Store,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """The recheck puts back a message job whose text went whole; it goes redacted."""
    assert isinstance(backend, PostgresStore)
    door = "The door code is 4512"
    log = conversation_log(backend)
    queue = _queue(backend, provider, clock)
    await queue.start()
    [message] = await save(log, [said(door)])
    assert await run_until_idle(queue, steps=1000) is None
    while await recheck(backend):
        pass
    # As the detector of its day left it: embedded whole, nothing checked yet.
    async with backend.pool.acquire() as connection:
        await connection.execute(
            "UPDATE message_embedding_jobs SET text_hash = $1 WHERE message_id = $2",
            text_hash(door),
            message,
        )
        await connection.execute("DELETE FROM store_settings")
    assert await recheck(backend) == 1
    status = await queue.status()
    assert (status.messages_pending, status.messages_ready) == (1, 0)

    embedding_server.received.clear()
    assert await run_until_idle(queue, steps=1000) is None
    assert embedding_server.received == [redacted(door)]
    assert (await queue.status()).messages_ready == 1
    async with backend.pool.acquire() as connection:
        stored = await connection.fetchval(
            "SELECT embedding FROM message_vectors WHERE message_id = $1", message
        )
    expected = np.asarray(fake_vector(redacted(door), DIM), dtype=np.float32)
    np.testing.assert_allclose(stored, expected / np.linalg.norm(expected), atol=1e-6)


@pytest.mark.parametrize("backend_url", ["postgres"], indirect=True)
async def test_a_search_cancelled_midway_leaves_nothing_running(
    backend: Store,
) -> None:
    """Cancelled while its keywords wait on a lock: the vector side goes too.

    Both connections are back in the pool, and the next search answers.
    """
    assert isinstance(backend, PostgresStore)
    log = conversation_log(backend)
    [one] = await save(log, [said("Mia is allergic to nuts")])
    jobs = job_store(backend, "ha-test")
    vector = np.ones(DIM, dtype=np.float32)
    assert await jobs.store_message_vectors(MODEL, {one: vector}, 0.0) == [one]
    query = MessageQuery(text="nuts", vector=vector)
    idle = backend.pool.get_idle_size()
    async with backend.pool.acquire() as blocker, blocker.transaction():
        await blocker.execute(
            "LOCK TABLE message_terms, message_term_totals IN ACCESS EXCLUSIVE MODE"
        )
        search = asyncio.create_task(log.search(query))
        await asyncio.sleep(0.5)  # the vector side done, the keywords waiting
        assert not search.done()
        search.cancel()
        with pytest.raises(asyncio.CancelledError):
            await search
    assert backend.pool.get_idle_size() >= idle
    hits = await log.search(query)
    assert [hit.message.id for hit in hits] == [one]
