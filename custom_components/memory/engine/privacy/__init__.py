"""Privacy: secrets (codes, passwords, PINs) found and redacted.

`secrets` (detect and redact; did a query find a memory by more than its
code), `secret_words` (labels, verbs and digit words in every language).
"""

from .secrets import (
    DETECTOR_VERSION,
    found_without_secrets,
    has_secret,
    redact_secrets,
    redacted,
)

__all__ = [
    "DETECTOR_VERSION",
    "found_without_secrets",
    "has_secret",
    "redact_secrets",
    "redacted",
]
