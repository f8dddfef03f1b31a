"""check_server against a real PostgreSQL 18 server with pgvector, no mocks.

Each problem is made for real: a wrong password, a closed port, a database
that does not exist, a role that may not create the extension, a database
whose server sees no pgvector (`extension_control_path` pointed at nothing,
PostgreSQL 18), a server that accepts and never answers. Only "too old" is
judged on a real server's answer with its version number lowered.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
import dataclasses
import logging
import socket
import time
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from custom_components.memory.engine.postgres import (
    MIN_SERVER_VERSION,
    ServerFacts,
    ServerProblem,
    check_server,
    classify,
)
from custom_components.memory.engine.postgres.server import _read_facts
from tests.postgres_server import (
    START_TIMEOUT,
    database_url,
    fresh_database,
    role_url,
    unique_name,
)

# Real sockets to 127.0.0.1; the first test of a session may wait for apt to
# install PostgreSQL (the fixture's start), longer than the default timeout.
pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.timeout(START_TIMEOUT),
]

SECRET = "Sup3r-Secret_pw"


@asynccontextmanager
async def login_role(admin_url: str, password: str = SECRET) -> AsyncIterator[str]:
    """Make a plain role (no superuser, no CREATE anywhere), yield its name, drop it."""
    name = unique_name("memory_role")
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}'")
        try:
            yield name
        finally:
            await admin.execute(f"DROP ROLE {name}")
    finally:
        await admin.close()


async def admin_execute(url: str, sql: str) -> None:
    """Run `sql` as the database's superuser."""
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


def closed_port() -> int:
    """Return a port on 127.0.0.1 nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_fresh_database_gets_the_extension(postgres_url: str) -> None:
    """Ok on a database without `vector`: the check creates it."""
    async with fresh_database(postgres_url, vector=False) as url:
        check = await check_server(url)
        assert check.problem is ServerProblem.OK, check.message
        assert check.ok
        assert check.server_version is not None
        assert check.vector_version is not None
        assert check.vector_version in check.message
        connection = await asyncpg.connect(url)
        try:
            installed = await connection.fetchval(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            )
        finally:
            await connection.close()
        assert installed == check.vector_version


async def test_a_database_with_the_extension_is_ok(postgres_database: str) -> None:
    """A database that has `vector` already is ok as it is."""
    check = await check_server(postgres_database, timeout=5)
    assert check.problem is ServerProblem.OK
    assert int(check.server_version.split(".")[0]) >= MIN_SERVER_VERSION // 10000  # type: ignore[union-attr]


async def test_a_wrong_password_is_invalid_auth(postgres_database: str) -> None:
    """The server refuses the password: invalid_auth, and no password in the message."""
    url = role_url(postgres_database, "memory", SECRET)
    check = await check_server(url)
    assert check.problem is ServerProblem.INVALID_AUTH
    assert not check.ok
    assert SECRET not in check.message


async def test_an_unknown_role_is_invalid_auth(postgres_database: str) -> None:
    """A role the server does not know reads as a wrong password."""
    check = await check_server(role_url(postgres_database, "nobody", SECRET))
    assert check.problem is ServerProblem.INVALID_AUTH


async def test_a_closed_port_cannot_connect(postgres_database: str) -> None:
    """Nothing listens on the port: cannot_connect, naming host and port only."""
    port = closed_port()
    parts = urlsplit(postgres_database)
    netloc = f"{parts.netloc.rpartition(':')[0]}:{port}"
    url = urlunsplit(parts._replace(netloc=netloc))
    check = await check_server(url, timeout=5)
    assert check.problem is ServerProblem.CANNOT_CONNECT
    assert f"127.0.0.1:{port}" in check.message


async def test_an_unknown_database(postgres_url: str) -> None:
    """The server has no such database: unknown_database, with its name."""
    name = unique_name("missing")
    check = await check_server(database_url(postgres_url, name))
    assert check.problem is ServerProblem.UNKNOWN_DATABASE
    assert name in check.message


async def test_a_role_that_may_not_create_the_extension(postgres_url: str) -> None:
    """The server has pgvector, the role may not add it: vector_not_permitted."""
    async with (
        fresh_database(postgres_url, vector=False) as url,
        login_role(postgres_url) as role,
    ):
        check = await check_server(role_url(url, role, SECRET))
    assert check.problem is ServerProblem.VECTOR_NOT_PERMITTED
    assert "CREATE EXTENSION vector;" in check.message
    assert "superuser" in check.message
    assert check.server_version is not None
    assert check.vector_version is None


async def test_a_server_without_pgvector(postgres_url: str) -> None:
    """The server sees no pgvector in this database: vector_unavailable."""
    async with fresh_database(postgres_url, vector=False) as url:
        # PostgreSQL 18 looks for extensions' control files along this path.
        await admin_execute(
            postgres_url,
            f"ALTER DATABASE {url.rpartition('/')[2]}"
            " SET extension_control_path = '/nonexistent'",
        )
        check = await check_server(url)
    assert check.problem is ServerProblem.VECTOR_UNAVAILABLE
    assert check.server_version is not None
    major = check.server_version.split(".")[0]
    assert f"postgresql-{major}-pgvector" in check.message
    assert "add-on" in check.message


async def test_a_read_only_database_cannot_get_the_extension(postgres_url: str) -> None:
    """CREATE EXTENSION fails for another reason than privilege: the server's reason."""
    async with fresh_database(postgres_url, vector=False) as url:
        await admin_execute(
            postgres_url,
            f"ALTER DATABASE {url.rpartition('/')[2]}"
            " SET default_transaction_read_only = on",
        )
        check = await check_server(url)
    assert check.problem is ServerProblem.VECTOR_UNAVAILABLE
    assert "read-only" in check.message


async def test_a_catalog_the_role_may_not_read(postgres_url: str) -> None:
    """A query of the check refused after connecting: cannot_connect, with the reason."""
    async with (
        fresh_database(postgres_url) as url,
        login_role(postgres_url) as role,
    ):
        await admin_execute(url, "REVOKE SELECT ON pg_extension FROM PUBLIC")
        check = await check_server(role_url(url, role, SECRET))
    assert check.problem is ServerProblem.CANNOT_CONNECT
    assert "pg_extension" in check.message
    assert SECRET not in check.message


@pytest.mark.parametrize(
    "url",
    [
        "",
        "not a url",
        f"mysql://memory:{SECRET}@127.0.0.1/memory",
        f"memory:{SECRET}@127.0.0.1:5432/memory",
        f"postgresql://memory:{SECRET}@127.0.0.1:notaport/memory",
        f"postgresql://memory:{SECRET}@[::1/memory",
        f"postgresql://memory:{SECRET}@127.0.0.1/memory?sslmode=sometimes",
    ],
)
async def test_garbage_is_an_invalid_url(url: str) -> None:
    """What asyncpg cannot read is invalid_url, without the text in the message."""
    check = await check_server(url, timeout=5)
    assert check.problem is ServerProblem.INVALID_URL
    assert SECRET not in check.message


async def test_a_silent_server_times_out() -> None:
    """A server that accepts and never answers: cannot_connect within the timeout."""
    held: list[asyncio.StreamWriter] = []

    async def accept(
        _reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        held.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        started = time.monotonic()
        check = await check_server(
            f"postgresql://memory:{SECRET}@127.0.0.1:{port}/memory", timeout=0.5
        )
        elapsed = time.monotonic() - started
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()
    assert held, "the check never connected"
    assert check.problem is ServerProblem.CANNOT_CONNECT
    assert "0.5 s" in check.message
    assert elapsed < 2


async def test_too_old_is_judged_on_the_real_answer(postgres_database: str) -> None:
    """The server's real answer, its version lowered below the minimum."""
    connection = await asyncpg.connect(postgres_database)
    try:
        facts = await _read_facts(connection, 5)
    finally:
        await connection.close()
    assert facts.vector_installed is not None
    assert classify(facts) is not None
    old = dataclasses.replace(
        facts, version_num=MIN_SERVER_VERSION - 1, version="13.22"
    )
    check = classify(old)
    assert check is not None
    assert check.problem is ServerProblem.SERVER_TOO_OLD
    assert "13.22" in check.message
    assert "14" in check.message
    at_minimum = dataclasses.replace(facts, version_num=MIN_SERVER_VERSION)
    assert classify(at_minimum) == classify(facts)


def test_available_but_not_installed_is_left_to_the_check() -> None:
    """Classify says None when only CREATE EXTENSION stands between."""
    assert classify(ServerFacts(180006, "18.6", "0.8.7", None)) is None


async def test_no_log_line_holds_the_password(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Every outcome, logged at DEBUG: no record holds the password, anywhere."""
    caplog.set_level(logging.DEBUG)
    async with (
        fresh_database(postgres_url, vector=False) as url,
        login_role(postgres_url) as role,
    ):
        urls = [
            role_url(url, role, SECRET),  # vector_not_permitted
            role_url(url, "memory", SECRET),  # invalid_auth
            f"postgresql://{role}@127.0.0.1:{closed_port()}/x?password={SECRET}",
            f"postgresql://{role}:{SECRET}@127.0.0.1:notaport/x",
            f"mysql://{role}:{SECRET}@127.0.0.1/x",
        ]
        checks = [await check_server(each, timeout=5) for each in urls]
    assert {check.problem for check in checks} >= {
        ServerProblem.VECTOR_NOT_PERMITTED,
        ServerProblem.INVALID_AUTH,
        ServerProblem.CANNOT_CONNECT,
        ServerProblem.INVALID_URL,
    }
    assert caplog.records
    for record in caplog.records:
        assert SECRET not in record.getMessage(), record.getMessage()
    assert all(SECRET not in check.message for check in checks)
