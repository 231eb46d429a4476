"""ONNX policy loading: every bad-input rule of the policy contract, and batched evaluation."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from rlcc.errors import BadInputError
from rlcc.policy import OnnxPolicy, embed_spec, probe_inputs
from rlcc.spec import Feature, ObservationSpec


def test_example_policy_loads_and_behaves(example_policy):
    p = OnnxPolicy(example_policy)
    assert p.spec.input_width == 4
    x = probe_inputs(p.spec, n=1000)
    batched = p.factor(x, batch=7)
    assert np.array_equal(batched, p.factor(x))
    assert np.all((batched >= p.spec.action.clamp_min) & (batched <= p.spec.action.clamp_max))
    under = p.spec.assemble(np.array([[[1.0, 0.64], [1.0, 0.64]]]))
    congested = p.spec.assemble(np.array([[[1.0, -2.0], [1.0, -2.0]]]))
    assert p.factor(under)[0] > 1.05 and p.factor(congested)[0] < 0.95


def test_policy_pickles_for_worker_processes(example_policy):
    """Compile workers get the teacher pickled; the session is rebuilt once per process."""
    import pickle

    p = OnnxPolicy(example_policy)
    factor = pickle.loads(pickle.dumps(p.factor))
    x = probe_inputs(p.spec, n=500)
    assert np.array_equal(factor(x), p.factor(x))
    again = pickle.loads(pickle.dumps(p))
    assert again._session is factor.__self__._session and again.spec == p.spec


def test_valid_tiny_policy(build_policy):
    p = OnnxPolicy(build_policy())
    assert p.input_name == "obs" and p.output_name == "y"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(opset=7), "unsupported ONNX opset 7"),
        (dict(extra_input=True), "exactly one input, found 2"),
        (dict(extra_output=True), "exactly one output, found 2"),
        (dict(in_type=TensorProto.DOUBLE), "must be float32"),
        (dict(width=6), "input width 6 != history 2 x 2 features = 4"),
        (dict(in_shape=["batch", "width"]), "dynamic feature dimension"),
        (dict(in_shape=["batch", 2, 2]), "must be 2-D"),
        (dict(spec=None), "no observation spec"),
        (dict(spec="{oops"), "not JSON"),
        (dict(spec='{"rlcc_spec": 1, "features": [{"name": "jitter"}]}'), "unknown feature 'jitter'"),
        (dict(out_op="Log", weight_scale=-1.0), "NaN or inf"),
        (dict(out_op="Identity", weight_scale=5.0), "outside [-1, 1]"),
    ],
)
def test_bad_policies_are_rejected_with_one_line(build_policy, kwargs, message):
    path = build_policy(**kwargs)
    with pytest.raises(BadInputError) as err:
        OnnxPolicy(path)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_not_onnx_and_missing(tmp_path):
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00\x01 this is not protobuf \xff" * 10)
    with pytest.raises(BadInputError, match="not an ONNX model"):
        OnnxPolicy(junk)
    with pytest.raises(BadInputError, match="no such file"):
        OnnxPolicy(tmp_path / "none.onnx")


def test_spec_override_and_embedding(build_policy, tmp_path):
    path = build_policy(spec=None)
    spec = ObservationSpec(features=(Feature("rate"), Feature("delta")), history=2)
    assert OnnxPolicy(path, spec).spec == spec
    embed_spec(path, spec, tmp_path / "with_spec.onnx")
    assert OnnxPolicy(tmp_path / "with_spec.onnx").spec == spec


def test_factor_policy_must_be_positive(tmp_path):
    """A factor output <= 0 on every probe is refused; a clipped linear output that leaves
    (0, inf) only on the extreme probe windows (the clamp takes over there) is a policy."""
    import numpy as np

    from rlcc.onnx_export import mlp_to_onnx

    spec = ObservationSpec.from_dict({**ObservationSpec(features=(Feature("prev_action"), Feature("delta")), history=2).to_dict(),
                                      "action": {"type": "factor"}})
    zero = np.zeros((spec.input_width, 1))
    mlp_to_onnx([zero], ["identity"], spec, tmp_path / "neg.onnx", biases=[-np.ones(1)])
    with pytest.raises(BadInputError, match="factor output <= 0 on every probe input"):
        OnnxPolicy(tmp_path / "neg.onnx")
    linear = zero.copy()
    linear[spec.input_index(0, 1), 0] = 0.5  # 1 + 5 delta: negative in deep congestion
    mlp_to_onnx([linear], ["identity"], spec, tmp_path / "lin.onnx", biases=[np.ones(1)])
    p = OnnxPolicy(tmp_path / "lin.onnx")
    assert np.any(p.predict_raw(np.zeros((1, spec.input_width), np.float32)) == 1.0)
