"""Moving an entry's memories in the reconfigure flow (#26).

Real PostgreSQL servers (`postgres_url`, `postgres_database`), real SQLite
files and real flows: reconfigure moves every memory, message and vector
to PostgreSQL and back, verified, keeping the source, and the entry then
runs on the new backend (a `PostgresStore`, then a `MemoryStore` on a new
file) serving every moved memory; a database that holds memories already
is offered for use instead of a copy; a failed copy leaves the entry on its
old backend with nothing lost. The set-up steps are in
test_config_flow_postgresql. Entries loaded on PostgreSQL are unloaded
before the fixture drops the database.
"""

from __future__ import annotations

from contextlib import closing
from functools import partial
import hashlib
import logging
from pathlib import Path
import sqlite3
from typing import Any
from urllib.parse import urlsplit

import asyncpg
from homeassistant.config_entries import ConfigEntryState, ConfigFlowResult
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.memory.const import (
    BACKEND_POSTGRESQL,
    BACKEND_SQLITE,
    CONF_BACKEND,
    CONF_DB_URL,
    CONF_PROVIDER,
    DOMAIN,
    PROVIDER_KEYWORD,
)
from custom_components.memory.embedding import store_model
from custom_components.memory.engine import (
    ConversationInfo,
    MemoryStore,
    MessageRole,
    NewMemory,
    NewMessage,
    Origin,
    Source,
)
from custom_components.memory.engine.postgres import (
    AnyStore,
    PostgresStore,
    migrate,
    redact_url,
)
from tests.postgres_server import START_TIMEOUT, fresh_database, role_url, unique_name
from tests.provider_servers import FakeEmbeddingServer

from . import add, entry_state, search_ids, start_reconfigure
from .postgres import rows
from .test_config_flow_providers import _placeholders, _suggested
from .test_providers import embedding_until, provider_entry, settle, setup

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT),
]

SECRET = "Sup3r-Secret_pw"
TEXTS = ("Mia is allergic to nuts", "The bins go out on Thursday", "Heating at 19")


async def _admin(url: str, *statements: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        for sql in statements:
            await connection.execute(sql)
    finally:
        await connection.close()


async def _role(admin_url: str) -> str:
    """Make a plain login role with SECRET as its password; return its name."""
    name = unique_name("memory_role")
    await _admin(admin_url, f"CREATE ROLE {name} LOGIN PASSWORD '{SECRET}'")
    return name


async def _owner_url(postgres_url: str, database: str) -> str:
    """Return the URL of a new role, with a password, that owns `database` (so it may create tables)."""
    role = await _role(postgres_url)
    name = database.rpartition("/")[2]
    await _admin(postgres_url, f'ALTER DATABASE "{name}" OWNER TO {role}')
    return role_url(database, role, SECRET)


async def _pg_counts(url: str) -> dict[str, int]:
    connection = await asyncpg.connect(url)
    try:
        return {
            table: int(await connection.fetchval(f"SELECT count(*) FROM {table}"))  # noqa: S608
            for table in ("memories", "conversation_messages", "memory_vectors")
        }
    finally:
        await connection.close()


def _sqlite_memories(path: Path) -> int:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT count(*) FROM memories").fetchone()[0])


def _digest(path: Path) -> str:
    """Hash a SQLite file with its write-ahead log, if it has one."""
    digest = hashlib.sha256(path.read_bytes())
    if (wal := Path(f"{path}-wal")).exists():
        digest.update(wal.read_bytes())
    return digest.hexdigest()


def _store(entry: MockConfigEntry) -> AnyStore:
    """Read the entry's store afresh (type checkers keep an earlier narrowing)."""
    store: AnyStore = entry.runtime_data.store
    return store


def _memory(content: str) -> NewMemory:
    return NewMemory(content=content, source=Source(origin=Origin.ACTION))


_CONTENTS = "SELECT id, content FROM memories"
# The table a copy back reads last (a keyword-only entry never reads it).
_LAST_READ = "message_embedding_rebuilds"


async def _vectors(url: str, count: int) -> bool:
    return (await _pg_counts(url))["memory_vectors"] == count


def _no_secret(*results: Any, caplog: pytest.LogCaptureFixture) -> None:
    for result in results:
        assert SECRET not in repr(result)
    assert SECRET not in caplog.text


async def _storage(hass: HomeAssistant, entry: MockConfigEntry) -> ConfigFlowResult:
    result = await entry.start_reconfigure_flow(hass)
    assert result["type"] is FlowResultType.MENU
    assert result["menu_options"] == ["provider", "storage"]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "storage"}
    )
    assert result["step_id"] == "storage"
    return result


async def _submit_and_wait(
    hass: HomeAssistant, result: ConfigFlowResult, data: dict[str, Any]
) -> ConfigFlowResult:
    """Submit the storage form; let the move's progress run to its end."""
    flow_id = result["flow_id"]
    result = await hass.config_entries.flow.async_configure(flow_id, data)
    if result["type"] is FlowResultType.SHOW_PROGRESS:
        await hass.async_block_till_done()
        result = await hass.config_entries.flow.async_configure(flow_id)
    return result


async def _fill(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    for text in TEXTS:
        await add(hass, text)
    now = dt_util.utcnow()
    await entry.runtime_data.conversations.save(
        [
            (
                None,
                ConversationInfo(conversation_id="c1", started_at=now),
                [
                    NewMessage(role=MessageRole.USER, content="Bins?", created_at=now),
                    NewMessage(
                        role=MessageRole.ASSISTANT,
                        content="On Thursday.",
                        created_at=now,
                    ),
                ],
            )
        ]
    )
    await settle(hass, entry)


async def _join(hass: HomeAssistant, entry: MockConfigEntry, url: str) -> None:
    """Offered the memories at `url`, go back once, then use them: no copy."""
    other = PostgresStore(url, model=store_model(entry.data))
    await other.open()
    try:
        shed = (await other.add(_memory("Ben's bike is in the shed"))).item.id
    finally:
        await other.close()
    result = await _storage(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_BACKEND: BACKEND_POSTGRESQL, CONF_DB_URL: url},
    )
    assert result["type"] is FlowResultType.MENU
    assert result["step_id"] == "storage_existing"
    assert result["menu_options"] == ["storage_use_existing", "storage"]
    back = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "storage"}
    )
    assert back["step_id"] == "storage"
    result = await _submit_and_wait(
        hass, back, {CONF_BACKEND: BACKEND_POSTGRESQL, CONF_DB_URL: url}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "storage_use_existing"}
    )
    if result["type"] is FlowResultType.SHOW_PROGRESS:
        await hass.async_block_till_done()
        result = await hass.config_entries.flow.async_configure(result["flow_id"])
    assert result["reason"] == "storage_joined"
    assert entry.data[CONF_BACKEND] == BACKEND_POSTGRESQL
    assert entry.data[CONF_DB_URL] == url
    counts = await _pg_counts(url)  # nothing copied into it
    assert (counts["memories"], counts["conversation_messages"]) == (5, 2)
    assert entry_state(entry) is ConfigEntryState.LOADED
    assert isinstance(_store(entry), PostgresStore)
    assert shed in await search_ids(hass, query="bike shed")


async def test_move_to_postgresql_and_back(
    hass: HomeAssistant,
    postgres_url: str,
    postgres_database: str,
    embedding_server: FakeEmbeddingServer,
    database_file: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """SQLite → PostgreSQL copies all, file untouched; back renames the file aside.

    After each move the entry runs on the new backend: PostgreSQL serves the
    moved memories, then a new SQLite file does; joining a database uses the
    memories another store put there.
    """
    caplog.set_level(logging.DEBUG)
    url = await _owner_url(postgres_url, postgres_database)
    entry = await setup(hass, provider_entry(embedding_server))
    await _fill(hass, entry)
    # Stopping the SQLite store checkpoints its log into the file, so the
    # source's digest is taken stopped; the move finds it stopped.
    assert await hass.config_entries.async_unload(entry.entry_id)
    before = _digest(database_file)

    result = await _storage(hass, entry)
    same = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BACKEND: BACKEND_SQLITE}
    )
    assert same["errors"] == {"base": "storage_unchanged"}
    result = await _submit_and_wait(
        hass, same, {CONF_BACKEND: BACKEND_POSTGRESQL, CONF_DB_URL: url}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "moved_kept_sqlite"
    assert _placeholders(result) == {
        "memories": "3",
        "messages": "2",
        "vectors": "3",
    }
    assert await _pg_counts(url) == {
        "memories": 3,
        "conversation_messages": 2,
        "memory_vectors": 3,
    }
    assert entry.data[CONF_BACKEND] == BACKEND_POSTGRESQL
    assert entry.data[CONF_DB_URL] == url
    assert entry_state(entry) is ConfigEntryState.LOADED
    assert isinstance(_store(entry), PostgresStore)
    moved = {r["content"]: r["id"] for r in await rows(url, _CONTENTS)}
    assert sorted(moved) == sorted(TEXTS)
    for text in TEXTS:  # served from PostgreSQL
        assert moved[text] in await search_ids(hass, query=text)
    later = await add(hass, "The boiler is serviced in March")
    await embedding_until(hass, entry, partial(_vectors, url, 4))
    assert await rows(url, "SELECT id FROM memories WHERE id = $1", later)
    assert _digest(database_file) == before  # the source, byte for byte

    # Back: the stored password is never shown.
    result = await _storage(hass, entry)
    assert _suggested(result, CONF_DB_URL) == redact_url(url)
    assert SECRET not in repr(result)
    result = await _submit_and_wait(
        hass, result, {CONF_BACKEND: BACKEND_SQLITE, CONF_DB_URL: redact_url(url)}
    )
    assert result["reason"] == "moved_kept_postgresql_aside"
    assert _placeholders(result)["memories"] == "4"
    assert _placeholders(result)["messages"] == "2"
    assert _placeholders(result)["vectors"] == "4"
    aside = database_file.with_name(_placeholders(result)["aside"])
    assert aside.name.startswith("memory.db.before-move-")
    # Renamed aside, never merged nor deleted: the old file is as it was.
    assert _digest(aside) == before
    assert _sqlite_memories(aside) == 3
    assert _sqlite_memories(database_file) == 4
    assert entry.data[CONF_BACKEND] == BACKEND_SQLITE
    assert CONF_DB_URL not in entry.data
    assert entry_state(entry) is ConfigEntryState.LOADED
    store = _store(entry)
    assert isinstance(store, MemoryStore)
    assert store.path == database_file
    for text in (*TEXTS, "The boiler is serviced in March"):
        assert await search_ids(hass, query=text)  # the new file holds them
    assert await _pg_counts(url) == {  # PostgreSQL keeps its copy
        "memories": 4,
        "conversation_messages": 2,
        "memory_vectors": 4,
    }

    # Again to the same database: it holds memories, so it is offered, not
    # copied; another Home Assistant wrote one more meanwhile.
    await _join(hass, entry, url)
    for text in TEXTS:
        assert moved[text] in await search_ids(hass, query=text)
    _no_secret(caplog=caplog)
    assert await hass.config_entries.async_unload(entry.entry_id)


async def test_a_failed_copy_keeps_the_old_backend(
    hass: HomeAssistant,
    postgres_url: str,
    postgres_database: str,
    database_file: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A role that may not create tables: the copy fails, nothing is lost or changed."""
    caplog.set_level(logging.DEBUG)
    role = await _role(postgres_url)  # may connect, may not create in public
    url = role_url(postgres_database, role, SECRET)
    entry = MockConfigEntry(
        domain=DOMAIN, title="Assist Memory", data={CONF_PROVIDER: PROVIDER_KEYWORD}
    )
    await setup(hass, entry)
    for text in TEXTS:
        await add(hass, text)
    result = await _storage(hass, entry)
    result = await _submit_and_wait(
        hass, result, {CONF_BACKEND: BACKEND_POSTGRESQL, CONF_DB_URL: url}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "move_failed"
    assert "permission denied" in _placeholders(result)["error"]
    assert entry.data == {CONF_PROVIDER: PROVIDER_KEYWORD}
    assert entry_state(entry) is ConfigEntryState.LOADED
    for text in TEXTS:
        assert await search_ids(hass, query=text)
    connection = await asyncpg.connect(postgres_database)
    try:
        assert await connection.fetchval("SELECT to_regclass('memories')") is None
    finally:
        await connection.close()
    assert database_file.exists()
    _no_secret(result, caplog=caplog)


async def _migrated(url: str, *statements: str) -> None:
    """Give the database at `url` the engine's tables (as its owner), then run more."""
    connection = await asyncpg.connect(url)
    try:
        await migrate(connection)
        for sql in statements:
            await connection.execute(sql)
    finally:
        await connection.close()


async def _keyword_entry(hass: HomeAssistant, **data: Any) -> MockConfigEntry:
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Assist Memory",
        data={CONF_PROVIDER: PROVIDER_KEYWORD, **data},
    )
    await setup(hass, entry)
    return entry


def _aside_files(database_file: Path) -> list[str]:
    return [p.name for p in database_file.parent.iterdir() if "before-move" in p.name]


async def test_failed_moves_back_keep_everything(
    hass: HomeAssistant,
    postgres_url: str,
    postgres_database: str,
    database_file: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A table the copy cannot read, or a folder it cannot write: nothing lost.

    The entry runs on PostgreSQL, its old SQLite file in the way of a copy
    back; each failed copy puts that file back as it was and loads the
    entry again on PostgreSQL, which still serves every memory.
    """
    caplog.set_level(logging.DEBUG)
    # Into a database whose tables this role may not read: a form error.
    async with fresh_database(postgres_url) as unreadable:
        await _migrated(unreadable)  # owned by the superuser
        role = await _role(postgres_url)  # may connect, may not read them
        entry = await _keyword_entry(hass)
        await add(hass, TEXTS[0])
        result = await _storage(hass, entry)
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"],
            {
                CONF_BACKEND: BACKEND_POSTGRESQL,
                CONF_DB_URL: role_url(unreadable, role, SECRET),
            },
        )
        assert result["errors"] == {"base": "pg_no_access"}
        hass.config_entries.flow.async_abort(result["flow_id"])

    url = await _owner_url(postgres_url, postgres_database)
    result = await _submit_and_wait(
        hass,
        await _storage(hass, entry),
        {CONF_BACKEND: BACKEND_POSTGRESQL, CONF_DB_URL: url},
    )
    assert result["reason"] == "moved_kept_sqlite"
    ids = [*(r["id"] for r in await rows(url, "SELECT id FROM memories"))]
    ids += [await add(hass, text) for text in TEXTS[1:]]
    kept = _digest(database_file)
    # The copy reads this table last: the SQLite side is written, then rolled back.
    owner = urlsplit(url).username
    revoke = f"REVOKE SELECT ON {_LAST_READ} FROM {owner}"  # noqa: S608 - fixed names
    await _admin(postgres_database, revoke)
    folder = database_file.parent
    for cause in (f"permission denied for table {_LAST_READ}", "cannot create"):
        result = await _submit_and_wait(
            hass, await _storage(hass, entry), {CONF_BACKEND: BACKEND_SQLITE}
        )
        assert result["reason"] == "move_failed"
        assert cause in _placeholders(result)["error"]
        _no_secret(result, caplog=caplog)
        assert entry.data[CONF_DB_URL] == url  # still where it was
        assert entry_state(entry) is ConfigEntryState.LOADED
        assert isinstance(_store(entry), PostgresStore)
        for text, item in zip(TEXTS, ids, strict=True):
            assert item in await search_ids(hass, query=text)
        if folder.is_dir():
            assert _aside_files(database_file) == []  # put back
            assert _digest(database_file) == kept
            # The user removed the old folder, and a file took its name.
            folder.rename(folder.with_name("memory.removed"))
            folder.write_text("not a folder")
    assert await hass.config_entries.async_unload(entry.entry_id)


async def test_a_target_with_other_rows_is_refused(
    hass: HomeAssistant, postgres_database: str
) -> None:
    """Rows besides memories (a rebuild here) still make the copy refuse it."""
    await _migrated(
        postgres_database,
        "INSERT INTO embedding_rebuilds (model, total, started_at) VALUES ('m', 1, 0)",
    )
    entry = await _keyword_entry(hass)
    await add(hass, TEXTS[0])
    result = await _storage(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BACKEND: BACKEND_POSTGRESQL, CONF_DB_URL: "x y"}
    )
    assert result["errors"] == {"base": "pg_invalid_url"}
    result = await _submit_and_wait(
        hass, result, {CONF_BACKEND: BACKEND_POSTGRESQL, CONF_DB_URL: postgres_database}
    )
    assert result["reason"] == "move_target_not_empty"
    assert "embedding_rebuilds" in _placeholders(result)["error"]
    assert entry.data == {CONF_PROVIDER: PROVIDER_KEYWORD}
    assert entry_state(entry) is ConfigEntryState.LOADED
    assert await search_ids(hass, query=TEXTS[0])


async def test_back_to_sqlite_without_a_file(
    hass: HomeAssistant, postgres_database: str, database_file: Path
) -> None:
    """No SQLite file in the way: nothing is set aside, the new file is made."""
    await _migrated(postgres_database)
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Assist Memory",
        data={
            CONF_PROVIDER: PROVIDER_KEYWORD,
            CONF_BACKEND: BACKEND_POSTGRESQL,
            CONF_DB_URL: postgres_database,
        },
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    assert isinstance(_store(entry), PostgresStore)
    assert not database_file.exists()  # PostgreSQL needs no file
    result = await _storage(hass, entry)
    result = await _submit_and_wait(hass, result, {CONF_BACKEND: BACKEND_SQLITE})
    assert result["reason"] == "moved_kept_postgresql"
    assert _placeholders(result)["memories"] == "0"
    assert entry.data == {CONF_PROVIDER: PROVIDER_KEYWORD, CONF_BACKEND: BACKEND_SQLITE}
    assert _sqlite_memories(database_file) == 0
    assert _aside_files(database_file) == []
    store = _store(entry)
    assert isinstance(store, MemoryStore)
    assert store.path == database_file


async def test_changing_the_provider_keeps_the_storage(
    hass: HomeAssistant, postgres_database: str
) -> None:
    """Reconfiguring the provider of a PostgreSQL entry keeps its URL."""
    data = {CONF_BACKEND: BACKEND_POSTGRESQL, CONF_DB_URL: postgres_database}
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Assist Memory",
        data={CONF_PROVIDER: PROVIDER_KEYWORD, **data},
    )
    entry.add_to_hass(hass)
    result = await start_reconfigure(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": PROVIDER_KEYWORD}
    )
    assert result["reason"] == "reconfigure_successful"
    assert entry.data == {CONF_PROVIDER: PROVIDER_KEYWORD, **data}
    await hass.async_block_till_done()
    # Reconfigure reloaded it: now on the server, which stays usable.
    assert isinstance(_store(entry), PostgresStore)
    assert await hass.config_entries.async_unload(entry.entry_id)
