"""The storage backend in the config flow: set-up on PostgreSQL and moving (#26).

Real PostgreSQL servers (`postgres_url`, `postgres_database`), real SQLite
files and real flows: each problem `check_server` names is made for real
and gives its own error; reconfigure moves every memory, message and vector
to PostgreSQL and back, verified, keeping the source; a database that holds
memories already is offered for use instead of a copy; a failed copy leaves
the entry on its old backend with nothing lost.
"""

from __future__ import annotations

from contextlib import closing
import hashlib
import logging
from pathlib import Path
import sqlite3
from typing import Any
from unittest.mock import patch

import asyncpg
from homeassistant.config_entries import ConfigEntryState, ConfigFlowResult
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.requirements import RequirementsNotFound
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.memory import move
from custom_components.memory.const import (
    BACKEND_POSTGRESQL,
    BACKEND_SQLITE,
    CONF_BACKEND,
    CONF_DB_URL,
    CONF_PROVIDER,
    DOMAIN,
    PROVIDER_KEYWORD,
)
from custom_components.memory.engine import ConversationInfo, MessageRole, NewMessage
from custom_components.memory.engine.postgres import (
    migrate,
    redact_url,
    sqlite_to_postgres,
)
from tests.postgres_server import (
    START_TIMEOUT,
    database_url,
    fresh_database,
    role_url,
    unique_name,
)
from tests.provider_servers import FakeEmbeddingServer

from . import add, entry_state, search_ids, start_reconfigure
from .test_config_flow_providers import _placeholders, _suggested
from .test_providers import provider_entry, settle, setup

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
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _no_secret(*results: Any, caplog: pytest.LogCaptureFixture) -> None:
    for result in results:
        assert SECRET not in repr(result)
    assert SECRET not in caplog.text


async def _postgresql_step(hass: HomeAssistant) -> ConfigFlowResult:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": "user"}
    )
    assert result["type"] is FlowResultType.MENU
    assert result["menu_options"] == [BACKEND_SQLITE, BACKEND_POSTGRESQL]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": BACKEND_POSTGRESQL}
    )
    assert result["step_id"] == "postgresql"
    return result


async def _closed_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_each_server_problem_has_its_error(
    hass: HomeAssistant,
    postgres_url: str,
    postgres_database: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each problem check_server names is its own translated error; then set-up works."""
    caplog.set_level(logging.DEBUG)
    result = await _postgresql_step(hass)
    flow_id = result["flow_id"]
    role = await _role(postgres_url)
    host = f"127.0.0.1:{await _closed_port()}"
    async with (
        fresh_database(postgres_url, vector=False) as no_vector,
        fresh_database(postgres_url, vector=False) as no_pgvector,
    ):
        await _admin(
            postgres_url,
            f"ALTER DATABASE {no_pgvector.rpartition('/')[2]}"
            " SET extension_control_path = '/nonexistent'",
        )
        cases = {
            f"mysql://memory:{SECRET}@127.0.0.1/memory": "pg_invalid_url",
            f"postgresql://memory:{SECRET}@{host}/memory": "pg_cannot_connect",
            role_url(postgres_database, role, "wrong-" + SECRET): "pg_invalid_auth",
            database_url(postgres_url, unique_name("missing")): "pg_unknown_database",
            role_url(no_vector, role, SECRET): "pg_vector_not_permitted",
            no_pgvector: "pg_vector_unavailable",
        }
        answers = []
        for url, error in cases.items():
            result = await hass.config_entries.flow.async_configure(
                flow_id, {CONF_DB_URL: url}
            )
            answers.append(result)
            assert result["type"] is FlowResultType.FORM, url
            assert result["errors"] == {"base": error}, redact_url(url)

    url = role_url(postgres_database, role, SECRET)
    result = await hass.config_entries.flow.async_configure(flow_id, {CONF_DB_URL: url})
    assert result["type"] is FlowResultType.MENU
    assert result["step_id"] == "provider"
    result = await hass.config_entries.flow.async_configure(
        flow_id, {"next_step_id": PROVIDER_KEYWORD}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {
        CONF_BACKEND: BACKEND_POSTGRESQL,
        CONF_DB_URL: url,
        CONF_PROVIDER: PROVIDER_KEYWORD,
    }
    _no_secret(
        *answers, {k: v for k, v in result.items() if k != "data"}, caplog=caplog
    )


async def test_setup_on_sqlite_records_it(hass: HomeAssistant) -> None:
    """SQLite (this Home Assistant) comes first; its entry says so."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": "user"}
    )
    assert result["menu_options"] == [BACKEND_SQLITE, BACKEND_POSTGRESQL]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": BACKEND_SQLITE}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": PROVIDER_KEYWORD}
    )
    assert result["data"] == {CONF_BACKEND: BACKEND_SQLITE, CONF_PROVIDER: "keyword"}


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


async def test_move_to_postgresql_and_back(
    hass: HomeAssistant,
    postgres_url: str,
    postgres_database: str,
    embedding_server: FakeEmbeddingServer,
    database_file: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """SQLite → PostgreSQL copies all, file untouched; back renames the file aside."""
    caplog.set_level(logging.DEBUG)
    url = await _owner_url(postgres_url, postgres_database)
    entry = await setup(hass, provider_entry(embedding_server))
    await _fill(hass, entry)
    copied: list[tuple[str, str]] = []

    async def copy_and_look(path: Path, *args: Any, **kwargs: Any) -> Any:
        # The real copy; the file's digest is taken before the entry reloads
        # (on this branch set-up still opens SQLite, which writes to it).
        before = _digest(path)  # the entry is unloaded: nothing writes now
        report = await sqlite_to_postgres(path, *args, **kwargs)
        copied.append((before, _digest(path)))
        return report

    result = await _storage(hass, entry)
    same = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BACKEND: BACKEND_SQLITE}
    )
    assert same["errors"] == {"base": "storage_unchanged"}
    with patch.object(move, "sqlite_to_postgres", copy_and_look):
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
    [(before, after)] = copied
    assert after == before  # the source, byte for byte

    # Back: the stored password is never shown.
    result = await _storage(hass, entry)
    assert _suggested(result, CONF_DB_URL) == redact_url(url)
    assert SECRET not in repr(result)
    result = await _submit_and_wait(
        hass, result, {CONF_BACKEND: BACKEND_SQLITE, CONF_DB_URL: redact_url(url)}
    )
    assert result["reason"] == "moved_kept_postgresql_aside"
    assert _placeholders(result)["memories"] == "3"
    assert _placeholders(result)["messages"] == "2"
    assert _placeholders(result)["vectors"] == "3"
    aside = database_file.with_name(_placeholders(result)["aside"])
    assert aside.name.startswith("memory.db.before-move-")
    # Renamed aside, never merged nor deleted: each file holds the three.
    assert _sqlite_memories(aside) == _sqlite_memories(database_file) == 3
    assert entry.data[CONF_BACKEND] == BACKEND_SQLITE
    assert CONF_DB_URL not in entry.data
    assert entry_state(entry) is ConfigEntryState.LOADED
    for text in TEXTS:
        assert await search_ids(hass, query=text)  # the new file holds them
    assert await _pg_counts(url) == {  # PostgreSQL keeps its copy
        "memories": 3,
        "conversation_messages": 2,
        "memory_vectors": 3,
    }

    # Again to the same database: it holds memories, so it is offered, not copied.
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
    assert await _pg_counts(url) == {  # nothing copied into it
        "memories": 3,
        "conversation_messages": 2,
        "memory_vectors": 3,
    }
    _no_secret(caplog=caplog)


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


async def test_the_driver_cannot_be_installed(hass: HomeAssistant) -> None:
    """A system without asyncpg wheels: the flow says so instead of failing."""
    result = await _postgresql_step(hass)
    with patch(
        "custom_components.memory.storage_flow.async_install_driver",
        side_effect=RequirementsNotFound(DOMAIN, ["asyncpg"]),
    ):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_DB_URL: "postgresql://u@127.0.0.1/x"}
        )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "driver_unavailable"


async def test_failed_moves_back_keep_everything(
    hass: HomeAssistant,
    postgres_url: str,
    postgres_database: str,
    database_file: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Unreadable tables or a server gone: the SQLite file is put back, nothing lost."""
    caplog.set_level(logging.DEBUG)
    await _migrated(postgres_database)  # owned by the superuser
    role = await _role(postgres_url)  # may connect, may not read them
    url = role_url(postgres_database, role, SECRET)
    entry = await _keyword_entry(hass)
    ids = [await add(hass, text) for text in TEXTS]

    # Into a database whose tables this role may not read: a form error.
    result = await _storage(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BACKEND: BACKEND_POSTGRESQL, CONF_DB_URL: url}
    )
    assert result["errors"] == {"base": "pg_no_access"}
    hass.config_entries.flow.async_abort(result["flow_id"])

    gone = f"postgresql://{role}:{SECRET}@127.0.0.1:{await _closed_port()}/memory"
    for db_url, cause in ((url, "permission denied"), (gone, "Error")):
        data = {CONF_PROVIDER: PROVIDER_KEYWORD, CONF_BACKEND: BACKEND_POSTGRESQL}
        hass.config_entries.async_update_entry(
            entry, data={**data, CONF_DB_URL: db_url}
        )
        result = await _storage(hass, entry)
        result = await _submit_and_wait(hass, result, {CONF_BACKEND: BACKEND_SQLITE})
        assert result["reason"] == "move_failed"
        assert cause in _placeholders(result)["error"]
        _no_secret(result, caplog=caplog)
        assert entry.data[CONF_DB_URL] == db_url  # still where it was
        assert entry_state(entry) is ConfigEntryState.LOADED
        assert _aside_files(database_file) == []  # put back
        for text, item in zip(TEXTS, ids, strict=True):
            assert item in await search_ids(hass, query=text)


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
    entry.add_to_hass(hass)  # not loaded: no file yet on this branch
    assert not database_file.exists()
    result = await _storage(hass, entry)
    result = await _submit_and_wait(hass, result, {CONF_BACKEND: BACKEND_SQLITE})
    assert result["reason"] == "moved_kept_postgresql"
    assert _placeholders(result)["memories"] == "0"
    assert entry.data == {CONF_PROVIDER: PROVIDER_KEYWORD, CONF_BACKEND: BACKEND_SQLITE}
    assert _sqlite_memories(database_file) == 0
    assert _aside_files(database_file) == []


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
