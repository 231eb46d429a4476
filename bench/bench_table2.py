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
single switch and on the 64-host fat-tree (inter-rack senders), with RoCE's go-back-N loss recovery
(a drop costs the bytes resent after it, ``Network.loss_recovery``). Metrics: goodput over the
converged half, drops per flow over the run, mean queue delay. Writes bench/results/table2.json;
the README's Table II is generated from it.

The capacity sweep asks Table II's question as the NIC poses it: every flow's decisions share the
sending NIC's decision processor (``Scenario.nic``: ``--nic-cores`` x ``--nic-threads`` threads, each
decision the policy's time), so at what number of flows per NIC does each policy lose control?
Many-to-one on the single switch from ``CAPACITY_HOSTS`` senders, ``CAPACITY_FLOWS`` flows per
sender, each policy at its decision time (papers' and rlcc's, as above): goodput, drops per flow
and decision queueing delay -> bench/results/table2_capacity.json and table2_capacity.png.

    python bench/bench_table2.py [--part all|table|capacity|plot] [--backend ray|serial] [--nic-cores C] [--nic-threads T]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchlib import machine

from rlcc.emulator.cycle_model import load_profile
from rlcc.simulator.nic import NicConfig, verify_cycles
from rlcc.simulator.params import GO_BACK_N
from rlcc.simulator.scenarios import ManyToOne, Network, TopologyConfig
from rlcc.targets import DEFAULT_TARGET
from rlcc.simulator.suite import FAT_TREE, SINGLE, ControllerSpec, Job, Point, firmware_latency_us, run_job
from rlcc.simulator.sweep import run_jobs

ROOT = Path(__file__).resolve().parent.parent
TABLE1 = ROOT / "bench" / "results" / "table1.json"
RESULTS = ROOT / "bench" / "results" / "table2.json"
CAPACITY = ROOT / "bench" / "results" / "table2_capacity.json"
CAPACITY_PLOT = CAPACITY.with_suffix(".png")
CAPACITY_FLOWS = (1, 4, 16, 64, 256)  # flows per sending NIC
CAPACITY_HOSTS = 2  # senders into one port: 2x oversubscribed at line rate
DURATION_MS = 20.0
CAPACITY_MS = DURATION_MS  # as Table II: a line-rate start into 2 MB needs ms to settle; the second half is measured
SATURATED = 0.95  # NIC thread utilisation at which the decision loop is capacity-bound
FLOWS = (16, 64, 128)
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


def capacity_rows(cores: int, threads: int) -> list[tuple[str, ControllerSpec, NicConfig]]:
    """(group, controller, its NIC) per policy: the papers' times in cycles of the default target's
    profile clock; rlcc's firmware at the cycles and clock its verify.json records."""
    clock = load_profile(DEFAULT_TARGET.default_profile).clock_hz
    out = []
    for name, kind, path, us in PAPER:
        nic = NicConfig(cores, threads, int(round(us * 1e-6 * clock)), clock)
        out.append(("paper", ControllerSpec(name, kind, str(path)), nic))
    for r in json.loads(TABLE1.read_text())["rows"]:
        fw = ROOT / r["firmware"]
        cycles, hz = verify_cycles(fw / "verify.json")
        nic = NicConfig(cores, threads, cycles, hz)
        out.append(("rlcc", ControllerSpec(f"{r['row']} @ {nic.decision_ns / 1e3:.2f} us", "firmware", str(fw)), nic))
    return out


def capacity_points(nic: NicConfig, seed: int = 0) -> list[Point]:
    net = Network(buffer_bytes=BUFFER_BYTES)
    return [Point("many-to-one", SINGLE, f"{n} flows per NIC", n,
                  ManyToOne(flows=n * CAPACITY_HOSTS, hosts=CAPACITY_HOSTS, duration_ms=CAPACITY_MS, seed=seed, network=net,
                            nic=nic), False) for n in CAPACITY_FLOWS]


def run_capacity(backend: str, cores: int, threads: int) -> None:
    rows = capacity_rows(cores, threads)
    jobs = [Job(pt, c, loss_recovery=GO_BACK_N) for _, c, nic in rows for pt in capacity_points(nic)]
    t = time.perf_counter()
    runs = run_jobs(run_job, jobs, backend=backend, progress=False, desc="table II capacity")
    wall = time.perf_counter() - t
    cells = [{"controller": r["controller"], "flows_per_nic": int(r["scale_value"]),
              **{k: round(r["metrics"][k], 4) for k in ("goodput", "drops_per_flow", "queue_delay_mean_us", "nic_wait_mean_us",
                                                       "nic_wait_p99_us", "nic_backlog_max", "nic_utilization")}}
             for r in runs]
    doc = {"command": f"python bench/bench_table2.py --part capacity --backend {backend} --nic-cores {cores} "
                      f"--nic-threads {threads}", "wall_s": round(wall, 1),
           "settings": {"flows_per_nic": list(CAPACITY_FLOWS), "hosts": CAPACITY_HOSTS, "duration_ms": CAPACITY_MS,
                        "buffer_bytes": BUFFER_BYTES, "start": "line rate", "nic_cores": cores, "nic_threads": threads,
                        "saturated_utilization": SATURATED, "base_rtt_us": Network().base_rtt_us},
           "rows": [{"name": c.name, "group": g, "decision_us": round(nic.decision_ns / 1e3, 4),
                     "decision_cycles": nic.decision_cycles, "clock_hz": nic.clock_hz,
                     "capacity_flows": capacity_flows(nic, Network().base_rtt_ns),
                     "saturated_from": next((x["flows_per_nic"] for x in cells if x["controller"] == c.name
                                             and x["nic_utilization"] >= SATURATED), None)} for g, c, nic in rows],
           "cells": cells, "machine": machine()}
    CAPACITY.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    plot_capacity(doc, CAPACITY_PLOT)
    for r in doc["rows"]:
        mine = [x for x in cells if x["controller"] == r["name"]]
        print(f"{r['name']:28s} " + "  ".join(f"{x['flows_per_nic']}: GP {x['goodput']:.2f} util {x['nic_utilization']:.2f}"
                                             for x in mine))
    print(f"{len(runs)} runs in {wall:.0f} s; wrote {CAPACITY.relative_to(ROOT)} and {CAPACITY_PLOT.relative_to(ROOT)}")


def capacity_flows(nic: NicConfig, base_rtt_ns: float) -> float:
    """Flows one NIC keeps at one decision per base RTT: threads x RTT / decision time (the ideal
    boundary; beyond it each flow's loop stretches to flows x decision time / threads)."""
    return round(nic.servers * base_rtt_ns / nic.decision_ns, 2)


def plot_capacity(doc: dict, path: Path) -> None:
    """Goodput, drops per flow and mean decision wait against flows per NIC, one line per policy;
    the legend sits below the panels so it hides no data."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.6))
    panels = (("goodput", "goodput (converged half)", "linear"), ("drops_per_flow", "drops per flow (whole run)", "symlog"),
              ("nic_wait_mean_us", "mean decision queueing delay (µs)", "symlog"))
    styles = {"paper": "--", "rlcc": "-"}
    for r in doc["rows"]:
        mine = sorted((x for x in doc["cells"] if x["controller"] == r["name"]), key=lambda x: x["flows_per_nic"])
        xs = [x["flows_per_nic"] for x in mine]
        for ax, (key, _, _) in zip(axes, panels):
            line, = ax.plot(xs, [x[key] for x in mine], styles[r["group"]], marker="o", ms=4,
                            label=f"{r['name']} ({r['group']})")
            if key == "goodput" and r["saturated_from"] is not None:  # where the NIC's threads saturate
                sat = next(x for x in mine if x["flows_per_nic"] == r["saturated_from"])
                ax.plot([sat["flows_per_nic"]], [sat["goodput"]], "x", ms=10, color=line.get_color())
    st = doc["settings"]
    for ax, (_, label, scale) in zip(axes, panels):
        ax.set_xscale("log", base=2)
        ax.set_xticks(st["flows_per_nic"], [str(n) for n in st["flows_per_nic"]])
        if scale == "symlog":  # zero drops / zero wait stay on the axis; nothing is negative
            ax.set_yscale("symlog", linthresh=1.0)
            ax.set_ylim(bottom=0)
        ax.set_xlabel(f"flows per NIC ({st['nic_cores']} core x {st['nic_threads']} thread)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_title("x: NIC decision threads saturated", fontsize=9)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(f"Table II as capacity: many-to-one from {st['hosts']} NICs at line rate, {st['duration_ms']:g} ms")
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("ray", "serial"), default="ray")
    ap.add_argument("--part", choices=("all", "table", "capacity", "plot"), default="all",
                    help="plot: redraw the capacity plot from its results file")
    ap.add_argument("--nic-cores", type=int, default=1, help="capacity sweep: decision cores per NIC")
    ap.add_argument("--nic-threads", type=int, default=1, help="capacity sweep: hardware threads per core")
    args = ap.parse_args()
    if args.part in ("all", "table"):
        run_table(args.backend)
    if args.part in ("all", "capacity"):
        run_capacity(args.backend, args.nic_cores, args.nic_threads)
    if args.part == "plot":
        plot_capacity(json.loads(CAPACITY.read_text()), CAPACITY_PLOT)


def run_table(backend: str) -> None:
    rows = controllers()
    jobs = [Job(pt, c, loss_recovery=GO_BACK_N) for pt in points() for _, c, _ in rows]
    t = time.perf_counter()
    runs = run_jobs(run_job, jobs, backend=backend, progress=False, desc="table II")
    wall = time.perf_counter() - t
    cells = [{"controller": r["controller"], "topology": r["topology"], "flows": int(r["scale_value"]),
              "goodput": round(r["metrics"]["goodput"], 4), "drops_per_flow": round(r["metrics"]["drops_per_flow"], 1),
              "queue_us": round(r["metrics"]["queue_delay_mean_us"], 2),
              "decision_latency_us": r["metrics"]["decision_latency_us"]} for r in runs]
    doc = {"command": f"python bench/bench_table2.py --part table --backend {backend}", "wall_s": round(wall, 1),
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
