"""Shared fixtures: paths and small ONNX model builders for bad-input tests."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from rlcc.spec import METADATA_KEY, Feature, ObservationSpec

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_POLICY = REPO / "examples" / "synthetic_mlp.onnx"


class _Terminated(BaseException):
    """SIGTERM inside a test: a BaseException, so neither click's CliRunner nor rlcc's own
    handlers turn it into an exit code; the hooks below make it pytest's interruption."""


def _terminated(_signum, _frame):
    raise _Terminated()


def pytest_configure(config):
    """SIGTERM (a CI timeout, ``kill``) interrupts the run like Ctrl-C: pytest reports the session
    as interrupted instead of failing the test that was running. rlcc's CLI leaves a host's
    SIGTERM handler in place (rlcc.cli.common.guarded). The compile cache (rlcc.verify.compile_cache)
    is a fresh directory per test process: tests neither read nor fill the user's."""
    signal.signal(signal.SIGTERM, _terminated)
    os.environ["RLCC_CACHE_DIR"] = tempfile.mkdtemp(prefix="rlcc-test-cache-")


def pytest_unconfigure(config):
    shutil.rmtree(os.environ.get("RLCC_CACHE_DIR", ""), ignore_errors=True)


def _as_interrupt():
    """A hook wrapper body: SIGTERM during a phase becomes pytest's KeyboardInterrupt."""
    try:
        return (yield)
    except _Terminated:
        raise KeyboardInterrupt("SIGTERM") from None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _as_interrupt())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _as_interrupt())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _as_interrupt())


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def example_policy() -> Path:
    return EXAMPLE_POLICY


SPEC = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2)


def build(
    path: Path,
    *,
    width: int = 4,
    spec: ObservationSpec | str | None = SPEC,
    opset: int = 17,
    in_type: int = TensorProto.FLOAT,
    in_shape: list | None = None,
    extra_input: bool = False,
    extra_output: bool = False,
    out_op: str = "Tanh",
    weight_scale: float = 0.1,
) -> Path:
    """A one-layer policy ``out_op(x @ W)``; every argument breaks one rule when changed."""
    w = numpy_helper.from_array(np.full((width, 1), weight_scale, dtype=np.float32), "W")
    nodes = []
    x = "obs"
    if in_type != TensorProto.FLOAT:
        nodes.append(helper.make_node("Cast", ["obs"], ["obs_f"], to=TensorProto.FLOAT))
        x = "obs_f"
    nodes.append(helper.make_node("MatMul", [x, "W"], ["lin"]))
    if out_op == "Log":  # produces NaN for negative inputs
        nodes.append(helper.make_node("Log", ["lin"], ["y"]))
    elif out_op == "Identity":
        nodes.append(helper.make_node("Identity", ["lin"], ["y"]))
    else:
        nodes.append(helper.make_node(out_op, ["lin"], ["y"]))
    inputs = [helper.make_tensor_value_info("obs", in_type, in_shape or ["batch", width])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1])]
    if extra_input:
        inputs.append(helper.make_tensor_value_info("state", TensorProto.FLOAT, ["batch", 2]))
    if extra_output:
        nodes.append(helper.make_node("Identity", ["lin"], ["y2"]))
        outputs.append(helper.make_tensor_value_info("y2", TensorProto.FLOAT, ["batch", 1]))
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if spec is not None:
        entry = model.metadata_props.add()
        entry.key = METADATA_KEY
        entry.value = spec if isinstance(spec, str) else spec.to_json()
    onnx.save(model, str(path))
    return path


@pytest.fixture
def build_policy(tmp_path):
    """``build_policy(name, **kwargs)`` writes a tiny policy (see ``build``) under tmp_path."""

    def make(name: str = "p.onnx", **kwargs) -> Path:
        return build(tmp_path / name, **kwargs)

    return make
