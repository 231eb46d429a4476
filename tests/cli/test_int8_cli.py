"""`rlcc-compile --backend int8` end to end on both examples, and its bad inputs (exit 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from rlcc.cli.main import rlcc; sys.exit(rlcc(prog_name='rlcc'))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("name, extra", [("rlcc_mlp", []), ("rlcc_lstm", ["--budget-ns", "10000", "--accept-fidelity"])])
def test_compile_int8_quick_end_to_end(name, extra, tmp_path):
    out = tmp_path / "out"
    p = run("compile", str(EXAMPLES / f"{name}.onnx"), "-o", str(out), "--backend", "int8", "--quick", *extra)
    assert p.returncode == 0, p.stderr
    for f in ("firmware.c", "firmware.h", "firmware.rlcc.json", "model.rlcc.json", "verify.json", "report.json", "report.md"):
        assert (out / f).is_file(), f
    verify = json.loads((out / "verify.json").read_text())
    assert verify["bit_exact"] and verify["mismatches"] == 0
    report = json.loads((out / "report.json").read_text())
    assert report["backend"] == "int8" and report["fidelity"]["rmse_vs_teacher"] < 0.01
    assert {p["profile"] for p in report["device"]["profiles"]} == {"dpa", "generic5"}
    assert report["sizes"]["macs"] > 0 and report["closed_loop_suite"] is not None
    manifest = json.loads((out / "firmware.rlcc.json").read_text())
    assert manifest["backend"] == "int8"
    again = run("verify", str(out / "firmware.c"), "--random", "200", "--budget-ns", "10000", "-q")
    assert again.returncode == 0, again.stderr
    if name == "rlcc_mlp":  # anchored to the policy, recompiled (an empty compile cache): byte-identical
        env = {**os.environ, "RLCC_CACHE_DIR": str(tmp_path / "cache")}
        code = "import sys; from rlcc.cli.main import rlcc; sys.exit(rlcc(prog_name='rlcc'))"
        anchored = subprocess.run([sys.executable, "-c", code, "verify", str(out / "firmware.c"), "--random", "0",
                                   "--budget-ns", "10000", "--policy", str(EXAMPLES / f"{name}.onnx"), "-q"],
                                  capture_output=True, text=True, timeout=600, env=env)
        assert anchored.returncode == 0 and "anchored to the policy" in anchored.stdout, anchored.stderr


@pytest.mark.slow
def test_lstm_over_the_default_budget_exits_5(tmp_path):
    """The LSTM's decision does not fit the paper's 2 us on the DPA-like profile: the budget gate says so."""
    from rlcc.kinds.int8.codegen import generate

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from int8_models import example

    paths = generate(example("rlcc_lstm")[2], tmp_path)
    p = run("verify", str(paths["c"]), "--random", "100")
    assert p.returncode == 5, p.stdout + p.stderr
    assert run("verify", str(paths["c"]), "--random", "0", "--prove").returncode == 3


@pytest.mark.slow
def test_unsupported_op_exits_3(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from int8_models import onnx_with_op

    p = run("compile", str(onnx_with_op(tmp_path, "LeakyRelu")), "-o", str(tmp_path / "o"), "--backend", "int8", "--quick")
    assert p.returncode == 3
    assert "operator LeakyRelu is not supported" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_lstm_state_too_large_exits_3(tmp_path):
    from rlcc.recurrent import load_policy
    from rlcc.train.lstm import Lstm, export_lstm

    spec = load_policy(EXAMPLES / "rlcc_mlp.onnx").spec
    path = tmp_path / "big.onnx"
    export_lstm(Lstm.init(spec.n_features, 16, np.random.default_rng(0)), spec, path)
    p = run("compile", str(path), "-o", str(tmp_path / "o"), "--backend", "int8", "--quick")
    assert p.returncode == 3
    assert "needs 48 bytes" in p.stderr and "cycles" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_doca_sdk_exits_3(tmp_path):
    p = run("compile", str(EXAMPLES / "rlcc_mlp.onnx"), "-o", str(tmp_path / "o"), "--backend", "int8", "--sdk", "doca")
    assert p.returncode == 3 and "--backend int8" in p.stderr
