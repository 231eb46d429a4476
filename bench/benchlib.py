"""Shared helpers of the benchmark scripts (run as `python bench/<script>.py`)."""

from __future__ import annotations

import argparse
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


# The policies the fidelity benchmarks compile: the trained example, a second trained policy of a
# different character (window of 3, another target/beta) and the hand-designed synthetic one.
POLICIES = {"rlcc_mlp": ROOT / "examples" / "rlcc_mlp.onnx", "rlcc_mlp_k3": ROOT / "examples" / "rlcc_mlp_k3.onnx",
            "synthetic_mlp": ROOT / "examples" / "synthetic_mlp.onnx"}
# The recurrent teacher (window trees): only in the benchmarks that load policies with rlcc.recurrent.load_policy.
RECURRENT_POLICIES = {"rlcc_lstm": ROOT / "examples" / "rlcc_lstm.onnx"}


def seeds_and_policies(doc: str, argv: list[str] | None = None, policies: dict | None = None) -> argparse.Namespace:
    """Command line of a per-seed, per-policy benchmark: --seeds, --policies, --jobs (``argv``:
    what is left after a benchmark's own options; default sys.argv)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--seeds", default="0,1,2,3,4", type=lambda s: [int(x) for x in s.split(",")])
    ap.add_argument("--policies", default=",".join(policies or POLICIES), type=lambda s: s.split(","))
    ap.add_argument("--jobs", type=int, default=2)
    return ap.parse_args(argv)
