"""Benchmark: fabric simulator speed, the scaling curve in flows and in hosts.

All-to-all on a two-level fat-tree (2:1; 1 us step) with the bundled RL policy
(``examples/rlcc_mlp.onnx``, block-batched decisions), flows starting at their fair share so the
run is in the busy steady regime. Two curves:

* flows 56 -> 8064 on the paper's 64-host fat-tree (8, 16, 32, 64 hosts x 1 flow per pair, 64 x 2);
* hosts 8 -> 128 (fat-trees of 2x4, 4x4, 4x8, 4x16, 8x16 hosts, all-to-all, 1 flow per pair).

Peer, same run: the single-switch simulator (the same all-to-all without a topology: one egress
port per receiver), reported as the fabric / single-switch wall ratio. ``--long-ms 2000`` adds the
issue's target run (64 hosts, 8064 flows, 2 simulated seconds; goal, issue 36: under 3 minutes on
2 cores). Every row also carries the previous results file's figures for the same row
(``previous``: wall s, projected 2 s minutes, load), so a rerun states before and after.
``--compare`` runs the target configuration for ``--duration-ms`` a second time with the Python
block loop (``BlockLoop.use_kernel = False``: no C rows and block ends on a topology) and checks
that the metrics are identical. Writes bench/results/fabric.json.

    python bench/bench_fabric.py [--duration-ms 5] [--long-ms 2000] [--quick] [--compare]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

from benchlib import machine

import numpy as np

from rlcc.simulator import AllToAll, PolicyController, TopologyConfig, simulate
from rlcc.simulator.blocks import BlockLoop

ROOT = Path(__file__).resolve().parents[1]
POLICY = ROOT / "examples" / "rlcc_mlp.onnx"
OUT = ROOT / "bench" / "results" / "fabric.json"
FLOWS = ((8, 1), (16, 1), (32, 1), (64, 1), (64, 2))  # (hosts, flows per pair) on 64 hosts
HOSTS = ((2, 4), (4, 4), (4, 8), (4, 16), (8, 16))  # (leaves, hosts per leaf)
TARGET_S = 180.0  # goal (issue 36): 2 simulated seconds of 8064 flows within 3 minutes


def one(hosts: int, per_pair: int, topo: TopologyConfig | None, duration_ms: float, keep: list | None = None) -> dict:
    sc = AllToAll(hosts=hosts, flows_per_pair=per_pair, duration_ms=duration_ms, topology=topo)
    sc = dataclasses.replace(sc, initial_rate=sc.fair_rate())
    load = os.getloadavg()[0]
    t = time.perf_counter()
    r = simulate(sc, PolicyController(str(POLICY)))
    wall = time.perf_counter() - t
    m = r.metrics_full
    if keep is not None:
        keep.append(m)
    return {"hosts": hosts, "flows": sc.n_flows, "topology": "fat-tree" if topo else "single-switch",
            "duration_ms": duration_ms, "wall_s": round(wall, 3), "wall_per_sim_ms": round(wall / duration_ms, 4),
            "decisions": int(m["decisions"]), "us_per_decision": round(wall * 1e6 / max(m["decisions"], 1), 3),
            "projected_2s_min": round(wall / duration_ms * 2000 / 60, 2), "load_before": round(load, 2),
            "goodput": round(m["goodput"], 4), "queue_delay_mean_us": round(m["queue_delay_mean_us"], 3)}


def previous(old: dict | None, rows: list[dict], key: tuple) -> None:
    """Add to each row the same row's figures from the previous results file (``old``)."""
    if not old:
        return
    by = {tuple(r.get(k) for k in key): r for r in old}
    for r in rows:
        b = by.get(tuple(r.get(k) for k in key))
        if b is not None:
            r["previous"] = {"wall_s": b["wall_s"], "projected_2s_min": b["projected_2s_min"], "load_before": b["load_before"]}


def compare(duration_ms: float) -> dict:
    """The target configuration with the C paths and with the Python block loop: identical metrics, the ratio."""
    walls, metrics = [], []
    for use in (True, False):
        BlockLoop.use_kernel = use
        try:
            walls.append(one(64, 2, TopologyConfig(), duration_ms, metrics)["wall_s"])
        finally:
            BlockLoop.use_kernel = True
    keys = [k for k in metrics[0] if k not in ("wall_s", "sim_speed")]
    if metrics[0].keys() != metrics[1].keys() or not all(np.array_equal(metrics[0][k], metrics[1][k], equal_nan=True) for k in keys):
        raise SystemExit("C paths and the Python block loop differ on the fat-tree")
    return {"flows": 8064, "duration_ms": duration_ms, "c_wall_s": walls[0], "python_wall_s": walls[1],
            "speedup": round(walls[1] / walls[0], 2), "load_before": round(os.getloadavg()[0], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration-ms", type=float, default=5.0)
    ap.add_argument("--long-ms", type=float, default=0.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--compare", action="store_true", help="also run the target configuration with the Python block loop")
    args = ap.parse_args()
    old = json.loads(OUT.read_text()) if OUT.exists() else None
    dur = 1.0 if args.quick else args.duration_ms
    fat64 = TopologyConfig()
    rows = []
    for hosts, k in FLOWS:
        fab = one(hosts, k, fat64, dur)
        single = one(hosts, k, None, dur)
        fab["vs_single_switch"] = round(fab["wall_s"] / single["wall_s"], 2)
        rows += [fab, single]
        print(f"flows {fab['flows']}: fabric {fab['wall_s']} s, single switch {single['wall_s']} s", flush=True)
    host_rows = []
    for leaves, per_leaf in HOSTS:
        cfg = TopologyConfig(leaves=leaves, hosts_per_leaf=per_leaf, spines=2, links_per_pair=per_leaf // 4 or 1)
        r = one(leaves * per_leaf, 1, cfg, dur / 2 if leaves * per_leaf > 64 else dur)
        r["leaves"], r["hosts_per_leaf"] = leaves, per_leaf
        host_rows.append(r)
        print(f"hosts {r['hosts']}: {r['flows']} flows, {r['wall_s']} s", flush=True)
    previous((old or {}).get("flows_curve"), rows, ("flows", "topology"))
    previous((old or {}).get("hosts_curve"), host_rows, ("hosts",))
    long = None
    if args.long_ms:
        long = one(64, 2, fat64, args.long_ms)
        long["goal_s"] = TARGET_S
        if old and old.get("target_run"):
            t = old["target_run"]
            long["previous"] = {"wall_s": t["wall_s"], "projected_2s_min": t["projected_2s_min"], "load_before": t["load_before"]}
        print(f"target run: {long['flows']} flows, {args.long_ms} ms: {long['wall_s']} s", flush=True)
    doc = {"command": "python bench/bench_fabric.py" + (f" --long-ms {args.long_ms:g}" if args.long_ms else ""),
           "policy": POLICY.name, "duration_ms": dur, "flows_curve": rows, "hosts_curve": host_rows, "target_run": long,
           "machine": machine()}
    if args.compare:
        doc["compare"] = compare(dur)
        print(f"compare: C paths {doc['compare']['c_wall_s']} s, Python blocks {doc['compare']['python_wall_s']} s", flush=True)
    if old and long is None:  # keep an earlier target run
        doc["target_run"] = old.get("target_run")
    OUT.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
