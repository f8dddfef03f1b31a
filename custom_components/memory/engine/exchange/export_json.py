"""The lossless export: `memories.json`, every field of every memory kept.

`MEMORY.md` is for reading and holds active memories only, with a date
for a time. `memories.json` is for moving to another installation
(`memory.import` reads it back, `import_formats.py`): each memory with its
scope, type, tags, status, times to the second, expiry, topic, confidence,
language, origin and the id of what superseded it, so the supersede history
survives the move. Where a memory came from (conversation, agent, device,
user) stays behind: those ids mean nothing on another installation. It is
read through `MemorySource`, so a PostgreSQL store exports it alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
import json
from typing import Any, Final

from ..models import MemoryItem
from ..store import BrowseQuery
from .import_formats import EXPORT_FORMAT
from .sources import MemorySource

JSON_FILE: Final = "memories.json"
JSON_VERSION: Final = 1


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def memory_record(item: MemoryItem) -> dict[str, Any]:
    """One memory as the export writes it."""
    return {
        "id": item.id,
        "scope": item.scope,
        "type": str(item.type),
        "content": item.content,
        "tags": list(item.tags),
        "status": str(item.status),
        "superseded_by": item.superseded_by,
        "valid_from": _iso(item.valid_from),
        "valid_to": _iso(item.valid_to),
        "expires_at": _iso(item.expires_at),
        "created_at": _iso(item.created_at),
        "updated_at": _iso(item.updated_at),
        "last_recalled_at": _iso(item.last_recalled_at),
        "recall_count": item.recall_count,
        "origin": str(item.source.origin),
        "topic": item.topic,
        "confidence": item.confidence,
        "language": item.language,
    }


def render_json(items: Iterable[MemoryItem], *, exported_at: datetime) -> str:
    """Render `memories.json` (UTF-8 JSON, one memory a line, ids in order)."""
    records = [memory_record(item) for item in sorted(items, key=lambda i: i.id)]
    lines = ",\n".join(json.dumps(record, ensure_ascii=False) for record in records)
    head = json.dumps(
        {
            "format": EXPORT_FORMAT,
            "version": JSON_VERSION,
            "exported_at": _iso(exported_at),
        }
    )[:-1]
    return f'{head}, "memories": [\n{lines}\n]}}\n'


async def every_memory(
    store: MemorySource, scopes: Sequence[str] | None
) -> list[MemoryItem]:
    """Every memory of these scopes (None: all), whatever its status, by id."""
    chosen = None if scopes is None else tuple(scopes)
    return await store.browse_all(BrowseQuery(scopes=chosen, status="any"))
