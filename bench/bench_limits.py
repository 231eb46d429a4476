"""Benchmark: memory and time of the simulator at its documented limits.

Each case runs in a child process (``--case NAME``) at a limit, or scaled toward it where a run at
the limit takes too long, and the parent reads the child's peak resident memory (``os.wait4``:
ru_maxrss, the interpreter and imports included) and wall time. A case states whether it ran at
the limit and, if scaled, why the figure extrapolates (memory flat in steps, time linear in work).
Writes bench/results/limits.json; docs/simulator.md renders it (bench/readme_tables.py).

    python bench/bench_limits.py [--only NAME,...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchlib import machine

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "limits.json"
STEPS_RUN = 100_000  # of MAX_STEPS (1e8): memory does not grow with steps past the queue-sample cap
FLOW_STEPS_RUN = (1 << 16, 2000)  # flows x steps for the flow-steps throughput
QUEUE_SAMPLES_MB = 16  # engine.MAX_QUEUE_SAMPLES float32 cells: what a 1e8-step run adds


def _chain_topology(hosts: int, switches: int, parallel: int = 1) -> dict:
    """Hosts spread round-robin over a chain of switches (``parallel`` cables per switch pair)."""
    hs, sw = [f"h{i}" for i in range(hosts)], [f"s{i}" for i in range(switches)]
    links = [{"a": h, "b": sw[i % switches], "rate_gbps": 100, "delay_ns": 1000} for i, h in enumerate(hs)]
    links += [{"a": sw[i], "b": sw[i + 1], "rate_gbps": 100, "delay_ns": 1000}
              for i in range(switches - 1) for _ in range(parallel)]
    return {"hosts": hs, "switches": sw, "links": links}


def _paths(t, flows: int) -> None:
    import numpy as np

    from rlcc.simulator.topology import Routing

    rng = np.random.default_rng(0)
    src = rng.integers(0, t.n_hosts, flows)
    dst = (src + rng.integers(1, t.n_hosts, flows)) % t.n_hosts
    Routing(t).paths(src, dst, np.arange(flows), 0)


def case_baseline() -> None:
    import rlcc.simulator  # noqa: F401  the imports every case pays
    import rlcc.simulator.topology  # noqa: F401


def case_nodes() -> None:
    from rlcc.simulator.scenarios import MAX_FLOWS
    from rlcc.simulator.topology import MAX_NODES, from_dict

    t = from_dict(_chain_topology(MAX_NODES - 10, 10))
    _paths(t, MAX_FLOWS)


def case_cables() -> None:
    from rlcc.simulator.topology import MAX_CABLES, from_dict

    t = from_dict(_chain_topology(2, 2, parallel=MAX_CABLES - 2))
    _paths(t, 1000)


def case_route_work() -> None:
    from rlcc.simulator.topology import fat_tree

    _paths(fat_tree(hosts_per_leaf=20, leaves=1000, spines=8, links_per_pair=12), 100_000)


def case_rate_cells() -> None:
    from rlcc.simulator import ManyToOne, TopologyConfig, make_controller, simulate

    sc = ManyToOne(flows=4094, duration_ms=0.02, topology=TopologyConfig(kind="star", hosts=4095))
    simulate(sc, make_controller("swift"))


def case_flows_on_topology() -> None:
    from rlcc.simulator import ManyToOne, TopologyConfig, make_controller, simulate
    from rlcc.simulator.scenarios import MAX_FLOWS

    sc = ManyToOne(flows=MAX_FLOWS, duration_ms=0.02, topology=TopologyConfig(kind="star", hosts=4095))
    simulate(sc, make_controller("swift"))


def case_flows() -> None:
    from rlcc.simulator import ManyToOne, make_controller, simulate
    from rlcc.simulator.scenarios import MAX_FLOWS

    simulate(ManyToOne(flows=MAX_FLOWS, duration_ms=0.02), make_controller("swift"))


def case_steps() -> None:
    from rlcc.simulator import ManyToOne, make_controller, simulate

    simulate(ManyToOne(flows=2, duration_ms=STEPS_RUN / 1000), make_controller("swift"))


def case_flow_steps() -> None:
    from rlcc.simulator import ManyToOne, make_controller, simulate

    flows, steps = FLOW_STEPS_RUN
    simulate(ManyToOne(flows=flows, duration_ms=steps / 1000), make_controller("swift"))


def case_trace() -> None:
    from rlcc.simulator.trace import MAX_TRACE_BYTES, RECORD_BYTES, TraceConfig, TraceRecorder

    rec = TraceRecorder(TraceConfig(capacity=MAX_TRACE_BYTES // RECORD_BYTES), width=0)
    for col in rec.cols.values():
        col[:] = 1  # every page written, as a full buffer
    rec.size = rec.config.capacity
    rec.finish()


def case_cdf() -> None:
    import numpy as np

    from rlcc.simulator.flowsize import MAX_CDF_POINTS, FlowSizeCdf, poisson_flows

    n = MAX_CDF_POINTS
    cdf = FlowSizeCdf.parse("".join(f"{1000 * (i + 1)} {100 * (i + 1) / n}\n" for i in range(n)))
    poisson_flows(64, 1.0, 100.0, 1e8, cdf, 0, 1 << 20)
    assert np.isfinite(cdf.mean())


# name: (function, limit, value, what the run is, fraction of the limit it ran at, how it extends)
CASES = {
    "baseline": (case_baseline, "(imports only)", "", "import rlcc.simulator", 1.0, ""),
    "nodes": (case_nodes, "topology nodes (MAX_NODES)", "100,000",
              "99,990 hosts on a 10-switch chain: build, route 2^20 flows", 1.0, ""),
    "cables": (case_cables, "topology links (MAX_CABLES)", "1,000,000",
               "2 switches joined by 999,998 cables: build, route", 1.0, ""),
    "route_work": (case_route_work, "routing search steps (MAX_ROUTE_WORK)", "2e8",
                   "fat-tree 1000 leaves x 20 hosts, 8 spines x 12 cables: 1.93e8 steps, route 100,000 flows",
                   1.93e8 / 2e8, "memory O(nodes + links), not O(steps); time linear in steps"),
    "rate_cells": (case_rate_cells, "fabric rate cells, hosts x queues (MAX_RATE_CELLS)", "2^24",
                   "many-to-one, 4094 flows on a 4095-host star (16.77 M cells), 20 steps", 1.0, ""),
    "flows": (case_flows, "flows (MAX_FLOWS)", "2^20", "many-to-one, 1,048,576 flows, 20 steps", 1.0, ""),
    "flows_on_topology": (case_flows_on_topology, "flows and rate cells together", "2^20, 2^24",
                          "many-to-one, 1,048,576 flows on the 4095-host star, 20 steps", 1.0, ""),
    "steps": (case_steps, "time steps (MAX_STEPS)", "1e8", f"2 flows, {STEPS_RUN:,} steps", STEPS_RUN / 1e8,
              f"memory flat in steps but for the queue samples (at most {QUEUE_SAMPLES_MB} MB, added); time linear"),
    "flow_steps": (case_flow_steps, "flow-steps (MAX_FLOW_STEPS)", "1e11",
                   f"{FLOW_STEPS_RUN[0]:,} flows x {FLOW_STEPS_RUN[1]} steps",
                   FLOW_STEPS_RUN[0] * FLOW_STEPS_RUN[1] / 1e11, "memory that of the flows row; time linear"),
    "trace": (case_trace, "trace buffer (MAX_TRACE_BYTES)", "1 GiB",
              "a full 17.9 M-record buffer (no observation), saved to arrays", 1.0, ""),
    "cdf": (case_cdf, "flow-size CDF points (MAX_CDF_POINTS)", "10,000",
            "parse, draw a Poisson workload (16,000 flows) from it", 1.0, ""),
}


def measure(name: str) -> dict:
    """Run one case in a child; its peak RSS (MB) and wall time (s)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--case", name], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench_limits: case {name} failed (status {status})")
    _, limit, value, run, fraction, extends = CASES[name]
    return {"name": name, "limit": limit, "value": value, "run": run, "fraction": fraction, "extends": extends,
            "rss_mb": round(usage.ru_maxrss / 1024, 1), "wall_s": round(wall, 2),
            "rss_at_limit_mb": round(usage.ru_maxrss / 1024 + (QUEUE_SAMPLES_MB if name == "steps" else 0), 1),
            "wall_at_limit_s": round(wall / fraction, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=list(CASES), help=argparse.SUPPRESS)
    ap.add_argument("--only", type=lambda s: s.split(","), default=list(CASES))
    args = ap.parse_args()
    if args.case:
        CASES[args.case][0]()
        return
    t0 = time.perf_counter()
    rows = []
    for name in args.only:
        rows.append(measure(name))
        print(f"{name}: {rows[-1]['rss_mb']} MB, {rows[-1]['wall_s']} s", flush=True)
    doc = {"command": "python bench/bench_limits.py", "cases": rows, "total_s": round(time.perf_counter() - t0, 1),
           "machine": machine()}
    OUT.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
