"""Simulator speed: simulated seconds per wall-clock second for many-to-one incast.

Runs 64, 1024 and 8192 flows (64 hosts) under Swift and under the 4-input synthetic MLP
policy (examples/synthetic_mlp.onnx), at the default 1 us step and, for 8192 flows, also at a
2 us step. Flows start at their fair share (initial rate 1/N) so the run is in the busy steady
regime from the start (a line-rate start fills the 32 MB buffer and makes decisions rare, which
is faster and unrepresentative). Writes bench/results/simulator.json and simulator.md.

Policy runs use the block-batched engine (one policy call per base RTT of decisions, see
simulator/blocks.py), on one switch port its C kernel (simulator/kernel.py). ``--long-ms 2000``
adds the issue's target run: 8192 flows, the MLP policy, 2 simulated seconds (goal: under 2
minutes on a 2-core machine; 165 s before the kernel, issue 36: under 45 s). ``--compare`` runs
every 20 ms policy row a second time with the Python block loop (``BlockLoop.use_kernel = False``, the
kernel's bit-identical twin) and every Swift row with the engine's Python step loop
(``_Run.use_swift_loop = False``, the C loop's twin, simulator/swiftloop.py) and reports the ratios;
the results must then be identical (checked). Each row also shows the previous results file's figure
for the same row (``previous_*``, with its load), so a rerun states before and after.

Usage: python bench/bench_simulator.py [--duration-ms 20] [--long-ms 2000] [--quick] [--compare]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from rlcc.simulator import ManyToOne, Network, make_controller, simulate
from rlcc.simulator import engine
from rlcc.simulator.blocks import BlockLoop

ROOT = Path(__file__).resolve().parents[1]
POLICY = ROOT / "examples" / "synthetic_mlp.onnx"
OUT = ROOT / "bench" / "results"


NOTES = """Notes: policy rows run the block-batched engine: all decisions whose probes return within
one base RTT (8 steps) are computed with one policy call and applied at their exact steps
(bit-identical to step-by-step, tests/simulator/test_simulator.py::test_block_batched_*). On one
switch port the block runs in a C kernel (simulator/kernel.py; bit-identical to the Python block
loop, tests/simulator/test_kernel.py): what is left per block is the policy call and its
features, ~0.1-0.2 ms whatever the flow count (the Python blocks cost ~0.6 ms; the 8192-flow
2-second run took 165 s before the kernel). Swift
(raw-event controller using NACK counts) runs the step-by-step loop plus its pacing tick: every
base RTT / 4 (2 us) it re-paces every flow at cwnd / (base RTT + current queueing delay), the
fluid equivalent of the ACK clock (window updates stay once per RTT). On one switch port that
loop runs in C (simulator/swiftloop.py, csrc/swiftloop.c: decisions, ticks, fabric steps and
samples with the same float operations in the same order, bit-identical to the Python step loop,
tests/simulator/test_swiftloop.py); in Python a step cost ~100 small numpy calls plus, per tick,
a whole-array pass over all flows (8192 flows: ~250 us per 1 us step, the tick 20-38 % of it).
The machine is shared with other engineers' jobs: see the load averages."""


def timed(flows: int, controller: str, duration_ms: float, dt_ns: float) -> tuple[float, dict]:
    ctl = make_controller(controller, str(POLICY) if controller == "policy" else None)
    sc = ManyToOne(flows=flows, duration_ms=duration_ms, initial_rate=1.0 / flows, network=Network(dt_ns=dt_ns))
    t = time.perf_counter()
    r = simulate(sc, ctl)
    return time.perf_counter() - t, r.metrics_full


def python_twin(controller: str) -> tuple[object, str]:
    """The switch that selects the Python twin of the C path ``controller`` runs on one port."""
    return (BlockLoop, "use_kernel") if controller == "policy" else (engine._Run, "use_swift_loop")


def one(flows: int, controller: str, duration_ms: float, dt_ns: float, compare: bool = False) -> dict:
    load_before = os.getloadavg()[0]
    wall, m = timed(flows, controller, duration_ms, dt_ns)
    speed = duration_ms * 1e-3 / wall
    extra = {}
    if compare:
        owner, flag = python_twin(controller)
        setattr(owner, flag, False)
        try:
            py_wall, py_m = timed(flows, controller, duration_ms, dt_ns)
        finally:
            setattr(owner, flag, True)
        keys = [k for k in m if k not in ("wall_s", "sim_speed")]
        if m.keys() != py_m.keys() or not all(np.array_equal(m[k], py_m[k], equal_nan=True) for k in keys):
            raise SystemExit(f"C and Python paths differ at {flows} flows, {controller}")
        extra = {"python_wall_s": round(py_wall, 3), "c_speedup": round(py_wall / wall, 2)}
    return {
        "flows": flows,
        "controller": controller,
        "dt_ns": dt_ns,
        "duration_ms": duration_ms,
        "wall_s": round(wall, 3),
        "sim_s_per_wall_s": speed,
        "projected_wall_s_for_2s": round(2.0 / speed, 1),
        "decisions": int(m["decisions"]),
        "decisions_per_wall_s": round(m["decisions"] / wall),
        "goodput": round(m["goodput"], 4),
        "mean_rtt_inflation": round(m["mean_rtt_inflation"], 3),
        "queue_delay_mean_us": round(m["queue_delay_mean_us"], 3),
        "queue_delay_p99_us": round(m["queue_delay_p99_us"], 3),
        "load_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        **extra,
    }


def previous_rows(path: Path) -> dict:
    """Rows of an earlier results file by (flows, controller, dt_ns, duration_ms), plus its timestamp."""
    if not path.exists():
        return {}
    doc = json.loads(path.read_text())
    rows = {(r["flows"], r["controller"], r["dt_ns"], r["duration_ms"]): r for r in doc["runs"]}
    rows["timestamp"] = doc["meta"]["timestamp"]
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration-ms", type=float, default=20.0)
    ap.add_argument("--long-ms", type=float, default=2000.0, help="8192-flow policy run length (0: skip)")
    ap.add_argument("--quick", action="store_true", help="2 ms runs (smoke test)")
    ap.add_argument("--compare", action="store_true",
                    help="also run the policy rows with the Python block loop (before the C kernel) and report the ratio")
    args = ap.parse_args()
    dur = 2.0 if args.quick else args.duration_ms
    load_start = os.getloadavg()[0]
    previous = previous_rows(OUT / "simulator.json")
    cases = [(n, c, dur, 1000.0) for n in (64, 1024, 8192) for c in ("swift", "policy")]
    cases += [(8192, c, dur, 2000.0) for c in ("swift", "policy")]
    if args.long_ms > 0 and not args.quick:
        cases.append((8192, "policy", args.long_ms, 1000.0))
    rows = []
    for n, c, d, dt in cases:
        row = one(n, c, d, dt, args.compare and d == dur)  # the long run's Python figure: 165 s (NOTES)
        before = previous.get((n, c, dt, d))
        if before is not None:
            row["previous_wall_s"] = before["wall_s"]
            row["previous_projected_wall_s_for_2s"] = before["projected_wall_s_for_2s"]
            row["previous_load_1min"] = before["load_1min_before_after"][0]
            row["previous_timestamp"] = previous["timestamp"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    meta = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
        "load_average_1min_at_start": load_start,
        "load_average_1min_at_end": load,
        "scenario": "many-to-one, 64 hosts, 100 Gb/s, 8 us base RTT, 32 MB buffer, initial rate 1/N",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "simulator.json").write_text(json.dumps({"meta": meta, "runs": rows}, indent=2) + "\n")
    lines = [
        "# Simulator benchmark",
        "",
        f"{meta['scenario']}; {meta['machine']}; 1-min load average {load_start:.2f} at start, "
        f"{load:.2f} at end (shared machine). Generated by `python bench/bench_simulator.py`.",
        "",
        "| flows | controller | step (us) | simulated ms | wall s | sim s / wall s | projected wall s for 2 s | previous: projected wall s for 2 s (load) | decisions / wall s | goodput | RTT inflation | mean queue (us) | p99 queue (us) | load before/after |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lb, la = r["load_1min_before_after"]
        prev = (f"{r['previous_projected_wall_s_for_2s']} ({r['previous_load_1min']})" if "previous_wall_s" in r else "-")
        lines.append(
            f"| {r['flows']} | {r['controller']} | {r['dt_ns'] / 1e3:g} | {r['duration_ms']:g} | {r['wall_s']} | "
            f"{r['sim_s_per_wall_s']:.4f} | {r['projected_wall_s_for_2s']} | {prev} | {r['decisions_per_wall_s']} | "
            f"{r['goodput']} | {r['mean_rtt_inflation']} | {r['queue_delay_mean_us']} | {r['queue_delay_p99_us']} | {lb} / {la} |"
        )
    stamps = {r["previous_timestamp"] for r in rows if "previous_timestamp" in r}
    if stamps:
        lines += ["", f"Previous figures: the results file of {', '.join(sorted(stamps))} (same rows, its 1-min load)."]
    compared = [r for r in rows if "c_speedup" in r]
    if compared:
        lines += ["", "C paths vs their Python twins on one switch port (`--compare`, same run, identical metrics): "
                  "policy rows the C block kernel vs the Python block loop, Swift rows the C step loop vs the "
                  "engine's Python step loop:", "",
                  "| flows | controller | step (us) | simulated ms | C wall s | Python wall s | speedup |",
                  "|---:|---|---:|---:|---:|---:|---:|"]
        lines += [f"| {r['flows']} | {r['controller']} | {r['dt_ns'] / 1e3:g} | {r['duration_ms']:g} | {r['wall_s']} | "
                  f"{r['python_wall_s']} | {r['c_speedup']}x |" for r in compared]
    lines += ["", NOTES]
    (OUT / "simulator.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
