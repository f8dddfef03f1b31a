"""Errors of the memory engine.

Each error carries a stable `key` and `placeholders` so that the Home
Assistant layer can turn it into a translated message without parsing text.
Messages never contain memory content.
"""

from __future__ import annotations

import sqlite3
from typing import Final


class StoreError(Exception):
    """Base class: something the caller should report, not crash on."""

    key = "store_error"

    def __init__(self, message: str, **placeholders: str) -> None:
        """Keep the placeholders for translated messages."""
        super().__init__(message)
        self.placeholders = placeholders


class InvalidInputError(StoreError):
    """The request itself is wrong; nothing was changed."""

    key = "invalid_input"


class EmptyContentError(InvalidInputError):
    """A memory needs some text."""

    key = "empty_content"


class ContentTooLongError(InvalidInputError):
    """Long texts are refused rather than truncated, so nothing is lost silently."""

    key = "content_too_long"


class InvalidTagError(InvalidInputError):
    """A tag that cannot be stored or filtered on."""

    key = "invalid_tag"


class InvalidScopeError(InvalidInputError):
    """A scope name that is empty or too long."""

    key = "invalid_scope"


class InvalidLimitError(InvalidInputError):
    """A search limit outside 1..MAX_SEARCH_LIMIT."""

    key = "invalid_limit"


class UnknownMemoryError(InvalidInputError):
    """One or more ids do not exist."""

    key = "unknown_memory"


class VectorDimensionError(InvalidInputError):
    """A vector whose length differs from what the model produced before."""

    key = "vector_dimension"


class InvalidVectorError(InvalidInputError):
    """A vector with NaN, infinity or zero length."""

    key = "invalid_vector"


class DatabaseCorruptError(StoreError):
    """The file is not a usable SQLite database; it is left untouched."""

    key = "database_corrupt"


class DatabaseTooNewError(StoreError):
    """Written by a newer version: opening it could lose data, so we refuse."""

    key = "database_too_new"


class DatabaseUnavailableError(StoreError):
    """The database file cannot be opened or written (permissions, disk)."""

    key = "database_unavailable"


class ExportNotErasedError(StoreError):
    """Erased from the database, but an export file still holds the text.

    Raised by the export mirror's erase listener (see `EraseListener`) when a
    file could neither be rewritten nor removed; the erase itself stands.
    """

    key = "export_not_erased"


# What a database call may raise besides the errors above: SQLite's own, and
# aiosqlite's ValueError("Connection closed") for a call in flight when the
# store closes under it (an unload during a background run). Background work
# (capture, digestion, profiles, the embedding worker) logs these and retries
# later instead of failing as a task nobody awaits.
DATABASE_ERRORS: Final = (StoreError, sqlite3.Error, ValueError)
