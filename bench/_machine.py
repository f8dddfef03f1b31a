"""What the benchmarks say about the machine they ran on."""

from __future__ import annotations

from pathlib import Path


def cpu_model(fallback: str) -> str:
    """Return the CPU model name from /proc/cpuinfo, or `fallback` without one."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return fallback
