"""A real PostgreSQL server with pgvector for the tests (pytest plugin).

`postgres_url` (session): the URL of a superuser on a test server, from
`MEMORY_TEST_POSTGRES_URL` when it is set (that role must be a superuser:
pgvector is not a trusted extension), else of a server `script/postgres`
starts in a temporary folder (installing PostgreSQL 18 and pgvector with apt
the first time) and stops at the end of the session; with pytest-xdist each
worker has its own server on its own port. A server that does not start is
an error with the script's output, never a skip.

`postgres_database` (each test): a new empty database with the `vector`
extension, dropped afterwards, so tests never see each other's data;
`fresh_database` makes one without the extension.

Registered by `tests/conftest.py` (`pytest_plugins`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
import os
from pathlib import Path
import subprocess
from urllib.parse import urlsplit, urlunsplit
import uuid

import asyncpg
import pytest

SCRIPT = Path(__file__).parent.parent / "script" / "postgres"
URL_VARIABLE = "MEMORY_TEST_POSTGRES_URL"
# The first start installs PostgreSQL with apt: minutes on a slow mirror.
START_TIMEOUT = 900


def database_url(url: str, database: str) -> str:
    """Return `url` naming `database` instead of its own."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{database}"))


def role_url(url: str, role: str, password: str) -> str:
    """Return `url` logging in as `role` with `password` instead."""
    parts = urlsplit(url)
    netloc = f"{role}:{password}@{parts.hostname}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def unique_name(prefix: str) -> str:
    """Return a new SQL identifier: lower case letters, digits and `_`."""
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


@asynccontextmanager
async def fresh_database(admin_url: str, *, vector: bool = True) -> AsyncIterator[str]:
    """Make a new empty database (with `vector` or without), yield its URL, drop it."""
    name = unique_name("memory_test")
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        url = database_url(admin_url, name)
        if vector:
            connection = await asyncpg.connect(url)
            try:
                await connection.execute("CREATE EXTENSION vector")
            finally:
                await connection.close()
        try:
            yield url
        finally:
            await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603  # our own script, fixed arguments
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
        check=False,
    )


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Return a superuser's URL on a running PostgreSQL server with pgvector."""
    if url := os.environ.get(URL_VARIABLE):
        yield url
        return
    directory = tmp_path_factory.mktemp("postgres")
    started = _script("start", str(directory))
    if started.returncode:
        raise RuntimeError(
            f"script/postgres start {directory} failed (exit {started.returncode}):\n"
            f"{started.stdout}{started.stderr}"
        )
    try:
        yield started.stdout.strip().splitlines()[-1]
    finally:
        stopped = _script("stop", str(directory))
        if stopped.returncode:
            raise RuntimeError(
                f"script/postgres stop {directory} failed:\n"
                f"{stopped.stdout}{stopped.stderr}"
            )


@pytest.fixture
async def postgres_database(
    postgres_url: str, socket_enabled: None
) -> AsyncIterator[str]:
    """Yield the URL of a new database with `vector`, dropped after the test."""
    async with fresh_database(postgres_url) as url:
        yield url
