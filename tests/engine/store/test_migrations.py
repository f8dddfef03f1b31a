"""Every earlier schema version migrates to the current one, keeping its data."""

from __future__ import annotations

from contextlib import closing
import logging
from pathlib import Path
import sqlite3

import numpy as np
import pytest

from custom_components.memory.engine import (
    SCHEMA_VERSION,
    DatabaseCorruptError,
    MemoryStatus,
    MemoryType,
    Origin,
    SearchQuery,
    Signal,
    Source,
)
from custom_components.memory.engine.store.schema import MIGRATIONS
from custom_components.memory.engine.text import content_key
from custom_components.memory.engine.vectors import (
    code_fingerprint,
    codes_to_blobs,
    encode_unit,
)
from custom_components.memory.engine.vectors.index import as_unit_vector
from tests.engine.conftest import DIM, MODEL, START, StoreFactory, memory, vector

# Rows valid from schema version 1 on: (id, scope, type, content, tags, status).
V1_MEMORIES = (
    (1, "household", "fact", "The spare key is under the blue pot", "keys", "active"),
    (2, "anna", "preference", "Anna drinks green tea", "drinks tea", "active"),
    (3, "household", "event", "Boiler repaired last winter", "", "archived"),
)


def _apply(conn: sqlite3.Connection, start: int, stop: int) -> None:
    for step in range(start, stop):
        for statement in MIGRATIONS[step]:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {step + 1}")


def _insert_v1_data(conn: sqlite3.Connection) -> None:
    for item_id, scope, kind, content, tags, status in V1_MEMORIES:
        conn.execute(
            "INSERT INTO memories (id, scope, type, content, content_key, tags, "
            "status, valid_from, created_at, updated_at, origin, user_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                item_id,
                scope,
                kind,
                content,
                content_key(content),
                tags,
                status,
                START,
                START + item_id,
                START + item_id,
                "tool",
                "user-1",
            ),
        )
        conn.executemany(
            "INSERT INTO memory_tags (memory_id, tag) VALUES (?, ?)",
            [(item_id, tag) for tag in tags.split()],
        )
    conn.execute(
        "INSERT INTO embedding_models (model, dim, created_at) VALUES (?, ?, ?)",
        (MODEL, DIM, START),
    )
    conn.executemany(
        "INSERT INTO embeddings (memory_id, model, vector) VALUES (?, ?, ?)",
        [
            (item_id, MODEL, as_unit_vector(vector(item_id)).tobytes())
            for item_id, *_rest in V1_MEMORIES
        ],
    )


def build_database(path: Path, version: int) -> None:
    """Make a database at `version` the way that version's code made it."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("BEGIN")
        _apply(conn, 0, min(version, 1))
        if version >= 1:
            _insert_v1_data(conn)
        _apply(conn, 1, version)
        conn.execute("COMMIT")
        assert conn.execute("PRAGMA user_version").fetchone() == (version,)


def user_version(path: Path) -> int:
    """Read the schema version written in the file."""
    with closing(sqlite3.connect(path)) as conn:
        row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def test_schema_version_counts_migrations() -> None:
    """SCHEMA_VERSION is the number of migrations, each with statements."""
    assert SCHEMA_VERSION == len(MIGRATIONS) >= 1
    assert all(MIGRATIONS)


@pytest.mark.parametrize("version", range(SCHEMA_VERSION))
async def test_migrate_from(
    open_store: StoreFactory,
    db_path: Path,
    version: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A database of an earlier version opens, migrates and keeps its data."""
    build_database(db_path, version)
    with caplog.at_level(logging.INFO):
        store = await open_store()
    assert user_version(db_path) == SCHEMA_VERSION
    assert (await store.stats()).schema_version == SCHEMA_VERSION
    assert f"migrated from schema {version} to {SCHEMA_VERSION}" in caplog.text

    if version >= 1:
        stats = await store.stats()
        assert stats.by_status == {"active": 2, "archived": 1}
        assert stats.vectors_by_model == {MODEL: 3}
        items = await store.get_many([1, 2, 3])
        for item_id, scope, kind, content, tags, status in V1_MEMORIES:
            item = items[item_id]
            assert item.scope == scope
            assert item.type is MemoryType(kind)
            assert item.content == content
            assert item.tags == tuple(tags.split())
            assert item.status is MemoryStatus(status)
            assert item.source.origin is Origin.TOOL
            assert item.source.user_id == "user-1"
            assert item.language == ""
        # Keyword search finds the old rows once they are re-analysed (in
        # Home Assistant, in the background after set-up), in batches.
        assert await store.search(SearchQuery(text="spare key")) == []
        assert await store.pending_analysis() == 3
        assert await store.reanalyse(limit=2) == 2
        assert await store.reanalyse() == 1
        assert await store.reanalyse() == 0
        assert await store.pending_analysis() == 0
        assert {
            item.language for item in (await store.get_many([1, 2, 3])).values()
        } == {"en"}
        # Searchable by keyword, by tag and by vector.
        hits = await store.search(SearchQuery(text="spare key"))
        assert [hit.item.id for hit in hits] == [1]
        hits = await store.search(SearchQuery(text="tea", tags=("drinks",)))
        assert [hit.item.id for hit in hits] == [2]
        hits = await store.search(SearchQuery(vector=vector(2)))
        assert hits[0].item.id == 2
        assert hits[0].matched == (Signal.SEMANTIC,)
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)
        archived = await store.search(SearchQuery(text="boiler", status="archived"))
        assert [hit.item.id for hit in archived] == [3]
        # De-duplication still recognises the old rows.
        again = await store.add(memory("the spare key is under the BLUE pot."))
        assert not again.created
        assert again.item.id == 1

    # The migrated database takes new memories and vectors.
    new = await store.add(memory("Fresh after migration"), vector=vector(99))
    assert new.created
    if version >= 1:
        assert new.item.id not in {row[0] for row in V1_MEMORIES}
    hits = await store.search(SearchQuery(text="fresh", vector=vector(99)))
    assert hits[0].item.id == new.item.id
    await store.close()

    # And opens again without migrating.
    caplog.clear()
    with caplog.at_level(logging.INFO):
        reopened = await open_store()
    assert not _migration_logged(caplog)
    assert await reopened.get(new.item.id) == new.item


def _migration_logged(caplog: pytest.LogCaptureFixture) -> bool:
    """Whether the store logged a migration.

    Our loggers only: asyncio's slow-callback warning (debug mode, a loaded
    machine) names the running test, whose name may say "migrated".
    """
    return any(
        "migrated" in record.getMessage()
        for record in caplog.records
        if record.name.startswith("custom_components.memory")
    )


async def test_current_version_is_not_migrated(
    open_store: StoreFactory, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A database at SCHEMA_VERSION is opened as is."""
    build_database(db_path, SCHEMA_VERSION)
    with caplog.at_level(logging.INFO):
        store = await open_store()
    assert not _migration_logged(caplog)
    # Rows written without terms (as raw SQL does) are analysed on request.
    assert await store.reanalyse() == 3
    assert [hit.item.id for hit in await store.search(SearchQuery(text="tea"))] == [2]


async def test_failed_migration_rolls_back(
    open_store: StoreFactory, db_path: Path
) -> None:
    """A migration that fails leaves the file exactly as it was."""
    with closing(sqlite3.connect(db_path)) as conn:
        # Version 0 with a table in the way of the first migration.
        conn.execute("CREATE TABLE memories (something_else TEXT)")
        conn.execute("INSERT INTO memories VALUES ('precious')")
        conn.commit()
    data = db_path.read_bytes()
    with pytest.raises(DatabaseCorruptError):
        await open_store()
    assert db_path.read_bytes() == data
    assert user_version(db_path) == 0
    with closing(sqlite3.connect(db_path)) as conn:
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
            )
        }
        assert tables == {"memories"}
        assert conn.execute("SELECT * FROM memories").fetchall() == [("precious",)]


def test_every_migration_applies_on_its_predecessor(tmp_path: Path) -> None:
    """Each step alone takes version i to i + 1 with plain sqlite3."""
    for version in range(SCHEMA_VERSION + 1):
        path = tmp_path / f"v{version}.db"
        build_database(path, version)
        assert user_version(path) == version
        with closing(sqlite3.connect(path)) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            if version >= 1:
                count = conn.execute("SELECT count(*) FROM memories").fetchone()
                assert count == (len(V1_MEMORIES),)
                blob = conn.execute(
                    "SELECT vector FROM embeddings WHERE memory_id = 1"
                ).fetchone()[0]
                np.testing.assert_array_equal(
                    np.frombuffer(blob, dtype=np.float32), as_unit_vector(vector(1))
                )


async def test_shared_conversations_go_back_to_who_started_them(
    open_store: StoreFactory, db_path: Path
) -> None:
    """Rows an earlier version moved to the last speaker get their starter back."""
    build_database(db_path, 5)
    with closing(sqlite3.connect(db_path)) as conn:
        conn.executemany(
            "INSERT INTO conversations (id, conversation_id, scope, user_id, "
            "device_id, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (1, "shared", "person.ben", "u-ben", "d-ben", START, START + 2),
                (2, "alone", "person.anna", "u-anna", None, START, START),
                (3, "emptied", "person.ben", "u-ben", None, START, START),
            ],
        )
        conn.executemany(
            "INSERT INTO conversation_messages (conversation, role, content, "
            "scope, user_id, device_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (1, "user", "hello", "person.anna", "u-anna", "d-anna", START),
                (1, "user", "hi", "person.ben", "u-ben", "d-ben", START + 1),
                (2, "user", "tea", "person.anna", "u-anna", None, START),
            ],
        )
        conn.commit()
    store = await open_store()
    await store.close()
    with closing(sqlite3.connect(db_path)) as conn:
        rows = conn.execute(
            "SELECT id, scope, user_id, device_id FROM conversations ORDER BY id"
        ).fetchall()
        scopes = conn.execute(
            "SELECT scope FROM conversation_messages ORDER BY id"
        ).fetchall()
    assert rows == [
        (1, "person.anna", "u-anna", "d-anna"),
        (2, "person.anna", "u-anna", None),
        (3, "person.ben", "u-ben", None),
    ]
    assert scopes == [("person.anna",), ("person.ben",), ("person.anna",)]


async def test_migration_8_keys_summaries_apart(
    db_path: Path, open_store: StoreFactory
) -> None:
    """A summary stored before schema 8 no longer swallows a fact of its words."""
    build_database(db_path, 7)
    with closing(sqlite3.connect(db_path)) as conn:
        conn.execute(
            "INSERT INTO memories (scope, type, content, content_key, status, "
            "created_at, updated_at, origin, conversation_id) "
            "VALUES ('household', 'summary', ?, ?, 'active', ?, ?, 'digestion', ?)",
            (
                "They talked about the bins.",
                content_key("They talked about the bins."),
                START,
                START,
                "talk-1",
            ),
        )
        conn.commit()
    store = await open_store()
    fact = await store.add(memory("They talked about the bins."))
    assert fact.created
    assert fact.item.type == MemoryType.FACT
    # The old summary is still found as its conversation's, by the new key.
    again = await store.add(
        memory(
            "They talked about the bins.",
            type=MemoryType.SUMMARY,
            source=Source(origin=Origin.DIGESTION, conversation_id="talk-1"),
        )
    )
    assert not again.created


async def test_migration_12_codes_are_made_at_the_first_open(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """Schema 11's vectors get their codes at the first open, then stay."""
    build_database(db_path, 11)
    store = await store_factory()
    hits = await store.search(SearchQuery(text="", vector=vector(2)))
    await store.close()

    with closing(sqlite3.connect(db_path)) as conn:
        codes = dict(conn.execute("SELECT memory_id, code FROM embedding_codes"))
        setting = conn.execute(
            "SELECT value FROM store_settings WHERE name = ?",
            (f"vector_codes {MODEL}",),
        ).fetchall()
    words, factors = encode_unit(
        np.stack([as_unit_vector(vector(item_id)) for item_id in (1, 2, 3)])
    )
    assert codes == dict(zip((1, 2, 3), codes_to_blobs(words, factors), strict=True))
    assert setting == [(code_fingerprint(DIM),)]
    reopened = await store_factory()
    assert await reopened.search(SearchQuery(text="", vector=vector(2))) == hits
