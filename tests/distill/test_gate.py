"""The fidelity gate and candidate selection: the bar's arithmetic, and a weak model rejected
end to end with the documented exit code (a --quick preview reports it and exits 0)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rlcc.distill import pipeline as distill_pipeline  # the trees kind imports it on use: patched there
from rlcc.cli.compile import finish
from rlcc.kinds.base import Outcome
from rlcc.cli.compile import compile_command
from rlcc.distill import evaluate, select
from rlcc.distill.closed_loop import ClosedLoop, ControllerRow
from rlcc.distill.gate import OPTION_NAMES, PREVIEW, STARTUP, STEADY, FidelityBar, judge, row_checks
from rlcc.distill.report_data import Candidate
from rlcc.errors import BadInputError, ExitCode

TEACHER = ControllerRow(goodput=1.0, mean_latency_us=20.0, queue_delay_mean_us=100.0, drop_fraction=0.10)


def student(**kw) -> ControllerRow:
    base = dict(goodput=1.0, mean_latency_us=20.0, queue_delay_mean_us=100.0, drop_fraction=0.10)
    return ControllerRow(**{**base, **kw})


def by_metric(checks):
    return {c.metric: c for c in checks}


def test_each_measure_is_judged_against_its_own_tolerance():
    bar = FidelityBar()
    ok = by_metric(row_checks("m", STEADY, TEACHER, student(goodput=0.995, mean_latency_us=20.5, queue_delay_mean_us=97.5,
                                                           drop_fraction=0.109), bar))
    assert all(c.passed for c in ok.values())
    assert ok["mean RTT"].difference == pytest.approx(2.5) and ok["mean RTT"].tolerance == bar.steady_pct
    bad = by_metric(row_checks("m", STEADY, TEACHER, student(goodput=0.98, mean_latency_us=21.0, queue_delay_mean_us=104.0,
                                                            drop_fraction=0.112), bar))
    assert not any(c.passed for c in bad.values())
    assert bad["goodput"].excess == pytest.approx(2.0)
    assert bad["drops"].tolerance == pytest.approx(0.01)  # the floor: 3% of 0.10 is less
    # The transient's wider tolerance accepts what the steady state rejects; drops scale with it.
    wide = by_metric(row_checks("m", STARTUP, TEACHER, student(mean_latency_us=21.0, drop_fraction=0.109), bar))
    assert wide["mean RTT"].passed and wide["drops"].passed
    deep = ControllerRow(goodput=1.0, mean_latency_us=80.0, queue_delay_mean_us=1300.0, drop_fraction=0.55)
    drops = by_metric(row_checks("m", STARTUP, deep, student(drop_fraction=0.60), bar))["drops"]
    assert drops.tolerance == pytest.approx(0.055) and drops.passed


def test_small_queues_get_the_absolute_floor():
    tiny = ControllerRow(goodput=1.0, mean_latency_us=9.0, queue_delay_mean_us=5.0, drop_fraction=0.0)
    q = by_metric(row_checks("m", STEADY, tiny, student(queue_delay_mean_us=5.8, drop_fraction=0.0), FidelityBar()))["queue delay"]
    assert q.tolerance == pytest.approx(20.0) and q.passed  # 1 us of 5 us, not 3%


def test_judge_covers_every_row_and_reports_failures():
    rows = {"many-to-one:8": {"teacher": TEACHER, "fixed_point": student(mean_latency_us=30.0)},
            "many-to-one:64": {"teacher": TEACHER, "fixed_point": student()}}
    verdict = judge([ClosedLoop(STEADY, 10.0, 0.5, rows)], FidelityBar())
    assert len(verdict.checks) == 8 and not verdict.passed
    assert [(c.scenario, c.metric) for c in verdict.failures] == [("steady many-to-one:8", "mean RTT")]
    assert verdict.worst.difference == pytest.approx(50.0)
    assert json.loads(json.dumps(verdict.to_dict()))["passed"] is False


@pytest.mark.parametrize("field", sorted(OPTION_NAMES))
def test_bar_rejects_negative_and_nan(field):
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(BadInputError, match=OPTION_NAMES[field]):
            FidelityBar(**{field: bad}).validate()


def test_selection_prefers_lowest_score_then_earliest():
    c = [Candidate("a", {}, 1.5, ""), Candidate("b", {}, 0.7, ""), Candidate("c", {}, 0.7, "")]
    assert select.choose(c) == 1


def test_validation_suite_is_disjoint_from_the_report_scenarios():
    """Selection must not see the scenarios the report (and the gate) measure the chosen model on."""
    from rlcc.distill.pipeline import CompileOptions

    o = CompileOptions()
    report = {(n, o.seed) for n in o.eval_flows}
    for check in select.validation_checks(o.seed, o.steady_duration_ms, o.validation_startup_ms):
        assert not report & {(n, check["seed"]) for n in check["flows"]}
        assert not set(check["flows"]) & set(o.eval_flows)
    scenarios = [evaluate.eval_scenario(n, 10.0, c["seed"], c["mode"])
                 for c in select.validation_checks(0, 10.0, 20.0) for n in c["flows"]]
    assert len({(s.flows, s.seed, s.initial_rate) for s in scenarios}) == len(scenarios)


def test_candidate_grid_names_are_unique_and_first_is_default():
    names = [s.name for s in select.CANDIDATE_GRID]
    assert len(set(names)) == len(names)
    assert select.CANDIDATE_GRID[0].boost_power == 0


WEAK = ["--samples", "1500", "--scenarios", "many-to-one:2:8,many-to-one:16:12", "--trees", "1", "--depth", "1",
        "--candidates", "1", "--no-verify"]


@pytest.mark.slow
def test_a_quick_compile_previews_the_gate_and_exits_0(tmp_path, example_policy):
    """One tree of depth 1 (two factors) cannot follow the teacher; --quick says which checks a
    full compile would fail, in its own words everywhere, and exits 0 with one warning line."""
    out = tmp_path / "OUT"
    result = CliRunner().invoke(compile_command, [str(example_policy), "--quick", *WEAK, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"rlcc-compile: fidelity {PREVIEW}; " in result.stdout and "would miss the bar" in result.stdout
    warning = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warning == [line for line in result.stderr.splitlines() if "--quick" in line] and len(warning) == 1
    assert "error" not in result.stderr
    gate = json.loads((out / "report.json").read_text())["gate"]
    assert gate["verdict"] == "preview" and gate["passed"] is False and gate["headline"].startswith(PREVIEW)
    misses = [c for c in gate["checks"] if not c["passed"]]
    assert f"{len(misses)} of {len(gate['checks'])} checks would miss the bar" in gate["headline"]
    md = (out / "report.md").read_text()
    assert f"## Fidelity gate: {gate['headline']}" in md and f"| fidelity gate (closed loop vs teacher) | {gate['headline']} |" in md
    assert all(f"| {c['scenario']} | {c['metric']} |" in md for c in misses)
    # -q keeps the warning: it stands where a full compile's error would be.
    quiet = CliRunner().invoke(compile_command, [str(example_policy), "--quick", *WEAK, "-q", "-o", str(tmp_path / "Q")])
    assert quiet.exit_code == 0 and quiet.stderr.count("\n") == 1 and "--quick is a preview" in quiet.stderr


@pytest.mark.slow
def test_weak_model_is_rejected_with_the_fidelity_exit_code(tmp_path, example_policy, monkeypatch):
    """Without --quick the same miss exits 8 (output written, the report says why) and
    --accept-fidelity ships it with exit 0. The options are the quick sizes, judged (a full-size
    compile takes minutes)."""
    quick = distill_pipeline.CompileOptions.quick
    monkeypatch.setattr(distill_pipeline, "CompileOptions", lambda **kw: quick(**{**kw, "preview": False}))
    # quick runs are too short for the teacher to settle (its 6 ms steady run still swings): this
    # test is about a judged miss (the settling verdict: tests/distill/test_settle.py)
    from rlcc.distill import gate, settle
    monkeypatch.setattr(gate, "assess", lambda tables: settle.Settling({}))
    args = [str(example_policy), *WEAK, "--escalation-budget", "0"]  # the escalation: tests/distill/test_escalate.py
    out = tmp_path / "OUT"
    result = CliRunner().invoke(compile_command, [*args, "-o", str(out)])
    assert result.exit_code == int(ExitCode.FIDELITY), result.output
    assert "fidelity gate FAILED" in result.output and "--accept-fidelity" in result.output
    assert "preview" not in result.output
    report = json.loads((out / "report.json").read_text())
    assert report["gate"]["passed"] is False and report["gate"]["verdict"] == "failed"
    assert "## Fidelity gate: FAILED" in (out / "report.md").read_text()
    again = CliRunner().invoke(compile_command, [*args, "-o", str(tmp_path / "OK"), "--accept-fidelity"])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "OK" / "firmware.c").exists()


@pytest.mark.parametrize("preview, passed, code, warned", [
    (False, False, int(ExitCode.FIDELITY), False), (False, True, 0, False), (True, False, 0, True), (True, True, 0, True)])
def test_finish_exits_8_only_on_a_judged_miss(preview, passed, code, warned, capsys):
    """Every backend ends through ``finish``: a preview never exits 8, and always says it is one."""
    o = Outcome("trees", None, gate_passed=passed, preview=preview, wrote_line="rlcc-compile: wrote OUT")
    if code:
        with pytest.raises(SystemExit) as exc:
            finish(o, accept_fidelity=False, quiet=False)
        assert exc.value.code == code
    else:
        finish(o, accept_fidelity=False, quiet=False)
    assert ("--quick is a preview" in capsys.readouterr().err) == warned


def test_preview_verdict_words():
    rows = {"many-to-one:8": {"teacher": TEACHER, "fixed_point": student(mean_latency_us=30.0)}}
    tables = [ClosedLoop(STEADY, 10.0, 0.5, rows)]
    judged, preview = judge(tables, FidelityBar()), judge(tables, FidelityBar(), preview=True)
    assert (judged.verdict, preview.verdict) == ("failed", "preview")
    assert judged.checks == preview.checks and judged.passed is preview.passed is False
    assert judged.headline == "FAILED (1 of 4 checks outside the bar)"
    assert preview.headline == f"{PREVIEW}; 1 of 4 checks would miss the bar"
    assert preview.console_line().startswith(f"fidelity {PREVIEW}; 1 of 4") and "FAILED" not in preview.console_line()
    assert judge([ClosedLoop(STEADY, 10.0, 0.5, {"m": {"teacher": TEACHER, "fixed_point": student()}})], FidelityBar(),
                 preview=True).headline == f"{PREVIEW}; all 4 checks within the bar"


@pytest.mark.slow
def test_bar_options_reach_the_gate(tmp_path, example_policy):
    args = [str(example_policy), "--quick", "--samples", "1500", "--scenarios", "many-to-one:2:8", "--candidates", "1",
            "--no-verify", "--max-steady-pct", "1e9", "--max-transient-pct", "1e9", "--max-goodput-diff", "1",
            "--max-drop-diff", "1", "--trees", "1", "--depth", "1"]
    result = CliRunner().invoke(compile_command, [*args, "-o", str(tmp_path / "OUT")])
    assert result.exit_code == 0, result.output
    bad = CliRunner().invoke(compile_command, [*args[:-4], "--max-drop-diff", "-1", "-o", str(tmp_path / "BAD")])
    assert bad.exit_code == 3 and "--max-drop-diff" in bad.output and not (tmp_path / "BAD").exists()
