"""Recurrent policies: the spec's state declaration, loading checks, exact steps and the window view."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, numpy_helper

from rlcc.cli.main import compile_command
from rlcc.errors import BadInputError, ExitCode
from rlcc.policy import OnnxPolicy, probe_inputs
from rlcc.recurrent import WINDOW_BURN_IN, RecurrentPolicy, load_policy
from rlcc.spec import MAX_STATE_VALUES, METADATA_KEY, ObservationSpec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rlcc_lstm.onnx"


def example_spec() -> ObservationSpec:
    model = onnx.load(str(EXAMPLE))
    return ObservationSpec.from_json(next(p.value for p in model.metadata_props if p.key == METADATA_KEY))


def reference_cell(path: Path):
    """An independent numpy reading of the LSTM graph's weights: ReLU pre-layers P0.., then gates
    i, f, g, o of z = x Wx + h Wh + b, action tanh(h' Wo)."""
    model = onnx.load(str(path))
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    sig = lambda v: 0.5 * (1.0 + np.tanh(0.5 * v))  # noqa: E731 - the logistic without exp overflow

    def step(x, h, c):
        k = 0
        while f"P{k}" in w:  # bias-free ReLU pre-layers before the cell
            x = np.maximum(x @ w[f"P{k}"], 0.0)
            k += 1
        z = x @ w["Wx"] + h @ w["Wh"] + w["b"]
        i, f, g, o = np.split(z, 4, axis=1)
        c2 = sig(f) * c + sig(i) * np.tanh(g)
        h2 = sig(o) * np.tanh(c2)
        return np.tanh(h2 @ w["Wo"])[:, 0], h2, c2

    return step


def spec_dict(**recurrent) -> dict:
    d = json.loads(example_spec().to_json())
    d["recurrent"].update(recurrent)
    return d


def test_spec_round_trips_and_declares_state():
    spec = example_spec()
    assert spec.recurrent.size == 16 and [t.name for t in spec.recurrent.state] == ["h", "c"]
    assert ObservationSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize("change, message", [
    (lambda s: s[0].update(name="c"), "name listed twice"),
    (lambda s: s[1].update(input="h_in"), "input listed twice"),
    (lambda s: s[0].update(output="h_in"), "reads and writes the same tensor"),
    (lambda s: s[0].update(size=0), "needs size >= 1"),
    (lambda s: s[0].update(size=MAX_STATE_VALUES), "too large for any placement"),
    (lambda s: s[0].update(extra=1), "unknown key"),
    (lambda s: s[0].pop("output"), "needs name, input, output and size"),
])
def test_bad_state_declarations_are_refused(change, message):
    d = spec_dict()
    change(d["recurrent"]["state"])
    with pytest.raises(BadInputError, match=message):
        ObservationSpec.from_dict(d)


def test_step_matches_an_independent_reading_of_the_graph():
    policy = load_policy(EXAMPLE)
    assert isinstance(policy, RecurrentPolicy) and policy.state_size == 16
    ref = reference_cell(EXAMPLE)
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, (64, 2)).astype(np.float32)
    h, c = rng.normal(0, 0.5, (64, 8)), rng.normal(0, 0.5, (64, 8))
    y, state = policy.step_raw(x, np.concatenate([h, c], 1))
    ry, rh, rc = ref(x.astype(np.float64), h, c)
    np.testing.assert_allclose(y, ry, atol=1e-5)
    np.testing.assert_allclose(state, np.concatenate([rh, rc], 1), atol=1e-5)


def test_window_view_is_a_burn_in_then_an_unroll():
    policy = load_policy(EXAMPLE).windowed(3)
    ref = reference_cell(EXAMPLE)
    obs = probe_inputs(policy.spec, n=32, seed=2)  # oldest step first
    steps = obs.reshape(32, 3, 2).astype(np.float64)
    h = c = np.zeros((32, 8))
    for x in [steps[:, 0]] * WINDOW_BURN_IN + [steps[:, t] for t in range(3)]:
        y, h, c = ref(x, h, c)
    np.testing.assert_allclose(policy.predict_raw(obs), y, atol=1e-5)
    np.testing.assert_allclose(policy.factor(obs), policy.spec.output_to_factor(y), atol=1e-5)


def _rewired(tmp_path: Path, spec_json: str | None = None, state_dtype=None, drop_output: str | None = None) -> Path:
    model = onnx.load(str(EXAMPLE))
    if state_dtype is not None:
        for vi in list(model.graph.input) + list(model.graph.output):
            if vi.name in ("h_in", "h_out"):
                vi.type.tensor_type.elem_type = state_dtype
    if drop_output:
        keep = [o for o in model.graph.output if o.name != drop_output]
        del model.graph.output[:]
        model.graph.output.extend(keep)
    if spec_json is not None:
        del model.metadata_props[:]
        e = model.metadata_props.add()
        e.key, e.value = METADATA_KEY, spec_json
    path = tmp_path / "r.onnx"
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize("kind", ["unmatched", "size", "dtype", "missing_output", "history", "undeclared"])
def test_bad_recurrent_models_exit_3_with_one_line(tmp_path, kind):
    spec = example_spec()
    if kind == "unmatched":
        path = _rewired(tmp_path, json.dumps(spec_dict(state=[{"name": "h", "input": "h_in", "output": "hidden_out", "size": 8},
                                                              {"name": "c", "input": "c_in", "output": "c_out", "size": 8}]) | {}))
        fragment = "no output 'hidden_out'"
    elif kind == "size":
        d = spec_dict()
        d["recurrent"]["state"][1]["size"] = 4
        path, fragment = _rewired(tmp_path, json.dumps(d)), "declares (batch, 4)"
    elif kind == "dtype":
        path, fragment = _rewired(tmp_path, state_dtype=TensorProto.DOUBLE), "must be float32"
    elif kind == "missing_output":
        path, fragment = _rewired(tmp_path, drop_output="c_out"), "no output 'c_out'"
    elif kind == "history":
        path = _rewired(tmp_path, dataclasses.replace(spec, history=2).to_json())
        fragment = "sees one step"
    else:
        path = _rewired(tmp_path, dataclasses.replace(spec, recurrent=None).to_json())
        fragment = "declares its state inputs/outputs in the spec's 'recurrent'"
    result = CliRunner().invoke(compile_command, [str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.output
    assert not (tmp_path / "out").exists()


def test_window_policy_loader_refuses_a_recurrent_spec():
    with pytest.raises(BadInputError, match="recurrent"):
        OnnxPolicy(EXAMPLE)
