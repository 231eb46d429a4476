"""Benchmark: what ``rlcc-verify --policy`` costs on the committed example firmware.

Three runs of the real command side by side (vectors only, ``--random 0``): without an anchor
(relative to the manifest), with ``--policy`` and an empty compile cache (the policy is
recompiled), and with ``--policy`` again (the cache written by the second run). Wall and CPU
seconds (user + system of the command and its children) and the ratio to the unanchored run.

    python bench/bench_policy_check.py [--firmware examples/firmware/firmware.c] [--policy examples/rlcc_mlp.onnx]

Writes bench/results/policy_check.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import machine, shown

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
FIRMWARE = ROOT / "examples" / "firmware" / "firmware.c"
POLICY = ROOT / "examples" / "rlcc_mlp.onnx"


def _timed(cmd: list[str], env: dict[str, str], report: Path) -> dict[str, object]:
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    rc = subprocess.run(cmd + ["--json", str(report), "-q"], env=env, check=False).returncode
    wall = time.perf_counter() - t0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {rc}")
    provenance = json.loads(report.read_text())["provenance"]
    return {"wall_s": round(wall, 1), "cpu_s": round(kids.ru_utime - kids0.ru_utime + kids.ru_stime - kids0.ru_stime, 1),
            "root": provenance["root"], "expected_files": (provenance["policy"] or {}).get("source")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--firmware", type=Path, default=FIRMWARE)
    ap.add_argument("--policy", type=Path, default=POLICY)
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args()
    before = round(os.getloadavg()[0], 2)
    base = ["rlcc-verify", str(args.firmware), "--random", "0"]
    with tempfile.TemporaryDirectory(prefix="rlcc-bench-policy-") as tmp:
        env = {**os.environ, "RLCC_CACHE_DIR": str(Path(tmp) / "cache")}
        runs = {
            "relative to the manifest": _timed(base, env, Path(tmp) / "a.json"),
            "--policy, recompiled": _timed(base + ["--policy", str(args.policy)], env, Path(tmp) / "b.json"),
            "--policy, cached compile": _timed(base + ["--policy", str(args.policy)], env, Path(tmp) / "c.json"),
        }
    ref = runs["relative to the manifest"]
    for row in runs.values():
        row["wall_ratio"] = round(row["wall_s"] / ref["wall_s"], 2)
    doc = {"schema": "rlcc.bench.policy_check/1", "machine": machine(),
           "command": f"rlcc-verify {shown(args.firmware)} --random 0 [--policy {shown(args.policy)}]",
           "load_1min_before_after": [before, round(os.getloadavg()[0], 2)], "runs": runs}
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "policy_check.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
