"""Benchmark: ``rlcc-verify --prove`` on the committed example firmware, per proof part.

Runs the real command (vectors + symbolic equivalence proof, rv64imac) and keeps its JSON
``proof`` with the wall and CPU time, so the README's proof status is a results file and not a
hand-copied transcript.

    python bench/bench_prove.py [--firmware examples/firmware/firmware.c] [--prove-timeout 120]

Writes bench/results/prove.json (rv64imac) or prove_<target>.json (another --target).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import machine, shown as relative

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
FIRMWARE = ROOT / "examples" / "firmware" / "firmware.c"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--firmware", type=Path, default=FIRMWARE)
    ap.add_argument("--target", default="rv64imac")
    ap.add_argument("--prove-timeout", type=float, default=120.0)
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args()
    before = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory(prefix="rlcc-bench-prove-") as tmp:
        report = Path(tmp) / "verify.json"
        cmd = ["rlcc-verify", str(args.firmware), "--target", args.target, "--prove",
               "--prove-timeout", f"{args.prove_timeout:g}", "--json", str(report), "-q"]
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, check=False).returncode
        wall = time.perf_counter() - t0
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        if rc not in (0, 4):
            raise SystemExit(f"rlcc-verify exited {rc}")
        result = json.loads(report.read_text())
    shown = relative(args.firmware)
    doc = {
        "schema": "rlcc.bench.prove/1",
        "machine": machine(),
        "firmware": shown,
        "firmware_c_sha256": hashlib.sha256(args.firmware.read_bytes()).hexdigest(),
        "target": result["target"],
        "profile": result["profile"],
        "prove_timeout_s": args.prove_timeout,
        "exit_code": rc,
        "wall_s": round(wall, 1),
        "cpu_s": round((kids.ru_utime - kids0.ru_utime) + (kids.ru_stime - kids0.ru_stime), 1),
        "load_1min_before_after": [before, round(os.getloadavg()[0], 2)],
        "vectors": result["vectors"],
        "assurance": result["assurance"],
        "proof": result["proof"],
        "note": "wall_s/cpu_s: the whole rlcc-verify run (vectors, coverage and proof)",
    }
    args.results.mkdir(parents=True, exist_ok=True)
    name = "prove.json" if args.target == "rv64imac" else f"prove_{args.target}.json"
    (args.results / name).write_text(json.dumps(doc, indent=2) + "\n")
    for p in result["proof"]["parts"]:
        print(f"{p['part']}: {p['status']} ({p['seconds']:.1f} s) - {p['detail']}")
    print(f"{doc['wall_s']} s wall, {doc['cpu_s']} s CPU; assurance: {doc['assurance']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
