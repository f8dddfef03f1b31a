"""PostgreSQL: the foundation of a second storage backend (issue #26).

`server` (can the engine use this server: connection, version, pgvector;
`redact_url` hides a URL's password). Nothing uses this room yet.
"""

from .server import (
    MIN_SERVER_VERSION,
    ServerCheck,
    ServerFacts,
    ServerProblem,
    check_server,
    classify,
    redact_url,
)

__all__ = [
    "MIN_SERVER_VERSION",
    "ServerCheck",
    "ServerFacts",
    "ServerProblem",
    "check_server",
    "classify",
    "redact_url",
]
