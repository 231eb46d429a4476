"""Benchmark: ACC's closed-loop comparison — static ECN vs the ACC teacher vs its compiled firmware.

The ACC paper (Yan et al., SIGCOMM 2021, section 5) compares its DDQN tuner with static ECN
settings (SECN1: the DCQCN paper's 5 KB / 200 KB / 1 %; SECN2: a high-threshold setting) on
FCT for mice and elephants, queue length and link utilization. This runs the same comparison
in rlcc's simulator, DCQCN hosts, on the compiler's evaluation mix (``rlcc.kinds.switch_agent.scenarios``:
incasts of 10 KB..10 MB flows and websearch/hadoop traces, single switch and leaf-spine), over
several seeds, for:

* three static templates of the example's action table (``--static``);
* the teacher: ``examples/acc_qnet.onnx`` (greedy over its Q-values);
* the firmware: ``examples/acc_firmware/firmware.rlcc.json``, run as its golden model (the
  firmware's decisions bit for bit, as ``rlcc-verify`` proved).

Writes bench/results/acc.json and acc.png; the README's ACC table is generated from the JSON.

    python bench/bench_acc.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from benchlib import machine, shown

from rlcc.kinds.switch_agent.codegen import load_switch_manifest
from rlcc.kinds.switch_agent.distill import scenario_label
from rlcc.kinds.switch_agent.scenarios import evaluation
from rlcc.simulator.controllers.dcqcn import Dcqcn
from rlcc.simulator.engine import simulate
from rlcc.kinds.switch_agent.agents import ClassifierAgent
from rlcc.simulator.switch_agent import QNetAgent, StaticEcn
from rlcc.simulator.switch_metrics import switch_metrics
from rlcc.switch_policy import QNetPolicy

ROOT = Path(__file__).resolve().parent.parent
TEACHER = ROOT / "examples" / "acc_qnet.onnx"
FIRMWARE = ROOT / "examples" / "acc_firmware" / "firmware.rlcc.json"
RESULTS = ROOT / "bench" / "results" / "acc.json"
PLOT = ROOT / "bench" / "results" / "acc.png"
METRICS = ("mice_slowdown_mean", "mice_slowdown_p99", "elephant_slowdown_mean", "slowdown_mean", "queue_kb_mean",
           "queue_kb_p99", "bottleneck_util", "unfinished")


def agents(teacher: QNetPolicy, statics: list[int]) -> list[tuple[str, object]]:
    _, spec, model = load_switch_manifest(FIRMWARE)
    out = [(f"static {spec.actions[i].label()}", StaticEcn(spec, i)) for i in statics]
    return out + [("ACC teacher", QNetAgent(teacher)), ("ACC firmware", ClassifierAgent(spec, model))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--static", default="0,1,7", help="template indices of the static baselines")
    args = ap.parse_args()
    teacher = QNetPolicy(TEACHER)
    statics = [int(i) for i in args.static.split(",")]
    start = time.perf_counter()
    runs = []
    for seed in range(args.seeds):
        for sc in evaluation(seed=1000 + 100 * seed):
            for name, agent in agents(teacher, statics):
                m = switch_metrics(simulate(sc, Dcqcn(), switch_agent=agent))
                runs.append({"scenario": scenario_label(sc), "seed": seed, "agent": name, **{k: m[k] for k in METRICS}})
    names = list(dict.fromkeys(r["agent"] for r in runs))
    summary = {}
    for name in names:
        mine = [r for r in runs if r["agent"] == name]
        summary[name] = {k: float(np.nanmean([r[k] for r in mine])) for k in METRICS}
    teacher_vs_fw = {k: summary["ACC firmware"][k] / summary["ACC teacher"][k] - 1.0 for k in METRICS
                     if summary["ACC teacher"][k]}
    doc = {
        "benchmark": "acc", "machine": machine(), "date": time.strftime("%Y-%m-%d"),
        "wall_s": round(time.perf_counter() - start, 1),
        "teacher": shown(TEACHER), "firmware": shown(FIRMWARE), "seeds": args.seeds,
        "scenarios": list(dict.fromkeys(r["scenario"] for r in runs)), "metrics": list(METRICS), "agents": names,
        "summary": summary, "firmware_vs_teacher": teacher_vs_fw, "runs": runs,
    }
    RESULTS.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    plot(doc)
    print(json.dumps({"summary": summary, "firmware_vs_teacher": teacher_vs_fw}, indent=1))


def plot(doc: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (("mice_slowdown_mean", "mice FCT slowdown (mean)"), ("elephant_slowdown_mean", "elephant FCT slowdown (mean)"),
              ("queue_kb_mean", "mean queue (KB)"), ("bottleneck_util", "bottleneck utilization"))
    names = list(doc["summary"])
    scen = doc["scenarios"]
    fig, axes = plt.subplots(1, len(panels), figsize=(16, 4.2))
    width = 0.8 / len(names)
    for ax, (key, title) in zip(axes, panels):
        for j, name in enumerate(names):
            vals = [np.nanmean([r[key] for r in doc["runs"] if r["agent"] == name and r["scenario"] == s]) for s in scen]
            ax.bar(np.arange(len(scen)) + j * width, vals, width, label=name)
        ax.set_title(title, fontsize=10)
        ax.set_xticks(np.arange(len(scen)) + 0.4 - width / 2)
        ax.set_xticklabels(scen, rotation=35, ha="right", fontsize=7)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(names), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    fig.savefig(PLOT, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
