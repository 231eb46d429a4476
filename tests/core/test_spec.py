"""The observation spec: round trip, layout, validation errors, float semantics."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from rlcc import derived
from rlcc.errors import BadInputError
from rlcc.spec import Action, Feature, ObservationSpec, Reward


def full_spec() -> ObservationSpec:
    return ObservationSpec(
        features=(Feature("prev_action"), Feature("delta", scale=-12.5, offset=0.25), Feature("cnp_count")),
        history=3,
        step_order="newest_first",
        reward=Reward(target=0.05, beta=2.0, base_rtt_ns=13000),
        action=Action(type="tanh", map="linear", gain=0.1, clamp_min=0.9, clamp_max=1.1),
    )


def test_round_trip_is_exact_and_canonical():
    spec = full_spec()
    again = ObservationSpec.from_json(spec.to_json())
    assert again == spec
    assert again.to_json() == spec.to_json()
    assert json.loads(spec.to_json())["rlcc_spec"] == 1


def test_derived_inputs_round_trip_and_follow_the_window():
    spec = dataclasses.replace(full_spec(), derived=("delta_log_ratio",))
    again = ObservationSpec.from_json(spec.to_json())
    assert again == spec and again.derived == ("delta_log_ratio",)
    assert "derived" not in full_spec().to_dict()  # specs without them keep their old form
    assert spec.student_width == spec.input_width + 1
    assert spec.student_input_names() == spec.input_names() + ["delta_log_ratio[t]"]
    cur, prev = spec.derived_sources(0)
    assert spec.input_names()[cur] == "delta[t]" and spec.input_names()[prev] == "delta[t-1]"
    obs = np.random.default_rng(0).normal(size=(6, spec.input_width)).astype(np.float32)
    student = spec.student_obs(obs)
    assert student.shape == (6, spec.student_width) and np.array_equal(student[:, :spec.input_width], obs)
    feat = spec.features[1]  # delta: the derived input reads unscaled values
    unscale = lambda i: (obs[:, i].astype(np.float64) - feat.offset) / feat.scale  # noqa: E731
    want = derived.get("delta_log_ratio").float_value(unscale(cur), unscale(prev))
    assert np.allclose(student[:, -1], want, atol=1e-6)


def test_input_layout_orders():
    old = ObservationSpec(features=(Feature("prev_action"), Feature("delta")), history=2)
    assert old.input_names() == ["prev_action[t-1]", "delta[t-1]", "prev_action[t]", "delta[t]"]
    new = ObservationSpec(features=(Feature("prev_action"), Feature("delta")), history=2, step_order="newest_first")
    assert new.input_names() == ["prev_action[t]", "delta[t]", "prev_action[t-1]", "delta[t-1]"]
    steps = np.arange(8, dtype=float).reshape(2, 2, 2)  # (N, history, F), index 0 = current
    assert old.assemble(steps)[0].tolist() == [2, 3, 0, 1]
    assert new.assemble(steps)[0].tolist() == [0, 1, 2, 3]


def test_delta_follows_the_rl_cc_formula():
    spec = ObservationSpec(features=(Feature("delta"), Feature("rtt_inflation")), history=1, reward=Reward(0.064, 1.5, 8000))
    raw = spec.raw_step_features(np.ones(3), np.array([8000.0, 24000.0, 80000.0]), np.array([1.0, 0.25, 0.01]))
    inflation = np.array([1.0, 3.0, 10.0])
    assert np.allclose(raw[:, 1], inflation)
    assert np.allclose(raw[:, 0], 0.064 - np.maximum(inflation - 1.5, 0) * np.sqrt([1.0, 0.25, 0.01]))
    scaled = ObservationSpec(features=(Feature("delta", scale=-12.5, offset=1.0),), history=1)
    assert np.allclose(scaled.scale_step(np.array([[0.064]])), -12.5 * 0.064 + 1.0)


def test_asymmetric_action_map_and_clamp():
    spec = ObservationSpec(features=(Feature("delta"),), history=1, action=Action("tanh", "asymmetric", 0.2, 0.8, 1.25))
    f = spec.output_to_factor(np.array([1.0, 0.5, 0.0, -0.5, -1.0]))
    assert np.allclose(f, [1.2, 1.1, 1.0, 1 / 1.1, 1 / 1.2])
    direct = ObservationSpec(features=(Feature("delta"),), history=1, action=Action(type="factor", clamp_min=0.9, clamp_max=1.1))
    assert np.allclose(direct.output_to_factor(np.array([0.5, 1.0, 3.0])), [0.9, 1.0, 1.1])


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(rlcc_spec=2), "'rlcc_spec' must be 1"),
        (lambda d: d["features"].append({"name": "queue_depth"}), "unknown feature 'queue_depth'"),
        (lambda d: d.update(features=[]), "'features' must be a non-empty list"),
        (lambda d: d.update(history=0), "'history' must be in"),
        (lambda d: d.update(history="2"), "'history' must be an integer"),
        (lambda d: d.update(step_order="sideways"), "'step_order' must be one of"),
        (lambda d: d["reward"].update(base_rtt_ns=0), "'reward.base_rtt_ns' must be in 100.."),
        (lambda d: d["reward"].update(base_rtt_ns=1), "'reward.base_rtt_ns' must be in 100.."),
        (lambda d: d["reward"].update(beta="x"), "'reward.beta' has invalid value"),
        (lambda d: d["action"].update(type="softmax"), "'action.type' must be one of"),
        (lambda d: d["action"].update(map="cubic"), "'action.map' must be one of"),
        (lambda d: d["action"].update(clamp_min=1.5), "clamp"),
        (lambda d: d["features"][0].update(scale=0), "non-zero scale"),
        (lambda d: d["features"][0].update(scale=float("inf")), "features[0].scale' has invalid value inf"),
        (lambda d: d["features"][0].update(offset=float("nan")), "features[0].offset' has invalid value nan"),
        (lambda d: d.update(colour="red"), "unknown key(s) in spec: colour"),
        (lambda d: d["features"].append(dict(d["features"][0])), "listed twice"),
        (lambda d: d.update(derived=["delta_cubed"]), "unknown derived input 'delta_cubed'"),
        (lambda d: d.update(derived="delta_log_ratio"), "'derived' must be a list of names"),
        (lambda d: d.update(derived=["delta_log_ratio"] * 2), "a derived input is listed twice"),
        (lambda d: d.update(derived=["delta_log_ratio"], history=1), "needs feature 'delta' and history >= 2"),
        (lambda d: d.update(derived=["delta_log_ratio"], features=[{"name": "prev_action"}]), "needs feature 'delta'"),
    ],
)
def test_invalid_specs_name_the_problem(mutate, message):
    data = full_spec().to_dict()
    mutate(data)
    with pytest.raises(BadInputError) as err:
        ObservationSpec.from_dict(data)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_spec_file_errors(tmp_path):
    bad = tmp_path / "s.json"
    bad.write_text("{not json")
    with pytest.raises(BadInputError, match="not JSON"):
        ObservationSpec.from_file(str(bad))
    with pytest.raises(BadInputError, match="cannot read spec file"):
        ObservationSpec.from_file(str(tmp_path / "missing.json"))
