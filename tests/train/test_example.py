"""The shipped trained policies (the example and the fidelity benchmarks' second policy): their
specs, the first-order pattern of the explainability table, and acceptance on unseen scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlcc.policy import OnnxPolicy
from rlcc.train.probe import explain_table

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SHIPPED = [EXAMPLES / "rlcc_mlp.onnx", EXAMPLES / "rlcc_mlp_k3.onnx"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_policy_has_its_training_spec(path):
    """The ONNX's embedded spec is the one its committed training config names."""
    policy = OnnxPolicy(path)
    config = json.loads(path.with_suffix(".train.json").read_text())
    assert policy.spec.feature_names == ("prev_action", "delta")
    assert policy.spec.history == config["spec"]["history"]
    assert (policy.spec.reward.target, policy.spec.reward.beta) == (config["spec"]["reward"]["target"], config["spec"]["reward"]["beta"])


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_policy_reproduces_table_vi_signs(path):
    policy = OnnxPolicy(path)
    t = explain_table(policy.factor, policy.spec)
    for prev in t:
        assert t[prev]["under-utilized"] > 1.0, prev
        assert t[prev]["congested"] < 1.0, prev
    assert abs(t["on target"]["on target"] - 1.0) < 0.02
    # The first step of a change moves harder than the persisting condition.
    assert t["on target"]["under-utilized"] > t["under-utilized"]["under-utilized"]
    assert t["on target"]["congested"] < t["congested"]["congested"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_policy_meets_acceptance_on_unseen_scenarios(path):
    """Many-to-one 64 / 1024 and all-to-all 8 hosts: goodput, drops, Jain, RTT inflation vs eq. 2."""
    from rlcc.train.evaluate import evaluate

    result = evaluate(path)
    failed = {row["scenario"]: [k for k, ok in row["checks"].items() if not ok] for row in result["scenarios"] if not row["pass"]}
    assert not failed, failed
    assert {row["scenario"].split(" (")[0] for row in result["scenarios"]} == {"many-to-one 64", "many-to-one 1024", "all-to-all 8 hosts"}
