"""rlcc-compile progress: bars on a terminal, one "done in" line per stage otherwise, nothing with
--quiet; every long stage named, and each advances exactly the work it announced."""

from __future__ import annotations

import contextlib
import re

import pytest
from click.testing import CliRunner

from rlcc.cli import compile as compile_module
from rlcc.cli.compile import compile_command
from rlcc.progress import Stage, bars, lines

SMALL = ["--accept-fidelity", "--quick", "--samples", "600", "--scenarios", "many-to-one:2:4,many-to-one:8:4", "--trees", "3", "--depth", "2"]
STAGES = ("sampling the teacher", "fitting the trees", "round 1/1: on-policy sampling", "round 1/1: refitting the trees",
          "candidate students: fitting 1 more", "candidate students: closed-loop validation of 2",
          "closed loop: teacher vs float trees vs fixed point", "generating firmware.c and the golden test vectors",
          "verifying firmware.c on rv64imac", "closed loop: reduced suite on both topologies",
          "closed loop: teacher vs firmware over time")
DONE = re.compile(r"^rlcc-compile: (.+): done in \d+\.\d s$")


def _compile(policy, out, *extra):
    result = CliRunner().invoke(compile_command, [str(policy), "-o", str(out), *SMALL, *extra])
    assert result.exit_code == 0, result.output + result.stderr
    return result


@pytest.fixture(scope="module")
def forced(tmp_path_factory, example_policy):
    return _compile(example_policy, tmp_path_factory.mktemp("p") / "OUT", "--progress")


@pytest.mark.slow
def test_forced_bars_name_every_long_stage(forced):
    for name in STAGES:
        assert f"rlcc-compile: {name}:" in forced.stderr, name
    assert "%|" in forced.stderr and "sim-ms" in forced.stderr
    assert "sampling the teacher" not in forced.stdout  # bars on stderr only


@pytest.mark.slow
def test_one_line_per_stage_when_stderr_is_not_a_terminal(tmp_path, example_policy):
    """A piped or CI log: no bars, but every stage says when it ended (the order they ran in)."""
    result = _compile(example_policy, tmp_path / "OUT")  # CliRunner's stderr is not a TTY
    assert "%|" not in result.stderr
    done = [m.group(1) for m in map(DONE.match, result.stderr.splitlines()) if m]
    assert done == list(STAGES)
    assert "rlcc-compile: [" in result.stdout  # the log lines stay
    assert "done in" not in _compile(example_policy, tmp_path / "NO", "--no-progress").stderr


class Recorder:
    """A Progress that keeps what every stage announced and advanced."""

    def __init__(self) -> None:
        self.stages: list[list] = []

    @contextlib.contextmanager
    def __call__(self, desc: str, unit: str):
        rec = [desc, 0.0, 0.0]
        self.stages.append(rec)

        class Counting(Stage):
            def add(self, total: float) -> None:
                rec[1] += total

            def advance(self, n: float) -> None:
                rec[2] += n

        yield Counting()


@pytest.mark.slow
def test_every_stage_advances_exactly_the_work_it_announced(tmp_path, example_policy, monkeypatch):
    """A bar that ends short of (or beyond) 100% misleads: announced == advanced, for every stage."""
    recorder = Recorder()
    monkeypatch.setattr(compile_module, "for_stderr", lambda quiet, show: recorder)
    _compile(example_policy, tmp_path / "OUT")
    assert [s[0] for s in recorder.stages] == list(STAGES)
    for desc, announced, advanced in recorder.stages:
        assert announced > 0 and advanced == pytest.approx(announced), desc


def test_stage_lines_name_the_stage_and_its_time():
    import io

    sink = io.StringIO()
    with lines(sink)("sampling the teacher", "sim-ms") as stage:
        stage.add(3)
        stage.advance(3)
    with pytest.raises(RuntimeError), lines(sink)("broken", "step"):
        raise RuntimeError("no 'done' for a stage that failed")
    assert [m.group(1) for m in map(DONE.match, sink.getvalue().splitlines()) if m] == ["sampling the teacher"]
    assert "broken" not in sink.getvalue()


@pytest.mark.slow
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
