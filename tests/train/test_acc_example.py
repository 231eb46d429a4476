"""The shipped ACC Q-network (examples/acc_qnet.onnx): its spec, and one recorded evaluation re-run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlcc.switch_policy import QNetPolicy
from rlcc.switch_spec import paper_templates

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "acc_qnet.onnx"


@pytest.fixture(scope="module")
def record():
    return json.loads(MODEL.with_name("acc_qnet.train.json").read_text())


def test_example_spec_and_record(record):
    policy = QNetPolicy(MODEL)
    assert policy.spec.actions == paper_templates()
    assert record["algo"] == "acc" and len(record["episodes"]) == record["config"]["episodes"]


@pytest.mark.slow
def test_example_leaf_spine_incast_beats_the_shallow_static_template(record):
    """Re-runs the recorded leaf-spine incast: the same reward as recorded, and well above the
    shallowest template's (its DCQCN senders are marked down by every burst)."""
    from rlcc.simulator.switch_agent import QNetAgent
    from rlcc.train.acc_eval import EVAL_SCENARIOS, evaluate_acc, static_agents

    ev = record["evaluation"]
    i = len(EVAL_SCENARIOS) - 1
    assert "leaf-spine" in ev["scenarios"][i]
    policy = QNetPolicy(MODEL)
    (mine,) = evaluate_acc(QNetAgent(policy), [EVAL_SCENARIOS[i]])
    (shallow,) = evaluate_acc(static_agents(policy.spec)[0], [EVAL_SCENARIOS[i]])
    recorded = next(v for k, v in ev["reward"].items() if k.startswith("acc "))
    assert mine["reward"] == pytest.approx(recorded[i], abs=1e-4)
    assert mine["reward"] > shallow["reward"] + 0.1
