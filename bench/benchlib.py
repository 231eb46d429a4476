"""Shared helpers of the benchmark scripts (run as `python bench/<script>.py`)."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_model() -> str:
    """The CPU's marketing name (for results files), or the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, object]:
    """The machine a result was measured on (every results file records it)."""
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "python": sys.version.split()[0],
            "platform": platform.platform()}


def shown(path: Path) -> str:
    """``path`` relative to the repository when inside it (results files stay machine-neutral)."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)
