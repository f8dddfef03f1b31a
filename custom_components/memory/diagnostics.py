"""Diagnostics: counts, versions and backend, never memory content."""

from __future__ import annotations

import sqlite3
from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.core import HomeAssistant

from .coordinator import MemoryConfigEntry

# Provider credentials never leave the house; a URL may name a private host.
TO_REDACT = {"api_key", "token", "password", "url"}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: MemoryConfigEntry
) -> dict[str, Any]:
    """Return what a bug report needs to know about the store."""
    store = entry.runtime_data.store
    stats = await store.stats()
    embedding = entry.runtime_data.embedding
    return {
        "embedding": None if embedding is None else await embedding.async_diagnostics(),
        "entry": {
            "data": async_redact_data(dict(entry.data), TO_REDACT),
            "options": async_redact_data(dict(entry.options), TO_REDACT),
        },
        "store": {
            "schema_version": stats.schema_version,
            "sqlite_version": sqlite3.sqlite_version,
            "vector_backend": stats.vector_backend,
            "active_model": stats.active_model,
            "memories_by_status": stats.by_status,
            "active_by_type": stats.active_by_type,
            "active_scopes": len(stats.active_by_scope),
            "vectors_by_model": stats.vectors_by_model,
            "database_bytes": stats.database_bytes,
        },
    }
