"""Wall time of ``.ci/run`` as CI runs it: a clean clone of this checkout's HEAD with the shared
folder beside it, a clean environment (only HOME and PATH), the stage times read from its log.
Writes bench/results/ci.json (the last passing run's times kept beside as ``previous``), from which the
README quotes the CI time.

    python bench/bench_ci.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import ROOT, machine

RESULTS = ROOT / "bench" / "results" / "ci.json"
STAGE = re.compile(r"^\.ci/run: (?P<name>.+) \((?P<at>\d+) s, load (?P<load>[\d.]+)\)$")
TESTS = re.compile(r"^=+ (?:(?P<failed>\d+) failed, )?(?P<passed>\d+) passed(?:, (?P<skipped>\d+) skipped)?.* in (?P<s>[\d.]+)s",
                   re.MULTILINE)
LOG = Path(tempfile.gettempdir()) / "rlcc-ci-last.log"  # the whole log of the last run, for a failure's details
TIMEOUT_S = 90 * 60  # a run longer than this does not land anyway


def stages(log: str, total_s: float) -> list[dict[str, object]]:
    """Each stage of the log with its own wall time (the next stage's start, or the end, minus its start)."""
    marks = [m for m in map(STAGE.match, log.splitlines()) if m]
    out = []
    for i, m in enumerate(marks):
        end = int(marks[i + 1]["at"]) if i + 1 < len(marks) else total_s
        if m["name"] != "done":
            out.append({"stage": m["name"], "start_s": int(m["at"]), "wall_s": round(end - int(m["at"]), 1),
                        "load_at_start": float(m["load"])})
    return out


def clean_path(path: str) -> str:
    """``path`` without virtual environments' bin folders: CI starts from the machine's own Python."""
    return os.pathsep.join(d for d in path.split(os.pathsep) if d and not (Path(d).parent / "pyvenv.cfg").exists())


def run_ci(shared: Path) -> dict[str, object]:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="rlcc-ci-") as tmp:
        clone = Path(tmp) / "main"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "checkout", "-q", head], cwd=clone, check=True)
        (Path(tmp) / "shared").symlink_to(shared.resolve())
        env = {"HOME": os.environ.get("HOME", "/root"), "PATH": clean_path(os.environ.get("PATH", os.defpath))}
        load = os.getloadavg()[0]
        start = time.monotonic()
        proc = subprocess.run(["bash", ".ci/run"], cwd=clone, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=False)
        total = time.monotonic() - start
    log = proc.stdout + proc.stderr
    LOG.write_text(log)
    tests = TESTS.search(log)
    return {"commit": head, "exit_code": proc.returncode, "wall_s": round(total, 1), "load_at_start": round(load, 2),
            "cores_line": next((ln for ln in log.splitlines() if " cores, load " in ln), ""),
            "stages": stages(log, total),
            "tests": {k: float(v) if k == "s" else int(v or 0) for k, v in tests.groupdict().items()} if tests else None,
            "log_tail": [ln for ln in proc.stdout.splitlines() if ln.startswith(("FAILED", "ERROR", ".ci/run"))][-20:]
            if proc.returncode else []}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared",
                    help="the folder CI finds beside the clone (default: ../shared)")
    opts = ap.parse_args()
    if not opts.shared.is_dir():
        raise SystemExit(f"bench_ci: {opts.shared} is not a folder (CI runs with ../shared beside the clone)")
    doc = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    # the last passing run's times (a failed run stops early: its time is not a CI time)
    previous = {k: doc[k] for k in ("commit", "wall_s", "stages") if k in doc} if doc.get("exit_code") == 0 else doc.get("previous")
    run = run_ci(opts.shared)
    out = {"machine": machine(), **run, "previous": previous or None}
    RESULTS.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")
    print(f"bench_ci: exit {run['exit_code']} in {run['wall_s'] / 60:.1f} min", file=sys.stderr)
    if run["exit_code"]:
        print("\n".join(run["log_tail"]) + f"\nbench_ci: the whole log is {LOG}", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
