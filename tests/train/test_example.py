"""The shipped trained policies (the example, the fidelity benchmarks' second policy and the
recurrent LSTM): their specs, the first-order pattern of the explainability table, and
acceptance on unseen scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import numpy as np

from rlcc.recurrent import RecurrentPolicy, load_policy
from rlcc.train.lstm import MAX_STATE_VALUES
from rlcc.train.probe import explain_policy

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SHIPPED = [EXAMPLES / "rlcc_mlp.onnx", EXAMPLES / "rlcc_mlp_k3.onnx", EXAMPLES / "rlcc_lstm.onnx"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_policy_has_its_training_spec(path):
    """The ONNX's embedded spec is the one its committed training config names."""
    policy = load_policy(path)
    config = json.loads(path.with_suffix(".train.json").read_text())
    assert policy.spec.feature_names == ("prev_action", "delta")
    assert policy.spec.history == config["spec"]["history"]
    assert (policy.spec.reward.target, policy.spec.reward.beta) == (config["spec"]["reward"]["target"], config["spec"]["reward"]["beta"])


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_policy_reproduces_table_vi_signs(path):
    t = explain_policy(load_policy(path))
    for prev in t:
        assert t[prev]["under-utilized"] > 1.0, prev
        assert t[prev]["congested"] < 1.0, prev
    assert abs(t["on target"]["on target"] - 1.0) < 0.02
    # The first step of a change moves harder than the persisting condition.
    assert t["on target"]["under-utilized"] > t["under-utilized"]["under-utilized"]
    assert t["on target"]["congested"] < t["congested"]["congested"]


@pytest.mark.slow
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_policy_meets_acceptance_on_unseen_scenarios(path):
    """Many-to-one 64 / 1024 and all-to-all 8 hosts: goodput, drops, Jain, RTT inflation vs eq. 2."""
    from rlcc.train.evaluate import evaluate

    result = evaluate(path)
    failed = {row["scenario"]: [k for k, ok in row["checks"].items() if not ok] for row in result["scenarios"] if not row["pass"]}
    assert not failed, failed
    assert {row["scenario"].split(" (")[0] for row in result["scenarios"]} == {"many-to-one 64", "many-to-one 1024", "all-to-all 8 hosts"}


def test_shipped_lstm_is_recurrent_small_and_exact_at_the_fixed_point():
    """ADPG-trained LSTM: h + c fit the per-flow state budget, and delta 0 with prev_action 1 from
    the reset state keeps factor exactly 1 and the state at zero (no g-gate/pre-layer/head bias)."""
    path = EXAMPLES / "rlcc_lstm.onnx"
    policy = load_policy(path)
    assert isinstance(policy, RecurrentPolicy)
    assert json.loads(path.with_suffix(".train.json").read_text())["arch"] == "lstm"
    assert policy.state_size <= MAX_STATE_VALUES
    state = policy.initial_state(2)
    for _ in range(5):
        y, state = policy.step_raw(np.zeros((2, policy.spec.n_features), np.float32), state)
        assert np.all(y == 0.0) and np.all(state == 0.0)
