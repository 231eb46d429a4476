"""Benchmark: the papers' Table II in rlcc's simulator — what decision time does to the closed loop.

The RL-CC deployment paper measured, on ConnectX-6Dx NICs, that the LSTM (450 us per decision)
and the sliding-window MLP (17 us) lose control of a many-to-one incast (goodput 0.3-0.4, tens
of thousands of drops per flow) while the distilled trees (0.9 us) keep it. This benchmark runs
the same experiment in rlcc's simulator with NIC-like serial decisions (a flow's next RTT probe
leaves when its decision completes, ``Scenario.serial_decisions``):

* at the papers' measured times: the LSTM and MLP teachers (float) at 450 us and 17 us, the
  MLP's tree firmware (``examples/firmware``, golden model) at 0.9 us;
* at rlcc's measured times: every firmware of ``bench_table1.py`` (LSTM and MLP as int8 neural
  firmware and as trees) at the worst-case decision time rlcc-verify measured on the dpa profile.

Scenarios: many-to-one 16/64/128 flows from line rate into a 2 MB switch buffer (20 ms), on the
single switch and on the 64-host fat-tree (inter-rack senders). Metrics: goodput over the
converged half, drops per flow over the run, mean queue delay. Writes bench/results/table2.json;
the README's Table II is generated from it.

    python bench/bench_table2.py [--backend ray|serial]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchlib import machine

from rlcc.simulator.scenarios import ManyToOne, Network, TopologyConfig
from rlcc.simulator.suite import FAT_TREE, SINGLE, ControllerSpec, Job, Point, firmware_latency_us, run_job
from rlcc.simulator.sweep import run_jobs

ROOT = Path(__file__).resolve().parent.parent
TABLE1 = ROOT / "bench" / "results" / "table1.json"
RESULTS = ROOT / "bench" / "results" / "table2.json"
FLOWS = (16, 64, 128)
DURATION_MS = 20.0
BUFFER_BYTES = 2_000_000
PAPER = (  # (row, what runs, path, the paper's decision time in us)
    ("LSTM @ paper 450 us", "policy", ROOT / "examples" / "rlcc_lstm.onnx", 450.0),
    ("MLP @ paper 17 us", "policy", ROOT / "examples" / "rlcc_mlp.onnx", 17.0),
    ("trees @ paper 0.9 us", "firmware", ROOT / "examples" / "firmware", 0.9),
)


def controllers() -> list[tuple[str, ControllerSpec, str]]:
    """(group, controller, source) of every row."""
    rows = [("paper", ControllerSpec(name, kind, str(path), latency_us=us), path.name) for name, kind, path, us in PAPER]
    for r in json.loads(TABLE1.read_text())["rows"]:
        fw = ROOT / r["firmware"]
        us = firmware_latency_us(fw / "verify.json")
        rows.append(("rlcc", ControllerSpec(f"{r['row']} @ {us:.2f} us", "firmware", str(fw), latency_us=us), r["firmware"]))
    return rows


def points(seed: int = 0) -> list[Point]:
    net = Network(buffer_bytes=BUFFER_BYTES)
    out = []
    for topology, topo in ((SINGLE, None), (FAT_TREE, TopologyConfig())):
        for n in FLOWS:
            sc = ManyToOne(flows=n, duration_ms=DURATION_MS, seed=seed, network=net, topology=topo, serial_decisions=True)
            out.append(Point("many-to-one", topology, f"{n} flows", n, sc, False))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("ray", "serial"), default="ray")
    args = ap.parse_args()
    rows = controllers()
    jobs = [Job(pt, c) for pt in points() for _, c, _ in rows]
    t = time.perf_counter()
    runs = run_jobs(run_job, jobs, backend=args.backend, progress=False, desc="table II")
    wall = time.perf_counter() - t
    cells = [{"controller": r["controller"], "topology": r["topology"], "flows": int(r["scale_value"]),
              "goodput": round(r["metrics"]["goodput"], 4), "drops_per_flow": round(r["metrics"]["drops_per_flow"], 1),
              "queue_us": round(r["metrics"]["queue_delay_mean_us"], 2),
              "decision_latency_us": r["metrics"]["decision_latency_us"]} for r in runs]
    doc = {"command": f"python bench/bench_table2.py --backend {args.backend}", "wall_s": round(wall, 1),
           "settings": {"flows": list(FLOWS), "duration_ms": DURATION_MS, "buffer_bytes": BUFFER_BYTES,
                        "start": "line rate", "serial_decisions": True},
           "rows": [{"name": c.name, "group": g, "source": src, "latency_us": c.latency_us} for g, c, src in rows],
           "cells": cells, "machine": machine()}
    RESULTS.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    for g, c, _ in rows:
        mine = [x for x in cells if x["controller"] == c.name and x["topology"] == SINGLE]
        print(f"{c.name:28s} " + "  ".join(f"{x['flows']}: GP {x['goodput']:.2f} drops {x['drops_per_flow']:.0f}" for x in mine))
    print(f"{len(runs)} runs in {wall:.0f} s; wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
