"""Acceptance evaluation of a trained policy on scenarios it was NOT trained on.

``python -m rlcc.train.evaluate POLICY.onnx OUT_DIR`` writes ``eval.json`` and ``eval.md``:
simulator metrics over each scenario's converged window (its second half), the pass/fail of
each criterion, and the explainability table (``rlcc.train.probe``). A recurrent policy (spec
with a ``recurrent`` block) runs with per-flow state (``RecurrentController``).

Criteria: goodput >= 0.85, drops ~0 after convergence (< 1 packet per flow in the window),
Jain >= 0.8, mean RTT inflation within 25% of ``beta + target * sqrt(N)`` with N the flows
sharing a bottleneck. The runs are long because the default fabric has a 32 MB buffer and the
engine keeps one RTT probe outstanding per flow: line-rate starts fill the buffer (2.56 ms RTT)
and decisions come only every 2.56 ms until the incast drains.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from rlcc.policy import OnnxPolicy
from rlcc.recurrent import RecurrentPolicy, load_policy
from rlcc.simulator.controllers.factor import PolicyController
from rlcc.simulator.controllers.recurrent import RecurrentController
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import AllToAll, ManyToOne, Network, Scenario
from rlcc.train.probe import STEADY_STEPS, explain_policy, table_markdown

EVAL_SCENARIOS: list[tuple[str, Scenario, int]] = [
    ("many-to-one 64", ManyToOne(flows=64, duration_ms=160.0, seed=1), 64),
    ("many-to-one 1024", ManyToOne(flows=1024, duration_ms=240.0, seed=1), 1024),
    # Host NICs at 2x the port rate make the receiver's switch port the bottleneck (with NIC =
    # port rate, uniform all-to-all saturates the sender NICs first and no switch queue forms).
    ("all-to-all 8 hosts (200G NICs)", AllToAll(hosts=8, duration_ms=20.0, seed=1, network=Network(host_rate_gbps=200.0)), 7),
]
GOODPUT_MIN, JAIN_MIN, RTT_TOL, DROPS_MAX = 0.85, 0.8, 0.25, 1.0


def policy_controller(policy: OnnxPolicy | RecurrentPolicy):
    if isinstance(policy, RecurrentPolicy):
        return RecurrentController(policy, name=f"policy:{policy.path.name}")
    return PolicyController(policy)


def evaluate_scenario(policy: OnnxPolicy | RecurrentPolicy, name: str, scenario: Scenario, n_bottleneck: int) -> dict:
    r = simulate(scenario, policy_controller(policy))
    m = r.metrics
    rw = policy.spec.reward
    expected = rw.beta + rw.target * math.sqrt(n_bottleneck)
    rtt_err = abs(m["mean_rtt_inflation"] - expected) / expected
    checks = {
        "goodput": m["goodput"] >= GOODPUT_MIN,
        "drops": m["drops_per_flow"] < DROPS_MAX,
        "jain": m["jain"] >= JAIN_MIN,
        "rtt_inflation": rtt_err <= RTT_TOL,
    }
    return {
        "scenario": name,
        "config": scenario.to_dict(),
        "window_ms": [m["window_start_ms"], m["window_start_ms"] + m["window_ms"]],
        "goodput": m["goodput"],
        "drops_per_flow": m["drops_per_flow"],
        "drop_fraction": m["drop_fraction"],
        "jain": m["jain"],
        "mean_rtt_inflation": m["mean_rtt_inflation"],
        "expected_rtt_inflation": expected,
        "rtt_rel_error": rtt_err,
        "queue_delay_mean_us": m["queue_delay_mean_us"],
        "checks": checks,
        "pass": all(checks.values()),
        "wall_s": r.wall_s,
    }


def evaluate(policy_path: str | Path) -> dict:
    policy = load_policy(policy_path)
    rows = [evaluate_scenario(policy, *s) for s in EVAL_SCENARIOS]
    return {
        "policy": Path(policy_path).name,
        "recurrent": isinstance(policy, RecurrentPolicy),
        "criteria": {"goodput_min": GOODPUT_MIN, "drops_per_flow_max": DROPS_MAX, "jain_min": JAIN_MIN, "rtt_rel_tolerance": RTT_TOL},
        "scenarios": rows,
        "explain_table": explain_policy(policy),
    }


def report_markdown(result: dict) -> str:
    lines = [
        f"# Evaluation of `{result['policy']}` on unseen scenarios",
        "",
        "Converged window = second half of each run. Expected RTT inflation = beta + target * sqrt(N).",
        "",
        "| scenario | goodput | drops/flow | Jain | RTT inflation (expected) | rel. err | pass |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["scenarios"]:
        failed = [k for k, ok in r["checks"].items() if not ok]
        lines.append(
            f"| {r['scenario']} | {r['goodput']:.3f} | {r['drops_per_flow']:.3g} | {r['jain']:.3f} | "
            f"{r['mean_rtt_inflation']:.3f} ({r['expected_rtt_inflation']:.3f}) | {r['rtt_rel_error']:.1%} | "
            f"{'yes' if r['pass'] else 'no: ' + ', '.join(failed)} |"
        )
    lines += ["", "## Explainability probe (rate factor; row = previous condition, column = current)", ""]
    if result.get("recurrent"):
        lines += [f"Recurrent policy: from the reset state the previous condition is held for {STEADY_STEPS} decisions "
                  "(own factor fed back), then one decision under the current one.", ""]
    lines.append(table_markdown(result["explain_table"]))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m rlcc.train.evaluate POLICY.onnx OUT_DIR", file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    result = evaluate(argv[0])
    (out / "eval.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    (out / "eval.md").write_text(report_markdown(result))
    print(report_markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
