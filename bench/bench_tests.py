"""Wall time of the test tiers: the fast tier (``python -m pytest -m "not slow"``) and, with
``--full``, the README's whole test command. Writes bench/results/tests.json, from which the
README's Quick start quotes the fast tier's time (bench/readme_blocks.py).

    python bench/bench_tests.py [--full]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

from benchlib import ROOT, machine

RESULTS = ROOT / "bench" / "results" / "tests.json"
TIERS = {"fast": ["-m", "not slow"], "full": []}
# The README-figures checks compare the README with this benchmark's own results file, which is
# being rewritten: they are left out of the timed run (two tests, well under a second).
CIRCULAR = ["--deselect", "tests/test_readme_figures.py::test_readme_matches_results",
            "--deselect", "tests/test_readme_figures.py::test_check_reports_a_stale_figure"]


def run_tier(args: list[str]) -> dict[str, object]:
    load = os.getloadavg()[0]
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, *CIRCULAR], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|deselected|errors?)", summary)}
    counts["deselected"] = counts.get("deselected", 0) - len(CIRCULAR) // 2  # the slow tests only
    if proc.returncode != 0:
        raise SystemExit(f"bench_tests: pytest {' '.join(args)} exited {proc.returncode}: {summary}")
    return {"command": " ".join(["python -m pytest", *(f'"{a}"' if " " in a else a for a in args)]),
            "wall_s": round(wall, 1), "load_at_start": round(load, 2), **counts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="also time the whole suite (minutes)")
    opts = ap.parse_args()
    doc = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    doc["machine"] = machine()
    for tier in ("fast", "full") if opts.full else ("fast",):
        doc[tier] = run_tier(TIERS[tier])
        print(f"{tier}: {doc[tier]}", file=sys.stderr)
    RESULTS.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
