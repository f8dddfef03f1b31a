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


class MemoryTwinError(InvalidInputError):
    """Another active memory of the scope already has this text."""

    key = "memory_twin"


class MemorySupersededError(InvalidInputError):
    """The memory was replaced; its replacement is the current one."""

    key = "memory_superseded"


class PageCursorError(InvalidInputError):
    """A page cursor that no page of this list gave."""

    key = "page_cursor"


class EmptyContentError(InvalidInputError):
    """A memory needs some text."""

    key = "empty_content"


class ContentTooLongError(InvalidInputError):
    """Long texts are refused rather than truncated, so nothing is lost silently."""

    key = "content_too_long"


class InvalidTagError(InvalidInputError):
    """A tag that cannot be stored or filtered on."""

    key = "invalid_tag"


class TooManyTagsError(InvalidTagError):
    """More tags than a memory may have; names the count, not a tag."""

    key = "too_many_tags"


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
    """The database cannot be opened or written (permissions, disk).

    On PostgreSQL: the server cannot be reached, or its connection dropped
    or hung under a call (the message names host and port, no password).
    """

    key = "database_unavailable"


class ServerUnavailableError(DatabaseUnavailableError):
    """A PostgreSQL server that cannot be reached, or dropped or hung a call.

    Passing: the same store works again once the server answers. The
    message names host and port only.
    """

    key = "memory_server_unavailable"


class ExportNotErasedError(StoreError):
    """Erased from the database, but an export file still holds the text.

    Raised by the export mirror's erase listener (see `EraseListener`) when a
    file could neither be rewritten nor removed; the erase itself stands.
    """

    key = "export_not_erased"


class DatabaseFullError(StoreError):
    """The disk (or the database's size limit) is full; nothing was written."""

    key = "database_full"


class DatabaseReadOnlyError(StoreError):
    """The database may be read but not written (file, folder or mount)."""

    key = "database_read_only"


class DatabaseGoneError(StoreError):
    """The database file or its folder was removed or moved while open.

    SQLite reports it only in rollback-journal mode; in WAL mode the store
    checks the file itself (store.check_database_file).
    """

    key = "database_gone"


class TransferError(StoreError):
    """Moving the memories between backends failed; the destination kept nothing of it."""

    key = "transfer_failed"


class TransferTargetNotEmptyError(TransferError):
    """The database to move the memories to already holds some; it was left untouched."""

    key = "transfer_target_not_empty"


class DatabaseFailedError(StoreError):
    """Any other failure of SQLite or of the connection under a call."""

    key = "store_failed"


# What a database call may raise besides the errors above: SQLite's own, and
# aiosqlite's ValueError("Connection closed") for a call in flight when the
# store closes under it (an unload during a background run). Background work
# (capture, digestion, profiles, the embedding worker) logs these and retries
# later instead of failing as a task nobody awaits.
DATABASE_ERRORS: Final = (StoreError, sqlite3.Error, ValueError)

# aiosqlite's messages for a call on a connection that is closed or closing.
_CLOSED_MESSAGES: Final = frozenset({"Connection closed", "no active connection"})
# SQLite's primary result codes (the low byte of an extended code).
_SQLITE_READONLY: Final = 8
_SQLITE_FULL: Final = 13
# SQLITE_READONLY_DBMOVED: the file was unlinked or renamed under the connection.
_SQLITE_READONLY_DBMOVED: Final = _SQLITE_READONLY | (4 << 8)


def database_error(err: BaseException) -> StoreError | None:
    """Say what a database call's failure means, as an error with its own key.

    None when `err` is not a database failure (a ValueError of a bug), which
    the caller lets go on. The SQLite message is kept as the `error`
    placeholder: it names no memory content.
    """
    if isinstance(err, StoreError):
        return err
    if isinstance(err, ValueError):
        if str(err) not in _CLOSED_MESSAGES:
            return None
        return DatabaseFailedError("the memory store is closed", error=str(err))
    if not isinstance(err, sqlite3.Error):
        return None
    code = getattr(err, "sqlite_errorcode", None) or 0
    kind: type[StoreError] = DatabaseFailedError
    if code == _SQLITE_READONLY_DBMOVED:
        kind = DatabaseGoneError
    elif code & 0xFF == _SQLITE_READONLY:
        kind = DatabaseReadOnlyError
    elif code & 0xFF == _SQLITE_FULL:
        kind = DatabaseFullError
    return kind(f"database error: {err}", error=str(err))
