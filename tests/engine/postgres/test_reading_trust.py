"""How well the model reads a language, measured by the worker and weighed by search.

On each backend (a real `MemoryStore` or `PostgresStore` on a fresh
database, the provider a real Ollama-speaking server): once the memories
are embedded the worker measures the store's language with the engine's
own pairs (48 texts, kept apart by the server: `probed`) and not again; a
query in another language asks for that one, measured at the next idle
moment; a provider that refuses the measure is asked again READING_RETRY
later. The trust then weighs the vectors in both searches, memories and
messages: a hit found by meaning alone scores less when the model reads
the language badly, and a keyword hit more.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    MessageQuery,
    MessageRole,
    NewMessage,
    SearchQuery,
    Signal,
)
from custom_components.memory.engine.embedding import EmbeddingQueue
from custom_components.memory.engine.embedding.providers import OllamaProvider
from custom_components.memory.engine.embedding.queue import READING_RETRY
from custom_components.memory.engine.languages import PARAPHRASES
from custom_components.memory.engine.postgres import conversation_log
from custom_components.memory.engine.vectors.reading import CANNOT, MIN_TRUST, trust
from tests.engine.conftest import PROVIDER_MODEL, FakeClock, memory, run_until_idle
from tests.engine.postgres.stores import Store
from tests.postgres_server import START_TIMEOUT
from tests.provider_servers import FakeEmbeddingServer

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT * 4),
]

MODEL = PROVIDER_MODEL
T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
DIM = 32
# No word of "Mia is allergic to nuts", which the server's vectors link to it.
QUESTION = "peanut allergy"
FILLER = (
    "The bins go out on Tuesday",
    "Tom likes the living room warm in the evening",
    "The router is in the hallway cupboard",
    "Grandma comes for lunch on Sundays",
    "The car is booked for a service in May",
    "Leo has football training on Thursdays",
    "The window cleaner comes every four weeks",
    "Spare batteries are in the kitchen drawer",
    "The boiler is serviced every September",
)


@pytest.fixture
async def queue(
    provider_store: Store, provider: OllamaProvider, clock: FakeClock
) -> EmbeddingQueue:
    """Start the store's embedding worker on the test clock."""
    worker = EmbeddingQueue(
        provider_store, provider, MODEL, clock=clock, dimensions=DIM
    )
    await worker.start()
    return worker


async def test_the_worker_measures_each_wanted_language_once(
    provider_store: Store, queue: EmbeddingQueue, embedding_server: FakeEmbeddingServer
) -> None:
    """The store's language after its memories; a query's language next; each once."""
    backend = provider_store
    for text in ("Mia is allergic to nuts", *FILLER):
        await backend.add(memory(text))
    assert await run_until_idle(queue) is None
    assert embedding_server.embedded == 10  # the memories; the measure apart
    english = [text for pair in PARAPHRASES["en"] for text in pair]
    assert sorted(embedding_server.probed) == sorted(english)
    (reading,) = backend.readings.measured()
    assert reading.language == "en"
    assert reading.trust == trust(reading.reciprocal_rank)
    assert await run_until_idle(queue) is None
    assert len(embedding_server.probed) == 48  # not measured again
    # Two requests: the questions as queries, the memories as documents.
    assert embedding_server.calls["ollama.embed.reading"] == 2

    # A search in German (its vectors weighed: enough of them for a scale)
    # wants German; the next idle moment measures it.
    vector = await queue.query_vector("Nüsse")
    await backend.search(SearchQuery(text="Nüsse", vector=vector, language="de-DE"))
    assert backend.readings.next_wanted() == "de"
    assert await run_until_idle(queue) is None
    assert [r.language for r in backend.readings.measured()] == ["de", "en"]
    assert len(embedding_server.probed) == 96


async def test_a_refused_measure_is_asked_again_later(
    provider_store: Store,
    queue: EmbeddingQueue,
    clock: FakeClock,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """A provider that refuses the pairs: full weight, and again after READING_RETRY."""
    backend = provider_store
    await backend.add(memory("Mia is allergic to nuts"))
    embedding_server.reject = PARAPHRASES["en"][0][0]
    assert await run_until_idle(queue) is None
    assert backend.readings.measured() == []
    assert backend.readings.next_wanted() == "en"
    assert backend.readings.trust("en") == 1.0
    assert queue.breaker.closed  # a refusal is not an outage
    embedding_server.reject = None
    clock.advance(READING_RETRY - 1)
    assert await run_until_idle(queue) is None
    assert backend.readings.measured() == []
    clock.advance(1)
    assert await run_until_idle(queue) is None
    assert [r.language for r in backend.readings.measured()] == ["en"]


async def test_searches_weigh_their_vectors_by_the_trust(
    provider_store: Store, queue: EmbeddingQueue
) -> None:
    """Memories and messages: a hit by meaning alone scores less at MIN_TRUST."""
    backend = provider_store
    log = conversation_log(backend)
    nuts = (await backend.add(memory("Mia is allergic to nuts"))).item.id
    for text in FILLER:
        await backend.add(memory(text))
    info = ConversationInfo(conversation_id="c", started_at=T0)
    [key] = await log.save(
        [
            (
                None,
                info,
                [
                    NewMessage(
                        role=MessageRole.USER,
                        content=text,
                        created_at=T0,
                        scope=HOUSEHOLD,
                    )
                    for text in ("Mia is allergic to nuts", *FILLER)
                ],
            )
        ]
    )
    said = (await log.messages(key))[0].id
    assert await run_until_idle(queue) is None
    vector = await queue.query_vector(QUESTION)
    message_vector = await queue.query_vector(QUESTION, messages=True)

    async def scores() -> tuple[float, float]:
        [memory_hit] = [
            hit
            for hit in await backend.search(SearchQuery(text=QUESTION, vector=vector))
            if hit.item.id == nuts
        ]
        assert memory_hit.matched == (Signal.SEMANTIC,)
        [message_hit] = [
            hit
            for hit in await log.search(
                MessageQuery(text=QUESTION, vector=message_vector)
            )
            if hit.message.id == said
        ]
        return memory_hit.score, message_hit.score

    backend.readings.record("en", 1.0)
    full = await scores()
    backend.readings.record("en", CANNOT)
    assert backend.readings.trust("en") == MIN_TRUST
    weak = await scores()
    assert weak[0] < full[0]
    assert weak[1] < full[1]
