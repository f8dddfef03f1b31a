"""The panel's source (frontend/src/*.js): small files, each saying its one job.

Every file is at most 400 lines, and opens with a `//` comment whose first
paragraph (up to the first empty `//` line or the code) is a sentence that
says what the file is for, as the Python modules open with a docstring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

SOURCE: Final = Path(__file__).resolve().parents[1] / "frontend" / "src"
MAX_LINES: Final = 400
FILES: Final = sorted(SOURCE.glob("*.js"))


def first_paragraph(text: str) -> str:
    """Return the opening `//` comment's first paragraph, or "" without one."""
    words: list[str] = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        said = line.removeprefix("//").strip()
        if not said:
            break
        words.append(said)
    return " ".join(words)


def test_the_source_is_found() -> None:
    """The panel's element and its parts are there to check."""
    names = {path.name for path in FILES}
    assert {"memory-panel.js", "memory-filters.js", "styles.js"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_at_most_400_lines(path: Path) -> None:
    """A file that grows past 400 lines is split by what its parts do."""
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.name}: {lines} lines"


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_opens_with_its_job(path: Path) -> None:
    """The first lines are a `//` comment: one sentence or more on its job."""
    said = first_paragraph(path.read_text(encoding="utf-8"))
    assert len(said.split()) >= 5, f"{path.name}: no opening comment saying its job"
    assert said.endswith("."), f"{path.name}: {said!r}"


def test_first_paragraph() -> None:
    """Code before the comment, or an empty first line, is no opening comment."""
    assert first_paragraph('import { css } from "lit";\n// A job.\n') == ""
    assert first_paragraph("//\n// The job.\n") == ""
    assert first_paragraph("// One job,\n// said.\n//\n// More.\n") == "One job, said."
