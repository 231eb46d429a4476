"""int8 networks of the bundled examples for tests, quantized on a synthetic calibration set
(random raw windows and states, labelled by onnxruntime): seconds, not a closed-loop compile."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from rlcc.kinds.int8.graph import read_network
from rlcc.kinds.int8.quantize import Calibration, quantize_net
from rlcc.distill.sampling import device_inputs, float_inputs
from rlcc.fxp import int8_net as q8
from rlcc.recurrent import load_policy

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = ("rlcc_mlp", "rlcc_lstm")


def raw_windows(spec, n: int, rng: np.random.Generator) -> np.ndarray:
    """Raw windows (n, history, 5): RTT 0.9 .. 30 base RTTs, log-uniform rates, factors in the clamp."""
    k = spec.history
    raw = np.zeros((n, k, 5))
    raw[:, :, 0] = np.rint(spec.reward.base_rtt_ns * np.exp(rng.uniform(np.log(0.9), np.log(30.0), (n, k))))
    raw[:, :, 1] = np.exp(rng.uniform(np.log(1e-3), 0.0, (n, k)))
    raw[:, :, 2] = rng.uniform(spec.action.clamp_min, spec.action.clamp_max, (n, k))
    return raw


def calibration(policy, net, n: int = 3000, seed: int = 0) -> Calibration:
    spec = policy.spec
    rng = np.random.default_rng(seed)
    raw = raw_windows(spec, n, rng)
    x_float = float_inputs(spec, raw).astype(np.float64)
    x_dev = device_inputs(spec, raw)
    if net.lstm is None:
        return Calibration(x_float, x_dev, policy.factor(x_float.astype(np.float32)))
    H = net.hidden
    h = np.tanh(rng.normal(0.0, 0.6, (n, H)))
    c = rng.normal(0.0, 1.0, (n, H))
    state = np.concatenate([h, c] if net.lstm.h_index == 0 else [c, h], axis=1).astype(np.float32)
    y, _ = policy.step_raw(x_float.astype(np.float32), state)
    return Calibration(x_float, x_dev, spec.output_to_factor(y), h, c)


@functools.lru_cache(maxsize=None)
def example(name: str) -> tuple[object, object, q8.Int8Net, Calibration]:
    """(policy, float net, int8 network, calibration set) of ``examples/<name>.onnx``."""
    path = EXAMPLES / f"{name}.onnx"
    policy = load_policy(path)
    net = read_network(path, policy.spec, policy)
    calib = calibration(policy, net)
    model, _ = quantize_net(net, policy.spec, calib, 4_000_000, {"source": path.name})
    return policy, net, model, calib


def onnx_with_op(tmp_path: Path, op: str) -> Path:
    """A small MLP ONNX (the example's spec) with operator ``op`` between its two products."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from rlcc.policy import METADATA_KEY

    policy, _, _, _ = example("rlcc_mlp")
    w0 = numpy_helper.from_array(np.ones((4, 3), dtype=np.float32), "W0")
    w1 = numpy_helper.from_array(np.ones((3, 1), dtype=np.float32), "W1")
    nodes = [helper.make_node("MatMul", ["obs", "W0"], ["a"]), helper.make_node(op, ["a"], ["b"]),
             helper.make_node("MatMul", ["b", "W1"], ["c"]), helper.make_node("Tanh", ["c"], ["action"])]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, "g", [vi("obs", TensorProto.FLOAT, ["batch", 4])],
                              [vi("action", TensorProto.FLOAT, ["batch", 1])], initializer=[w0, w1])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    entry = model.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, policy.spec.to_json()
    path = tmp_path / f"{op}.onnx"
    onnx.save(model, str(path))
    return path
