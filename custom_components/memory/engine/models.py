"""Value types of the memory engine.

Plain frozen dataclasses so that the Home Assistant layer, the LLM tools and
the benchmarks all speak the same language without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

HOUSEHOLD = "household"
MAX_CONTENT_CHARS = 2000
MAX_SEARCH_LIMIT = 50
MAX_TAGS = 20
MAX_TAG_CHARS = 40
MAX_SCOPE_CHARS = 100

type Vector = npt.NDArray[np.float32]
type StatusFilter = Literal["active", "archived", "superseded", "any"]


class MemoryType(StrEnum):
    """What kind of thing a memory is; recall and digestion treat them apart."""

    FACT = "fact"
    PREFERENCE = "preference"
    INSTRUCTION = "instruction"
    EVENT = "event"
    SUMMARY = "summary"
    PROFILE = "profile"
    OTHER = "other"


class MemoryStatus(StrEnum):
    """Life cycle: only active memories are recalled by default."""

    ACTIVE = "active"
    ARCHIVED = "archived"
    SUPERSEDED = "superseded"


class Origin(StrEnum):
    """Which path wrote a memory, so digestion never silently overwrites people."""

    ACTION = "action"
    TOOL = "tool"
    DIGESTION = "digestion"
    IMPORT = "import"


class Signal(StrEnum):
    """Which retrieval signal found a result."""

    KEYWORD = "keyword"
    SEMANTIC = "semantic"


def to_timestamp(value: datetime | None) -> float | None:
    """Store times as UTC epoch seconds: cheap to compare and index."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def from_timestamp(value: float | None) -> datetime | None:
    """Inverse of `to_timestamp`, always timezone-aware."""
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """Where a memory came from: kept for audit and for privacy decisions."""

    origin: Origin
    conversation_id: str | None = None
    agent_id: str | None = None
    device_id: str | None = None
    user_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Serialise for action responses and diagnostics."""
        return {
            "origin": str(self.origin),
            "conversation_id": self.conversation_id,
            "agent_id": self.agent_id,
            "device_id": self.device_id,
            "user_id": self.user_id,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class NewMemory:
    """A memory to be added; validated by the store, not here."""

    content: str
    source: Source
    type: MemoryType = MemoryType.FACT
    scope: str = HOUSEHOLD
    tags: tuple[str, ...] = ()
    expires_at: datetime | None = None
    valid_from: datetime | None = None
    # Digestion: the extractor's subject key ("home city"), its confidence
    # (0..1) and the conversation message the memory came from.
    topic: str = ""
    confidence: float | None = None
    message_id: int | None = None
    # The language it is written in (a tag such as "de" or "de-DE"); None:
    # the store's default language (Home Assistant's). Keyword search
    # analyses it with that language's stemmer, stop words and compounds.
    language: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryItem:
    """A stored memory with its full history fields."""

    id: int
    scope: str
    type: MemoryType
    content: str
    tags: tuple[str, ...]
    status: MemoryStatus
    superseded_by: int | None
    valid_from: datetime | None
    valid_to: datetime | None
    expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    last_recalled_at: datetime | None
    recall_count: int
    source: Source
    topic: str = ""
    confidence: float | None = None
    message_id: int | None = None
    # Primary language subtag ("de"); '' when not known (stored before
    # languages were recorded).
    language: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Serialise every field for `memory.get`."""
        return {
            "id": self.id,
            "scope": self.scope,
            "type": str(self.type),
            "content": self.content,
            "tags": list(self.tags),
            "status": str(self.status),
            "superseded_by": self.superseded_by,
            "valid_from": _iso(self.valid_from),
            "valid_to": _iso(self.valid_to),
            "expires_at": _iso(self.expires_at),
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "last_recalled_at": _iso(self.last_recalled_at),
            "recall_count": self.recall_count,
            "source": self.source.as_dict(),
            "topic": self.topic,
            "confidence": self.confidence,
            "message_id": self.message_id,
            "language": self.language,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class AddResult:
    """Outcome of an add: `created` is False when an active twin existed."""

    item: MemoryItem
    created: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchQuery:
    """A search request; empty text or `*` lists the most recent first."""

    text: str = ""
    vector: Vector | None = None
    scopes: tuple[str, ...] | None = None
    types: tuple[MemoryType, ...] | None = None
    tags: tuple[str, ...] = ()
    status: StatusFilter = "active"
    since: datetime | None = None
    limit: int = 10
    min_score: float = 0.0
    # Rank each memory with its neighbours: the memories stored just before
    # and after it with the same `source.conversation_id` (conversation turns).
    # An answer rarely repeats its question's words; with this it is found
    # through them. Off by default: a neighbour may not contain the words.
    context: bool = False
    # The language the query is spoken in (a tag such as "de-DE"); None: the
    # store's default. Its words are analysed like memories of that language
    # (and of the default language too, for a household that mixes them).
    language: str | None = None
    # A follow-up's earlier turns, newest first, each with its weight (0..1]:
    # their words count at that share ("And her brother?" after "What is Mia
    # allergic to?"). Empty: the text alone.
    earlier: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchHit:
    """One search result with the signals that found it."""

    item: MemoryItem
    score: float
    matched: tuple[Signal, ...]

    def as_dict(self) -> dict[str, Any]:
        """Compact form used by `memory.search` and the LLM tools."""
        return {
            "id": self.item.id,
            "content": self.item.content,
            "type": str(self.item.type),
            "scope": self.item.scope,
            "tags": list(self.item.tags),
            "created_at": _iso(self.item.created_at),
            "score": round(self.score, 4),
            "matched": [str(signal) for signal in self.matched],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreStats:
    """Counts and sizes: never any memory content."""

    schema_version: int
    vector_backend: str
    active_model: str | None
    by_status: dict[str, int] = field(default_factory=dict)
    active_by_type: dict[str, int] = field(default_factory=dict)
    active_by_scope: dict[str, int] = field(default_factory=dict)
    vectors_by_model: dict[str, int] = field(default_factory=dict)
    database_bytes: int = 0

    @property
    def active(self) -> int:
        """Active memories, the ones recall can use."""
        return self.by_status.get(MemoryStatus.ACTIVE, 0)

    @property
    def archived(self) -> int:
        """Archived memories, kept until purged."""
        return self.by_status.get(MemoryStatus.ARCHIVED, 0)
