"""Benchmark: how far a steady-state equilibrium moves when the policy's factor is off by a hair.

The fidelity gate holds the firmware's steady-state mean RTT and queue delay to 3% of the
teacher's. This measures what that bar asks of a student: the teacher itself, with every factor it
outputs multiplied by (1 + eps), in the gate's steady-state incasts (flows start at 1/N, 10 ms,
second half), against the unbiased teacher on the same seed. A student whose bias near the
equilibrium is a tenth of a percent already moves the equilibrium by this much.

    python bench/bench_steady_sensitivity.py [--policies rlcc_mlp,synthetic_mlp]

Writes bench/results/steady_sensitivity.json.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from benchlib import POLICIES, machine, shown

from rlcc.distill import evaluate
from rlcc.policy import OnnxPolicy
from rlcc.simulator.controllers.factor import FactorController
from rlcc.simulator.engine import simulate

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "steady_sensitivity.json"
FLOWS = (64, 512, 2048)
BIASES = (-0.003, -0.001, 0.001, 0.003)
DURATION_MS = 10.0  # the compile's steady-state check (CompileOptions.steady_duration_ms)


class _Biased:
    """A teacher whose factors are all scaled by 1 + eps (picklable, like the policy)."""

    def __init__(self, policy: OnnxPolicy, eps: float) -> None:
        self.policy, self.eps = policy, eps

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.policy.factor(x) * (1.0 + self.eps)


def _steady(policy: OnnxPolicy, n: int, eps: float) -> tuple[float, float]:
    factor = policy.factor if eps == 0 else _Biased(policy, eps)
    m = simulate(evaluate.eval_scenario(n, DURATION_MS, 0, evaluate.STEADY), FactorController(factor, policy.spec, "teacher")).metrics
    return m["mean_rtt_inflation"] * policy.spec.reward.base_rtt_ns / 1e3, m["queue_delay_mean_us"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--policies", default=",".join(POLICIES), type=lambda s: s.split(","))
    args = ap.parse_args()
    t0 = time.perf_counter()
    doc: dict = {"machine": machine(), "command": "python bench/bench_steady_sensitivity.py", "duration_ms": DURATION_MS,
                 "policies": {}}
    for name in args.policies:
        policy = OnnxPolicy(POLICIES[name])
        rows = []
        for n in FLOWS:
            rtt0, q0 = _steady(policy, n, 0.0)
            for eps in BIASES:
                rtt, q = _steady(policy, n, eps)
                rows.append({"flows": n, "bias": eps, "rtt_us": round(rtt0, 3), "queue_us": round(q0, 3),
                             "rtt_pct": round(100 * (rtt / rtt0 - 1), 2), "queue_pct": round(100 * (q / q0 - 1), 2)})
                print(f"{name} {n} flows, factor x(1{eps:+.3f}): RTT {rows[-1]['rtt_pct']:+.2f}% queue {rows[-1]['queue_pct']:+.2f}%")
        doc["policies"][name] = {"policy": shown(POLICIES[name]), "rows": rows}
    doc["wall_s"] = round(time.perf_counter() - t0, 1)
    RESULTS.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
