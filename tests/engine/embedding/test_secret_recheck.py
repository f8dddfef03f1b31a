"""Vectors made before the detector knew a secret are made again, once.

A store written before this detector embedded "Der Garagencode ist 4512"
whole (the detector of its day found nothing to redact): its job is ready
with the hash of the unredacted text. The pass finds it, queues it again,
and the embedding worker sends the redacted text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from custom_components.memory.engine import HOUSEHOLD, ConversationLog, MemoryStore
from custom_components.memory.engine.conversations.records import (
    ConversationInfo,
    MessageRole,
    NewMessage,
)
from custom_components.memory.engine.embedding.jobs import text_hash
from custom_components.memory.engine.embedding.providers import OllamaProvider
from custom_components.memory.engine.embedding.secret_recheck import (
    VERSION_SETTING,
    due,
    prepare,
    recheck,
    write,
)
from custom_components.memory.engine.privacy.secrets import DETECTOR_VERSION, redacted
from custom_components.memory.engine.store.schema import SCHEMA_VERSION
from tests.engine.conftest import (
    PROVIDER_MODEL,
    FakeClock,
    StoreFactory,
    make_queue,
    memory,
    run_until_idle,
)
from tests.engine.store.test_migrations import build_database
from tests.provider_servers import FakeEmbeddingServer, fake_vector

MODEL = PROVIDER_MODEL
T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
GARAGE = "Der Garagencode ist 4512"
DOOR = "Ovikoodi on 4512, muista se"


async def _job(
    store: MemoryStore, table: str, key: str, row_id: int
) -> tuple[str, bytes]:
    rows = await store.reader.execute_fetchall(
        f"SELECT state, text_hash FROM {table} WHERE {key} = ? AND model = ?",  # noqa: S608
        (row_id, MODEL),
    )
    [(state, digest)] = list(rows)
    return str(state), bytes(digest)


async def _as_before(store: MemoryStore, memory_id: int, message_id: int) -> None:
    """Leave the two rows as the detector of their day did: embedded whole."""
    await store.set_vectors({memory_id: fake_vector(GARAGE, 32)})
    async with store.transaction() as conn:
        await conn.execute(
            "UPDATE embedding_jobs SET text_hash = ? WHERE memory_id = ?",
            (text_hash(GARAGE), memory_id),
        )
        await conn.execute(
            "UPDATE message_embeddings SET vector = ? WHERE message_id = ?",
            (np.asarray(fake_vector(DOOR, 32), dtype=np.float32).tobytes(), message_id),
        )
        await conn.execute(
            "UPDATE message_embedding_jobs SET text_hash = ? WHERE message_id = ?",
            (text_hash(DOOR), message_id),
        )
        # As the migration leaves it: nothing checked yet.
        await conn.execute("DELETE FROM store_settings")


async def _save(log: ConversationLog, texts: Sequence[str]) -> list[int]:
    [key] = await log.save(
        [
            (
                None,
                ConversationInfo(conversation_id="c", started_at=T0, scope=HOUSEHOLD),
                [
                    NewMessage(role=MessageRole.USER, content=text, created_at=T0)
                    for text in texts
                ],
            )
        ]
    )
    return [message.id for message in await log.messages(key)]


async def test_rows_embedded_whole_are_embedded_again_redacted(
    store_factory: StoreFactory,
    provider: OllamaProvider,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Only the rows whose sent text changed go back; once; after a restart too."""
    store = await store_factory(model=MODEL)
    garage = (await store.add(memory(GARAGE))).item.id
    nuts = (await store.add(memory("Mia is allergic to nuts"))).item.id
    # The detector of its day redacted this one already: its vector stands.
    gate = (await store.add(memory("The gate code is 7731"))).item.id
    door, kitchen = await _save(
        ConversationLog(store), [DOOR, "Turn on the kitchen light please"]
    )
    queue = make_queue(store, provider, clock)
    await queue.start()
    await run_until_idle(queue)
    await _as_before(store, garage, door)
    before = {
        row_id: await _job(store, "embedding_jobs", "memory_id", row_id)
        for row_id in (nuts, gate)
    }

    assert await due(store.reader)
    assert await recheck(store, limit=2) == 2  # two memories
    # A restart in between: the pass goes on where it stopped.
    await store.close()
    store = await store_factory(model=MODEL)
    assert await recheck(store, limit=2) == 1  # the last memory
    assert await recheck(store, limit=2) == 2  # both messages
    assert await recheck(store, limit=2) == 0  # done, and recorded
    assert not await due(store.reader)
    rows = await store.reader.execute_fetchall(
        "SELECT value FROM store_settings WHERE name = ?", (VERSION_SETTING,)
    )
    assert [tuple(row) for row in rows] == [(DETECTOR_VERSION,)]

    assert (await _job(store, "embedding_jobs", "memory_id", garage))[0] == "pending"
    assert (await _job(store, "message_embedding_jobs", "message_id", door))[0] == (
        "pending"
    )
    assert (await _job(store, "message_embedding_jobs", "message_id", kitchen))[0] == (
        "ready"
    )
    for row_id, job in before.items():
        assert await _job(store, "embedding_jobs", "memory_id", row_id) == job
    # The old vector serves until the new one is made.
    old = (await store.stored_vectors([garage]))[garage]
    assert np.allclose(old, fake_vector(GARAGE, 32), atol=1e-6)

    embedding_server.received.clear()
    queue = make_queue(store, provider, clock)
    await queue.start()
    await run_until_idle(queue)
    assert embedding_server.received == [redacted(GARAGE), redacted(DOOR)]
    assert redacted(GARAGE) == "Der Garagencode ist [redacted]"
    assert await _job(store, "embedding_jobs", "memory_id", garage) == (
        "ready",
        text_hash(redacted(GARAGE)),
    )
    new = (await store.stored_vectors([garage]))[garage]
    assert np.allclose(new, fake_vector(redacted(GARAGE), 32), atol=1e-6)

    # Once: the next start reads nothing.
    await store.close()
    store = await store_factory(model=MODEL)
    assert await recheck(store) == 0
    assert await prepare(store.reader) is None


async def test_a_job_embedded_meanwhile_is_left_alone(
    store_factory: StoreFactory,
    provider: OllamaProvider,
    clock: FakeClock,
) -> None:
    """Between the check and the write, the worker made the vector anew."""
    store = await store_factory(model=MODEL)
    garage = (await store.add(memory(GARAGE))).item.id
    queue = make_queue(store, provider, clock)
    await queue.start()
    await run_until_idle(queue)
    async with store.transaction() as conn:
        await conn.execute(
            "UPDATE embedding_jobs SET text_hash = ? WHERE memory_id = ?",
            (text_hash(GARAGE), garage),
        )
        await conn.execute("DELETE FROM store_settings")

    batch = await prepare(store.reader)
    assert batch is not None
    assert [row_id for row_id, _model, _old in batch.stale] == [garage]
    async with store.transaction() as conn:
        await conn.execute(
            "UPDATE embedding_jobs SET text_hash = ? WHERE memory_id = ?",
            (text_hash(redacted(GARAGE)), garage),
        )
    async with store.transaction() as conn:
        await write(conn, batch)
    assert await _job(store, "embedding_jobs", "memory_id", garage) == (
        "ready",
        text_hash(redacted(GARAGE)),
    )


async def test_an_empty_store_has_nothing_to_check(store_factory: StoreFactory) -> None:
    """A new store starts checked: its first start writes nothing."""
    store = await store_factory(model=MODEL)
    assert not await due(store.reader)
    assert await recheck(store) == 0


async def test_an_older_store_with_rows_is_checked_once(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """Migrated with rows: checked, each batch after the last id, then recorded."""
    build_database(db_path, SCHEMA_VERSION - 1)  # three memories
    store = await store_factory(model=MODEL)
    assert await due(store.reader)
    assert await recheck(store, limit=2) == 2
    assert await recheck(store, limit=2) == 1
    assert await recheck(store, limit=2) == 0
    assert not await due(store.reader)
