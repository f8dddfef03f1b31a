"""The `vec0` tables an earlier version kept go when the store opens without sqlite-vec.

They hold int8 codes of every memory embedded before the upgrade, purged
ones included, so they are dropped; with sqlite-vec importable through the
extension, without it by hand (shadow tables, then the schema row).
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
import sqlite3

import aiosqlite
import numpy as np

from custom_components.memory.engine import SearchQuery
from custom_components.memory.engine.store.vec0_leftovers import (
    drop_vec0_tables,
    leftover_vec0_tables,
)
from tests.engine.conftest import StoreFactory, memory


def _vec_tables(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [
            str(row[0])
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE 'vec\\_%' ESCAPE '\\'"
            )
        ]


def _integrity(path: Path) -> str:
    with closing(sqlite3.connect(path)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


async def _written_with_sqlite_vec(
    store_factory: StoreFactory, path: Path
) -> list[int]:
    """Write a database as an earlier version left it: vectors in a vec0 table too."""
    rng = np.random.default_rng(5)
    vectors = [rng.standard_normal(384).astype(np.float32) for _ in range(20)]
    old = await store_factory(path, vector_backend="sqlite-vec")
    added = await old.add_many(
        [memory(f"Garden note {n}") for n in range(20)], vectors=vectors
    )
    await old.close()
    assert _vec_tables(path)  # the vec0 table and its shadow tables
    return [result.item.id for result in added]


async def test_opening_without_sqlite_vec_drops_its_tables(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """The `auto` index (numpy) drops them; nothing else changes."""
    ids = await _written_with_sqlite_vec(store_factory, db_path)
    store = await store_factory(db_path, vector_backend="auto")
    assert _vec_tables(db_path) == []
    hits = await store.search(SearchQuery(text="garden", limit=50))
    assert sorted(hit.item.id for hit in hits) == ids
    await store.close()
    assert _integrity(db_path) == "ok"


async def test_without_the_extension_they_are_dropped_by_hand(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """Shadow tables dropped, the schema row removed; the file stays sound."""
    ids = await _written_with_sqlite_vec(store_factory, db_path)
    async with aiosqlite.connect(db_path, isolation_level=None) as conn:
        assert len(await leftover_vec0_tables(conn)) == 1
        assert await drop_vec0_tables(conn, use_extension=False) == 1
        assert await leftover_vec0_tables(conn) == []
        assert await drop_vec0_tables(conn, use_extension=False) == 0
    assert _vec_tables(db_path) == []
    assert _integrity(db_path) == "ok"
    store = await store_factory(db_path, vector_backend="auto")
    hits = await store.search(SearchQuery(text="garden", limit=50))
    assert sorted(hit.item.id for hit in hits) == ids


async def test_sqlite_vec_by_name_keeps_its_table(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """Asked for by name, sqlite-vec keeps using its table."""
    await _written_with_sqlite_vec(store_factory, db_path)
    again = await store_factory(db_path, vector_backend="sqlite-vec")
    assert _vec_tables(db_path)
    assert again.vector_backend == "sqlite-vec"
