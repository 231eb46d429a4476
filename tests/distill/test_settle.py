"""The teacher's own settling (rlcc.distill.settle) and the gate's verdict for a teacher that
limit-cycles: reported, not judged, exit 11 (not a fidelity miss)."""

from __future__ import annotations

import types

import numpy as np
import pytest

from rlcc.distill import settle
from rlcc.distill.closed_loop import ClosedLoop, ControllerRow
from rlcc.distill.gate import FidelityBar, judge
from rlcc.errors import ExitCode
from rlcc.kinds.base import Outcome


def _result(rates: np.ndarray, duration_ms: float = 10.0, converged_from: float = 0.5):
    t = np.linspace(0.0, duration_ms * 1e3, len(rates))
    scenario = types.SimpleNamespace(duration_ms=duration_ms, converged_from=converged_from)
    return types.SimpleNamespace(series={"t_us": t, "rates": rates}, scenario=scenario)


def test_rate_swing_is_zero_for_constant_rates_and_the_cv_of_a_cycle():
    n = 4001
    assert settle.rate_swing(_result(np.full((n, 3), 0.25))) == 0.0
    phase = np.linspace(0, 200 * np.pi, n)
    cycle = 0.5 * (1 + 0.3 * np.sin(phase))[:, None] * np.ones((1, 2))
    # a sine of relative amplitude a has std/mean a / sqrt(2)
    assert settle.rate_swing(_result(cycle)) == pytest.approx(0.3 / np.sqrt(2), rel=2e-3)


def test_rate_swing_reads_only_the_measured_window():
    n = 2001
    rates = np.full((n, 1), 0.1)
    rates[: n // 2 - 10] = np.linspace(1.0, 0.1, n // 2 - 10)[:, None]  # the drain before the window
    assert settle.rate_swing(_result(rates)) < 1e-12


def _row(swing: float, queue: float = 10.0) -> ControllerRow:
    return ControllerRow(goodput=1.0, mean_latency_us=20.0, queue_delay_mean_us=queue, drop_fraction=0.0,
                         rate_swing=swing)


def _table(mode: str, teacher_swing: float, firmware_queue: float = 10.0) -> ClosedLoop:
    return ClosedLoop(mode, 10.0, 0.5, {"many-to-one:64": {"teacher": _row(teacher_swing),
                                                           "fixed_point": _row(0.0, firmware_queue)}})


def test_assess_reads_the_steady_tables_only():
    s = settle.assess([_table("steady", 0.01), _table("startup", 0.9)])
    assert s.settled and list(s.swings) == ["steady many-to-one:64"]
    s = settle.assess([_table("steady", settle.RATE_SWING_MAX + 0.01)])
    assert not s.settled and "does not settle" in s.line() and "steady many-to-one:64" in s.line()


def test_misses_only_where_the_teacher_cycles_are_not_judged_and_exit_11():
    v = judge([_table("steady", 0.4, firmware_queue=20.0)], FidelityBar())
    assert v.unsettled and v.verdict == "unsettled" and not v.passed and len(v.unjudged) == 1
    assert v.headline.startswith("NOT JUDGED") and "not judged" in v.console_line()
    assert v.to_dict()["teacher_settling"]["settled"] is False
    out = Outcome("trees", None, gate_passed=v.passed, unsettled=v.unsettled)
    assert out.exit_code(accept_fidelity=False) == ExitCode.UNSETTLED == 11
    assert out.exit_code(accept_fidelity=True) == ExitCode.OK
    # the same miss with a settled teacher is a fidelity miss (exit 8)
    v = judge([_table("steady", 0.0, firmware_queue=20.0)], FidelityBar())
    assert v.verdict == "failed"
    assert Outcome("trees", None, gate_passed=v.passed, unsettled=v.unsettled).exit_code(False) == ExitCode.FIDELITY


def test_a_pass_is_a_pass_and_a_startup_miss_reads_the_steady_run_of_its_incast():
    assert judge([_table("steady", 0.4)], FidelityBar()).verdict == "passed"  # tracked, cycle or not
    v = judge([_table("steady", 0.4), _table("startup", 0.0, firmware_queue=20.0)], FidelityBar())
    assert v.verdict == "unsettled"
    v = judge([_table("steady", 0.0), _table("startup", 0.0, firmware_queue=20.0)], FidelityBar())
    assert v.verdict == "failed"
    # one miss where the teacher settles makes it a fidelity miss
    cycling = ClosedLoop("steady", 10.0, 0.5, {"many-to-one:64": {"teacher": _row(0.4), "fixed_point": _row(0.0, 20.0)},
                                               "many-to-one:512": {"teacher": _row(0.0), "fixed_point": _row(0.0, 20.0)}})
    v = judge([cycling], FidelityBar())
    assert v.verdict == "failed" and [c.scenario for c in v.unjudged] == ["steady many-to-one:64"]


def test_a_preview_is_a_preview_even_for_an_unsettled_teacher():
    v = judge([_table("steady", 0.4, firmware_queue=20.0)], FidelityBar(), preview=True)
    assert v.verdict == "preview" and not v.unsettled
