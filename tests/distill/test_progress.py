"""rlcc-compile progress bars: off without a terminal and with --quiet, every long stage named when on."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from rlcc.cli.compile import compile_command
from rlcc.progress import bars

SMALL = ["--accept-fidelity", "--quick", "--samples", "600", "--scenarios", "many-to-one:2:4,many-to-one:8:4", "--trees", "3", "--depth", "2"]
STAGES = ("sampling the teacher", "fitting the trees", "round 1/1: on-policy sampling", "round 1/1: refitting the trees",
          "closed loop: teacher vs float trees vs fixed point", "verifying firmware.c on rv64imac")


def _compile(policy, out, *extra):
    result = CliRunner().invoke(compile_command, [str(policy), "-o", str(out), *SMALL, *extra])
    assert result.exit_code == 0, result.output + result.stderr
    return result


@pytest.fixture(scope="module")
def forced(tmp_path_factory, example_policy):
    return _compile(example_policy, tmp_path_factory.mktemp("p") / "OUT", "--progress")


def test_forced_bars_name_every_long_stage(forced):
    for name in STAGES:
        assert f"rlcc-compile: {name}:" in forced.stderr, name
    assert "%|" in forced.stderr and "sim-ms" in forced.stderr
    assert "sampling the teacher" not in forced.stdout  # bars on stderr only


def test_no_bars_when_stderr_is_not_a_terminal(tmp_path, example_policy):
    result = _compile(example_policy, tmp_path / "OUT", "--no-verify")  # CliRunner's stderr is not a TTY
    assert "%|" not in result.stderr and "sampling the teacher" not in result.stderr
    assert "rlcc-compile: [" in result.stdout  # the stage lines stay


def test_quiet_prints_only_the_result(tmp_path, example_policy):
    result = _compile(example_policy, tmp_path / "OUT", "--quiet")
    assert result.stderr == ""
    assert result.stdout.startswith("rlcc-compile: wrote ") and result.stdout.count("\n") == 1


def test_a_stage_without_work_draws_nothing():
    import io

    sink = io.StringIO()
    with bars(sink)("idle", "step"):
        pass
    with bars(sink)("busy", "step") as stage:
        stage.add(2)
        stage.advance(2)
    assert "idle" not in sink.getvalue() and "rlcc-compile: busy:" in sink.getvalue()
