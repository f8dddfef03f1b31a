"""Conversation messages embedded by the queue and searched by meaning.

Real SQLite and a real local HTTP server speaking Ollama's API
(`tests/provider_servers.py`), whose vectors put related words ("allergic",
"peanuts", ...) close together while keyword search cannot link them.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
import sqlite3

import aiohttp
import numpy as np
import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    DatabaseUnavailableError,
    MemoryStore,
    MessageQuery,
    MessageRole,
    NewMessage,
    Signal,
)
from custom_components.memory.engine.conversations.records import (
    EMBEDDED_MAX_CHARS,
    MIN_EMBEDDED_CHARS,
    embedding_text,
)
from custom_components.memory.engine.embedding.jobs import (
    MAX_ATTEMPTS,
    MESSAGES,
    text_hash,
)
from custom_components.memory.engine.embedding.providers import (
    OllamaProvider,
    model_key,
)
from custom_components.memory.engine.embedding.queue import EmbeddingQueue
from custom_components.memory.engine.sql import read_one
from custom_components.memory.engine.store.schema import MIGRATIONS, SCHEMA_VERSION
from tests.engine.conftest import (
    PROVIDER_MODEL,
    FakeClock,
    StoreFactory,
    fresh_bool,
    make_queue,
    memory,
    run_until_idle,
)
from tests.provider_servers import FakeEmbeddingServer

MODEL = PROVIDER_MODEL
OTHER_MODEL = model_key("ollama", "nomic-embed-text:latest", 32)
T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
ANNA = "person.anna"
BEN = "person.ben"
# "peanut allergy" shares no word (or stem) with "Mia is allergic to nuts".
QUESTION = "peanut allergy"


@pytest.fixture
async def store(store_factory: StoreFactory) -> MemoryStore:
    """Open a store that files vectors under the provider's model."""
    return await store_factory(model=MODEL)


@pytest.fixture
def log(store: MemoryStore) -> ConversationLog:
    """Make the conversation log on the test's store."""
    return ConversationLog(store)


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
    log: ConversationLog, messages: Sequence[NewMessage], scope: str = HOUSEHOLD
) -> list[int]:
    """Save one new conversation; return its messages' ids, in order."""
    [key] = await log.save(
        [
            (
                None,
                ConversationInfo(conversation_id="c", started_at=T0, scope=scope),
                messages,
            )
        ]
    )
    return [message.id for message in await log.messages(key)]


async def search(
    log: ConversationLog,
    queue: EmbeddingQueue | None,
    text: str,
    scopes: tuple[str, ...] | None = None,
    **kwargs: object,
) -> list[tuple[int, tuple[Signal, ...]]]:
    """Search the log as `memory.search` does; return ids and signals."""
    vector = None if queue is None else await queue.query_vector(text, messages=True)
    hits = await log.search(
        MessageQuery(text=text, vector=vector, scopes=scopes, **kwargs)  # type: ignore[arg-type]
    )
    return [(hit.message.id, hit.matched) for hit in hits]


def count(path: Path, table: str) -> int:
    """Rows of a table, read with a separate plain sqlite3 connection."""
    with closing(sqlite3.connect(path)) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # noqa: S608
    return int(row[0])


def test_what_is_embedded() -> None:
    """Trimmed text, cut to a memory's length; the cache hashes exactly that."""
    assert embedding_text("  Mia is allergic to nuts \n") == "Mia is allergic to nuts"
    assert len(embedding_text("word " * 1000)) == EMBEDDED_MAX_CHARS
    assert len("Thank you!") < MIN_EMBEDDED_CHARS


async def test_messages_are_embedded_and_found_by_meaning(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """User and assistant messages get vectors; tool results and "OK." do not."""
    queue = make_queue(store, provider, clock)
    assert await queue.start() == 0
    assert not queue.messages_rebuilding
    nuts, reply, tool, short, bins = await save(
        log,
        [
            said("Mia is allergic to nuts"),
            said(
                "I will keep that in mind for the shopping",
                MessageRole.ASSISTANT,
                minutes=0.1,
            ),
            said(
                '{"kitchen lights": "on", "brightness": 80}',
                MessageRole.TOOL_RESULT,
                minutes=0.2,
            ),
            said("  OK.  ", MessageRole.ASSISTANT, minutes=0.3),
            said("The bins go out on Thursday", minutes=1),
        ],
    )
    assert await run_until_idle(queue, steps=1000) is None
    status = await queue.status()
    assert (status.messages_ready, status.messages_pending) == (3, 0)
    # No memory at all: progress counts the messages, all done.
    assert (status.total, status.messages_total, status.progress) == (0, 3, 100.0)
    assert embedding_server.embedded == 3
    with closing(sqlite3.connect(store.path)) as conn:
        embedded = {
            row[0] for row in conn.execute("SELECT message_id FROM message_embeddings")
        }
    assert embedded == {nuts, reply, bins}

    # No shared word: keyword search finds nothing, the vector finds it.
    assert await search(log, None, QUESTION) == []
    found = await search(log, queue, QUESTION, limit=1)
    assert found == [(nuts, (Signal.SEMANTIC,))]
    # Both signals, reported per hit, fused like memories (first on both: 1).
    hits = await log.search(
        MessageQuery(
            text="rubbish bins",
            vector=await queue.query_vector("rubbish bins", messages=True),
        )
    )
    assert hits[0].message.id == bins
    assert hits[0].matched == (Signal.KEYWORD, Signal.SEMANTIC)
    assert hits[0].score == pytest.approx(1.0)
    assert hits[0].as_dict()["matched"] == ["keyword", "semantic"]
    # Tool results stay keyword-searchable.
    assert [
        hit.message.id for hit in await log.search(MessageQuery(text="kitchen"))
    ] == [tool]
    assert short not in embedded
    assert log.index_bytes > 0


async def test_memories_go_first(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A memory added behind a backlog of messages waits one batch at most."""
    queue = make_queue(store, provider, clock, batch_size=4)
    await queue.start()
    await save(
        log, [said(f"old message number {i} about the garden") for i in range(40)]
    )
    assert await queue.run_once() == 0  # one batch of old messages
    item = (await store.add(memory("Mia is allergic to nuts"))).item.id
    assert await queue.run_once() == 0
    status = await queue.status()
    assert (status.ready, status.pending) == (1, 0)
    assert status.messages_ready == 4
    assert status.messages_pending == 36
    # The memories are done, yet progress counts the messages waiting too.
    assert status.progress == round(100 * 5 / 41, 1)
    assert embedding_server.texts == [4, 1]
    with closing(sqlite3.connect(store.path)) as conn:
        assert conn.execute("SELECT memory_id FROM embeddings").fetchall() == [(item,)]
    await run_until_idle(queue, steps=1000)
    assert (await queue.status()).messages_ready == 40


async def test_cache_spans_memories_and_messages(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A message that repeats an embedded text costs no provider call."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    await store.add(memory("Mia is allergic to nuts"))
    await run_until_idle(queue, steps=1000)
    assert embedding_server.embedded == 1

    first, second = await save(
        log,
        [
            said("Mia is allergic to nuts"),
            said("  Mia is allergic to nuts\n", minutes=1),
        ],
    )
    await run_until_idle(queue, steps=1000)
    assert embedding_server.embedded == 1
    assert (await queue.status()).messages_ready == 2
    found = await search(log, queue, QUESTION)
    assert {item_id for item_id, _signals in found[:2]} == {first, second}

    # And the other way round: a memory that repeats a message.
    await save(log, [said("The guest room stays at 19 degrees")])
    await run_until_idle(queue, steps=1000)
    calls = embedding_server.embedded
    await store.add(memory("The guest room stays at 19 degrees"))
    await run_until_idle(queue, steps=1000)
    assert embedding_server.embedded == calls


async def test_existing_messages_are_a_rebuild(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Messages kept before a model: message search is keyword-only until done.

    Memory search is not held back by it: its collection is complete.
    """
    await store.add(memory("The boiler was serviced in March"))
    [nuts] = await save(log, [said("Mia is allergic to nuts")])
    queue = make_queue(store, provider, clock, batch_size=1)
    assert await queue.start() == 2
    assert queue.rebuilding
    assert queue.messages_rebuilding
    assert await queue.query_vector(QUESTION, messages=True) is None
    assert await queue.run_once() == 0  # the memory
    assert not fresh_bool(queue.rebuilding)
    assert fresh_bool(queue.messages_rebuilding)
    assert await queue.query_vector(QUESTION) is not None
    assert await queue.query_vector(QUESTION, messages=True) is None
    assert await search(log, queue, QUESTION) == []

    assert await run_until_idle(queue, steps=1000) is None
    assert not fresh_bool(queue.messages_rebuilding)
    assert (await queue.status()).messages_rebuilding is False
    assert await search(log, queue, QUESTION) == [(nuts, (Signal.SEMANTIC,))]


async def test_model_switch_re_embeds_messages(
    store_factory: StoreFactory,
    provider: OllamaProvider,
    session: aiohttp.ClientSession,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Another model rebuilds the messages; until then its searches use keywords."""
    store = await store_factory(model=MODEL)
    log = ConversationLog(store)
    queue = make_queue(store, provider, clock)
    await queue.start()
    [nuts] = await save(log, [said("Mia is allergic to nuts")])
    await run_until_idle(queue, steps=1000)
    await store.close()

    switched = await store_factory(model=OTHER_MODEL)
    other = OllamaProvider(
        session, model="nomic-embed-text:latest", url=embedding_server.url
    )
    log = ConversationLog(switched)
    queue = make_queue(switched, other, clock, model=OTHER_MODEL)
    assert await queue.start() == 1
    assert queue.messages_rebuilding
    assert await search(log, queue, QUESTION) == []
    calls = embedding_server.embedded
    await run_until_idle(queue, steps=1000)
    assert embedding_server.embedded == calls + 1  # another model: embedded anew
    assert await search(log, queue, QUESTION) == [(nuts, (Signal.SEMANTIC,))]
    assert count(switched.path, "message_embeddings") == 2  # one per model


async def test_purge_and_retention_remove_vectors_and_jobs(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
    db_path: Path,
) -> None:
    """Erasing a message erases its vector, job and text hash: no copy is left."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    secret, other = await save(
        log,
        [
            said("The safe code is 4711 behind the painting"),
            said("Mia is allergic to nuts", minutes=1),
        ],
    )
    await run_until_idle(queue, steps=1000)
    assert await search(log, queue, "safe code painting", limit=1) == [
        (secret, (Signal.KEYWORD, Signal.SEMANTIC))
    ]
    vector_bytes = np.frombuffer(
        (await _vector_blob(store, secret)), dtype=np.float32
    ).tobytes()

    assert await log.purge([secret]) == [secret]
    assert count(db_path, "message_embeddings") == 1
    assert count(db_path, "message_embedding_jobs") == 1
    data = db_path.read_bytes()
    assert vector_bytes not in data
    assert (
        text_hash(embedding_text("The safe code is 4711 behind the painting"))
        not in data
    )
    # Gone from the index too: only the other message is left to rank.
    assert await search(log, queue, "safe code painting") == [
        (other, (Signal.SEMANTIC,))
    ]
    # The same text again is embedded anew: nothing of it was cached.
    calls = embedding_server.embedded
    await save(log, [said("The safe code is 4711 behind the painting", minutes=2)])
    await run_until_idle(queue, steps=1000)
    assert embedding_server.embedded == calls + 1

    # Retention: everything before a time, vectors and index entries too.
    assert await log.purge_before(T0 + timedelta(minutes=5)) == 2
    assert count(db_path, "message_embeddings") == 0
    assert count(db_path, "message_embedding_jobs") == 0
    assert await search(log, queue, QUESTION) == []


async def _vector_blob(store: MemoryStore, message_id: int) -> bytes:
    row = await read_one(
        store.reader,
        "SELECT vector FROM message_embeddings WHERE message_id = ?",
        (message_id,),
    )
    assert row is not None
    return bytes(row[0])


async def test_restart_resumes_message_jobs(
    store_factory: StoreFactory,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Pending message jobs are in the database: the next process finishes them."""
    store = await store_factory(model=MODEL)
    queue = make_queue(store, provider, clock, batch_size=2)
    await queue.start()
    await save(
        ConversationLog(store),
        [said(f"message number {n} about the heating") for n in range(4)],
    )
    assert await queue.run_once() == 0
    assert (await queue.status()).messages_pending == 2
    await store.close()

    reopened = await store_factory(model=MODEL)
    resumed = make_queue(reopened, provider, clock, batch_size=2)
    assert await resumed.start() == 0  # queued before: not a rebuild
    assert not resumed.messages_rebuilding
    assert (await resumed.status()).messages_pending == 2
    await run_until_idle(resumed, steps=1000)
    assert (await resumed.status()).messages_ready == 4
    assert embedding_server.texts == [2, 2]


async def test_scopes_hold_on_the_vector_path(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """One person's messages never reach another's search, by meaning either.

    Anna has hundreds of messages closer to the question than Ben's one, so
    the index's candidates are all hers: Ben's search must still find his
    own (a scan of his subset) and none of hers; and the other way round.
    """
    queue = make_queue(store, provider, clock, batch_size=64)
    await queue.start()
    annas = await save(
        log,
        [said(f"Anna is allergic to peanuts {n}", scope=ANNA) for n in range(260)],
        scope=ANNA,
    )
    [bens] = await save(log, [said("Ben is allergic to nuts", scope=BEN)], scope=BEN)
    [household] = await save(log, [said("The bins go out on Thursday")])
    await run_until_idle(queue, steps=1000)
    assert (await queue.status()).messages_ready == 262

    for_ben = await search(log, queue, QUESTION, scopes=(HOUSEHOLD, BEN), limit=50)
    assert for_ben[0][0] == bens
    assert {item_id for item_id, _ in for_ben} <= {bens, household}
    for_anna = await search(log, queue, QUESTION, scopes=(HOUSEHOLD, ANNA), limit=50)
    assert len(for_anna) == 50
    assert {item_id for item_id, _ in for_anna} <= {*annas, household}
    assert bens not in {item_id for item_id, _ in for_anna}
    # A household-only caller sees neither, however close they are.
    household_only = await search(log, queue, QUESTION, scopes=(HOUSEHOLD,))
    assert {item_id for item_id, _ in household_only} <= {household}
    assert await search(log, queue, QUESTION, scopes=()) == []


async def test_provider_down_falls_back_to_keywords(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """No vector, no error: keyword search answers while the provider is away."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    [nuts] = await save(log, [said("Mia is allergic to nuts")])
    await run_until_idle(queue, steps=1000)
    await embedding_server.stop()
    assert await search(log, queue, QUESTION) == []
    assert not queue.breaker.closed
    assert await search(log, queue, "allergic nuts") == [(nuts, (Signal.KEYWORD,))]
    # A vector of another length (not this model's) is ignored, not an error.
    hits = await log.search(
        MessageQuery(text="allergic", vector=np.ones(7, np.float32))
    )
    assert [hit.message.id for hit in hits] == [nuts]


async def test_index_catches_up_and_forgets(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """The in-memory index follows the table: new and replaced vectors, purges."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    assert await search(log, queue, QUESTION) == []  # no model row yet: no index
    assert log.index_bytes == 0
    [nuts] = await save(log, [said("Mia is allergic to nuts")])
    await run_until_idle(queue, steps=1000)
    assert await search(log, queue, QUESTION) == [(nuts, (Signal.SEMANTIC,))]
    [bins] = await save(log, [said("The bins go out on Thursday", minutes=1)])
    await run_until_idle(queue, steps=1000)
    assert (await search(log, queue, "rubbish collection"))[0][0] == bins

    # A job back to pending (a crash between vector and state) is redone from
    # the cache; the replaced row is read again and still found once.
    async with store.transaction() as conn:
        await conn.execute("UPDATE message_embedding_jobs SET state = 'pending'")
    calls = embedding_server.embedded
    await run_until_idle(queue, steps=1000)
    assert embedding_server.embedded == calls
    found = await search(log, queue, QUESTION)
    assert [item_id for item_id, _ in found].count(nuts) == 1


async def test_message_purged_while_embedding(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A message erased between its batch and its vector is simply skipped."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    gone, kept = await save(
        log,
        [
            said("The safe code is 4711 behind the painting"),
            said("Mia is allergic to nuts"),
        ],
    )
    await queue.sync()
    jobs = await queue._due_jobs(MESSAGES)
    assert [job.item_id for job in jobs] == [gone, kept]
    await log.purge([gone])
    await queue._process(MESSAGES, jobs)
    assert count(store.path, "message_embeddings") == 1
    assert (await queue.status()).messages_ready == 1
    assert await search(log, queue, QUESTION) == [(kept, (Signal.SEMANTIC,))]


def _message_step() -> int:
    """Find the migration that adds message vectors (appended, never renumbered)."""
    steps = [
        i
        for i, statements in enumerate(MIGRATIONS)
        if any("CREATE TABLE message_embeddings" in s for s in statements)
    ]
    assert len(steps) == 1
    return steps[0]


async def test_upgrade_embeds_the_kept_messages(
    store_factory: StoreFactory,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
    db_path: Path,
) -> None:
    """A log kept before message vectors existed is embedded after the upgrade."""
    step = _message_step()
    assert step < SCHEMA_VERSION
    with closing(sqlite3.connect(db_path)) as conn:
        for version in range(step):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {step}")
        conn.execute(
            "INSERT INTO conversations (id, conversation_id, scope, started_at, "
            "updated_at) VALUES (1, 'c', 'household', 0, 0)"
        )
        conn.execute(
            "INSERT INTO conversation_messages (conversation, role, content, "
            "scope, created_at) VALUES (1, 'user', 'Mia is allergic to nuts', "
            "'household', 0)"
        )
        conn.commit()
    store = await store_factory(model=MODEL)
    log = ConversationLog(store)
    queue = make_queue(store, provider, clock)
    assert await queue.start() == 1
    assert queue.messages_rebuilding
    assert not queue.rebuilding
    await run_until_idle(queue, steps=1000)
    [(found, signals)] = await search(log, queue, QUESTION)
    assert signals == (Signal.SEMANTIC,)
    assert (await log.get_messages([found]))[found].content == "Mia is allergic to nuts"


async def test_dimension_learned_meanwhile_is_enforced(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Vectors of another length than the model's are reported, never stored."""
    queue = EmbeddingQueue(store, provider, MODEL, clock=clock)  # no dimension
    await queue.start()
    # The database learns 16 dimensions for the model after the queue started
    # (the memory that taught it is gone; the model's row stays).
    item = (
        await store.add(memory("first memory"), vector=np.ones(16, np.float32))
    ).item
    await store.forget([item.id], purge=True)
    await save(log, [said("Mia is allergic to nuts")])
    await queue.run_once()
    error = queue.breaker.last_error
    assert error is not None
    assert error.key == "dimension_changed"
    assert error.placeholders == {"expected": "16", "got": "32"}
    assert count(store.path, "message_embeddings") == 0
    assert (await queue.status()).messages_pending == 1


async def test_keyword_only_store_ignores_vectors(
    store_factory: StoreFactory,
) -> None:
    """Without an embedding model the log searches by keywords, vector or not."""
    store = await store_factory(model=None)
    log = ConversationLog(store)
    [nuts] = await save(log, [said("Mia is allergic to nuts")])
    hits = await log.search(
        MessageQuery(text="allergic", vector=np.ones(32, np.float32))
    )
    assert [(hit.message.id, hit.matched) for hit in hits] == [
        (nuts, (Signal.KEYWORD,))
    ]


async def test_closed_store_raises_without_leaving_a_task(
    log: ConversationLog, store: MemoryStore
) -> None:
    """A failing keyword query cancels the vector scan it started."""
    await store.close()
    with pytest.raises(DatabaseUnavailableError):
        await log.search(MessageQuery(text="nuts", vector=np.ones(32, np.float32)))


async def test_refused_message_backs_off_then_stays_keyword_only(
    log: ConversationLog,
    store: MemoryStore,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A message the provider refuses is retried with backoff, then left alone."""
    queue = make_queue(store, provider, clock)
    await queue.start()
    embedding_server.reject = "REJECT"
    _good, bad = await save(
        log, [said("Mia is allergic to nuts"), said("REJECT this long message")]
    )
    assert await queue.run_once() == 0
    assert queue.breaker.closed  # the provider is fine, the text is not
    for _ in range(MAX_ATTEMPTS + 1):
        delay = await run_until_idle(queue, steps=1000)
        if delay is None:
            break
        clock.advance(delay)
    status = await queue.status()
    assert (status.messages_ready, status.messages_failed) == (1, 1)
    assert status.progress == 100.0  # given up counts as done
    with closing(sqlite3.connect(store.path)) as conn:
        assert conn.execute(
            "SELECT message_id, state, attempts FROM message_embedding_jobs "
            "WHERE state = 'error'"
        ).fetchall() == [(bad, "error", MAX_ATTEMPTS)]
    # Still found, by its words.
    assert (bad, (Signal.KEYWORD,)) in await search(log, queue, "long message")
