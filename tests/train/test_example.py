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
