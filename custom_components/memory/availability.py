"""A PostgreSQL server that goes away at runtime: a repair issue while it is away.

`async_watch_availability` listens to a loaded entry's `PostgresStore`
(`add_availability_listener`): when a call fails on its connection or the
change feed loses the server, the `postgresql_unavailable` issue appears,
naming the server through `redact_url` (never its password), saying what
to check and that Assist Memory reconnects by itself with nothing
acknowledged lost; when the server answers again the issue goes. It goes
with the entry too. SQLite stores have nothing to watch.

`outage_level` is the level the background workers log a failed pass at:
DEBUG while the store says the server is away (the issue and the engine's
one warning already say so; a pass every minute would flood the log),
WARNING otherwise.
"""

from __future__ import annotations

import logging
from typing import Final

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir

from .const import CONF_DB_URL, DOMAIN
from .engine.postgres import AnyStore, PostgresStore, redact_url

ISSUE_POSTGRESQL_UNAVAILABLE: Final = "postgresql_unavailable"


@callback
def async_watch_availability(
    hass: HomeAssistant, entry: ConfigEntry, store: AnyStore
) -> None:
    """Raise and withdraw the issue as `store` loses and finds its server.

    Stops watching (and withdraws the issue) when the entry unloads; SQLite
    stores have nothing to watch. Only the redacted `db_url` leaves.
    """
    if not isinstance(store, PostgresStore):
        return
    server = redact_url(str(entry.data[CONF_DB_URL]))

    @callback
    def _changed(available: bool) -> None:
        if available:
            ir.async_delete_issue(hass, DOMAIN, ISSUE_POSTGRESQL_UNAVAILABLE)
            return
        ir.async_create_issue(
            hass,
            DOMAIN,
            ISSUE_POSTGRESQL_UNAVAILABLE,
            is_fixable=False,
            is_persistent=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key=ISSUE_POSTGRESQL_UNAVAILABLE,
            translation_placeholders={"server": server},
        )

    remove = store.add_availability_listener(_changed)
    if not store.available:
        _changed(False)

    @callback
    def _stop() -> None:
        remove()
        ir.async_delete_issue(hass, DOMAIN, ISSUE_POSTGRESQL_UNAVAILABLE)

    entry.async_on_unload(_stop)


def outage_level(store: AnyStore) -> int:
    """Log level of a worker's failed pass: DEBUG while the server is known away."""
    if isinstance(store, PostgresStore) and not store.available:
        return logging.DEBUG
    return logging.WARNING
