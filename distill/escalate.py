"""A compile that tries harder before it gives up: when the fidelity gate misses, a fixed ladder
of stronger compiles, within a stated budget, and the best firmware kept.

Each rung is a whole compile with stronger options, so its firmware is what ``rlcc-verify
--policy`` rebuilds from the recipe the manifest records (the kept rung's options). The ladder
follows what the misses measured so far were caused by:

1. *wider validation, every candidate*: candidate selection ranked students on two incasts
   (256, 1024 flows) and did not foresee a miss at 2048; this rung validates the steady state
   on incasts that span the gate's whole range and beyond (``select.WIDE_VALIDATION_FLOWS``,
   other seeds, none of the gate's flow counts: the report's tables stay unseen) and ranks every
   candidate of the grid;
2. *more on-policy data*: two more on-policy rounds with twice the samples each (the student's
   own closed loop at the gate's flow counts, from line rate and from the fair share, other
   seeds), twice the teacher samples, on top of rung 1.

The budget is stated in default compiles (``--escalation-budget``, default 4: the ladder's
estimated work); rungs are taken in order while their estimated cost fits what is left, so which
rungs run depends on the options and the verdicts only, never on wall time (outputs stay
deterministic). The costs are estimates from the work each rung adds (candidates, validation
incasts, samples); measured once on a zoo policy (adpg_k2_seed1 before the fixed-point pin): the
two rungs together took 2.6 default compiles' wall time against 3.6 estimated.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from rlcc.distill.gate import FidelityVerdict
from rlcc.distill.select import CANDIDATE_GRID, WIDE_VALIDATION_FLOWS

DEFAULT_BUDGET = 4.0  # default compiles' worth of work the escalation may add


@dataclasses.dataclass(frozen=True)
class Rung:
    name: str  # what is tried, in words
    cost: float  # estimated work, in default compiles
    options: object  # rlcc.distill.pipeline.CompileOptions


def ladder(options) -> list[Rung]:
    """The rungs above ``options`` (each a superset of the one before; rungs that change nothing
    for these options are left out)."""
    wide = dataclasses.replace(options, candidates=len(CANDIDATE_GRID), validation_flows=WIDE_VALIDATION_FLOWS)
    more = dataclasses.replace(wide, onpolicy_rounds=options.onpolicy_rounds + 2,
                               onpolicy_samples=2 * options.onpolicy_samples, samples=2 * options.samples)
    rungs = [Rung(f"wider validation ({', '.join(map(str, WIDE_VALIDATION_FLOWS))} flows, other seeds) and all "
                  f"{len(CANDIDATE_GRID)} candidates", 1.4, wide),
             Rung(f"{more.onpolicy_rounds} on-policy rounds of {more.onpolicy_samples} decisions and "
                  f"{more.samples} teacher samples, with rung 1", 2.2, more)]
    out, last = [], options
    for r in rungs:
        if r.options != last:
            out.append(r)
            last = r.options
    return out


def rank(verdict: FidelityVerdict) -> tuple[int, int, float]:
    """Order of preference between attempts: passed first, then misses only where the teacher
    cycles, then fewer judged misses, then the smaller worst excess (ties: the earlier, cheaper
    attempt, by the caller's stable sort)."""
    worst = verdict.worst.excess if verdict.worst is not None else 0.0
    judged = len(verdict.failures) - len(verdict.unjudged)
    return (0 if verdict.passed else 1 if verdict.unsettled else 2, judged, round(worst, 9))


def should_escalate(verdict: FidelityVerdict) -> bool:
    """A judged miss: not a pass, not a preview, not misses only where the teacher cycles."""
    return not verdict.passed and not verdict.preview and not verdict.unsettled


def next_rung(options, verdicts: Sequence[FidelityVerdict], budget: float) -> Rung | None:
    """The next rung to try after ``verdicts`` (the attempts so far, the default compile first),
    or None: the last attempt passed or is not a judged miss, the ladder is done, or the next
    rung's cost does not fit the ``budget`` left."""
    if not should_escalate(verdicts[-1]):
        return None
    rungs = ladder(options)
    done = len(verdicts) - 1
    if done >= len(rungs):
        return None
    spent = sum(r.cost for r in rungs[:done])
    r = rungs[done]
    return r if spent + r.cost <= budget + 1e-9 else None


def _worst(v: FidelityVerdict) -> str:
    w = v.worst
    return f"{w.scenario} {w.metric} {w.difference:+.4g}{w.unit} (bar {w.tolerance:.3g}{w.unit})" if w else "-"


def record(options, verdicts: Sequence[FidelityVerdict], whats: Sequence[str], kept: int, budget: float):
    """The report's account of an escalation (``report_data.Escalation``), or None when the
    default compile was not a judged miss (nothing to escalate)."""
    from rlcc.distill.report_data import Escalation, EscalationAttempt

    if not should_escalate(verdicts[0]):
        return None
    rows = [EscalationAttempt(i + 1, what, v.headline, _worst(v), i == kept)
            for i, (v, what) in enumerate(zip(verdicts, whats))]
    rungs = ladder(options)
    done = len(verdicts) - 1
    if not should_escalate(verdicts[-1]):
        stopped = f"attempt {len(verdicts)} {'passed' if verdicts[-1].passed else 'was not a judged miss'}"
    elif done >= len(rungs):
        stopped = "every rung of the ladder was tried"
    else:
        left = budget - sum(r.cost for r in rungs[:done])
        stopped = (f"the next rung ({rungs[done].name}) costs about {rungs[done].cost:g} default compiles, "
                   f"{max(left, 0):g} of the budget of {budget:g} left (--escalation-budget)")
    return Escalation(budget, rows, stopped)
