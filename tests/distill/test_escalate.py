"""The escalation ladder (rlcc.distill.escalate): which rung follows which verdicts within the
budget, how attempts rank, and what the report says about why it stopped."""

from __future__ import annotations

import dataclasses

from rlcc.distill import escalate, select
from rlcc.distill.closed_loop import ClosedLoop, ControllerRow
from rlcc.distill.gate import FidelityBar, judge
from rlcc.distill.pipeline import CompileOptions
from rlcc.distill.select import CANDIDATE_GRID


def _verdict(firmware_queue: float, teacher_swing: float = 0.0, preview: bool = False):
    def row(q, swing=0.0):
        return ControllerRow(goodput=1.0, mean_latency_us=20.0, queue_delay_mean_us=q, drop_fraction=0.0, rate_swing=swing)
    table = ClosedLoop("steady", 10.0, 0.5, {"many-to-one:64": {"teacher": row(10.0, teacher_swing),
                                                                "fixed_point": row(firmware_queue)}})
    return judge([table], FidelityBar(), preview=preview)


PASS, MISS, WORSE = _verdict(10.1), _verdict(11.0), _verdict(13.0)


def test_the_ladder_widens_validation_then_adds_on_policy_data():
    o = CompileOptions()
    wide, more = escalate.ladder(o)
    assert wide.options.candidates == len(CANDIDATE_GRID)
    assert wide.options.validation_flows == select.WIDE_VALIDATION_FLOWS
    assert not set(wide.options.validation_flows) & set(o.eval_flows)  # the report's tables stay unseen
    assert min(wide.options.validation_flows) < min(o.eval_flows) and max(wide.options.validation_flows) > max(o.eval_flows)
    assert more.options.onpolicy_rounds == o.onpolicy_rounds + 2 and more.options.samples == 2 * o.samples
    assert more.options.validation_flows == wide.options.validation_flows  # a superset of rung 1
    wide.options.validate()
    more.options.validate()
    # a rung that changes nothing is left out
    assert len(escalate.ladder(wide.options)) == 1


def test_next_rung_follows_the_verdicts_and_the_budget():
    o = CompileOptions()
    rungs = escalate.ladder(o)
    assert escalate.next_rung(o, [PASS], 4.0) is None
    assert escalate.next_rung(o, [MISS], 4.0) == rungs[0]
    assert escalate.next_rung(o, [MISS, MISS], 4.0) == rungs[1]
    assert escalate.next_rung(o, [MISS, MISS, MISS], 100.0) is None  # the ladder is done
    assert escalate.next_rung(o, [MISS, MISS], rungs[0].cost) is None  # rung 2 does not fit
    assert escalate.next_rung(o, [MISS], 0.0) is None
    assert escalate.next_rung(o, [_verdict(11.0, teacher_swing=0.5)], 4.0) is None  # nothing to track
    assert escalate.next_rung(o, [_verdict(11.0, preview=True)], 4.0) is None


def test_attempts_rank_pass_first_then_fewer_misses_then_smaller_excess():
    ranked = sorted([WORSE, MISS, PASS], key=escalate.rank)
    assert ranked == [PASS, MISS, WORSE]


def test_the_record_says_what_was_tried_and_why_it_stopped():
    o = CompileOptions()
    assert escalate.record(o, [PASS], ["default compile"], 0, 4.0) is None
    rec = escalate.record(o, [MISS, PASS], ["default compile", "rung 1"], 1, 4.0)
    assert [a.kept for a in rec.attempts] == [False, True] and rec.stopped == "attempt 2 passed"
    rec = escalate.record(o, [MISS, MISS], ["default compile", "rung 1"], 0, escalate.ladder(o)[0].cost)
    assert "budget" in rec.stopped and rec.attempts[0].kept
    rec = escalate.record(o, [MISS, MISS, WORSE], ["a", "b", "c"], 0, 10.0)
    assert rec.stopped == "every rung of the ladder was tried"


def test_old_recipes_without_the_validation_flows_still_load():
    data = CompileOptions().to_dict()
    del data["validation_flows"]
    assert CompileOptions.from_dict(data) == CompileOptions()
    bad = dataclasses.replace(CompileOptions(), validation_flows=(64,))
    try:
        bad.validate()
    except Exception as exc:  # BadInputError: the gate's own flow count
        assert "report's flow counts" in str(exc)
    else:
        raise AssertionError("validation on a gate flow count was accepted")
