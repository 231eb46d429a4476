"""The trees kind's escalation hooks: a judged miss gets the ladder's next rung as a new job, a
pass, a preview or an exhausted budget stops it, and the kept attempt's report records it all."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rlcc.distill import escalate
from rlcc.distill.closed_loop import ClosedLoop, ControllerRow
from rlcc.distill.gate import FidelityBar, judge
from rlcc.distill.select import CANDIDATE_GRID
from rlcc.kinds.base import Attempt, CompileRequest
from rlcc.kinds.trees.kind import TreesKind

POLICY = Path(__file__).resolve().parents[2] / "examples" / "rlcc_mlp.onnx"


@dataclasses.dataclass(frozen=True)
class Report:
    gate: object
    escalation: object = None


@dataclasses.dataclass(frozen=True)
class Result:
    report: Report


def _checked(firmware_queue: float):
    row = lambda q: ControllerRow(goodput=1.0, mean_latency_us=20.0, queue_delay_mean_us=q, drop_fraction=0.0)  # noqa: E731
    gate = judge([ClosedLoop("steady", 10.0, 0.5, {"many-to-one:64": {"teacher": row(10.0), "fixed_point": row(firmware_queue)}})],
                 FidelityBar())
    return (Result(Report(gate)), "plot")


def _attempt(job, queue: float, what: str = "default compile") -> Attempt:
    return Attempt(job, _checked(queue), None, None, Path("."), what, 1.0)


def test_a_miss_escalates_to_the_next_rung_and_a_pass_stops():
    kind = TreesKind()
    job = kind.prepare(CompileRequest(model=POLICY))
    step = kind.escalation(job, [_attempt(job, 11.0)])
    assert step is not None
    what, harder = step
    assert harder.options.candidates == len(CANDIDATE_GRID) and "wider validation" in what
    assert harder.options == escalate.ladder(job.options)[0].options
    assert kind.escalation(job, [_attempt(job, 10.0)]) is None  # passed
    quick = kind.prepare(CompileRequest(model=POLICY, quick=True))
    assert kind.escalation(quick, [_attempt(quick, 11.0)]) is None  # a preview is not judged
    none = kind.prepare(CompileRequest(model=POLICY, options={"escalation_budget": 0.0}))
    assert kind.escalation(none, [_attempt(none, 11.0)]) is None


def test_the_kept_attempt_reports_every_attempt():
    kind = TreesKind()
    job = kind.prepare(CompileRequest(model=POLICY))
    _, harder = kind.escalation(job, [_attempt(job, 11.0)])
    tried = [_attempt(job, 11.0), _attempt(harder, 10.2, "rung 1")]
    kept = min(tried, key=kind.rank)
    assert kept is tried[1]
    result, plot = kind.note_attempts(kept, tried)
    esc = result.report.escalation
    assert plot == "plot" and [a.kept for a in esc.attempts] == [False, True] and esc.stopped == "attempt 2 passed"
