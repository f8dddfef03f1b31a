"""After the upgrade, a code embedded whole before is embedded again, redacted."""

from __future__ import annotations

import asyncio
from contextlib import closing
from pathlib import Path
import sqlite3

from homeassistant.core import HomeAssistant
import numpy as np

from custom_components.memory.engine.embedding.jobs import text_hash
from custom_components.memory.engine.embedding.secret_recheck import VERSION_SETTING
from custom_components.memory.engine.privacy.secrets import DETECTOR_VERSION
from tests.provider_servers import FakeEmbeddingServer, fake_vector

from . import add, setup_embedding_entry
from .test_providers import embedding_until, settle

GARAGE = "Der Garagencode ist 4512"


def _write(path: Path, *statements: tuple[str, tuple[object, ...]]) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        for sql, args in statements:
            conn.execute(sql, args)


def _read(path: Path, sql: str, *args: object) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as conn:
        return [tuple(row) for row in conn.execute(sql, args)]


async def test_upgrade_embeds_a_code_again_redacted(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer, database_file: Path
) -> None:
    """A vector of "Der Garagencode ist 4512" is made again from the redacted text.

    The store is left as the detector before this one left it: the memory
    embedded whole, nothing checked yet. At the next start the background
    pass queues it, and the provider receives the code's words, not the code.
    """
    entry = await setup_embedding_entry(hass, embedding_server.url)
    memory_id = await add(hass, GARAGE)
    await settle(hass, entry)
    assert await hass.config_entries.async_unload(entry.entry_id)
    old = np.asarray(fake_vector(GARAGE, 32), dtype=np.float32).tobytes()
    _write(
        database_file,
        ("UPDATE embeddings SET vector = ? WHERE memory_id = ?", (old, memory_id)),
        (
            "UPDATE embedding_jobs SET text_hash = ? WHERE memory_id = ?",
            (text_hash(GARAGE), memory_id),
        ),
        ("DELETE FROM store_settings", ()),
    )
    embedding_server.received.clear()

    assert await hass.config_entries.async_setup(entry.entry_id)
    redacted = "Der Garagencode ist [redacted]"

    async def embedded_again() -> bool:
        return _read(
            database_file,
            "SELECT state, text_hash FROM embedding_jobs WHERE memory_id = ?",
            memory_id,
        ) == [("ready", text_hash(redacted))]

    async with asyncio.timeout(30):
        await embedding_until(hass, entry, embedded_again)
    assert embedding_server.received == [redacted]
    assert _read(
        database_file,
        "SELECT value FROM store_settings WHERE name = ?",
        VERSION_SETTING,
    ) == [(DETECTOR_VERSION,)]
