"""Diagnostics: counts, versions and backend, never memory content.

On SQLite: the file's integrity checks. On PostgreSQL: the server by its
redacted URL (never the password), its version and pgvector's, read afresh
by `check_server`; a server holds no SQLite integrity check.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util

from .ai_task import WINDOW_SECONDS
from .const import CONF_DB_URL
from .engine import MemoryStore
from .engine.postgres import check_server, redact_url
from .engine.store import IntegrityCheck
from .runtime import MemoryConfigEntry

# Provider credentials never leave the house; a URL may name a private host.
TO_REDACT = {"api_key", "token", "password", "url", CONF_DB_URL}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: MemoryConfigEntry
) -> dict[str, Any]:
    """Return what a bug report needs to know about the store."""
    store = entry.runtime_data.store
    stats = await store.stats()
    embedding = entry.runtime_data.embedding
    facts = {
        "schema_version": stats.schema_version,
        "vector_backend": stats.vector_backend,
        "active_model": stats.active_model,
        "memories_by_status": stats.by_status,
        "active_by_type": stats.active_by_type,
        "active_scopes": len(stats.active_by_scope),
        "vectors_by_model": stats.vectors_by_model,
        "database_bytes": stats.database_bytes,
    }
    result: dict[str, Any] = {
        "embedding": None if embedding is None else await embedding.async_diagnostics(),
        "entry": {
            "data": async_redact_data(dict(entry.data), TO_REDACT),
            "options": async_redact_data(dict(entry.options), TO_REDACT),
        },
        "digestion": await _digestion(entry),
        "recall": _recall(entry),
    }
    if not isinstance(store, MemoryStore):
        url = str(entry.data[CONF_DB_URL])
        server = await check_server(url)
        result["store"] = {
            "backend": "postgresql",
            "server": redact_url(url),
            "server_problem": server.problem.value,
            "server_version": server.server_version,
            "vector_version": server.vector_version,
            **facts,
        }
        return result
    result["store"] = {
        "backend": "sqlite",
        "sqlite_version": sqlite3.sqlite_version,
        **facts,
    }
    # Asked for now: every page is read (on its own connection).
    result["integrity"] = {
        "at_open": _check(store.last_check),
        "now": _check(await store.check_integrity()),
    }
    return result


def _check(result: IntegrityCheck | None) -> dict[str, Any] | None:
    """Give an integrity check's verdict and timing: never content."""
    if result is None:
        return None
    return {
        "kind": result.kind,
        "ok": result.ok,
        "problems": result.problems,
        "at": dt_util.utc_from_timestamp(result.at).isoformat(),
        "seconds": round(result.seconds, 3),
    }


def _recall(entry: MemoryConfigEntry) -> dict[str, Any]:
    """Give how often each part of recall contributed today: counts only."""
    usage = entry.runtime_data.usage.data
    return {
        "memories_recalled_today": usage.memories_recalled_today,
        "failures_today": usage.recall_failures_today,
        "follow_ups_today": usage.recall_follow_ups_today,
        "kept_today": usage.recall_kept_today,
        "earlier_today": usage.recall_earlier_today,
        "live_conversations": len(entry.runtime_data.recall_states),
    }


async def _digestion(entry: MemoryConfigEntry) -> dict[str, Any]:
    """State of digestion and the AI Task budget: counts and kinds, no content."""
    data = entry.runtime_data
    usage = data.usage.data
    since = dt_util.utcnow().timestamp() - WINDOW_SECONDS
    return {
        "enabled": data.digestion.enabled,
        "ai_task_entity": data.ai_task.entity_id(),
        "ai_task_unavailable": data.digestion.unavailable,
        "ai_task_calls_last_hour": len(data.usage.ai_task_calls_since(since)),
        "ai_task_max_calls_per_hour": data.ai_task.max_calls_per_hour,
        "conversations_by_state": await data.digestion.queue.count_by_state(),
        "waiting": data.digestion.waiting,
        "failures_today": usage.digestion_failures_today,
        "last_error": usage.last_digestion_error,
        "last_error_at": usage.last_digestion_error_at,
        "last_digestion": usage.last_digestion,
    }
