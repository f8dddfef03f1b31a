"""What an import reads from a file: its entries, their limits and its errors.

Every format (`import_formats.py`, `import_text.py`) turns a file into the
same `ImportEntry` list, each entry remembering where in the file it was
(`where`: "line 12", "entry 4"), so a bad one is named in the error and
nothing is stored. The text of an entry is data: it is never read as an
instruction, markup or a path, only kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from enum import StrEnum
from typing import Final

from ..errors import InvalidInputError
from ..models import MemoryStatus, MemoryType

# A file larger than this is refused before it is read (the README says so).
MAX_IMPORT_BYTES: Final = 40 * 1024 * 1024
# Entries one import may hold (active and history together).
MAX_IMPORT_ENTRIES: Final = 100_000


class ImportFormat(StrEnum):
    """The formats an import reads; each is detected from the content."""

    ASSIST_MEMORY = "assist_memory"
    MARKDOWN = "markdown"
    LINES = "lines"
    CSV = "csv"
    MEM0 = "mem0"
    HA_AI_MEMORY = "ha_ai_memory"
    HOME_AGENT = "home_agent"


class ImportFileError(InvalidInputError):
    """The file cannot be imported as a whole; nothing was stored."""

    key = "import_malformed"


class ImportTooLargeError(ImportFileError):
    """The file is over `MAX_IMPORT_BYTES`."""

    key = "import_too_large"


class ImportTooManyError(ImportFileError):
    """The file holds more than `MAX_IMPORT_ENTRIES` entries."""

    key = "import_too_many"


class ImportEncodingError(ImportFileError):
    """The file is not UTF-8 (or UTF-16 with a byte order mark) text."""

    key = "import_encoding"


class ImportColumnError(ImportFileError):
    """A CSV file has no `content` column."""

    key = "import_no_content_column"


class ImportEmptyError(ImportFileError):
    """The file holds no memory at all."""

    key = "import_empty"


class ImportEntryError(ImportFileError):
    """One entry cannot be stored (too long, empty, a bad tag or date)."""

    key = "import_entry_invalid"


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportEntry:
    """One memory read from a file, before its owner is mapped to a scope.

    `owner` is the source's user or scope ("" when the source has none);
    `key` the source's id of it and `superseded_by` the key of the entry
    that replaced it, so a supersede history survives the move.
    """

    where: str
    content: str
    owner: str = ""
    type: MemoryType = MemoryType.FACT
    tags: tuple[str, ...] = ()
    status: MemoryStatus = MemoryStatus.ACTIVE
    created_at: datetime | None = None
    updated_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    last_recalled_at: datetime | None = None
    recall_count: int = 0
    key: str | None = None
    superseded_by: str | None = None
    topic: str = ""
    confidence: float | None = None
    language: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportFile:
    """A parsed file: its format and entries, and the owners it names."""

    format: ImportFormat
    entries: tuple[ImportEntry, ...]

    @property
    def owners(self) -> tuple[str, ...]:
        """The source's users or scopes, in the order they first appear."""
        return tuple(dict.fromkeys(entry.owner for entry in self.entries))


# Words other tools use for our types.
_TYPE_WORDS: Final = {
    **{str(kind): kind for kind in MemoryType},
    "facts": MemoryType.FACT,
    "preferences": MemoryType.PREFERENCE,
    "instructions": MemoryType.INSTRUCTION,
    "events": MemoryType.EVENT,
    "context": MemoryType.OTHER,
    "memory": MemoryType.FACT,
    "": MemoryType.FACT,
}


def memory_type(value: object, where: str) -> MemoryType:
    """Read a type; a word no format uses is an error naming the entry."""
    word = str(value or "").strip().casefold()
    if word not in _TYPE_WORDS:
        raise ImportEntryError(
            f"{where}: unknown type", where=where, error=f"unknown type {word[:40]!r}"
        )
    return _TYPE_WORDS[word]


def moment(value: object, where: str, timezone: tzinfo) -> datetime | None:
    """Read a time: ISO 8601 text, a date, or epoch seconds (or milliseconds).

    A time without a zone is in `timezone` (the household's); an empty
    value is None; anything else unreadable names the entry.
    """
    if value is None or value == "":
        return None
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            seconds = float(value)
            # Milliseconds since 1970 (JavaScript's Date.now()).
            parsed = datetime.fromtimestamp(
                seconds / 1000 if seconds > 1e11 else seconds, UTC
            )
        else:
            parsed = datetime.fromisoformat(str(value).strip())
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone)
        return parsed.astimezone(UTC)
    except (TypeError, ValueError, OverflowError, OSError) as err:
        raise ImportEntryError(
            f"{where}: unreadable time",
            where=where,
            error=f"unreadable time {str(value)[:40]!r}",
        ) from err


def tag_list(value: object) -> tuple[str, ...]:
    """Tags as a list, or one text separated by commas, semicolons or `|`."""
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        return tuple(str(tag).strip() for tag in value if str(tag).strip())
    text = str(value)
    for separator in ";|":
        text = text.replace(separator, ",")
    return tuple(part.strip() for part in text.split(",") if part.strip())


def check_count(count: int) -> None:
    """Refuse a file of more entries than one import may hold."""
    if count > MAX_IMPORT_ENTRIES:
        raise ImportTooManyError(
            f"{count} entries, the limit is {MAX_IMPORT_ENTRIES}",
            count=str(count),
            limit=str(MAX_IMPORT_ENTRIES),
        )
