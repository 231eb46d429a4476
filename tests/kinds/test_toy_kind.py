"""A fourth model kind plugs in with its own folder (``toy_stump/``) and one registration line:
rlcc-compile lists and runs it, rlcc-verify checks its firmware and recompiles it from the
manifest's recipe (--policy), and --backend auto weighs it like the built-in kinds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rlcc.cli.main import compile_command, verify_command
from rlcc.kinds import registry

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toy_stump.kind import StumpKind  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "examples" / "rlcc_mlp.onnx"


@pytest.fixture
def stump_registered():
    saved = dict(registry.KINDS)
    registry.register(StumpKind())  # the one registration line
    yield
    registry.KINDS.clear()
    registry.KINDS.update(saved)


def test_an_unregistered_kind_is_not_a_backend(tmp_path):
    res = CliRunner().invoke(compile_command, [str(POLICY), "-o", str(tmp_path / "OUT"), "--backend", "stump"])
    assert res.exit_code == 2 and "'stump' is not one of" in res.output


def test_the_toy_kind_compiles_verifies_and_recompiles(tmp_path, stump_registered):
    out = tmp_path / "OUT"
    res = CliRunner().invoke(compile_command, [str(POLICY), "-o", str(out), "--backend", "stump", "--quick", "-q",
                                               "--accept-fidelity"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "firmware.rlcc.json").read_text())
    assert manifest["compile"]["backend"] == "stump"
    assert len(manifest["model"]["trees"]) <= 1 and all(len(t["splits"]) <= 2 for t in manifest["model"]["trees"])
    assert json.loads((out / "verify.json").read_text())["mismatches"] == 0
    res = CliRunner().invoke(verify_command, [str(out / "firmware.c"), "--random", "500", "--policy", str(POLICY)])
    assert res.exit_code == 0, res.output
    assert "PASS (sampled, anchored to the policy)" in res.output
