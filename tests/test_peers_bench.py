"""bench/peers.py end to end at a tiny size: the side-by-side table and targets.

One real run (300 memories, one run per system, a few queries) in a
scratch folder: every system runs in its own subprocess and the Markdown
has every column of issue #25's table with a number in each, the ratios
the targets use, the stage table and the OpenClaw-style search's results.
It checks what is printed, never how fast anything is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench_scripts import run_bench

COLUMNS = (
    "memories",
    "ours, numpy",
    "ours, `auto`",
    "OpenClaw-style FTS5 + vec0",
    "vector-only numpy brute force",
    "float32 scan floor",
    "ours / OpenClaw p50",
    "ours / OpenClaw p95",
    "ours p95 / brute p95",
    "ours p95 / floor",
    "`auto` / numpy p95",
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """Run the script once at 300 memories; return its Markdown and JSON."""
    pytest.importorskip("sqlite_vec")
    scratch = tmp_path_factory.mktemp("peers")
    out = scratch / "report.json"
    proc = run_bench(
        "peers.py",
        "--sizes",
        "300",
        "--runs",
        "1",
        "--queries",
        "12",
        "--warmup",
        "2",
        "--workdir",
        str(scratch),
        "--json",
        str(out),
    )
    report: dict[str, Any] = json.loads(out.read_text())
    report["json_path"] = str(out)
    return proc.stdout, report


def _table(markdown: str, first_header: str) -> tuple[list[str], list[list[str]]]:
    """Return the header and row cells of the table whose header starts so."""
    lines = markdown.splitlines()
    start = next(
        k
        for k, line in enumerate(lines)
        if line.startswith(f"| {first_header} |") and "ours" in line
    )
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return header, rows


def test_side_by_side_table_has_every_column(run: tuple[str, dict[str, Any]]) -> None:
    """One row for the size, a figure in every column, ratios marked ×."""
    markdown, _report = run
    header, rows = _table(markdown, "memories")
    assert tuple(header) == COLUMNS
    assert len(rows) == 1
    row = rows[0]
    assert row[0] == "300"
    for cell in row[1:5]:  # p50 / p95 pairs
        p50, p95 = (float(part) for part in cell.split(" / "))
        assert 0 <= p50 <= p95
    assert float(row[5]) >= 0  # the floor
    for cell in row[6:]:
        assert cell.endswith(" ×")
        assert float(cell.removesuffix(" ×").replace(",", "")) > 0


def test_stages_quality_and_targets(run: tuple[str, dict[str, Any]]) -> None:
    """Keyword and vector stages of both hybrids, target@10, the verdicts."""
    markdown, report = run
    header, rows = _table(markdown, "memories | ours keyword")
    assert header[1:3] == ["ours keyword", "ours vector"]
    assert len(rows) == 1
    assert all(cell != "–" for cell in rows[0])
    assert "| #25 target | measured | |" in markdown
    assert "`auto` hybrid p95 ≤ 1.1 × numpy's" in markdown
    assert "Command: `python bench/peers.py --sizes 300" in markdown
    assert "load average" in markdown
    systems = report["sizes"]["300"]["systems"]
    assert set(systems) == {"ours", "auto", "openclaw", "brute", "floor"}
    # The OpenClaw-style search finds the memories it is asked about.
    assert systems["openclaw"]["median"]["hybrid"]["target_at_10"] > 0.5
    assert systems["brute"]["median"]["vector"]["target_at_10"] > 0.5


def test_report_renders_an_earlier_run(run: tuple[str, dict[str, Any]]) -> None:
    """`--report JSON` prints the same tables again, command line included."""
    markdown, report = run
    proc = run_bench(
        "peers.py",
        "--report",
        report["json_path"],
        timeout=120,
    )
    assert proc.stdout == markdown
    assert "CPU time per query" in proc.stdout


def test_without_openclaw_no_openclaw_database(tmp_path: Path) -> None:
    """Systems without `openclaw` build no OpenClaw database (6.4 GiB at 1M)."""
    data = tmp_path / "data"
    proc = run_bench(
        "peers.py",
        "--sizes",
        "300",
        "--systems",
        "ours,brute,floor",
        "--runs",
        "1",
        "--queries",
        "6",
        "--warmup",
        "1",
        "--workdir",
        str(tmp_path / "work"),
        "--data",
        str(data),
    )
    assert not list(data.glob("peers-openclaw-*"))
    assert list(data.glob("peers-matrix-300.npy"))
    assert "ours p95 / brute p95" in proc.stdout
