"""Console scripts: help/version, exit codes, one-line errors, no half-written output."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlcc.errors import ExitCode


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.mark.parametrize("prog", ["rlcc", "rlcc-compile", "rlcc-verify", "rlcc-sim", "rlcc-train"])
def test_help_and_version(prog):
    help_ = run(prog, "--help")
    assert help_.returncode == 0 and "Usage:" in help_.stdout
    version = run(prog, "--version")
    assert version.returncode == 0 and "0." in version.stdout


def test_group_lists_subcommands():
    out = run("rlcc", "--help").stdout
    for sub in ("compile", "verify", "sim", "train"):
        assert f"  {sub} " in out
    assert "Exit codes" in out


def assert_one_line_error(proc, code: ExitCode):
    assert proc.returncode == int(code), proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "error" in lines[0] and "Traceback" not in proc.stderr


def test_compile_rejects_non_onnx_without_output(tmp_path):
    junk = tmp_path / "model.onnx"
    junk.write_text("definitely not onnx")
    out = tmp_path / "OUT"
    proc = run("rlcc-compile", str(junk), "-o", str(out))
    assert_one_line_error(proc, ExitCode.BAD_INPUT)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["model.onnx"]  # no staging dir left either


def test_compile_rejects_spec_mismatch_without_output(tmp_path, example_policy):
    spec = tmp_path / "spec.json"
    spec.write_text('{"rlcc_spec": 1, "features": [{"name": "delta"}], "history": 3}')
    out = tmp_path / "OUT"
    proc = run("rlcc-compile", str(example_policy), "--spec", str(spec), "-o", str(out))
    assert_one_line_error(proc, ExitCode.BAD_INPUT)
    assert "input width 4 != history 3 x 1 features = 3" in proc.stderr
    assert not out.exists()


def test_compile_missing_model_and_usage(tmp_path):
    proc = run("rlcc-compile", str(tmp_path / "none.onnx"), "-o", str(tmp_path / "o"))
    assert_one_line_error(proc, ExitCode.BAD_INPUT)
    usage = run("rlcc-compile")
    assert usage.returncode == int(ExitCode.USAGE)


def test_verify_missing_file(tmp_path):
    proc = run("rlcc-verify", str(tmp_path / "firmware.c"))
    assert_one_line_error(proc, ExitCode.BAD_INPUT)


def test_package_layout_has_no_stray_top_level_modules():
    import importlib.util

    import rlcc

    assert importlib.util.find_spec("rlcc.cli") and importlib.util.find_spec("rlcc.emulator")
    code = "import importlib.util,sys; sys.exit(int(any(importlib.util.find_spec(m) for m in ('cli','emulator','codegen'))))"
    # run outside the checkout so the work tree is not on sys.path
    assert subprocess.run([sys.executable, "-c", code], cwd="/").returncode == 0
    assert rlcc.__version__


BAD_POLICIES = [
    (dict(opset=7), "unsupported ONNX opset"),
    (dict(extra_input=True), "exactly one input"),
    (dict(extra_output=True), "exactly one output"),
    (dict(in_type=10), "must be float32"),  # float16 input
    (dict(width=6), "input width 6"),
    (dict(in_shape=["batch", "width"]), "dynamic feature dimension"),
    (dict(spec=None), "no observation spec"),
    (dict(spec='{"rlcc_spec": 1, "features": [{"name": "jitter"}]}'), "unknown feature"),
    (dict(out_op="Log", weight_scale=-1.0), "NaN or inf"),
    (dict(out_op="Identity", weight_scale=5.0), "outside [-1, 1]"),
]


@pytest.mark.parametrize("kwargs, message", BAD_POLICIES)
def test_compile_bad_policy_exit_code_one_line_nothing_written(build_policy, tmp_path, kwargs, message):
    from click.testing import CliRunner

    from rlcc.cli.main import compile_command

    out = tmp_path / "OUT"
    result = CliRunner().invoke(compile_command, [str(build_policy(**kwargs)), "-o", str(out)])
    assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("rlcc-compile: error:")
    assert "Traceback" not in result.output
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.onnx"]


def test_compile_rejects_spec_too_wide_for_the_context_before_sampling(build_policy, tmp_path):
    """(history - 1) x features past values must fit the 48-byte context; fail fast, write nothing."""
    from click.testing import CliRunner

    from rlcc.cli.main import compile_command
    from rlcc.spec import Feature, ObservationSpec

    wide = ObservationSpec(features=tuple(Feature(n) for n in ("prev_action", "delta", "rate", "cnp_count")), history=3)
    out = tmp_path / "OUT"
    result = CliRunner().invoke(compile_command, [str(build_policy(spec=wide, width=12)), "-o", str(out)])
    assert result.exit_code == int(ExitCode.BAD_INPUT)
    assert "history words in the per-flow context" in result.output and not out.exists()
