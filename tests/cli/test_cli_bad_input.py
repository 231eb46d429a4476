"""Bad input to rlcc-compile and the shared CLI plumbing: one line, documented exit code, checked
before the work, nothing (half-)written; signals and a closed stdout handled."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from rlcc.kinds import pcc
from rlcc.distill import pipeline as distill_pipeline  # the trees kind imports it on use: patched there
from rlcc.pipeline import outdir
from rlcc.cli.main import compile_command, rlcc
from rlcc.distill.pipeline import CompileOptions, compile_policy
from cli_errors import assert_one_line
from rlcc.errors import BadInputError, BuildError, ExitCode, RlccError
from rlcc.policy import OnnxPolicy
from rlcc.spec import METADATA_KEY, Action, Feature, ObservationSpec

SPEC = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2)
FACTOR_SPEC = ObservationSpec(features=SPEC.features, history=2, action=Action(type="factor"))
TINY_OPTIONS = dict(samples=600, scenarios="many-to-one:2:5", eval_flows=(2,), eval_duration_ms=5.0,
                    onpolicy_samples=300, onpolicy_duration_ms=5.0, steady_duration_ms=2.0)


def affine_policy(path: Path, *, spec: ObservationSpec = SPEC, weight: float = 0.0, bias: float = 0.0,
                  columns: int = 1, declared: list | None = None, op: str = "Tanh") -> Path:
    """``op(x @ W + bias)`` with W of shape (4, columns), output declared ``declared``."""
    w = numpy_helper.from_array(np.full((4, columns), weight, np.float32), "W")
    b = numpy_helper.from_array(np.full((columns,), bias, np.float32), "B")
    nodes = [helper.make_node("MatMul", ["obs", "W"], ["lin"]), helper.make_node("Add", ["lin", "B"], ["pre"]),
             helper.make_node(op, ["pre"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, declared or ["batch", 1])], initializer=[w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    entry = model.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, spec.to_json()
    onnx.save(model, str(path))
    return path


def invoke(cmd, *args) -> object:
    return CliRunner().invoke(cmd, [str(a) for a in args])


@pytest.fixture(scope="module")
def constant_result(tmp_path_factory):
    """A real (tree-less, seconds) compile result, reused by the CLI tests below."""
    path = affine_policy(tmp_path_factory.mktemp("p") / "const.onnx")
    return compile_policy(OnnxPolicy(path), CompileOptions.quick(**TINY_OPTIONS))


# ---- ONNX outputs -------------------------------------------------------------------------------
def test_actual_output_shape_differing_from_declared_is_bad_input(tmp_path):
    path = affine_policy(tmp_path / "p.onnx", columns=2, declared=["batch", 1])
    with pytest.raises(BadInputError, match=r"actual shape \(4096, 2\) on a batch of 4096, declared \(batch, 1\)"):
        OnnxPolicy(path)
    out = tmp_path / "OUT"
    assert_one_line(invoke(compile_command, path, "-o", out), ExitCode.BAD_INPUT, "actual shape")
    assert not out.exists()


def test_factor_policy_with_implausible_outputs_is_refused(tmp_path):
    """1e30 everywhere used to compile to tree-less firmware multiplying the rate by 1.25 per RTT."""
    path = affine_policy(tmp_path / "p.onnx", spec=FACTOR_SPEC, bias=1e30, op="Identity")
    out = tmp_path / "OUT"
    assert_one_line(invoke(compile_command, path, "-o", out), ExitCode.BAD_INPUT, "plausible range [0.001, 1000]")
    assert not out.exists()


@pytest.mark.parametrize("bias, side", [(2.0, "above clamp_max 1.25"), (0.5, "below clamp_min 0.8")])
def test_factor_beyond_the_clamp_on_every_input_is_refused(tmp_path, bias, side):
    path = affine_policy(tmp_path / "p.onnx", spec=FACTOR_SPEC, bias=bias, op="Identity")
    with pytest.raises(BadInputError, match=f"rate factor {side} on every probe input"):
        OnnxPolicy(path)


def test_tanh_policy_saturated_beyond_the_clamp_is_refused(tmp_path):
    spec = ObservationSpec(features=SPEC.features, history=2, action=Action(type="tanh", map="linear", gain=0.5))
    with pytest.raises(BadInputError, match="above clamp_max 1.25 on every probe input"):
        OnnxPolicy(affine_policy(tmp_path / "p.onnx", spec=spec, bias=50.0))


def test_constant_factor_inside_the_clamp_is_still_accepted(tmp_path):
    policy = OnnxPolicy(affine_policy(tmp_path / "p.onnx", spec=FACTOR_SPEC, bias=1.0, op="Identity"))
    assert np.all(policy.factor(np.zeros((3, 4))) == 1.0)


# ---- output directory: checked before any work ----------------------------------------------------
def test_output_dir_under_a_regular_file_is_refused_before_compiling(tmp_path, example_policy, no_compile):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = invoke(compile_command, example_policy, "-o", blocker / "OUT", "--quick")
    assert_one_line(result, ExitCode.BAD_INPUT, "is not a directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_output_dir_that_is_a_file_is_refused(tmp_path, example_policy, no_compile):
    out = tmp_path / "OUT"
    out.write_text("x")
    assert_one_line(invoke(compile_command, example_policy, "-o", out, "--force"), ExitCode.BAD_INPUT, "not a directory")


def test_unwritable_output_parent_is_refused_before_compiling(tmp_path, example_policy, no_compile, monkeypatch):
    """The probe (create a file there) fails as in a read-only directory, also for root."""

    def denied(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(outdir.tempfile, "mkstemp", denied)
    result = invoke(compile_command, example_policy, "-o", tmp_path / "OUT", "--quick")
    assert_one_line(result, ExitCode.BAD_INPUT, "Permission denied")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_output_parent_is_refused_before_compiling(tmp_path, example_policy, no_compile):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    try:
        assert_one_line(invoke(compile_command, example_policy, "-o", ro / "OUT"), ExitCode.BAD_INPUT, "Permission denied")
    finally:
        ro.chmod(0o755)


def test_existing_output_without_force_is_one_line_exit_2_before_compiling(tmp_path, example_policy, no_compile):
    out = tmp_path / "OUT"
    out.mkdir()
    assert_one_line(invoke(compile_command, example_policy, "-o", out), ExitCode.USAGE, "--force")


def test_nan_budget_is_one_line_exit_3_also_under_the_group(tmp_path, example_policy, no_compile):
    for value in ("nan", "inf", "-5", "0"):
        assert_one_line(invoke(compile_command, example_policy, "-o", tmp_path / "O", "--budget-ns", value),
                        ExitCode.BAD_INPUT, "--budget-ns must be a finite number > 0")
    result = invoke(rlcc, "compile", example_policy, "-o", tmp_path / "O", "--budget-ns", "nan")
    assert_one_line(result, ExitCode.BAD_INPUT, "--budget-ns")
    assert_one_line(invoke(compile_command, example_policy, "-o", tmp_path / "O", "--budget-ns", "fast"),
                    ExitCode.USAGE, "must be a number")


def test_unknown_or_unfed_derived_input_is_one_line_exit_3_before_compiling(tmp_path, example_policy, no_compile):
    assert_one_line(invoke(compile_command, example_policy, "-o", tmp_path / "O", "--derived", "delta_cubed"),
                    ExitCode.BAD_INPUT, "--derived: unknown derived input 'delta_cubed'")
    assert_one_line(invoke(compile_command, example_policy, "-o", tmp_path / "O", "--derived", "delta_log_ratio,delta_log_ratio"),
                    ExitCode.BAD_INPUT, "listed twice")


def test_derived_input_without_a_free_context_word():
    """A derived input keeps its previous step's state in a context word after the window's: a
    window that fills the context leaves none (a clear error for a named one; ``auto`` leaves it
    out), and one word short of full still takes it."""
    import dataclasses

    from rlcc import formats as fmt
    from rlcc.distill.pipeline import CompileOptions
    from rlcc.errors import BadInputError
    from rlcc.spec import Feature, ObservationSpec

    full = ObservationSpec(features=(Feature("delta"),), history=fmt.CTX_HISTORY_WORDS + 1)
    with pytest.raises(BadInputError, match="each derived input keeps a context word"):
        CompileOptions(derived="delta_log_ratio").student_spec(full)
    assert CompileOptions().student_spec(full).derived == ()
    room = dataclasses.replace(full, history=fmt.CTX_HISTORY_WORDS)
    assert CompileOptions().student_spec(room).derived == ("delta_log_ratio",)


# ---- verification failure inside rlcc-compile ------------------------------------------------------
@pytest.mark.slow
def test_compile_verification_over_budget_keeps_out_and_exits_5(tmp_path, example_policy, monkeypatch, constant_result):
    monkeypatch.setattr(distill_pipeline, "compile_policy", lambda *a, **k: constant_result)
    monkeypatch.setattr(distill_pipeline, "check_on_suite", lambda result, *a, **k: result)  # its own tests: tests/distill
    out = tmp_path / "OUT"
    result = invoke(compile_command, example_policy, "-o", out, "--budget-ns", "1")
    assert result.exit_code == int(ExitCode.BUDGET), result.output
    assert "rlcc-compile: error: worst-case event" in result.output
    names = {p.name for p in out.iterdir()}
    assert {"firmware.c", "firmware.h", "firmware.rlcc.json", "report.json", "verify.json"} <= names
    assert [p.name for p in tmp_path.iterdir()] == ["OUT"]  # no staging directory left


@pytest.mark.slow
def test_compile_verification_build_failure_keeps_out_and_exits_6(tmp_path, example_policy, monkeypatch, constant_result):
    monkeypatch.setattr(distill_pipeline, "compile_policy", lambda *a, **k: constant_result)
    monkeypatch.setattr(distill_pipeline, "check_on_suite", lambda result, *a, **k: result)  # its own tests: tests/distill

    def broken_build(*_args, **_kwargs):
        raise BuildError("cross-compilation failed: firmware.c:1: error")

    monkeypatch.setattr(pcc, "verify_firmware", broken_build)
    out = tmp_path / "OUT"
    result = invoke(compile_command, example_policy, "-o", out)
    assert result.exit_code == int(ExitCode.BUILD), result.output
    assert result.output.strip().splitlines()[-1] == "rlcc-compile: error: cross-compilation failed: firmware.c:1: error"
    names = {p.name for p in out.iterdir()}
    assert "firmware.c" in names and "verify.json" not in names


def test_output_dir_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        with outdir.atomic_output_dir(tmp_path / "OUT") as stage:
            (stage / "f").write_text("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "OUT").stat().st_mode) == 0o750


def test_force_replaces_the_old_output_whole(tmp_path):
    out = tmp_path / "OUT"
    for name in ("old", "new"):
        with outdir.atomic_output_dir(out) as stage:
            (stage / name).write_text(name)
    assert [p.name for p in tmp_path.iterdir()] == ["OUT"] and [p.name for p in out.iterdir()] == ["new"]


SIGTERM_SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    from rlcc.cli.common import guarded
    from rlcc.pipeline.outdir import atomic_output_dir

    @guarded("rlcc-test")
    def main():
        with atomic_output_dir(Path(sys.argv[1])) as stage:
            (stage / "firmware.c").write_text("half")
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)

    main()
""")


def test_sigterm_during_the_final_write_leaves_no_staging_dir(tmp_path):
    out = tmp_path / "work" / "OUT"
    proc = subprocess.run([sys.executable, "-c", SIGTERM_SCRIPT, str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 128 + 15, proc.stderr
    assert proc.stderr.strip() == "rlcc-test: terminated"
    assert list(tmp_path.iterdir()) == []  # no staging directory, no lock, not even the parent it created


# ---- shared helpers and the group ----------------------------------------------------------------
def test_check_writable_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("keep")
    cases = [(blocker / "r.json", "not a directory"), (tmp_path, "is a directory"),
             (tmp_path / "missing" / "r.json", "no such directory")]
    for path, message in cases:
        with pytest.raises(RlccError, match=message) as info:
            outdir.check_writable_file(path, "--json")
        assert info.value.exit_code == ExitCode.BAD_INPUT and "--json" in str(info.value)
    outdir.check_writable_file(tmp_path / "missing" / "r.json", create_parents=True)
    outdir.check_writable_file(blocker)
    assert blocker.read_text() == "keep" and sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_rlcc_sim_under_the_group():
    result = invoke(rlcc, "sim", "many-to-one", "--flows", "2", "--duration-ms", "0.1")
    assert result.exit_code == 0, result.output
    assert "goodput" in result.output
    assert invoke(rlcc, "sim", "many-to-one", "--line-rate-gbps", "nan").output.startswith("rlcc-sim: error: ")


def test_train_outputs_are_checked_before_training(tmp_path, monkeypatch):
    import rlcc.train.trainer
    from rlcc.cli.train import train_command

    monkeypatch.setattr(rlcc.train.trainer, "train", lambda *_a, **_k: pytest.fail("training ran"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    too_big = tmp_path / "big.json"
    too_big.write_text('{"arch": "lstm", "lstm_hidden": 64, "spec": {"history": 1}}')
    for args, message in ((["--out", blocker / "p.onnx"], "cannot write --out"),
                          (["--out", tmp_path / "p.onnx", "--log-dir", blocker], "cannot write --log-dir"),
                          (["--out", tmp_path / "p.onnx", "--config", too_big], "lstm_hidden")):
        result = invoke(train_command, *args)
        assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
        assert result.output.startswith("rlcc-train: error: ") and result.output.count("\n") == 1, result.output
        assert message in result.output


def test_force_does_not_replace_a_directory_that_is_not_an_rlcc_output(tmp_path, example_policy, no_compile, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("precious")
    assert_one_line(invoke(compile_command, example_policy, "-o", home, "--force"), ExitCode.BAD_INPUT,
                    "refusing to replace", "no model.rlcc.json")
    monkeypatch.chdir(home)
    assert_one_line(invoke(compile_command, example_policy, "-o", ".", "--force"), ExitCode.BAD_INPUT, "refusing to replace")
    assert (home / "notes.txt").read_text() == "precious"


@pytest.mark.slow
def test_force_replaces_a_previous_output(tmp_path, example_policy, monkeypatch, constant_result):
    monkeypatch.setattr(distill_pipeline, "compile_policy", lambda *a, **k: constant_result)
    monkeypatch.setattr(distill_pipeline, "check_on_suite", lambda result, *a, **k: result)  # its own tests: tests/distill
    out = tmp_path / "OUT"
    for _ in range(2):
        result = invoke(compile_command, example_policy, "-o", out, "--force", "--no-verify")
        assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir()] == ["OUT"] and (out / "firmware.c").is_file()
