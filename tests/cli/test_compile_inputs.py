"""rlcc-compile inputs checked before the work (issue 32): the firmware name, OUT as a symbolic
link, two compiles into one OUT, unbounded or deeply nested input files; one line, exit code."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from rlcc.kinds.pcc import PccKind
from rlcc.distill import pipeline as distill_pipeline  # the trees kind imports it on use: patched there
from rlcc.pipeline import outdir
from rlcc.cli import compile as compile_cli
from rlcc.kinds.base import CompileRequest
from rlcc.kinds.switch_agent.kind import SwitchAgentKind
from rlcc.codegen import generate
from rlcc.kinds.switch_agent.codegen import generate_switch_firmware
from cli_errors import assert_one_line
from rlcc.errors import BadInputError, ExitCode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "verify"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from codegen_models import tiny_model  # noqa: E402
from switch_models import paper_spec, random_ensemble  # noqa: E402
from switch_teacher import rule_qnet  # noqa: E402

BAD_NAMES = ["/abs/fw", "../x", "sub/fw", "my-fw", "", "1fw", "_fw", "fw.c", "f w", "é", "x" * 65]


def invoke(*args) -> object:
    return CliRunner().invoke(compile_cli.compile_command, [str(a) for a in args])


# ---- --name ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", BAD_NAMES)
def test_name_that_is_not_a_c_identifier_is_refused_before_the_work(tmp_path, example_policy, no_compile, name):
    """``--name /abs/path`` wrote firmware.{c,h,rlcc.json} outside OUT, ``../x`` beside it (exit 0)."""
    work = tmp_path / "work"
    work.mkdir()
    result = invoke(example_policy, "-o", work / "OUT", "--name", name, "--quick")
    assert_one_line(result, ExitCode.BAD_INPUT, "--name")
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("name, why", [("model", "model.rlcc.json"), ("rlcc_runtime", "rlcc_runtime.h"), ("rlcc", "reserved")])
def test_name_clashing_with_an_out_file_or_the_runtime_is_refused(tmp_path, example_policy, no_compile, name, why):
    assert_one_line(invoke(example_policy, "-o", tmp_path / "OUT", "--name", name), ExitCode.BAD_INPUT, "reserved", why)


def test_name_is_checked_for_a_switch_agent_too(tmp_path, no_compile):
    teacher = rule_qnet(tmp_path / "acc.onnx")
    assert_one_line(invoke(teacher, "-o", tmp_path / "OUT", "--name", "../x"), ExitCode.BAD_INPUT, "--name")
    with pytest.raises(BadInputError, match="C identifier"):  # the API refuses it before sampling the teacher
        SwitchAgentKind().prepare(CompileRequest(tmp_path / "missing.onnx", name="../x", quick=True))


@pytest.mark.parametrize("name", ["../x", "/abs/fw", "my-fw"])
def test_codegen_refuses_a_name_that_is_not_an_identifier(tmp_path, name):
    """Both generators: nothing written (``my-fw`` used to become symbols ``my_fw_*`` in ``my-fw.c``)."""
    with pytest.raises(BadInputError, match="C identifier"):
        generate(tiny_model(), tmp_path / "a", name=name)
    spec = paper_spec()
    with pytest.raises(BadInputError, match="C identifier"):
        generate_switch_firmware(spec, random_ensemble(spec, seed=1), tmp_path / "b", name=name)
    assert list(tmp_path.iterdir()) == []


def test_a_plain_identifier_names_the_files(tmp_path):
    paths = generate(tiny_model(), tmp_path, name="Fw_2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Fw_2.c", "Fw_2.h", "Fw_2.rlcc.json"]
    assert "Fw_2_eval_ensemble(" in paths["c"].read_text()


# ---- -o a symbolic link ------------------------------------------------------------------------------
def test_force_through_a_symlink_replaces_the_directory_it_points_to(tmp_path):
    """It used to fail at the final rename (internal error, exit 1, output lost, an empty
    ``.link.XXXX`` left): now the link stays and its directory is replaced whole."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "model.rlcc.json").write_text("old")
    link = tmp_path / "link"
    link.symlink_to(real)
    with outdir.atomic_output_dir(link, overwrite=True, marker="model.rlcc.json") as stage:
        (stage / "model.rlcc.json").write_text("new")
    assert link.is_symlink() and Path(os.readlink(link)) == real
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]
    assert [p.name for p in real.iterdir()] == ["model.rlcc.json"] and (real / "model.rlcc.json").read_text() == "new"


def test_symlink_out_is_checked_like_its_directory_before_the_work(tmp_path, example_policy, no_compile):
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("precious")
    (tmp_path / "to-home").symlink_to(home)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert_one_line(invoke(example_policy, "-o", tmp_path / "to-home", "--force"), ExitCode.BAD_INPUT, "refusing to replace")
    assert_one_line(invoke(example_policy, "-o", tmp_path / "to-home"), ExitCode.USAGE, "--force")
    assert_one_line(invoke(example_policy, "-o", tmp_path / "dangling", "--force"), ExitCode.BAD_INPUT,
                    "symbolic link to", "does not exist")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "home", "to-home"]
    assert [p.name for p in home.iterdir()] == ["notes.txt"]


# ---- one writer per OUT ----------------------------------------------------------------------------------
HOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from rlcc.pipeline.outdir import atomic_output_dir

    with atomic_output_dir(Path(sys.argv[1])) as stage:
        (stage / "model.rlcc.json").write_text("first")
        print("holding", flush=True)
        sys.stdin.readline()
""")


def _hold(out: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline() == "holding\n"
    return proc


def test_second_compile_into_the_same_out_fails_at_once(tmp_path, example_policy):
    """Two runs into one OUT both exited 0 and the later silently replaced the other's output."""
    out = tmp_path / "OUT"
    holder = _hold(out)
    try:
        t0 = time.monotonic()
        second = subprocess.run(["rlcc-compile", str(example_policy), "-o", str(out), "--force", "--quick"],
                                capture_output=True, text=True, timeout=120)
        took = time.monotonic() - t0
    finally:
        holder.communicate("done\n", timeout=60)
    assert second.returncode == int(ExitCode.BAD_INPUT), second.stderr
    assert second.stderr.count("\n") == 1 and second.stderr.startswith(f"rlcc-compile: error: cannot write -o {out}: "
                                                                      f"another rlcc run is writing it (pid {holder.pid})")
    assert took < 30, took  # refused before sampling, not after minutes
    assert holder.returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["OUT"]  # no lock file or staging directory left
    assert (out / "model.rlcc.json").read_text() == "first"


def test_a_killed_holder_does_not_block_later_runs(tmp_path):
    out = tmp_path / "OUT"
    holder = _hold(out)
    holder.kill()
    holder.communicate(timeout=60)
    with outdir.output_lock(out) as resolved:
        assert resolved == out
        with outdir.output_lock(tmp_path / "." / "OUT"):  # re-entrant in the same process
            pass
    assert not (tmp_path / f".OUT{outdir.LOCK_SUFFIX}").exists()
    with outdir.atomic_output_dir(out) as stage:
        (stage / "f").write_text("x")
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".OUT.")) == ["OUT"]


def test_the_lock_also_covers_a_symlink_to_the_same_directory(tmp_path, example_policy, no_compile):
    real = tmp_path / "real"
    real.mkdir()
    (real / "model.rlcc.json").write_text("old")
    (tmp_path / "link").symlink_to(real)
    holder = _hold(real)
    try:
        second = invoke(example_policy, "-o", tmp_path / "link", "--force")
    finally:
        holder.communicate("done\n", timeout=60)
    assert_one_line(second, ExitCode.BAD_INPUT, "another rlcc run is writing it")


# ---- unbounded or deeply nested input files -----------------------------------------------------------
DEEP = "[" * 100_000 + "]" * 100_000  # Python's JSON parser: RecursionError (was: internal error, exit 1)


def _limited(*argv: str) -> subprocess.CompletedProcess:
    """Run a console script with 2 GiB of address space: an unbounded read fails fast (MemoryError)
    instead of taking the machine's memory."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(list(argv), capture_output=True, text=True, timeout=300, preexec_fn=limit)


def test_spec_from_an_endless_device_is_bad_input(tmp_path, example_policy):
    """``--spec /dev/zero`` read without bound (MemoryError, exit 1)."""
    r = _limited("rlcc-compile", str(example_policy), "-o", str(tmp_path / "OUT"), "--spec", "/dev/zero", "--quick")
    assert r.returncode == int(ExitCode.BAD_INPUT), r.stderr
    assert r.stderr == "rlcc-compile: error: cannot read spec file /dev/zero: larger than 64 MiB\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text, reason", [(DEEP, "nested deeper than 64 levels"), ('{"history": NaN}', "NaN is not a JSON number")])
def test_deeply_nested_or_non_finite_spec_is_bad_input(tmp_path, example_policy, no_compile, text, reason):
    spec = tmp_path / "spec.json"
    spec.write_text(text)
    assert_one_line(invoke(example_policy, "-o", tmp_path / "OUT", "--spec", spec), ExitCode.BAD_INPUT,
                    f"invalid spec in {spec}: not JSON", reason)


def test_deeply_nested_manifest_is_bad_input(tmp_path):
    from rlcc.cli.verify import verify_command

    (tmp_path / "fw.c").write_text("int x;\n")
    (tmp_path / "fw.rlcc.json").write_text(DEEP)
    result = CliRunner().invoke(verify_command, [str(tmp_path / "fw.c")])
    assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
    assert result.output.startswith("rlcc-verify: error: invalid firmware manifest in ") and result.output.count("\n") == 1
    assert "not JSON (nested deeper than 64 levels)" in result.output


def test_deeply_nested_scenario_is_bad_input(tmp_path):
    from rlcc.cli.simulate import simulate_command

    scenario = tmp_path / "s.json"
    scenario.write_text('{"kind": "many-to-one", "network": ' + DEEP[:300] + DEEP[-300:] + "}")
    for text in (DEEP, scenario.read_text()):
        scenario.write_text(text)
        result = CliRunner().invoke(simulate_command, ["run", str(scenario)])
        assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
        assert result.output == f"rlcc-sim: error: invalid scenario in {scenario}: not JSON (nested deeper than 64 levels)\n"


def test_model_from_an_endless_device_is_bad_input(tmp_path):
    r = _limited("rlcc-compile", "/dev/zero", "-o", str(tmp_path / "OUT"))
    assert r.returncode == int(ExitCode.BAD_INPUT), r.stderr
    assert r.stderr == "rlcc-compile: error: cannot read ONNX model /dev/zero: larger than 256 MiB\n"


# ---- a constant policy ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_constant_policy_compiles_and_says_so_plainly(tmp_path, monkeypatch):
    """An all-zero policy distils to 0 trees: a valid (bit-exact) but trivial controller. It used to
    pass as any other compile; the result line and report.md now say it is a constant factor."""
    from test_cli_bad_input import TINY_OPTIONS, affine_policy

    from rlcc.distill.pipeline import CompileOptions, compile_policy
    from rlcc.policy import OnnxPolicy

    path = affine_policy(tmp_path / "zero.onnx")
    result = compile_policy(OnnxPolicy(path), CompileOptions.quick(**TINY_OPTIONS))
    monkeypatch.setattr(distill_pipeline, "compile_policy", lambda *a, **k: result)
    monkeypatch.setattr(distill_pipeline, "check_on_suite", lambda r, *a, **k: r)  # its own tests: tests/distill
    monkeypatch.setattr(PccKind, "closed_loop_figure", staticmethod(lambda *a, **k: None))
    out = tmp_path / "OUT"
    r = invoke(path, "-o", out, "--no-verify", "-q")
    assert r.exit_code == 0, r.output
    note = ("constant policy: the firmware has no trees and applies the rate factor 1 on every decision, whatever it "
            "observes (the teacher's output did not vary on the sampled states)")
    assert r.output.splitlines()[0].startswith("rlcc-compile: wrote ") and r.output.splitlines()[0].endswith(f"; {note}")
    report = (out / "report.md").read_text().splitlines()
    assert report[2] == f"**Note: {note}.**"


# ---- classes of the README table that had no test of their own --------------------------------------------
def test_model_that_is_a_directory_is_bad_input(tmp_path, no_compile):
    (tmp_path / "m.onnx").mkdir()
    assert_one_line(invoke(tmp_path / "m.onnx", "-o", tmp_path / "OUT"), ExitCode.BAD_INPUT, "is a directory, not an ONNX model")
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


@pytest.mark.parametrize("value", ["0", "-5"])
def test_non_positive_budget_cycles_is_bad_input_before_the_work(tmp_path, example_policy, no_compile, value):
    assert_one_line(invoke(example_policy, "-o", tmp_path / "OUT", "--budget-cycles", value), ExitCode.BAD_INPUT,
                    "--budget-cycles must be positive")
    assert list(tmp_path.iterdir()) == []


SIGINT_SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    from rlcc.cli.common import guarded
    from rlcc.pipeline.outdir import atomic_output_dir

    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])  # a background job may inherit it ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)

    @guarded("rlcc-test")
    def main():
        with atomic_output_dir(Path(sys.argv[1])) as stage:
            (stage / "firmware.c").write_text("half")
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(30)

    main()
""")


def test_ctrl_c_exits_130_and_leaves_nothing(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SIGINT_SCRIPT, str(tmp_path / "work" / "OUT")], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "rlcc-test: interrupted\n"
    assert list(tmp_path.iterdir()) == []
