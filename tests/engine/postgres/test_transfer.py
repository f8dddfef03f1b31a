"""Moving a store between SQLite and PostgreSQL: every row, id, vector and job, verified.

A real `MemoryStore` is filled as a household's would be: memories in three
scopes and languages, archived, superseded (a chain, and a link to an
earlier id), purged, tagged; vectors of the store's model, of another model
of the same dimension and of one of another (skipped); conversations with
a tool result, message vectors (found by meaning alike on both sides),
jobs in every state, rebuilds. `sqlite_to_postgres` copies it into a fresh database,
which then holds every table row for row, ids included, postings equal to
FTS5's vocabulary and sequences where SQLite's are; `postgres_to_sqlite`
copies that into a new file, which a `MemoryStore` opens to find the same
rows, searches and vector results as the original. A destination that
holds anything is refused and left as it was; a copy that fails midway
leaves the destination empty.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
import json
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import pytest

from custom_components.memory.engine import HOUSEHOLD, MemoryStore, SearchQuery
from custom_components.memory.engine.conversations import (
    ConversationInfo,
    ConversationLog,
    MessageQuery,
    MessageRole,
    NewMessage,
)
from custom_components.memory.engine.embedding import jobs as lite
from custom_components.memory.engine.embedding.jobs import MEMORIES, MESSAGES
from custom_components.memory.engine.errors import (
    DatabaseTooNewError,
    DatabaseUnavailableError,
    TransferError,
    TransferTargetNotEmptyError,
)
from custom_components.memory.engine.postgres import (
    PgVectorIndex,
    PostgresConversationLog,
    PostgresMemories,
    postgres_to_sqlite,
    register_vector,
    sqlite_to_postgres,
)
from custom_components.memory.engine.postgres.transfer_report import Tally
from custom_components.memory.engine.postgres.transfer_tables import TABLES
from tests.engine.conftest import (
    DIM,
    MODEL,
    START,
    FakeClock,
    StoreFactory,
    memory,
    sql,
    unit,
    vector,
)
from tests.test_household_data import memories as household, questions

OTHER = "other-model"  # the same dimension: copied
NARROW = "narrow-model"  # another dimension: skipped
LANGUAGES = (("en", HOUSEHOLD), ("de", "user-anna"), ("fr", "user-ben"))
# Every table of a store, in an order that lists each row once.
DUMPED = (
    *(table.name for table in TABLES),
    "embeddings",
    "embedding_models",
    "embedding_codes",
    "message_embeddings",
    "store_settings",
    "sqlite_sequence",
)
_POSTINGS = (
    (
        "memories_fts_vocab",
        "SELECT term, count(*), sum(tf) FROM memory_terms GROUP BY term",
    ),
    (
        "conversation_messages_fts_vocab",
        "SELECT term, count(*), sum(tf + tf_data) FROM message_terms GROUP BY term",
    ),
)


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(START + seconds, UTC)


@pytest.fixture
async def vector_pool(postgres_database: str) -> AsyncIterator[Any]:
    """Yield a pool on a fresh database (no schema yet) whose connections know pgvector."""
    pool = await asyncpg.create_pool(
        postgres_database, min_size=1, max_size=2, init=register_vector
    )
    try:
        yield pool
    finally:
        await pool.close()


async def _fill(store: MemoryStore, clock: FakeClock) -> None:
    """Fill the store with every kind of row it keeps."""
    ids: list[int] = []
    for lang, scope in LANGUAGES:
        for n, text in enumerate(list(household(lang).values())[:8]):
            added = await store.add(
                memory(
                    text,
                    scope=scope,
                    language=lang,
                    tags=("family",) if n % 3 == 0 else (),
                ),
                vector=None if n % 4 == 3 else vector(f"{lang}{n}"),
            )
            ids.append(added.item.id)
            clock.advance(60)
    await store.forget(ids[1:3])
    new, _old = await store.supersede(ids[4], memory("Anna's tea is jasmine now"))
    await store.supersede(new.id, memory("Anna drinks only rooibos now"))
    late = (await store.add(memory("The boiler was serviced in March"))).item.id
    purged = (await store.add(memory("Erased for good"))).item.id
    await store.forget([purged], purge=True)
    log = ConversationLog(store)
    anna = ConversationInfo(
        conversation_id="c1", started_at=_at(0), scope="user-anna", user_id="user-anna"
    )
    ben = ConversationInfo(
        conversation_id="c2", started_at=_at(10), scope="user-ben", ended_at=_at(30)
    )
    said = [
        NewMessage(
            role=MessageRole.USER,
            content="Was gibt es heute zum Abendessen für Anna?",
            created_at=_at(1),
            scope="user-anna",
            user_id="user-anna",
            language="de",
        ),
        NewMessage(
            role=MessageRole.ASSISTANT,
            content="Wie wäre es mit Käsespätzle und Salat?",
            created_at=_at(2),
            scope="user-anna",
            language="de",
        ),
        NewMessage(
            role=MessageRole.TOOL_RESULT,
            content="",
            data=json.dumps(
                {"Küche": "21 °C", "Fenster": "geöffnet"}, ensure_ascii=False
            ),
            tool_name="HassGetState",
            tool_call_id="call_1",
            created_at=_at(3),
            scope="user-anna",
        ),
    ]
    asked = [
        NewMessage(
            role=MessageRole.USER,
            content="Quelle est la couleur de la voiture de Ben ?",
            created_at=_at(11),
            scope="user-ben",
            language="fr",
        )
    ]
    await log.save([(None, anna, said), (None, ben, asked)])
    async with store.transaction() as conn:
        # A supersede link to an earlier id, a conversation digested.
        await conn.execute(
            "UPDATE memories SET status = 'superseded', superseded_by = ? WHERE id = ?",
            (ids[0], late),
        )
        await conn.execute(
            "UPDATE conversations SET digest_state = 'done', digested_at = ? "
            "WHERE conversation_id = 'c2'",
            (START + 40,),
        )
        await conn.executemany(
            "INSERT INTO embedding_models (model, dim, created_at) VALUES (?, ?, ?)",
            [(OTHER, DIM, START), (NARROW, 8, START)],
        )
        await conn.executemany(
            "INSERT INTO embeddings (memory_id, model, vector) VALUES (?, ?, ?)",
            [(i, OTHER, unit(vector(f"o{i}")).tobytes()) for i in ids[:5]]
            + [(i, NARROW, unit(vector(f"n{i}", 8)).tobytes()) for i in ids[:3]],
        )
        await _jobs(conn, clock)


async def _jobs(conn: Any, clock: FakeClock) -> None:
    """Jobs of both kinds in every state, a message vector, both rebuilds."""
    for kind in (MEMORIES, MESSAGES):
        await lite.enqueue(conn, kind, MODEL, after=0, clock=clock)
        await lite.start_rebuild(conn, kind, MODEL, 7, clock())
    with_vectors = [
        int(row[0])
        for row in await conn.execute_fetchall(
            "SELECT memory_id FROM embeddings WHERE model = ?", (MODEL,)
        )
    ]
    await lite.mark_ready(
        conn, MEMORIES, MODEL, {i: bytes([i]) * 32 for i in with_vectors}, clock()
    )
    messages = [
        int(row[0])
        for row in await conn.execute_fetchall(
            "SELECT message_id FROM message_embedding_jobs ORDER BY message_id"
        )
    ]
    await lite.store_message_vectors(
        conn, MODEL, {messages[0]: vector("m0"), messages[1]: vector("m1")}, clock()
    )
    await lite.mark_ready(
        conn, MESSAGES, MODEL, {i: bytes([i]) * 32 for i in messages[:2]}, clock()
    )
    for table, key in (
        ("embedding_jobs", "memory_id"),
        ("message_embedding_jobs", "message_id"),
    ):
        await conn.execute(
            f"UPDATE {table} SET state = 'error', attempts = 5, error = 'refused', "  # noqa: S608
            f"next_attempt_at = ? WHERE {key} = "
            f"(SELECT min({key}) FROM {table} WHERE state = 'pending')",
            (START + 900,),
        )
    await conn.execute(
        "UPDATE embedding_jobs SET attempts = 2, next_attempt_at = ?, error = 'slow' "
        "WHERE state = 'pending' AND memory_id = "
        "(SELECT max(memory_id) FROM embedding_jobs WHERE state = 'pending')",
        (START + 120,),
    )


def _dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of a store file (FTS5's own tables aside)."""
    return {name: sql(path, f"SELECT * FROM {name} ORDER BY 1, 2") for name in DUMPED}  # noqa: S608


async def _check_postgres(path: Path, pool: Any) -> None:
    """PostgreSQL holds SQLite's rows, ids, vectors, postings and sequences."""
    for table in TABLES:
        mine = sql(path, table.select())
        theirs = [tuple(row) for row in await pool.fetch(table.select())]
        assert theirs == mine, table.name
    # Message vectors, in the order SQLite wrote them.
    blobs = sql(
        path, "SELECT model, message_id, vector FROM message_embeddings ORDER BY id"
    )
    stored = await pool.fetch(
        "SELECT model, message_id, embedding FROM message_vectors ORDER BY seq"
    )
    assert [(r[0], r[1], np.asarray(r[2], "<f4").tobytes()) for r in stored] == blobs
    assert blobs
    blobs = sql(
        path,
        "SELECT model, memory_id, vector FROM embeddings WHERE model IN (?, ?)",
        MODEL,
        OTHER,
    )
    stored = await pool.fetch("SELECT model, memory_id, embedding FROM memory_vectors")
    assert {(r[0], r[1], np.asarray(r[2], "<f4").tobytes()) for r in stored} == set(
        blobs
    )
    for vocab, postings in _POSTINGS:
        held = {tuple(row) for row in await pool.fetch(postings)}
        assert held == set(sql(path, f"SELECT term, doc, cnt FROM {vocab}"))  # noqa: S608
        assert held
    high = dict(sql(path, "SELECT name, seq FROM sqlite_sequence"))
    for name in ("memories", "conversations", "conversation_messages"):
        assert high[name] == await pool.fetchval(
            "SELECT pg_sequence_last_value(pg_get_serial_sequence($1, 'id')::regclass)",
            name,
        )
    # Exact nearest neighbours: those of SQLite's vectors.
    rows = sql(path, "SELECT memory_id, vector FROM embeddings WHERE model = ?", MODEL)
    matrix = np.stack([np.frombuffer(blob, np.float32) for _id, blob in rows])
    for seed in ("en0", "de5", "fr2"):
        query = unit(vector(seed))
        cosines = matrix @ query
        best = sorted(range(len(rows)), key=lambda n: -cosines[n])[:5]
        hits = await PgVectorIndex(pool, MODEL, DIM).knn(query, 5, exact=True)
        assert [item for item, _score in hits] == [rows[n][0] for n in best]
        assert [score for _item, score in hits] == pytest.approx(
            [float(cosines[n]) for n in best], abs=1e-5
        )


async def _searches(store: MemoryStore) -> list[Any]:
    """Keyword, vector and hybrid searches of every language, with every status."""
    results = []
    for lang, _scope in LANGUAGES:
        for asked in list(questions(lang).values())[:3]:
            for query in (
                SearchQuery(text=asked["question"], language=lang, status="any"),
                SearchQuery(vector=vector(f"{lang}1"), limit=5),
                SearchQuery(text=asked["question"], vector=vector(f"{lang}2")),
            ):
                hits = await store.search(query)
                results.append([(hit.item, round(hit.score, 9)) for hit in hits])
    return results


async def test_a_store_goes_to_postgres_and_back_unchanged(
    store_factory: StoreFactory,
    db_path: Path,
    vector_pool: Any,
    clock: FakeClock,
    tmp_path: Path,
) -> None:
    """Every row, id, vector and job goes over and comes back; the source is only read."""
    store = await store_factory()
    await _fill(store, clock)
    before = _dump(db_path)
    messages_ready = sum(r[3] == "ready" for r in before["message_embedding_jobs"])
    assert messages_ready == 2

    report = await sqlite_to_postgres(db_path, vector_pool, batch=7, model=MODEL)

    assert _dump(db_path) == before
    assert report.verified
    assert report.postings_match
    assert {name: count.written for name, count in report.tables.items()} == {
        **{table.name: len(before[table.name]) for table in TABLES},
        "memory_vectors": 18 + 5,
        "message_vectors": 2,
    }
    assert all(count.verified for count in report.tables.values())
    assert report.skipped == {
        "embeddings:narrow-model": 3,
        "store_settings": len(before["store_settings"]),
    }
    assert report.derived == {
        "embedding_models": 3,
        "embedding_codes": len(before["embedding_codes"]),
    }
    assert report.reset_jobs == {}
    assert {mine == theirs for mine, theirs in report.checksums.values()} == {True}
    await _check_postgres(db_path, vector_pool)

    back = tmp_path / "back.db"
    returned = await postgres_to_sqlite(vector_pool, back, batch=5, clock=clock)
    assert returned.verified
    assert returned.postings_match
    assert returned.reset_jobs == {}
    assert returned.skipped == {"digest_claims": 0}
    assert returned.tables["message_embeddings"].written == 2
    assert set(returned.derived) == {
        "memory_terms",
        "memory_term_totals",
        "memory_vector_changes",
        "message_terms",
        "message_term_totals",
    }
    assert returned.checksums == report.checksums

    restored = await store_factory(back)
    after = _dump(back)
    expected = dict(before)
    expected["embeddings"] = [r for r in before["embeddings"] if r[1] != NARROW]
    for name in DUMPED:
        if name in {"store_settings", "embedding_models", "embedding_codes"}:
            continue
        assert after[name] == expected[name], name
    # The codes the open made, in one batch: the same bits; factors within a
    # float32 rounding of those made one vector at a time.
    made, kept = after["embedding_codes"], before["embedding_codes"]
    assert [(r[0], r[1], r[2][:-4]) for r in made] == [
        (r[0], r[1], r[2][:-4]) for r in kept
    ]
    assert np.frombuffer(b"".join(r[2][-4:] for r in made), "<f4") == pytest.approx(
        np.frombuffer(b"".join(r[2][-4:] for r in kept), "<f4"), rel=1e-6
    )
    assert [r[:2] for r in after["embedding_models"]] == [
        r[:2] for r in before["embedding_models"] if r[0] != NARROW
    ]
    for vocab, _postings in _POSTINGS:
        query = f"SELECT term, doc, cnt FROM {vocab} ORDER BY term"  # noqa: S608
        assert sql(back, query) == sql(db_path, query)
    assert await _searches(restored) == await _searches(store)
    # The messages are found by meaning on all three, alike.
    found = [
        [
            (hit.message.id, round(hit.score, 9))
            for hit in await log.search(MessageQuery(text="", vector=vector("m0")))
        ]
        for log in (
            ConversationLog(store),
            PostgresConversationLog(vector_pool, model=MODEL),
            ConversationLog(restored),
        )
    ]
    assert found[0] == found[1] == found[2]
    assert found[0]


async def test_a_database_with_rows_is_refused_and_left_alone(
    store_factory: StoreFactory,
    db_path: Path,
    postgres_pool: Any,
    clock: FakeClock,
    tmp_path: Path,
) -> None:
    """A memory already in PostgreSQL, or in the SQLite file: nothing is copied."""
    store = await store_factory()
    await _fill(store, clock)
    await PostgresMemories(postgres_pool, clock=clock).add(memory("Already here"))
    with pytest.raises(TransferTargetNotEmptyError) as refused:
        await sqlite_to_postgres(db_path, postgres_pool)
    assert refused.value.placeholders == {"table": "memories", "rows": "1"}
    assert await postgres_pool.fetchval("SELECT count(*) FROM memories") == 1
    assert await postgres_pool.fetchval("SELECT count(*) FROM conversations") == 0
    assert await postgres_pool.fetchval("SELECT to_regclass('memory_vectors')") is None

    full = tmp_path / "full.db"
    other = await store_factory(full)
    await other.add(memory("Mine"))
    kept = _dump(full)
    with pytest.raises(TransferTargetNotEmptyError) as refused:
        await postgres_to_sqlite(postgres_pool, full)
    assert refused.value.placeholders == {"table": "memories", "rows": "1"}
    assert _dump(full) == kept


async def test_a_copy_failing_midway_leaves_the_destination_empty(
    store_factory: StoreFactory,
    db_path: Path,
    vector_pool: Any,
    clock: FakeClock,
    tmp_path: Path,
) -> None:
    """A job of no memory fails PostgreSQL's foreign key, then SQLite's at the commit."""
    store = await store_factory()
    await _fill(store, clock)
    await store.close()
    orphan = (
        "INSERT INTO embedding_jobs (memory_id, model, text_hash, state, updated_at) "
        "VALUES (999, 'test-model', x'00', 'pending', 0)"
    )
    sql(db_path, orphan)  # a plain connection: no foreign keys enforced
    with pytest.raises(TransferError, match="copy to PostgreSQL failed"):
        await sqlite_to_postgres(db_path, vector_pool)
    for table in TABLES:
        assert await vector_pool.fetchval(f"SELECT count(*) FROM {table.name}") == 0  # noqa: S608
    assert await vector_pool.fetchval("SELECT to_regclass('memory_vectors')") is None

    sql(db_path, "DELETE FROM embedding_jobs WHERE memory_id = 999")
    assert (await sqlite_to_postgres(db_path, vector_pool)).verified
    await vector_pool.execute(
        "ALTER TABLE embedding_jobs DROP CONSTRAINT embedding_jobs_memory_id_fkey"
    )
    await vector_pool.execute(orphan.replace("x'00'", "'\\x00'::bytea"))
    back = tmp_path / "back.db"
    with pytest.raises(TransferError, match="copy to SQLite failed"):
        await postgres_to_sqlite(vector_pool, back)
    assert {name: rows for name, rows in _dump(back).items() if rows} == {
        "store_settings": [("secrets_checked", 2)]
    }


async def test_the_next_ids_go_on_where_the_source_left_off(
    store_factory: StoreFactory,
    db_path: Path,
    vector_pool: Any,
    clock: FakeClock,
    tmp_path: Path,
) -> None:
    """A purged last memory's id is not handed out again, on either side."""
    store = await store_factory()
    await _fill(store, clock)
    await sqlite_to_postgres(db_path, vector_pool)
    back = tmp_path / "back.db"
    await postgres_to_sqlite(vector_pool, back, clock=clock)
    restored = await store_factory(back)
    given = dict(sql(db_path, "SELECT name, seq FROM sqlite_sequence"))["memories"]
    kept = sql(db_path, "SELECT max(id) FROM memories")[0][0]
    assert given == kept + 1  # the purged one
    new = memory("Added after the move")
    ids = {
        (await store.add(new)).item.id,
        (await restored.add(new)).item.id,
        (await PostgresMemories(vector_pool, clock=clock).add(new)).item.id,
    }
    assert ids == {given + 1}


async def test_a_source_the_copy_does_not_know_is_refused(
    store_factory: StoreFactory, db_path: Path, vector_pool: Any, tmp_path: Path
) -> None:
    """A missing file, another schema version, a column of a later migration."""
    with pytest.raises(DatabaseUnavailableError):
        await sqlite_to_postgres(tmp_path / "missing.db", vector_pool)
    store = await store_factory()
    await store.add(memory("Anna likes tea"))
    await store.close()
    version = sql(db_path, "PRAGMA user_version")[0][0]
    sql(db_path, f"PRAGMA user_version = {version + 1}")
    with pytest.raises(DatabaseTooNewError):
        await sqlite_to_postgres(db_path, vector_pool)
    sql(db_path, f"PRAGMA user_version = {version - 1}")
    with pytest.raises(TransferError, match="open it with this version first"):
        await sqlite_to_postgres(db_path, vector_pool)
    sql(db_path, f"PRAGMA user_version = {version}")
    sql(db_path, "ALTER TABLE memories ADD COLUMN mood TEXT")
    with pytest.raises(TransferError) as refused:
        await sqlite_to_postgres(db_path, vector_pool)
    assert refused.value.placeholders == {
        "error": "SQLite memories: missing -; not copied mood"
    }
    assert await vector_pool.fetchval("SELECT count(*) FROM memories") == 0


def test_a_count_or_checksum_that_differs_is_no_report() -> None:
    """Tally raises instead of reporting, so the copy's transaction rolls back."""
    tally = Tally("sqlite_to_postgres")
    tally.add("memories", 3, 3)
    tally.source["memories"] = 3
    tally.destination["memories"] = 3
    tally.checksums["memories"] = ("a", "a")
    assert tally.report().verified
    tally.destination["memories"] = 2
    with pytest.raises(TransferError) as differ:
        tally.report()
    assert differ.value.placeholders == {
        "error": "memories: 3 read, 3 written, 3 in the source, 2 copied"
    }
    tally.destination["memories"] = 3
    tally.checksums["memories"] = ("a", "b")
    with pytest.raises(TransferError, match="does not match"):
        tally.report()
