"""redact_url: a URL's password hidden in every shape, garbage never raising."""

from __future__ import annotations

import pytest

from custom_components.memory.engine.postgres import redact_url


@pytest.mark.parametrize(
    ("url", "redacted"),
    [
        (
            "postgresql://memory:s3cret@127.0.0.1:5432/memory",
            "postgresql://memory:***@127.0.0.1:5432/memory",
        ),
        ("postgres://u:p%40ss@db.local/x", "postgres://u:***@db.local/x"),
        # An unencoded @ or / in the password: hidden up to the last @.
        ("postgresql://u:p@ss/w@host/db", "postgresql://u:***@host/db"),
        ("postgresql://u:@host/db", "postgresql://u:***@host/db"),
        (
            "postgresql://u:pw@h1:5432,h2:5433/db?sslmode=require",
            "postgresql://u:***@h1:5432,h2:5433/db?sslmode=require",
        ),
        (
            "postgresql://u@host/db?sslmode=require&password=s3cret&x=1",
            "postgresql://u@host/db?sslmode=require&password=***&x=1",
        ),
        ("postgresql://host/db?PASSWORD=s3cret", "postgresql://host/db?PASSWORD=***"),
        ("host=db user=u password='s e c'", "host=db user=u password=***"),
        ("u:s3cret@host/db", "u:***@host/db"),
        ("postgresql://u@host:5432/db", "postgresql://u@host:5432/db"),
        ("postgresql:///memory", "postgresql:///memory"),
        ("", ""),
        ("not a url", "not a url"),
        ("postgresql://[::1", "postgresql://[::1"),
        ("::@@::", ":***@::"),
    ],
)
def test_redact_url(url: str, redacted: str) -> None:
    """The password, and only the password, becomes ***."""
    assert redact_url(url) == redacted
