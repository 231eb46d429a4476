"""Candidate selection: fit several students on the final training set, keep the one that
behaves most like the teacher in closed loop on a validation suite.

Open-loop error (RMSE on sampled states) ranks students poorly: the equilibrium a policy settles
at depends on where its factor crosses 1 near delta = 0, the startup transient on how hard it
cuts in deep congestion, and a leaf weighting that serves one hurts the other (measured: time-
weighted leaves shrink the transient gap and widen the steady one). So candidates differ in the
learning rate and in how strongly samples are weighted by the time their decision governs, and
the closed loop decides, scored with the fidelity gate's own normalized excess. The validation
scenarios (flow counts, seeds) are disjoint from the report's closed-loop tables, which stay an
unbiased measurement of the chosen model.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from rlcc.distill import evaluate
from rlcc.distill.closed_loop import ClosedLoop
from rlcc.distill.gate import FidelityBar, GateCheck, row_checks
from rlcc.distill.report_data import Candidate

# Validation incasts: flow counts between and beyond the report's (64, 512, 2048), other seeds.
VALIDATION_FLOWS = (256, 1024)
# The escalation's steady-state validation (rlcc.distill.escalate): flow counts spanning the gate's
# whole range and beyond it at both ends (the gate: 64, 512, 2048; the suite: 64 and 240), still
# none of the gate's counts.
WIDE_VALIDATION_FLOWS = (32, 128, 384, 1024, 3072)
VALIDATION_SEED_OFFSET = 1000


@dataclasses.dataclass(frozen=True)
class CandidateSetting:
    """How one candidate is fitted: CatBoost's learning rate and the power of the time weight
    (RTT / base RTT) applied to each sample, in the joint leaf refit and (``boost``) in boosting."""

    learning_rate: float
    leaf_power: float
    boost_power: float = 0.0

    @property
    def name(self) -> str:
        return f"lr{self.learning_rate:g}-leaf{self.leaf_power:g}-boost{self.boost_power:g}"


# Ordered: --candidates N fits the first N; the first is the single-candidate default.
CANDIDATE_GRID: tuple[CandidateSetting, ...] = (
    CandidateSetting(0.5, 1.0),
    CandidateSetting(0.8, 1.0),
    CandidateSetting(0.5, 0.5),
    CandidateSetting(0.5, 1.0, 0.5),
    CandidateSetting(0.3, 1.0),
    CandidateSetting(0.8, 0.5),
    CandidateSetting(0.3, 0.5),
    CandidateSetting(0.5, 0.5, 1.0),
)


def validation_checks(seed: int, steady_ms: float, startup_ms: float,
                      steady_flows: Sequence[int] = VALIDATION_FLOWS) -> list[dict]:
    """The validation suite as ``evaluate.closed_loops`` checks of the float trees (``steady_flows``:
    the steady-state incasts; the startup ones are always ``VALIDATION_FLOWS``)."""
    s = seed + VALIDATION_SEED_OFFSET
    return [
        {"flows": tuple(steady_flows), "duration_ms": steady_ms, "seed": s, "mode": evaluate.STEADY,
         "controllers": ("float_trees",)},
        {"flows": VALIDATION_FLOWS, "duration_ms": startup_ms, "seed": s, "mode": evaluate.STARTUP, "controllers": ("float_trees",)},
    ]


def suite_names(checks: Sequence[dict]) -> list[str]:
    return [f"{c['mode']} many-to-one:{n} ({c['duration_ms']:g} ms, seed {c['seed']})" for c in checks for n in c["flows"]]


def score(tables: Sequence[ClosedLoop], bar: FidelityBar) -> tuple[float, GateCheck | None]:
    """Worst normalized excess of the float trees over the tables (the gate's measure)."""
    checks = [c for t in tables for name, row in t.scenarios.items()
              for c in row_checks(name, t.mode, row["teacher"], row["float_trees"], bar)]
    worst = max(checks, key=lambda c: c.excess, default=None)
    return (round(worst.excess, 6) if worst else 0.0), worst


def describe(setting: CandidateSetting, tables: Sequence[ClosedLoop], bar: FidelityBar) -> Candidate:
    value, worst = score(tables, bar)
    where = f"{worst.scenario} {worst.metric} {worst.difference:+.4g}{worst.unit}" if worst else "-"
    return Candidate(setting.name, dataclasses.asdict(setting), value, where)


def choose(candidates: Sequence[Candidate]) -> int:
    """Index of the best score; ties go to the earlier (simpler, default-first) candidate."""
    return min(range(len(candidates)), key=lambda i: (candidates[i].score, i))
