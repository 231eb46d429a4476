"""Benchmark: the paper's evaluation suite for the bundled example and the reference controllers.

Runs ``rlcc-sim suite`` (``rlcc.simulator.suite``, the full suite: many-to-one and all-to-all on
the 64-host fat-tree, OSU all-to-all, long-short on the single switch, web-search FCT) for the
teacher (``examples/rlcc_mlp.onnx``), its compiled firmware (``examples/firmware``: the golden
model at the decision time rlcc-verify measured), DCQCN, Swift and HPCC, on a local Ray (both
cores), in both loss modes by default (lossy buffers, and lossless with PFC: Table V per
mode). Writes bench/results/suite/ (suite.md, suite.json, PNGs: the report) and
bench/results/suite_meta.json (wall time, machine); the README's Table IV and Table V are
generated from suite.json.

    python bench/bench_suite.py [--backend ray|serial] [--seeds 0] [--loss-mode lossy|lossless|both]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from benchlib import machine

from rlcc.simulator.suite import LOSS_MODES, ControllerSpec, run_suite
from rlcc.simulator.suite_report import write_report

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "suite"
CONTROLLERS = (f"teacher={ROOT / 'examples' / 'rlcc_mlp.onnx'}", f"firmware={ROOT / 'examples' / 'firmware'}",
               "dcqcn", "swift", "hpcc")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("ray", "serial"), default="ray")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--loss-mode", choices=(*LOSS_MODES, "both"), default="both")
    args = ap.parse_args()
    modes = LOSS_MODES if args.loss_mode == "both" else (args.loss_mode,)
    seeds = [int(s) for s in args.seeds.split(",")]
    specs = [ControllerSpec.parse(c) for c in CONTROLLERS]
    t = time.perf_counter()
    results = run_suite(specs, "full", seeds, backend=args.backend, progress=False, loss_modes=modes)
    wall = time.perf_counter() - t
    # Paths in the settings would differ per checkout: keep the file names only.
    results["settings"]["controllers"] = {c.name: c.kind + (f" ({Path(c.path).name})" if c.path else "") for c in specs}
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    write_report(results, OUT)
    meta = {"command": (f"python bench/bench_suite.py --backend {args.backend} --seeds {args.seeds} "
                        f"--loss-mode {args.loss_mode}"),
            "wall_s": round(wall, 1), "runs": len(results["runs"]), "backend": args.backend, "machine": machine()}
    (OUT.parent / "suite_meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    print(f"{len(results['runs'])} runs in {wall:.0f} s ({args.backend}); wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
