"""Benchmark: closed-loop fidelity of compiled firmware vs its teacher across compile seeds.

Runs the real ``rlcc-compile`` (default options; verification off: this measures distillation,
not the emulator) for seeds 0..4 on the bundled trained policy, on a second trained policy of a
different character (``rlcc_mlp_k3``: window of 3 steps, 16-16 units, another target/beta
operating point) and on the hand-designed synthetic one (whose teacher itself limit-cycles at 512
flows), and reads each report: the
fixed-point model vs the teacher in steady state (flows start at 1/N) and in the startup
transient (line-rate start into the buffer), at every evaluation size, and the fidelity gate's
verdict. The issue's goal: steady goodput within 0.01 and RTT/queue within 3%; transient within
0.01 and 10%. Each compile's firmware is then verified on every target (default ``rlcc-verify``:
its vectors, boundary and random ones) for its worst RTT decision cycles, so the decision-cost
goal is checked across seeds too.

    python bench/bench_fidelity_seeds.py [--seeds 0,1,2,3,4] [--policies rlcc_mlp,rlcc_mlp_k3,synthetic_mlp,rlcc_lstm] [--jobs 2]
                                         [--equilibrium none|ramps]

Writes bench/results/fidelity_seeds.json (``--equilibrium none``, trees only:
fidelity_seeds_trees.json) after every compile (a partial run keeps what it measured); the
policies not named in ``--policies`` keep their rows from the file.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import POLICIES as WINDOW_POLICIES
from benchlib import RECURRENT_POLICIES, machine, seeds_and_policies, shown

from rlcc.targets import TARGET_NAMES

POLICIES = {**WINDOW_POLICIES, **RECURRENT_POLICIES}  # rlcc-compile takes both

ROOT = Path(__file__).resolve().parent.parent
RESULTS = {"ramps": ROOT / "bench" / "results" / "fidelity_seeds.json",
           "none": ROOT / "bench" / "results" / "fidelity_seeds_trees.json"}


def worst(table: dict, metric: str) -> float:
    """Largest |firmware - teacher| of one measure over a report's closed-loop table, signed."""
    vals = []
    for row in table["scenarios"].values():
        t, f = row["teacher"], row["fixed_point"]
        if metric == "goodput":
            vals.append(f["goodput"] - t["goodput"])
        elif metric == "drops":
            vals.append(f["drop_fraction"] - t["drop_fraction"])
        else:
            key = "mean_latency_us" if metric == "rtt" else "queue_delay_mean_us"
            vals.append(100.0 * (f[key] / t[key] - 1.0) if t[key] else 0.0)
    return max(vals, key=abs) if vals else 0.0


def measure(policy: Path, seed: int, jobs: int, equilibrium: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(["rlcc-compile", str(policy), "-o", str(out), "--seed", str(seed), "--no-verify",
                               "--accept-fidelity", "-q", "--jobs", str(jobs), "--equilibrium", equilibrium],
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"rlcc-compile failed (seed {seed}): {proc.stderr.strip()}")
        report = json.loads((out / "report.json").read_text())
        cycles = {target: decision_cycles(out, target) for target in TARGET_NAMES}
    gate = report["gate"]
    failures = [c for c in gate["checks"] if not c["passed"]]
    return {
        "seed": seed,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime, 1),
        "chosen": (report.get("selection") or {}).get("chosen"),
        "gate_passed": gate["passed"],
        "gate_failures": [f"{c['scenario']} {c['metric']} {c['difference']:+.3g}{c['unit']}" for c in failures],
        **{f"{mode}_{m}": round(worst(report[key], m), 4)
           for mode, key in (("steady", "closed_loop_steady"), ("transient", "closed_loop"))
           for m in ("goodput", "rtt", "queue", "drops")},
        "eval_flows": sorted(int(n.split(":")[1]) for n in report["closed_loop"]["scenarios"]),
        "rtt_cycles_max": cycles,
    }


def decision_cycles(out: Path, target: str) -> int:
    """Worst RTT decision cycles of the compiled firmware on ``target`` (default rlcc-verify)."""
    report = out / f"verify_{target}.json"
    proc = subprocess.run(["rlcc-verify", str(out / "firmware.c"), "--target", target, "-q", "--json", str(report)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"rlcc-verify --target {target} failed: {proc.stderr.strip()}")
    return int(json.loads(report.read_text())["rtt_decision_cycles"]["max"])


def main() -> None:
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--equilibrium", choices=sorted(RESULTS), default="ramps")
    eq, rest = extra.parse_known_args()
    args = seeds_and_policies(__doc__, rest, POLICIES)
    seeds = args.seeds
    out = RESULTS[eq.equilibrium]
    # policies not run now keep their earlier rows (each entry records its own machine)
    kept = json.loads(out.read_text())["policies"] if out.exists() else {}
    results = {"command": f"rlcc-compile POLICY --seed S --no-verify --accept-fidelity --equilibrium {eq.equilibrium}",
               "policies": {k: v for k, v in kept.items() if k not in args.policies and k in POLICIES}}
    for name in args.policies:
        entry = {"policy": shown(POLICIES[name]), "machine": machine(), "runs": []}
        results["policies"][name] = entry
        rows = entry["runs"]
        for seed in seeds:
            rows.append(measure(POLICIES[name], seed, args.jobs, eq.equilibrium))
            r = rows[-1]
            print(f"{name} seed {seed}: steady rtt {r['steady_rtt']:+.1f}% queue {r['steady_queue']:+.1f}%, transient rtt "
                  f"{r['transient_rtt']:+.1f}% queue {r['transient_queue']:+.1f}% drops {r['transient_drops']:+.3f}; gate "
                  f"{'passed' if r['gate_passed'] else 'FAILED'}; worst RTT decision "
                  f"{' / '.join(f'{c} ({t})' for t, c in r['rtt_cycles_max'].items())} cycles; {r['wall_s']} s", flush=True)
            results["policies"] = {k: results["policies"][k] for k in POLICIES if k in results["policies"]}
            out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
