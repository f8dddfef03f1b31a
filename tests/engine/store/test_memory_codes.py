"""Tests for the stored codes of the numpy index (`embedding_codes`, schema 12).

Opening builds the index from the stored codes and reads only the cosine
sample's vectors; the results must be those of an index built from every
vector, and the codes must follow the vectors through every write, purge,
reword and model change.
"""

from __future__ import annotations

from contextlib import closing
import logging
import os
from pathlib import Path
import sqlite3
from typing import Any

import numpy as np
import pytest

from custom_components.memory.engine import MemoryStore, SearchQuery, Signal
from custom_components.memory.engine.store.memory_vectors import MemoryVectors
from custom_components.memory.engine.vectors import (
    NumpyIndex,
    as_unit_vector,
    code_fingerprint,
    codes_to_blobs,
    encode_unit,
)
from tests.engine.conftest import DIM, MODEL, StoreFactory, memory, sql, vector

SETTING = f"vector_codes {MODEL}"
# Above the cosine sample's 512: the reservoir's draws decide what it keeps.
COUNT = 700


async def _filled(store_factory: StoreFactory, db_path: Path, **kwargs: Any) -> None:
    store = await store_factory(db_path, **kwargs)
    await store.add_many(
        [memory(f"Row {n} about topic {n % 7}") for n in range(COUNT)],
        vectors=[vector(n) for n in range(COUNT)],
    )
    await store.close()


def _codes(db_path: Path, model: str = MODEL) -> dict[int, bytes]:
    rows = sql(
        db_path, "SELECT memory_id, code FROM embedding_codes WHERE model = ?", model
    )
    return {int(row[0]): bytes(row[1]) for row in rows}


def _expected(item_ids: list[int], seeds: list[int]) -> dict[int, bytes]:
    matrix = np.stack([as_unit_vector(vector(seed)) for seed in seeds])
    return dict(zip(item_ids, codes_to_blobs(*encode_unit(matrix)), strict=True))


async def _answers(store: MemoryStore) -> list[Any]:
    """Search results, cosine scales and raw knn of a few queries."""
    answers: list[Any] = []
    for seed in (3, 77, 512, 699):
        query = as_unit_vector(vector(f"q{seed}"))
        hits = await store.search(SearchQuery(text=f"Row {seed}", vector=query))
        index = store.vectors.index
        assert index is not None
        answers.append(
            (
                [(hit.item.id, hit.score) for hit in hits],
                store.vectors.cosine_scale(query),
                await index.knn(query, 50),
            )
        )
    return answers


def _forbid_making_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refuse(*_args: Any) -> None:
        raise AssertionError("the codes were made again")

    monkeypatch.setattr(MemoryVectors, "_make_codes", refuse)


async def test_codes_are_stored_with_their_vectors(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """Each vector's code is written in its transaction, as the index makes it."""
    store = await store_factory()
    results = await store.add_many(
        [memory("Tea"), memory("Coffee"), memory("No vector")],
        vectors=[vector(1), vector(2), None],
    )
    first, second = results[0].item.id, results[1].item.id

    stored = _codes(db_path)
    assert stored == _expected([first, second], [1, 2])
    assert sql(db_path, "SELECT value FROM store_settings WHERE name = ?", SETTING) == [
        (code_fingerprint(DIM),)
    ]
    await store.set_vectors({first: vector(3)})
    # Encoded as the index encodes that write (a matrix product's last bit
    # may depend on how many rows it turns at once).
    assert _codes(db_path) == {**stored, **_expected([first], [3])}


async def test_the_index_holds_the_codes_stored(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """A write's vectors are turned once: the live index takes the codes stored."""
    store = await store_factory()
    results = await store.add_many(
        [memory(f"Row {n}") for n in range(5)], vectors=[vector(n) for n in range(5)]
    )
    await store.set_vectors({results[0].item.id: vector(9)})
    index = store.vectors.index
    assert isinstance(index, NumpyIndex)
    size = index._size
    held = dict(
        zip(
            index._ids[:size].tolist(),
            codes_to_blobs(index._bits[:, :size].T.copy(), index._factors[:size]),
            strict=True,
        )
    )
    assert held == _codes(db_path)


async def test_reopening_reads_the_codes_with_the_same_results(
    store_factory: StoreFactory, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index from the codes answers as the one made from every vector."""
    await _filled(store_factory, db_path)
    sql(db_path, "DELETE FROM embedding_codes")
    sql(db_path, "DELETE FROM store_settings WHERE name = ?", SETTING)
    made = await store_factory()  # made from the vectors, codes stored
    from_vectors = await _answers(made)
    await made.close()
    assert len(_codes(db_path)) == COUNT

    _forbid_making_codes(monkeypatch)
    for defer in (False, True):
        store = MemoryStore(db_path, model=MODEL, vector_backend="numpy")
        await store.open(defer_index=defer)
        try:
            await store.load_index()
            assert await _answers(store) == from_vectors
            assert (
                Signal.SEMANTIC
                in (await store.search(SearchQuery(text="Row 5", vector=vector(5))))[
                    0
                ].matched
            )
        finally:
            await store.close()


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE store_settings SET value = 1 WHERE name = 'vector_codes test-model'",
        "DELETE FROM store_settings WHERE name = 'vector_codes test-model'",
        "DELETE FROM embedding_codes WHERE memory_id % 3 = 0",
        "UPDATE embedding_codes SET code = x'00' WHERE memory_id = 5",
    ],
    ids=["other-fingerprint", "no-fingerprint", "missing", "short"],
)
async def test_stale_or_missing_codes_are_made_again(
    store_factory: StoreFactory, db_path: Path, damage: str
) -> None:
    """Codes of another rotation, or not one a vector, are made from the vectors."""
    await _filled(store_factory, db_path)
    expected = _codes(db_path)
    reference = await store_factory()
    answers = await _answers(reference)
    await reference.close()
    # As another rotation would have made them: every stored code differs.
    sql(db_path, "UPDATE embedding_codes SET code = zeroblob(length(code))")
    sql(db_path, damage)

    store = await store_factory()

    assert await _answers(store) == answers
    assert _codes(db_path) == expected
    assert sql(db_path, "SELECT value FROM store_settings WHERE name = ?", SETTING) == [
        (code_fingerprint(DIM),)
    ]


async def test_codes_go_with_their_vectors(
    store_factory: StoreFactory, db_path: Path
) -> None:
    """Purged and reworded memories and a removed model leave no code behind."""
    store = await store_factory()
    results = await store.add_many(
        [memory("Tea"), memory("Coffee"), memory("Juice")],
        vectors=[vector(1), vector(2), vector(3)],
    )
    tea, coffee, juice = (result.item.id for result in results)

    await store.forget([tea], purge=True)
    await store.update_content(coffee, content="Strong coffee")
    assert set(_codes(db_path)) == {juice}

    await store.close()
    other = await store_factory(model="other-model")
    await other.set_vectors({juice: vector(9, dim=8)})
    assert set(_codes(db_path, "other-model")) == {juice}
    assert set(_codes(db_path)) == {juice}
    with closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("DELETE FROM embedding_models WHERE model = ?", (MODEL,))
    assert _codes(db_path) == {}
    assert set(_codes(db_path, "other-model")) == {juice}


async def test_codes_written_by_sqlite_vec_serve_numpy(
    store_factory: StoreFactory, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With vec0 by name the codes are kept as well, and numpy opens from them."""
    await _filled(store_factory, db_path)
    reference = await store_factory()
    answers = await _answers(reference)
    await reference.close()
    sql(db_path, "DELETE FROM embedding_codes WHERE memory_id > 300")

    vec0 = await store_factory(vector_backend="sqlite-vec")
    await vec0.set_vectors({item: vector(item - 1) for item in range(301, COUNT + 1)})
    await vec0.close()

    _forbid_making_codes(monkeypatch)
    store = await store_factory()
    assert await _answers(store) == answers


async def test_codes_not_stored_still_give_an_index(
    store_factory: StoreFactory,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A full disk while the codes are stored: nothing lost, the index still built."""
    await _filled(store_factory, db_path)
    sql(db_path, "DELETE FROM embedding_codes")
    sql(db_path, "DELETE FROM store_settings WHERE name = ?", SETTING)

    async def full(*_args: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    with monkeypatch.context() as patch:
        patch.setattr(MemoryVectors, "_write_codes", staticmethod(full))
        with caplog.at_level(logging.WARNING):
            store = await store_factory()
        hits = await store.search(SearchQuery(text="Row 7", vector=vector(7)))
        assert Signal.SEMANTIC in hits[0].matched
        await store.close()
    assert "codes were not stored" in caplog.text
    assert _codes(db_path) == {}
    assert sql(db_path, "SELECT count(*) FROM embeddings") == [(COUNT,)]

    await (await store_factory()).close()
    assert len(_codes(db_path)) == COUNT


async def test_unreadable_codes_leave_keyword_search(
    store_factory: StoreFactory, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Damaged code pages: the index does not load; keyword search still works."""
    await _filled(store_factory, db_path)
    rows = sql(
        db_path, "SELECT rootpage FROM sqlite_master WHERE name = 'embedding_codes'"
    )
    before = db_path.stat()
    with db_path.open("r+b") as file:
        file.seek((int(rows[0][0]) - 1) * 4096)
        file.write(b"\xff" * 4096)
    os.utime(db_path, ns=(before.st_atime_ns, before.st_mtime_ns))

    store = MemoryStore(db_path, model=MODEL, vector_backend="numpy")
    await store.open(defer_index=True)
    try:
        await store.load_index()
        hits = await store.search(SearchQuery(text="Row 7", vector=vector(7)))
    finally:
        await store.close()

    assert "vector index did not load" in caplog.text
    assert hits
    assert all(Signal.SEMANTIC not in hit.matched for hit in hits)
