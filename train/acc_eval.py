"""Evaluate switch agents (static ECN templates vs a Q-network) on ACC scenarios with DCQCN hosts.

Per scenario: ACC's reward (the spec's, averaged over busy queue-intervals: the training
objective) plus ``rlcc.simulator.switch_metrics`` (FCT slowdown of mice / elephants, queue,
bottleneck utilization). ``python -m rlcc.train.acc_eval MODEL.onnx`` prints the comparison of
the model against every static template of its spec on :data:`EVAL_SCENARIOS`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from rlcc.simulator.controllers import Dcqcn
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import Scenario
from rlcc.simulator.switch_agent import QNetAgent, StaticEcn, WindowAgent
from rlcc.simulator.switch_metrics import switch_metrics
from rlcc.switch_policy import QNetPolicy
from rlcc.switch_spec import SwitchAgentSpec
from rlcc.train.acc import RewardMeter
from rlcc.train.acc_config import LEAF_SPINE, burst_on_long_scenario, incast_scenario, trace_scenario

# Held-out scenarios (seeds the curriculum's episodes do not start from; long enough to finish
# most flows). Mice- and elephant-heavy incasts, a burst on a long flow, both CDFs at a medium and
# a high load, and two multi-agent leaf-spine runs.
EVAL_SCENARIOS: tuple[dict[str, Any], ...] = (
    incast_scenario(16, 2, 10_000, 100_000, 3, 2000.0, 6.0, 10_001),
    incast_scenario(32, 1, 10_000, 1_000_000, 2, 3000.0, 8.0, 10_002),
    incast_scenario(8, 4, 100_000, 10_000_000, 1, 1000.0, 12.0, 10_003),
    burst_on_long_scenario(32, 30_000, 4.0, 10_004),
    trace_scenario("websearch", 0.5, 8.0, 10_005),
    trace_scenario("websearch", 0.8, 8.0, 10_006),
    trace_scenario("hadoop", 0.6, 6.0, 10_007),
    trace_scenario("hadoop", 0.9, 6.0, 10_008),
    trace_scenario("websearch", 0.6, 8.0, 10_009, LEAF_SPINE),
    incast_scenario(16, 2, 10_000, 1_000_000, 2, 2000.0, 6.0, 10_010, LEAF_SPINE),
)

METRICS = ("reward", "mice_slowdown_mean", "mice_slowdown_p99", "elephant_slowdown_mean", "slowdown_mean",
           "queue_kb_mean", "queue_kb_p99", "bottleneck_util", "unfinished")


def _agent(policy_or_agent: QNetPolicy | WindowAgent | str | Path) -> WindowAgent:
    if isinstance(policy_or_agent, WindowAgent):
        return policy_or_agent
    if isinstance(policy_or_agent, QNetPolicy):
        return QNetAgent(policy_or_agent)
    return QNetAgent(QNetPolicy(policy_or_agent))


def evaluate_acc(policy_or_agent: QNetPolicy | WindowAgent | str | Path,
                 scenarios: Sequence[dict[str, Any] | Scenario] = EVAL_SCENARIOS) -> list[dict[str, float]]:
    """Per scenario (in order): the agent's mean reward and its ``switch_metrics``."""
    agent = _agent(policy_or_agent)
    out = []
    for sc in scenarios:
        scenario = sc if isinstance(sc, Scenario) else Scenario.from_dict(sc)
        meter = RewardMeter(agent)
        res = simulate(scenario, Dcqcn(), switch_agent=meter)
        out.append({"reward": meter.mean_reward, **switch_metrics(res)})
    return out


def static_agents(spec: SwitchAgentSpec) -> list[StaticEcn]:
    """One agent per template, each in force from t = 0 (its spec's ``initial_action`` is itself)."""
    return [StaticEcn(dataclasses.replace(spec, initial_action=i), i) for i in range(spec.n_actions)]


def mix(rows: list[dict[str, float]]) -> dict[str, float]:
    """The unweighted mean over scenarios of each metric (NaN where no scenario has it)."""
    keys = rows[0].keys() if rows else ()
    out = {}
    for k in keys:
        vals = np.array([r[k] for r in rows], float)
        out[k] = float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan")
    return out


def compare(model: str | Path, scenarios: Sequence[dict[str, Any]] = EVAL_SCENARIOS) -> dict[str, Any]:
    """The model and every static template of its spec on ``scenarios``: per-scenario rows and the mix."""
    policy = QNetPolicy(model)
    agents: list[WindowAgent] = [QNetAgent(policy), *static_agents(policy.spec)]
    names = ["acc " + Path(model).name] + [a.name for a in agents[1:]]
    table = {}
    for name, agent in zip(names, agents):
        rows = evaluate_acc(agent, scenarios)
        table[name] = {"scenarios": rows, "mix": mix(rows)}
    return {"scenarios": [_label(s) for s in scenarios], "agents": table}


def _label(d: dict[str, Any]) -> str:
    from rlcc.train.acc_trainer import scenario_label

    return scenario_label(d)


def markdown(report: dict[str, Any]) -> str:
    """The mix table: one row per agent, the columns of :data:`METRICS`."""
    head = "| agent | " + " | ".join(METRICS) + " |"
    lines = [head, "|" + "---|" * (len(METRICS) + 1)]
    for name, entry in report["agents"].items():
        lines.append(f"| {name} | " + " | ".join(f"{entry['mix'][m]:.4g}" for m in METRICS) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: python -m rlcc.train.acc_eval MODEL.onnx [OUT.json]", file=sys.stderr)
        return 2
    report = compare(args[0])
    print(markdown(report), end="")
    if len(args) == 2:
        Path(args[1]).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
