"""The shipped trained example: its spec and the first-order pattern of the explainability table."""

from __future__ import annotations

from pathlib import Path

from rlcc.policy import OnnxPolicy
from rlcc.train.probe import explain_table

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rlcc_mlp.onnx"


def test_shipped_policy_reproduces_table_vi_signs():
    policy = OnnxPolicy(EXAMPLE)
    assert policy.spec.feature_names == ("prev_action", "delta") and policy.spec.history == 2
    t = explain_table(policy.factor, policy.spec)
    for prev in t:
        assert t[prev]["under-utilized"] > 1.0, prev
        assert t[prev]["congested"] < 1.0, prev
    assert abs(t["on target"]["on target"] - 1.0) < 0.02
    # The first step of a change moves harder than the persisting condition.
    assert t["on target"]["under-utilized"] > t["under-utilized"]["under-utilized"]
    assert t["on target"]["congested"] < t["congested"]["congested"]


def test_shipped_policy_meets_acceptance_on_unseen_scenarios():
    """Many-to-one 64 / 1024 and all-to-all 8 hosts: goodput, drops, Jain, RTT inflation vs eq. 2."""
    from rlcc.train.evaluate import evaluate

    result = evaluate(EXAMPLE)
    failed = {row["scenario"]: [k for k, ok in row["checks"].items() if not ok] for row in result["scenarios"] if not row["pass"]}
    assert not failed, failed
    assert {row["scenario"].split(" (")[0] for row in result["scenarios"]} == {"many-to-one 64", "many-to-one 1024", "all-to-all 8 hosts"}
