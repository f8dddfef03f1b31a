"""Can the engine use this PostgreSQL server? One connection tells.

`check_server` connects with asyncpg, reads the server's version and what
it knows of pgvector, creates the `vector` extension in the database when
it may, and names what stands in the way as a `ServerProblem` with a
message a person can act on. `redact_url` hides a URL's password; no
message and no log line here holds the password or the whole URL.

asyncpg is imported inside `check_server`: the rest of the engine, and an
installation that keeps its memories in SQLite, never needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from enum import StrEnum
import logging
import re
from typing import Any, Final
from urllib.parse import SplitResult, unquote, urlsplit

_LOGGER = logging.getLogger(__name__)

# PostgreSQL 13 reached its end of life in November 2025: 14 is the oldest
# major release that still gets security fixes, and pgvector 0.8 builds for it.
MIN_SERVER_VERSION: Final = 140000
MIN_SERVER_NAME: Final = "14"
VECTOR: Final = "vector"
SCHEMES: Final = frozenset({"postgresql", "postgres"})

_REDACTED = "***"
_PASSWORD_PARAMETER = re.compile(
    r"(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s#;]*)"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

_FACTS_SQL: Final = """
SELECT current_setting('server_version_num')::int AS version_num,
       current_setting('server_version') AS version,
       (SELECT default_version FROM pg_available_extensions WHERE name = $1)
           AS vector_available,
       (SELECT extversion FROM pg_extension WHERE extname = $1)
           AS vector_installed
"""


class ServerProblem(StrEnum):
    """What stands between the engine and the server (`ok`: nothing)."""

    OK = "ok"
    INVALID_URL = "invalid_url"
    CANNOT_CONNECT = "cannot_connect"
    INVALID_AUTH = "invalid_auth"
    UNKNOWN_DATABASE = "unknown_database"
    SERVER_TOO_OLD = "server_too_old"
    VECTOR_UNAVAILABLE = "vector_unavailable"
    VECTOR_NOT_PERMITTED = "vector_not_permitted"


@dataclass(frozen=True, slots=True)
class ServerCheck:
    """The answer of `check_server`: the problem, a message, what is known."""

    problem: ServerProblem
    message: str
    server_version: str | None = None
    vector_version: str | None = None

    @property
    def ok(self) -> bool:
        """Say whether the engine can use the server as it is now."""
        return self.problem is ServerProblem.OK


@dataclass(frozen=True, slots=True)
class ServerFacts:
    """What a server says of itself and of pgvector, read in one query."""

    version_num: int
    version: str
    vector_available: str | None
    vector_installed: str | None


def driver_errors(*more: type[Exception]) -> tuple[type[Exception], ...]:
    """Return what a call to the server raises when the server, not the SQL, fails.

    asyncpg's errors (imported here, when PostgreSQL is in use), the
    socket's and a timeout's; then `more` (a connect's `ValueError` for a
    URL it cannot read).
    """
    import asyncpg  # noqa: PLC0415

    return (
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
        OSError,
        TimeoutError,
        *more,
    )


def redact_url(url: str) -> str:
    """Return `url` with its password, in the user part or a parameter, as `***`.

    Reads the text as it comes, without parsing it as a URL, so that
    garbage never raises and a password that breaks the URL's grammar is
    hidden all the same.
    """
    text = _PASSWORD_PARAMETER.sub(rf"\g<1>{_REDACTED}", str(url))
    match = _SCHEME.match(text)
    start = match.end() if match else 0
    ends = [i for i in (text.find("?", start), text.find("#", start)) if i >= 0]
    end = min(ends, default=len(text))
    at = text.rfind("@", start, end)
    colon = text.find(":", start, at) if at >= 0 else -1
    if colon < 0:
        return text
    return f"{text[: colon + 1]}{_REDACTED}{text[at:]}"


def _parts(url: str) -> SplitResult | None:
    """Split `url` into its parts, or None when it cannot be split."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises ValueError on a port that is no number
    except ValueError:
        return None
    return parts


def _password(url: str) -> str | None:
    """Return the URL's password as written and decoded, if it has one."""
    return parts.password if (parts := _parts(url)) else None


def scrub(text: str, url: str) -> str:
    """Return `text` (an error's words) with the URL's password taken out."""
    text = redact_url(text)
    password = _password(url)
    for form in {password, unquote(password)} if password else ():
        text = text.replace(form, _REDACTED)
    return text


def server_name(url: str) -> str:
    """Name the server of `url` for a message: host and port, never more."""
    if (parts := _parts(url)) is None:
        return "the server"
    host = parts.hostname or "the local socket"
    return f"{host}:{parts.port}" if parts.port else host


def _database(url: str) -> str:
    """Name the database of `url` for a message."""
    name = unquote(parts.path.lstrip("/")) if (parts := _parts(url)) else ""
    return f'"{name}"' if name else "the database"


def classify(facts: ServerFacts) -> ServerCheck | None:
    """Judge a server's facts: a verdict, or None when `vector` must be created."""
    version = facts.version
    if facts.version_num < MIN_SERVER_VERSION:
        return ServerCheck(
            ServerProblem.SERVER_TOO_OLD,
            f"PostgreSQL {version} is too old: {MIN_SERVER_NAME} or newer is needed.",
            server_version=version,
        )
    if facts.vector_installed is not None:
        return ServerCheck(
            ServerProblem.OK,
            f"PostgreSQL {version} with pgvector {facts.vector_installed}.",
            server_version=version,
            vector_version=facts.vector_installed,
        )
    if facts.vector_available is None:
        major = facts.version_num // 10000
        return ServerCheck(
            ServerProblem.VECTOR_UNAVAILABLE,
            f"PostgreSQL {version} has no pgvector extension: install pgvector"
            f" on the server (Debian and Ubuntu: the postgresql-{major}-pgvector"
            " package; the PostgreSQL add-on: its pgvector option).",
            server_version=version,
        )
    return None


def _not_permitted(facts: ServerFacts, url: str) -> ServerCheck:
    """Name the missing privilege to create `vector`, and the way out."""
    return ServerCheck(
        ServerProblem.VECTOR_NOT_PERMITTED,
        f"pgvector {facts.vector_available} is on the server but not in"
        f" {_database(url)}, and this role may not add it: run"
        " `CREATE EXTENSION vector;` as a superuser in that database.",
        server_version=facts.version,
    )


async def _read_facts(connection: Any, seconds: float) -> ServerFacts:
    """Read the server's version and pgvector's state in this database."""
    row = await connection.fetchrow(_FACTS_SQL, VECTOR, timeout=seconds)
    return ServerFacts(
        version_num=row["version_num"],
        version=row["version"],
        vector_available=row["vector_available"],
        vector_installed=row["vector_installed"],
    )


async def _check_connected(connection: Any, url: str, seconds: float) -> ServerCheck:
    """Judge the server over an open connection; create `vector` when it may."""
    import asyncpg  # noqa: PLC0415

    facts = await _read_facts(connection, seconds)
    if (verdict := classify(facts)) is not None:
        return verdict
    try:
        await connection.execute(
            f"CREATE EXTENSION IF NOT EXISTS {VECTOR}", timeout=seconds
        )
    except asyncpg.InsufficientPrivilegeError:
        _LOGGER.debug("CREATE EXTENSION %s refused on %s", VECTOR, server_name(url))
        return _not_permitted(facts, url)
    except asyncpg.PostgresError as err:
        reason = scrub(str(err), url)
        _LOGGER.debug(
            "CREATE EXTENSION %s failed on %s: %s", VECTOR, server_name(url), reason
        )
        return ServerCheck(
            ServerProblem.VECTOR_UNAVAILABLE,
            f"pgvector {facts.vector_available} is on the server but could not be"
            f" added to {_database(url)}: {reason}.",
            server_version=facts.version,
        )
    _LOGGER.debug("Created extension %s on %s", VECTOR, server_name(url))
    after = await _read_facts(connection, seconds)
    # Installed now, so classify judges; were it not, it still may not be added.
    return classify(after) or _not_permitted(after, url)


def _invalid_url() -> ServerCheck:
    """Say that the URL is not one asyncpg can use."""
    return ServerCheck(
        ServerProblem.INVALID_URL,
        "The URL is not a PostgreSQL connection URL"
        " (postgresql://USER:PASSWORD@HOST:PORT/DATABASE).",
    )


def connect_failure(err: BaseException, url: str, timeout: float) -> ServerCheck:
    """Name what a failed connection attempt says."""
    import asyncpg  # noqa: PLC0415

    target = server_name(url)
    if isinstance(err, ValueError):  # asyncpg's ClientConfigurationError too
        return _invalid_url()
    if isinstance(
        err,
        asyncpg.InvalidAuthorizationSpecificationError
        | asyncpg.InsufficientPrivilegeError,
    ):
        return ServerCheck(
            ServerProblem.INVALID_AUTH,
            f"{target} refused the user name or password, or this role may not"
            f" connect to {_database(url)}.",
        )
    if isinstance(err, asyncpg.InvalidCatalogNameError):
        return ServerCheck(
            ServerProblem.UNKNOWN_DATABASE,
            f"{target} has no database {_database(url)}: create it first.",
        )
    if isinstance(err, TimeoutError):
        return ServerCheck(
            ServerProblem.CANNOT_CONNECT,
            f"{target} did not answer within {timeout:g} s.",
        )
    return ServerCheck(
        ServerProblem.CANNOT_CONNECT,
        f"Cannot reach PostgreSQL at {target}: {scrub(str(err), url) or type(err).__name__}.",
    )


async def check_server(url: str, *, timeout: float = 10.0) -> ServerCheck:  # noqa: ASYNC109
    """Connect to `url` and say whether the engine can use the server.

    Creates the `vector` extension in the database when pgvector is on the
    server but not yet in the database and the role may create it.
    `timeout` bounds the connection, then the check's queries together,
    then the close (a server that hangs gives `CANNOT_CONNECT`).
    """
    import asyncpg  # noqa: PLC0415

    if not _SCHEME.match(url) or url.partition("://")[0].lower() not in SCHEMES:
        _LOGGER.debug("Not a PostgreSQL URL: %s", redact_url(url)[:80])
        return _invalid_url()
    target = server_name(url)
    try:
        async with asyncio.timeout(timeout):
            connection = await asyncpg.connect(url, timeout=timeout)
    except driver_errors(ValueError) as err:
        _LOGGER.debug(
            "Connecting to %s failed: %s: %s",
            target,
            type(err).__name__,
            scrub(str(err), url),
        )
        return connect_failure(err, url, timeout)
    try:
        async with asyncio.timeout(timeout):
            check = await _check_connected(connection, url, timeout)
    except driver_errors() as err:
        _LOGGER.debug(
            "Checking %s failed: %s: %s",
            target,
            type(err).__name__,
            scrub(str(err), url),
        )
        check = (
            connect_failure(err, url, timeout)
            if isinstance(err, TimeoutError)
            else ServerCheck(
                ServerProblem.CANNOT_CONNECT,
                f"{target} answered the check with an error: {scrub(str(err), url)}.",
            )
        )
    finally:
        # asyncpg aborts the connection itself when a polite close fails.
        with contextlib.suppress(asyncpg.InterfaceError, OSError, TimeoutError):
            await connection.close(timeout=timeout)
    _LOGGER.debug("Checked %s: %s", target, check.problem)
    return check
