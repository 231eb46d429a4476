"""rlcc-compile end to end (quick mode): artifacts, determinism, report keys, robustness."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from rlcc.cli.compile import compile_command
from rlcc.distill.pipeline import QUICK_CANDIDATES, CompileOptions, compile_policy
from rlcc.errors import BadInputError
from rlcc.fxp import golden
from rlcc.fxp.model import FxModel
from rlcc.policy import OnnxPolicy
from rlcc.spec import Action, Feature, ObservationSpec

TINY = ["--accept-fidelity", "--quick", "--samples", "1500", "--scenarios", "many-to-one:2:8,many-to-one:16:12", "--probe-timeout-us", "250.5"]
REPORT_KEYS = {"closed_loop", "closed_loop_steady", "closed_loop_suite", "dagger", "dataset", "explainability", "fidelity",
               "fit", "gate", "options", "quantization", "rlcc_report", "selection", "sizes", "suite_latency_us", "teacher", "window",
               "coverage", "escalation"}


def run(args):
    result = CliRunner().invoke(compile_command, [str(a) for a in args])
    return result


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, example_policy):
    out = tmp_path_factory.mktemp("c") / "OUT"
    result = run([example_policy, "-o", out, *TINY, "--jobs", "2"])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.slow
def test_artifacts_and_report(compiled):
    names = {p.name for p in compiled.iterdir()}
    assert {"model.rlcc.json", "report.json", "report.md", "catboost.json", "spec.json",
            "firmware.c", "firmware.h", "firmware.rlcc.json", "verify.json"} <= names
    verdict = json.loads((compiled / "verify.json").read_text())
    assert verdict["bit_exact"] and verdict["passed"] and verdict["firmware"] == "firmware.c"
    report = json.loads((compiled / "report.json").read_text())
    assert set(report) == REPORT_KEYS
    # The reduced suite on both topologies, the firmware at the decision time rlcc-verify measured.
    assert report["suite_latency_us"] == pytest.approx(verdict["budget"]["worst_case_ns"] / 1e3)
    suite = report["closed_loop_suite"]["scenarios"]
    assert {name.split()[0] for name in suite} == {"single-switch", "fat-tree"}
    assert {c["scenario"].split(" ", 1)[1] for c in report["gate"]["checks"]} >= set(suite)
    assert report["fidelity"]["path_changed_fraction"] == 0.0
    assert report["sizes"]["state_fits_context"] and report["sizes"]["operations"] <= 150
    assert len(report["explainability"]) == 9
    row = report["closed_loop"]["scenarios"]["many-to-one:64"]
    assert set(row) == {"teacher", "float_trees", "fixed_point"}
    assert report["closed_loop"]["mode"] == "startup" and report["closed_loop_steady"]["mode"] == "steady"
    steady = report["closed_loop_steady"]["scenarios"]["many-to-one:64"]
    assert set(steady) == {"teacher", "float_trees", "fixed_point"}
    # The fixed point starts at the fair share too (not at the device's line-rate default).
    assert steady["fixed_point"]["drop_fraction"] == 0.0
    assert abs(steady["fixed_point"]["goodput_diff"]) < 0.01
    rounds = report["dagger"]["rounds"]
    assert [r["round"] for r in rounds] == list(range(len(rounds))) and len(rounds) >= 2
    assert report["dataset"]["train_by_origin"]["anchor"] > 0
    model = FxModel.from_file(str(compiled / "model.rlcc.json"))
    assert len(model.trees) == 10 and all(t.depth == 4 for t in model.trees)
    assert model.constants.probe_timeout_ns == 250_500  # --probe-timeout-us 250.5, down to the firmware default
    assert "#define FIRMWARE_DEF_PROBE_TIMEOUT_NS UINT32_C(250500)" in (compiled / "firmware.h").read_text()
    md = (compiled / "report.md").read_text()
    assert "Closed loop, steady state" in md and "Closed loop, startup transient" in md
    # The gate judged every closed-loop row of the firmware (4 measures x scenarios x 2 modes, plus
    # the reduced suite); the quick compile fits QUICK_CANDIDATES candidates and keeps the best.
    gate = report["gate"]
    assert len(gate["checks"]) == 4 * (2 * len(report["closed_loop"]["scenarios"]) + len(suite))
    assert gate["controller"] == "fixed_point" and "reduced suite on both topologies" in md
    assert gate["passed"] == all(c["passed"] for c in gate["checks"]) and "Fidelity gate: " in md
    sel = report["selection"]
    assert len(sel["candidates"]) == QUICK_CANDIDATES
    assert sel["chosen"] == min(sel["candidates"], key=lambda c: c["score"])["name"]
    assert json.loads((compiled / "model.rlcc.json").read_text())["provenance"]["candidate"] == sel["chosen"]


@pytest.mark.slow
def test_report_opens_with_the_firmware_numbers_of_its_verification(compiled):
    """The firmware engineer's rows come from the compile's own verification (verify.json), not
    from estimates, and come before the ML sections; the closed-loop figure is linked there."""
    v = json.loads((compiled / "verify.json").read_text())
    md = (compiled / "report.md").read_text()
    top = md[:md.index("## Model")]
    assert top.index("## Firmware at a glance") < top.index("Inputs:")
    gate = json.loads((compiled / "report.json").read_text())["gate"]
    for row in (f"| fidelity gate (closed loop vs teacher) | {gate['headline']} |",
                f"| bit-exact vs the golden model | yes, on {v['vectors']:,} vectors |",
                f"| worst-case event, {v['target']}, profile {v['profile']} @ {v['clock_hz'] / 1e9:.2f} GHz | "
                f"{v['cycles']['max']} cycles = {v['budget']['worst_case_ns']:.1f} ns; budget {v['budget']['cycles']} cycles",
                f"| code / read-only data / data | {v['size']['code']} / {v['size']['rodata']} / {v['size']['data']} B |",
                f"| per-flow context | {v['context_bytes']} of 48 B |",
                f"| stack (high-water mark) | {v['stack']['high_water_bytes']} of {v['stack']['size_bytes']} B |"):
        assert row in top, row
    assert "](closed_loop.png)" in top
    png = (compiled / "closed_loop.png").read_bytes()
    assert png.startswith(b"\x89PNG") and b"Software" not in png and b"matplotlib" not in png.lower()


def test_glance_without_verification_says_so():
    from rlcc.verify.glance import NOT_VERIFIED, nic_section

    rows = "\n".join(nic_section(None, "PASSED"))
    assert NOT_VERIFIED in rows and "cycles" not in rows.replace(NOT_VERIFIED, "")


@pytest.mark.slow
def test_same_seed_byte_identical(compiled, tmp_path, example_policy):
    """Also across job counts: the simulations run in 2 worker processes, then in-process."""
    again = tmp_path / "AGAIN"
    assert run([example_policy, "-o", again, *TINY, "--jobs", "1"]).exit_code == 0
    for name in ("model.rlcc.json", "report.json", "report.md", "catboost.json",
                 "firmware.c", "firmware.h", "firmware.rlcc.json", "verify.json", "closed_loop.png"):
        assert (again / name).read_bytes() == (compiled / name).read_bytes(), name


@pytest.mark.slow
def test_equilibrium_ramps_end_to_end(tmp_path, example_policy):
    """--equilibrium ramps: the model, the C and the report carry the ramps, the firmware
    verifies bit-exactly, and a second compile gives the same bytes."""
    outs = [tmp_path / "A", tmp_path / "B"]
    for out in outs:
        result = run([example_policy, "-o", out, *TINY, "--jobs", "1", "--equilibrium", "ramps"])
        assert result.exit_code == 0, result.output
    out = outs[0]
    model = FxModel.from_file(str(out / "model.rlcc.json"))
    assert len(model.ramps) == 4 and json.loads((out / "model.rlcc.json").read_text())["version"] == 3
    assert model.n_operations == 50 + 5 * 4
    c = (out / "firmware.c").read_text()
    # the default tree style folds each ramp into its input's search (the sums come back in one call)
    assert "rlcc_ramp_below(x, FIRMWARE_RAMP_" in c and all(f"FIRMWARE_RAMP_{i}_K_BELOW" in c for i in range(4))
    report = json.loads((out / "report.json").read_text())
    assert [r["input"] for r in report["fit"]["ramps"]] == ["prev_action[t-1]", "delta[t-1]", "prev_action[t]", "delta[t]"]
    assert "4 ramps at the teacher's equilibrium" in (out / "report.md").read_text()
    verdict = json.loads((out / "verify.json").read_text())
    assert verdict["bit_exact"] and verdict["passed"]
    for name in ("model.rlcc.json", "firmware.c", "report.json"):
        assert (outs[1] / name).read_bytes() == (out / name).read_bytes(), name


@pytest.mark.slow
def test_existing_output_needs_force(compiled, example_policy):
    result = run([example_policy, "-o", compiled, *TINY])
    assert result.exit_code == 2 and "--force" in result.output


@pytest.mark.parametrize("args, message", [
    (["--trees", "0"], "--trees"),
    (["--budget-ops", "3"], "operations budget"),
    (["--depth", "0"], "--depth"),
    (["--scenarios", "ring:3"], "invalid scenario"),
    (["--probe-timeout-us", "0"], "--probe-timeout-us"),
    (["--probe-timeout-us", "4300000"], "--probe-timeout-us"),
])
def test_impossible_options_fail_cleanly_without_output(tmp_path, example_policy, args, message):
    out = tmp_path / "OUT"
    result = run([example_policy, "-o", out, *TINY, *args])
    assert result.exit_code == 3, result.output
    assert message in result.output and not out.exists()


def factor_policy(build_policy, name, weight, out_op, action):
    spec = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2, action=action)
    return build_policy(name, spec=spec, weight_scale=weight, out_op=out_op)


@pytest.mark.slow
def test_constant_teacher_gives_bias_only_model(build_policy):
    path = factor_policy(build_policy, "const.onnx", 0.0, "Tanh", Action())
    options = CompileOptions.quick(samples=600, scenarios="many-to-one:2:5", eval_flows=(2,), eval_duration_ms=5.0)
    result = compile_policy(OnnxPolicy(path), options)
    assert result.model.trees == () and result.model.bias == 65536
    assert result.report.fit.constant_teacher and result.report.sizes.operations == 0
    ctx = np.zeros((1, 12), np.uint32)
    out = golden.step(result.model, ctx, golden.make_events([6], [20_000], u0=[0]))
    assert out.rate[0] == result.model.constants.rate_initial


@pytest.mark.slow
def test_outputs_beyond_clamp_are_clamped_and_reported(build_policy):
    # factor = 1 + 0.5 * tanh(5 * sum(x)) spans [0.5, 1.5]; the clamp keeps [0.9, 1.1]
    action = Action(type="tanh", map="linear", gain=0.5, clamp_min=0.9, clamp_max=1.1)
    policy = OnnxPolicy(factor_policy(build_policy, "wide.onnx", 5.0, "Tanh", action))
    options = CompileOptions.quick(samples=600, scenarios="many-to-one:2:5", eval_flows=(2,), eval_duration_ms=5.0)
    result = compile_policy(policy, options)
    assert result.report.teacher.clamped_fraction > 0.5
    c = result.model.constants
    assert (c.clamp_min_q16, c.clamp_max_q16) == (round(0.9 * 65536), round(1.1 * 65536))
    # the student's raw sum may overshoot (ramps extrapolate); the device's factor never does
    rng = np.random.default_rng(0)
    ctx = np.zeros((2000, 12), np.uint32)
    ctx[:, 0] = rng.integers(1, 2**20, 2000)
    ctx[:, 1] = rng.integers(40000, 90000, 2000)
    ctx[:, 3] = 1
    ctx[:, 5:9] = rng.integers(-(2**20), 2**20, (2000, 4)).astype(np.int64).astype(np.uint32)
    out = golden.step(result.model, ctx, golden.make_events([6] * 2000, [200_000] * 2000, rng.integers(0, 190_000, 2000)))
    factor = out.ctx[:, 1].astype(np.int64)
    assert np.all((c.clamp_min_q16 <= factor) & (factor <= c.clamp_max_q16))
    assert factor.min() == c.clamp_min_q16 or factor.max() == c.clamp_max_q16  # the clamp is hit


def test_nan_teacher_is_bad_input(build_policy):
    path = factor_policy(build_policy, "nan.onnx", 0.1, "Log", Action(type="factor"))
    with pytest.raises(BadInputError, match="NaN"):
        compile_policy(OnnxPolicy(path), CompileOptions.quick(samples=600, scenarios="many-to-one:2:5"))


@pytest.mark.slow
@pytest.mark.parametrize("style", ["oblivious", "bitmask"])
def test_constant_teacher_compiles_to_verified_tree_less_firmware(build_policy, tmp_path, style):
    out = tmp_path / "OUT"
    result = run([build_policy(weight_scale=0.0), "-o", out, *TINY, "--tree-style", style])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "verify.json").read_text())["bit_exact"]
    assert FxModel.from_file(str(out / "model.rlcc.json")).trees == ()
