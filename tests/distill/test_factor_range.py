"""The firmware's factor clamp is narrowed to what the teacher can produce (issue 12, bound leaves)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from rlcc import formats as fmt
from rlcc.cli.compile import compile_command
from rlcc.distill.evaluate import factor_clamp, fixed_factor
from rlcc.distill.factor_range import ANALYTIC, SAMPLED, teacher_factor_range
from rlcc.tree_ir import FloatEnsemble, FloatSplit, FloatTree
from rlcc.fxp.model import FxModel
from rlcc.fxp.quantize import quantize
from rlcc.policy import OnnxPolicy, probe_inputs
from rlcc.spec import Action, Feature, ObservationSpec

# A tanh policy with a linear map of gain 0.1: factors in [0.9, 1.1], inside the clamp [0.8, 1.25].
NARROW = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2,
                         action=Action(type="tanh", map="linear", gain=0.1, clamp_min=0.8, clamp_max=1.25))


def test_tanh_output_gives_the_analytic_range(build_policy):
    policy = OnnxPolicy(build_policy(spec=NARROW, weight_scale=2.0))
    assert policy.output_activation == ("Tanh", -1.0, 1.0)
    fr = teacher_factor_range(policy, probe_inputs(NARROW, 100))
    assert (fr.min, fr.max, fr.source) == (0.9, 1.1, ANALYTIC) and "Tanh output [-1, 1]" in fr.detail


def test_unrecognized_output_falls_back_to_the_sampled_range(build_policy):
    policy = OnnxPolicy(build_policy(spec=NARROW, out_op="Sin", weight_scale=0.2))  # bounded, but not known to rlcc
    assert policy.output_activation is None
    obs = probe_inputs(NARROW, 2000)
    fr = teacher_factor_range(policy, obs)
    factors = policy.factor(obs)
    assert fr.source == SAMPLED and (fr.min, fr.max) == (factors.min(), factors.max())
    assert 0.9 < fr.min < fr.max < 1.1


def test_clamp_constants_are_the_intersection_in_q16():
    # one tree whose leaves sum far beyond the teacher's range on both sides
    ensemble = FloatEnsemble(4, (FloatTree((FloatSplit(1, 0.0),), (-0.5, 0.5)),), 1.0)
    model, _ = quantize(ensemble, NARROW, {"factor_range": {"min": 0.9, "max": 1.1}}, factor_range=(0.9, 1.1))
    c = model.constants
    assert (c.clamp_min_q16, c.clamp_max_q16) == (round(0.9 * fmt.FACTOR_ONE), round(1.1 * fmt.FACTOR_ONE))
    q = np.array([[fmt.FACTOR_ONE, -(1 << 20), fmt.FACTOR_ONE, -(1 << 20)], [fmt.FACTOR_ONE, 1 << 20, fmt.FACTOR_ONE, 1 << 20]])
    fx, _ = fixed_factor(model, q)
    assert fx.tolist() == [c.clamp_min_q16, c.clamp_max_q16]
    assert factor_clamp(model) == (0.9, 1.1)
    # a range wider than the spec clamp leaves the spec's bounds; no range, the spec's clamp
    wide, _ = quantize(ensemble, NARROW, factor_range=(0.5, 2.0))
    plain, _ = quantize(ensemble, NARROW)
    assert wide.constants == plain.constants
    assert (plain.constants.clamp_min_q16, plain.constants.clamp_max_q16) == (round(0.8 * 65536), round(1.25 * 65536))


@pytest.mark.slow
def test_compiled_firmware_never_leaves_the_teacher_range(tmp_path, build_policy):
    policy = build_policy(spec=NARROW, weight_scale=2.0)
    out = tmp_path / "OUT"
    args = [str(policy), "-o", str(out), "--accept-fidelity", "--quick", "--samples", "1200", "--scenarios", "many-to-one:2:8,many-to-one:16:8"]
    result = CliRunner().invoke(compile_command, args)
    assert result.exit_code == 0, result.output
    model = FxModel.from_file(str(out / "model.rlcc.json"))
    lo, hi = round(0.9 * fmt.FACTOR_ONE), round(1.1 * fmt.FACTOR_ONE)
    assert (model.constants.clamp_min_q16, model.constants.clamp_max_q16) == (lo, hi)
    header = (out / "firmware.h").read_text()
    assert f"CLAMP_MAX_Q16 UINT32_C({hi})" in header
    report = json.loads((out / "report.json").read_text())
    assert report["teacher"]["factor_range"]["source"] == ANALYTIC
    for cell in report["explainability"]:  # report values have 9 significant digits
        assert 0.9 <= cell["float_trees"] <= 1.1 and lo - 1e-3 <= cell["fixed_point"] * fmt.FACTOR_ONE <= hi + 1e-3
    assert "narrowed to the teacher's achievable factors (analytic: Tanh output [-1, 1]" in (out / "report.md").read_text()
    assert "teacher's highest factor 1.1 (analytic" in (out / "firmware.c").read_text() + header
