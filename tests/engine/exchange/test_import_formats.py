"""Tests of reading files to import: detection, each format, and bad files."""

from __future__ import annotations

from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
import sqlite3
from zoneinfo import ZoneInfo

import pytest

from custom_components.memory.engine import MemoryStatus, MemoryType
from custom_components.memory.engine.exchange.import_entries import (
    MAX_IMPORT_BYTES,
    MAX_IMPORT_ENTRIES,
    ImportColumnError,
    ImportEmptyError,
    ImportEncodingError,
    ImportEntryError,
    ImportFileError,
    ImportFormat,
    ImportTooLargeError,
    ImportTooManyError,
)
from custom_components.memory.engine.exchange.import_formats import (
    decode,
    detect,
    read_import,
)

DATA = Path(__file__).parents[1] / "data" / "imports"
BERLIN = ZoneInfo("Europe/Berlin")


def fixture(name: str) -> bytes:
    """Return a fixture file's bytes."""
    return (DATA / name).read_bytes()


def ha_ai_memory_db(tmp_path: Path) -> bytes:
    """Build AI Long Term Memory's database from its schema and rows."""
    path = tmp_path / "ai_memory.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript((DATA / "ha_ai_memory.sql").read_text())
        conn.commit()
    return path.read_bytes()


def test_lines_from_chatgpt() -> None:
    """One memory a line, bullets and numbers dropped; no owner."""
    parsed = read_import(fixture("chatgpt_memories.txt"), timezone=UTC)
    assert parsed.format is ImportFormat.LINES
    assert [entry.content for entry in parsed.entries] == [
        "Is vegetarian and avoids gelatine.",
        "Has two children, Mia (9) and Leo (6).",
        "Prefers answers in metric units.",
        "Works from home on Mondays and Fridays.",
        "The garage door code is 4512.",
    ]
    assert parsed.entries[4].where == "line 5"
    assert parsed.owners == ("",)


def test_seed_markdown() -> None:
    """Bullets and paragraph lines are memories; headings are tags or types."""
    parsed = read_import(fixture("seed_MEMORY.md"), timezone=UTC)
    assert parsed.format is ImportFormat.MARKDOWN
    found = [(e.content, e.type, e.tags) for e in parsed.entries]
    assert found == [
        (
            "Kept by the assistant; one fact a bullet.",
            MemoryType.FACT,
            ("household_notes",),
        ),
        (
            "The dishwasher runs best on the eco programme.",
            MemoryType.FACT,
            ("household_notes", "kitchen"),
        ),
        (
            "Bins go out on Thursday evening, the recycling every other week.",
            MemoryType.FACT,
            ("household_notes", "kitchen"),
        ),
        (
            "Anna likes the living room at 21 degrees.",
            MemoryType.PREFERENCE,
            ("household_notes",),
        ),
        (
            "The lawn mower lives in the shed.",
            MemoryType.PREFERENCE,
            ("household_notes", "garden"),
        ),
    ]
    assert parsed.entries[2].where == "line 8"


def test_our_markdown_export() -> None:
    """Our MEMORY.md: scope headings, type headings, escaped text, details."""
    text = (
        "# Memory\n\nActive memories exported 2026-03-14 10:00: 2.\n\n"
        "## household\n\n### Facts\n\n"
        "- Code \\*not\\* &lt;b&gt; \\#1 (\\#3, 2026-01-02; tags: bins, "
        "garden; until 2026-06-01)\n\n"
        "## Anna\n\n### Preferences\n\n- Likes tea (\\#9, 2026-02-03)\n"
    )
    parsed = read_import(text.encode(), timezone=BERLIN)
    assert parsed.format is ImportFormat.MARKDOWN
    first, second = parsed.entries
    assert first.content == "Code *not* <b> #1"
    assert first.owner == "household"
    assert first.tags == ("bins", "garden")
    assert first.created_at == datetime(2026, 1, 1, 23, tzinfo=UTC)
    assert first.expires_at == datetime(2026, 5, 31, 22, tzinfo=UTC)
    assert (second.owner, second.type, second.content) == (
        "Anna",
        MemoryType.PREFERENCE,
        "Likes tea",
    )


def test_mem0_get_all() -> None:
    """mem0's entries: memory, user id, times, categories."""
    parsed = read_import(fixture("mem0_get_all.json"), timezone=UTC)
    assert parsed.format is ImportFormat.MEM0
    first, second = parsed.entries
    assert (first.content, first.owner, first.tags) == (
        "Is allergic to peanuts",
        "alice",
        ("health",),
    )
    assert first.created_at == datetime(2025, 2, 10, 17, 30, 0, 123456, tzinfo=UTC)
    assert first.updated_at == datetime(2025, 2, 11, 18, tzinfo=UTC)
    assert first.key == "892db2ae-06d9-49e5-8b3e-585ef9b85b8e"
    assert second.owner == "bob"
    assert parsed.owners == ("alice", "bob")


def test_openmemory_export() -> None:
    """OpenMemory: content, epoch times, archived kept as history, deleted left."""
    parsed = read_import(fixture("openmemory_export.json"), timezone=UTC)
    assert parsed.format is ImportFormat.MEM0
    assert [(e.content, e.status) for e in parsed.entries] == [
        ("Prefers tea over coffee in the afternoon", MemoryStatus.ACTIVE),
        ("Used to live in Lyon", MemoryStatus.ARCHIVED),
    ]
    assert parsed.entries[0].created_at == datetime(2025, 1, 1, tzinfo=UTC)
    assert parsed.entries[0].tags == ("preferences",)


def test_home_agent_store() -> None:
    """Home Agent's store: types mapped, topics as tags, epoch times, expiry."""
    parsed = read_import(fixture("home_agent.memories"), timezone=UTC)
    assert parsed.format is ImportFormat.HOME_AGENT
    first, second = parsed.entries
    assert (first.type, first.tags) == (MemoryType.PREFERENCE, ("sleep", "climate"))
    assert first.created_at == datetime.fromtimestamp(1730000000.5, UTC)
    assert second.type is MemoryType.OTHER
    assert second.expires_at == datetime(2100, 1, 1, tzinfo=UTC)


def test_ha_ai_memory_database(tmp_path: Path) -> None:
    """Riscue's SQLite database: common and private scopes, wing and room tags."""
    parsed = read_import(ha_ai_memory_db(tmp_path), timezone=BERLIN)
    assert parsed.format is ImportFormat.HA_AI_MEMORY
    assert [(e.content, e.owner, e.tags) for e in parsed.entries] == [
        ("The wifi guest network is called Garden", "common", ()),
        ("Prefers short answers", "private:conversation.ollama", ("home", "kitchen")),
        ("Calls the cat Miso", "common", ()),
    ]
    # Naive local times are the household's.
    assert parsed.entries[0].created_at == datetime(
        2025, 5, 1, 16, 22, 10, 512000, tzinfo=UTC
    )


def test_ha_ai_memory_needs_its_table() -> None:
    """Forced onto another file, the database format says what it is not."""
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.execute("CREATE TABLE other (x)")
        data = conn.serialize()
    with pytest.raises(ImportFileError) as err:
        read_import(data, timezone=UTC)
    assert err.value.placeholders["where"] == "the file"


def test_csv_with_header() -> None:
    """CSV: content required; type, tags, person and date read; quotes kept."""
    parsed = read_import(fixture("memories.csv"), timezone=UTC)
    assert parsed.format is ImportFormat.CSV
    first, second, third = parsed.entries
    assert (first.content, first.tags, first.owner) == (
        "Water the ficus every Sunday",
        ("plants", "garden"),
        "household",
    )
    assert first.created_at == datetime(2025, 6, 1, tzinfo=UTC)
    assert (second.type, second.owner) == (MemoryType.PREFERENCE, "person.ben")
    assert third.content == 'Quote "as is", with a comma'
    assert (third.type, third.owner, third.created_at) == (MemoryType.OTHER, "", None)
    assert third.where == "line 4"


def test_csv_without_content_column() -> None:
    """A CSV without a content column is refused, naming the columns it has."""
    with pytest.raises(ImportColumnError) as err:
        read_import(fixture("no_content.csv"), timezone=UTC)
    assert err.value.placeholders == {"columns": "note, kind"}


def test_csv_bad_rows() -> None:
    """A row of the wrong width, or an unknown type, names its line."""
    with pytest.raises(ImportFileError) as err:
        read_import(b"content,type\nfine,fact\nextra,fact,cell\n", timezone=UTC)
    assert err.value.placeholders["where"] == "line 3"
    with pytest.raises(ImportEntryError) as err:
        read_import(
            b"content,type\nfine,fact\nodd,gossip\n",
            timezone=UTC,
            format=ImportFormat.CSV,
        )
    assert err.value.placeholders["where"] == "line 3"


def test_truncated_json() -> None:
    """Truncated JSON names the line where it stops."""
    with pytest.raises(ImportFileError) as err:
        read_import(fixture("truncated.json"), timezone=UTC)
    assert err.value.key == "import_malformed"
    assert err.value.placeholders["where"] == "line 2"


def test_wrong_encoding() -> None:
    """Latin-1 bytes are not UTF-8: the error names the line."""
    with pytest.raises(ImportEncodingError) as err:
        read_import(fixture("latin1.txt"), timezone=UTC)
    assert err.value.placeholders == {"where": "line 1"}


def test_utf16_and_bom() -> None:
    """UTF-16 with its mark and UTF-8 with a mark are read."""
    text = "Mag Käsekuchen\n"
    assert decode(text.encode("utf-16")) == text
    assert decode(b"\xef\xbb\xbf" + text.encode()) == text


def test_limits() -> None:
    """Too large a file, or too many entries, is refused before parsing on."""
    with pytest.raises(ImportTooLargeError):
        read_import(b"x" * (MAX_IMPORT_BYTES + 1), timezone=UTC)
    many = b"\n".join(b"memory %d" % i for i in range(MAX_IMPORT_ENTRIES + 1))
    with pytest.raises(ImportTooManyError):
        read_import(many, timezone=UTC)
    with pytest.raises(ImportEmptyError):
        read_import(b"\n  \n", timezone=UTC)


def test_bad_entries_name_themselves() -> None:
    """Unreadable times, statuses, numbers and missing text name their entry."""
    bad = [
        '{"format": "assist-memory", "memories": [{"content": "a", "created_at": "x"}]}',
        '{"format": "assist-memory", "memories": [{"content": "a", "status": "gone"}]}',
        '{"format": "assist-memory", "memories": [{"content": "a", "confidence": "hi"}]}',
        '{"format": "assist-memory", "memories": [{"content": 5}]}',
        '{"format": "assist-memory", "memories": [{"content": "a"}, 4]}',
        '{"format": "assist-memory", "memories": {"content": "a"}}',
        '[{"memory": "a", "created_at": true}]',
    ]
    where = ["entry 1", "entry 1", "entry 1", "entry 1", "entry 2", "memories"]
    for text, place in zip(bad, [*where, "entry 1"], strict=True):
        with pytest.raises(ImportFileError) as err:
            read_import(text.encode(), timezone=UTC)
        assert err.value.placeholders["where"] == place, text


def test_detect() -> None:
    """Each format is told from its content."""
    assert detect('{"format": "assist-memory", "memories": []}') == "assist_memory"
    assert detect('{"key": "home_agent.memories", "data": {"memories": {}}}') == (
        "home_agent"
    )
    assert detect('[{"memory": "x"}]') == "mem0"
    assert detect("content,tags\nx,y\n") == "csv"
    assert detect("Likes tea, and coffee.\nHas a dog\n") == "lines"
    assert detect("Intro\n- a bullet\n") == "lines"
    assert detect("# Notes\n- a bullet\n") == "markdown"


def test_odd_shapes() -> None:
    """JSON nested past Python's limit, blank CSV rows, a quote left open."""
    with pytest.raises(ImportFileError) as err:
        read_import(b"[" * 100_000, timezone=UTC)
    assert err.value.placeholders["error"] == "nested too deep"
    parsed = read_import(b"content,tags\nfirst,a\n,\nsecond,b\n", timezone=UTC)
    assert [entry.content for entry in parsed.entries] == ["first", "second"]
    # An open quote: not read as CSV, but line by line.
    assert detect('"content,tags\nfirst,a\n') == "lines"
    with pytest.raises(ImportFileError) as err:
        read_import(b'content,tags\n"first,a\n', timezone=UTC, format=ImportFormat.CSV)
    assert err.value.placeholders["where"] == "line 2"
