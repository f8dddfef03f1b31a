"""Engine and database errors as Home Assistant errors, translated here only.

Every action handler is registered through `translated_errors`: whatever
database failure reaches it (an engine error, SQLite's own, aiosqlite's
closed connection) leaves as a translated `HomeAssistantError`, or as a
`ServiceValidationError` when the input was at fault.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator
import contextlib
import functools
from typing import Any

from homeassistant.core import ServiceCall, ServiceResponse
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError

from .const import DOMAIN
from .engine.errors import (
    DATABASE_ERRORS,
    DatabaseFailedError,
    DatabaseFullError,
    DatabaseGoneError,
    DatabaseReadOnlyError,
    ExportNotErasedError,
    InvalidInputError,
    ServerUnavailableError,
    StoreError,
    database_error,
)

# Failures with a message of their own (the others say "store_failed").
_OWN_MESSAGE = (
    DatabaseFullError,
    DatabaseReadOnlyError,
    DatabaseGoneError,
    DatabaseFailedError,
    ExportNotErasedError,
    # A PostgreSQL server away: passing, the store reconnects by itself.
    ServerUnavailableError,
)

type ActionHandler = Callable[[ServiceCall], Coroutine[Any, Any, ServiceResponse]]


def store_error(err: StoreError) -> HomeAssistantError:
    """Translate an engine error; bad input is the caller's to fix."""
    if isinstance(err, InvalidInputError):
        return ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key=err.key,
            translation_placeholders=err.placeholders,
        )
    if isinstance(err, _OWN_MESSAGE):
        return HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key=err.key,
            translation_placeholders=err.placeholders,
        )
    return HomeAssistantError(
        translation_domain=DOMAIN,
        translation_key="store_failed",
        translation_placeholders={"error": str(err)},
    )


@contextlib.contextmanager
def translated_store_errors() -> Iterator[None]:
    """Let no database error leave untranslated (actions, LLM tools, websocket)."""
    try:
        yield
    except DATABASE_ERRORS as err:
        known = database_error(err)
        if known is None:
            raise  # a ValueError that is not the database's: a bug
        raise store_error(known) from err


def translated_errors(handler: ActionHandler) -> ActionHandler:
    """Wrap an action so that no database error leaves it untranslated."""

    @functools.wraps(handler)
    async def run(call: ServiceCall) -> ServiceResponse:
        with translated_store_errors():
            return await handler(call)

    return run
