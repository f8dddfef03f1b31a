"""Run one of bench/'s scripts as the README does: a subprocess from the repository root.

The bench tests check what a script prints and writes, end to end, in a
process of its own (the scripts time and wrap the engine: never in the
test process). A script that exits other than 0 fails the test with its
stderr.
"""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

REPO = Path(__file__).resolve().parents[1]


def run_bench(
    script: str, *args: str, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run `bench/<script>` with `args`; assert it succeeded and return it."""
    proc = subprocess.run(  # noqa: S603 - our own script
        [sys.executable, str(REPO / "bench" / script), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr
    return proc
