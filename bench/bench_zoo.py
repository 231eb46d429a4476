"""Benchmark: the default compile on policies rlcc did not shape (the zoo, examples/zoo).

For every zoo policy:

1. the teacher alone, on the gate's steady-state scenarios (many-to-one 64/512/2048 from the fair
   share on the single switch, and the reduced suite on both topologies; seed 0, ``--teacher-seeds``):
   does it settle (``rlcc.distill.settle``: every flow's rate swing over the measured window at
   most 0.05), and its goodput and queue;
2. ``rlcc-compile`` with default options (escalation included; verification on, rv64imac) for each
   compile seed: exit code, the gate's verdict and worst check, the attempts the escalation made,
   the worst RTT-decision cycles, wall time.

Goal (issue): every settling teacher passes the default gate on every seed, teachers that do
not settle get the compile's own verdict (exit 11), median compile time <= 60 s on 2 cores.

    python bench/bench_zoo.py [--seeds 0,1,2] [--policies a,b] [--jobs 2] [--teacher-seeds 0]
                              [--teachers-only | --compiles-only]

Writes bench/results/zoo.json after every row (a partial run keeps what it measured; policies
and seeds not run keep their rows from the file).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import machine

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "examples" / "zoo"
RESULTS = ROOT / "bench" / "results" / "zoo.json"


def catalogue() -> list[dict]:
    return json.loads((ZOO / "zoo.json").read_text())["policies"]


def teacher_check(entry: dict, seed: int, jobs: int) -> dict:
    """The teacher on the gate's steady-state scenarios: settling and its operating point."""
    import dataclasses
    import functools

    from rlcc.distill import evaluate, settle
    from rlcc.distill.pipeline import CompileOptions
    from rlcc.parallel import Runner
    from rlcc.recurrent import load_policy
    from rlcc.simulator.controllers.recurrent import teacher_controller
    from rlcc.simulator.suite import reduced_suite

    policy = load_policy(ZOO / f"{entry['name']}.onnx", None)
    o = CompileOptions(seed=seed)
    spec = policy.spec
    runner = Runner(jobs)
    tasks = [(evaluate.eval_scenario(n, o.steady_duration_ms, seed, evaluate.STEADY), n) for n in o.eval_flows]
    for pt in reduced_suite(seed):
        tasks.append((dataclasses.replace(pt.scenario, initial_rate=pt.scenario.fair_rate()), f"{pt.topology} {pt.family}"))
    factory = functools.partial(teacher_controller, policy.factor, spec, "teacher")
    runs = runner.map(_teacher_run, [(sc, factory) for sc, _ in tasks])
    rows = {}
    for (sc, label), m in zip(tasks, runs):
        name = f"many-to-one:{label}" if isinstance(label, int) else f"{label}:{sc.n_flows}"
        rows[name] = m
    swings = {k: v["rate_swing"] for k, v in rows.items()}
    s = settle.Settling(swings)
    return {"seed": seed, "settled": s.settled, "largest_swing": max(swings.values()), "scenarios": rows}


def _teacher_run(task) -> dict:
    from rlcc.distill import settle
    from rlcc.simulator.engine import simulate

    scenario, factory = task
    r = simulate(scenario, factory())
    return {"goodput": round(r.metrics["goodput"], 4), "queue_us": round(r.metrics["queue_delay_mean_us"], 3),
            "rate_swing": round(settle.rate_swing(r), 4)}


def code_version() -> str:
    """The commit the row was measured at (rows from several runs may mix; a tree with edits
    outside bench/results says so)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results"],
                           cwd=ROOT, capture_output=True, text=True)  # (this benchmark's own results file)
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "") if head.returncode == 0 else "unknown"


def compile_row(entry: dict, seed: int, jobs: int) -> dict:
    load_before = round(os.getloadavg()[0], 2)  # other work on the machine slows the wall time
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        start = time.perf_counter()
        p = subprocess.run(["rlcc-compile", str(ZOO / f"{entry['name']}.onnx"), "-o", str(out), "--seed", str(seed),
                            "--jobs", str(jobs), "-q", "--no-progress"], capture_output=True, text=True)
        wall = time.perf_counter() - start
        row = {"policy": entry["name"], "seed": seed, "exit": p.returncode, "seconds": round(wall, 1),
               "code": code_version(), "load_before": load_before}
        report = out / "report.json"
        if not report.exists():
            row["error"] = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
            return row
        rep = json.loads(report.read_text())
        gate = rep["gate"]
        worst = max(gate["checks"], key=lambda c: abs(c["difference"]) / c["tolerance"] if c["tolerance"] else 0.0)
        esc = rep.get("escalation")
        v = json.loads((out / "verify.json").read_text()) if (out / "verify.json").exists() else {}
        row.update({
            "verdict": gate["verdict"],
            "misses": sum(not c["passed"] for c in gate["checks"]),
            "checks": len(gate["checks"]),
            "worst": f"{worst['scenario']} {worst['metric']} {worst['difference']:+.3g}{worst['unit']} "
                     f"(bar {worst['tolerance']:.3g}{worst['unit']})",
            "attempts": len(esc["attempts"]) if esc else 1,
            "kept_attempt": next((a["attempt"] for a in esc["attempts"] if a["kept"]), 1) if esc else 1,
            "teacher_swing": max((gate.get("teacher_settling") or {}).get("swings", {"-": 0.0}).values()),
            "rtt_cycles_max": (v.get("rtt_decision_cycles") or {}).get("max"),
            "trees": rep["sizes"]["trees"],
        })
        return row


def load() -> dict:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {"teachers": {}, "compiles": []}


def save(data: dict) -> None:
    rows = data["compiles"]
    passed_all = {}
    for r in rows:
        passed_all.setdefault(r["policy"], []).append(r.get("verdict") == "passed")
    # A teacher settles if its standalone check says so and no compile judged it unsettled.
    settling = {k: all(t["settled"] for t in v) and not any(r.get("verdict") == "unsettled" for r in rows if r["policy"] == k)
                for k, v in data["teachers"].items()}
    times = [r["seconds"] for r in rows if "seconds" in r]
    data["summary"] = {
        "policies": len({r["policy"] for r in rows}),
        "settling_teachers": sum(settling.values()),
        "settling_teachers_passing_every_seed": sum(1 for k, ok in settling.items() if ok and all(passed_all.get(k, [False]))),
        "unsettled_teachers_compiled": sum(1 for k, ok in settling.items() if not ok and any(r["policy"] == k for r in rows)),
        "unsettled_teachers_exit_11_every_seed": sum(1 for k, ok in settling.items() if not ok and
                                                     any(r["policy"] == k for r in rows) and
                                                     all(r["exit"] == 11 for r in rows if r["policy"] == k)),
        "settling_teachers_compiled": sum(1 for k, ok in settling.items() if ok and any(r["policy"] == k for r in rows)),
        "median_compile_s": round(statistics.median(times), 1) if times else None,
        "worst_compile_s": max(times) if times else None,
    }
    data["machine"] = machine()
    from rlcc.distill.settle import RATE_SWING_MAX

    data["settle_limit"] = RATE_SWING_MAX
    RESULTS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2", type=lambda s: [int(x) for x in s.split(",")])
    ap.add_argument("--policies", default=None, type=lambda s: s.split(","))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--teacher-seeds", default="0", type=lambda s: [int(x) for x in s.split(",")],
                    help="seeds of the standalone teacher check (each compile also reports its own)")
    ap.add_argument("--teachers-only", action="store_true")
    ap.add_argument("--compiles-only", action="store_true", help="keep the teacher checks in the results file")
    args = ap.parse_args()
    entries = [e for e in catalogue() if args.policies is None or e["name"] in args.policies]
    data = load()
    for e in [] if args.compiles_only else entries:
        data["teachers"][e["name"]] = [teacher_check(e, s, args.jobs) for s in args.teacher_seeds]
        t = data["teachers"][e["name"]]
        print(f"{e['name']}: teacher {'settles' if all(x['settled'] for x in t) else 'does NOT settle'} "
              f"(largest swing {max(x['largest_swing'] for x in t):.3f})", flush=True)
        save(data)
    if args.teachers_only:
        return
    for s in args.seeds:  # seed-major: a partial run covers every policy first
        for e in entries:
            row = compile_row(e, s, args.jobs)
            data["compiles"] = [r for r in data["compiles"] if (r["policy"], r["seed"]) != (e["name"], s)] + [row]
            data["compiles"].sort(key=lambda r: ([x["name"] for x in catalogue()].index(r["policy"]), r["seed"]))
            save(data)
            print(f"{e['name']} seed {s}: exit {row['exit']} {row.get('verdict', row.get('error'))} "
                  f"attempts {row.get('attempts')} worst {row.get('worst')} {row['seconds']} s", flush=True)


if __name__ == "__main__":
    main()
