"""The fidelity gate: does the compiled firmware behave like its teacher in closed loop?

The bar follows the paper's Table III (the distilled trees within 0.01 goodput and a few percent
latency of the MLP), stated separately for the equilibrium (flows start at their fair share) and
for the startup transient (line-rate start into the buffer), where a distilled policy is
expected to be rougher. Every check compares the fixed-point model (the shipped bits, through the
golden model) with the teacher on the same scenario.

The same normalized excess (a measured difference divided by its tolerance) ranks candidate
models during distillation (``rlcc.distill.select``), so the compiler optimizes the quantity
its gate judges.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from rlcc.errors import BadInputError

from rlcc.distill.closed_loop import ClosedLoop, ControllerRow
from rlcc.distill.settle import Settling, assess

STEADY, STARTUP = "steady", "startup"
# The verdict of a --quick compile: its short runs measure the same checks, but too roughly to
# ship on, so it never fails the command (rlcc-compile exits 0 and warns).
PREVIEW = "preview (--quick): fidelity not judged for shipping"


def preview_headline(misses: int, checks: int) -> str:
    """A preview's verdict in words, with how many checks a judged compile would fail."""
    return f"{PREVIEW}; " + (f"{misses} of {checks} checks would miss the bar" if misses else f"all {checks} checks within the bar")


@dataclasses.dataclass(frozen=True)
class FidelityBar:
    """Tolerances of firmware vs teacher. Percentages are of the teacher's value."""

    goodput: float = 0.01  # absolute goodput difference (fraction of line rate), Table III
    steady_pct: float = 3.0  # mean RTT and queue delay, equilibrium
    transient_pct: float = 10.0  # mean RTT and queue delay, startup transient
    drop_margin: float = 0.01  # dropped fraction of offered bytes: absolute floor of its tolerance (else the mode's %)
    queue_floor_us: float = 1.0  # queue tolerance never below this: a few packets at 100 Gb/s

    def validate(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not v >= 0 or v == float("inf"):
                raise BadInputError(f"{OPTION_NAMES.get(f.name, f.name)} (fidelity bar) must be a finite number >= 0, got {v}")

    def pct(self, mode: str) -> float:
        return self.steady_pct if mode == STEADY else self.transient_pct


# The rlcc-compile options that set the bar (error messages name what the user typed).
OPTION_NAMES = {"goodput": "--max-goodput-diff", "steady_pct": "--max-steady-pct", "transient_pct": "--max-transient-pct",
                "drop_margin": "--max-drop-diff"}


@dataclasses.dataclass(frozen=True)
class GateCheck:
    """One measured difference against its tolerance."""

    scenario: str  # e.g. "steady many-to-one:512"
    metric: str  # goodput | mean RTT | queue delay | drops
    teacher: float
    firmware: float
    difference: float  # firmware - teacher, in the tolerance's unit (fraction, % or absolute)
    tolerance: float
    unit: str

    @property
    def excess(self) -> float:
        """|difference| / tolerance: <= 1 passes."""
        if self.tolerance == 0:
            return 0.0 if self.difference == 0 else float("inf")
        return abs(self.difference) / self.tolerance

    @property
    def passed(self) -> bool:
        return self.excess <= 1.0


@dataclasses.dataclass(frozen=True)
class FidelityVerdict:
    bar: FidelityBar
    controller: str
    checks: tuple[GateCheck, ...]
    preview: bool = False  # measured by a --quick compile: reported, not judged
    settling: Settling | None = None  # the teacher's own settling (None: not measured)

    @property
    def unjudged(self) -> tuple[GateCheck, ...]:
        """Missed checks on scenarios where the teacher itself does not settle (a limit cycle has no
        equilibrium to be faithful to; its window means follow the cycle's phase and amplitude)."""
        if self.settling is None:
            return ()
        return tuple(c for c in self.checks if not c.passed and self.settling.cycles_in(c.scenario))

    @property
    def unsettled(self) -> bool:
        """Every miss is on a scenario where the teacher limit-cycles: not judged (exit 11)."""
        misses = [c for c in self.checks if not c.passed]
        return not self.preview and bool(misses) and len(self.unjudged) == len(misses)

    @property
    def verdict(self) -> str:
        """passed | failed | unsettled | preview: what the command does with it (exit 0, 8, 11, 0)."""
        if self.preview:
            return "preview"
        return "unsettled" if self.unsettled else "passed" if self.passed else "failed"

    @property
    def headline(self) -> str:
        """The verdict in words, the same in report.md, report.json and on the console."""
        if self.preview:
            return preview_headline(len(self.failures), len(self.checks))
        if self.unsettled:
            return (f"NOT JUDGED: {len(self.unjudged)} of {len(self.checks)} checks outside the bar, all where "
                    f"{self.settling.line()}")
        return "PASSED" if self.passed else f"FAILED ({len(self.failures)} of {len(self.checks)} checks outside the bar)"

    def console_line(self) -> str:
        """``headline`` with the check closest to (or furthest beyond) the bar."""
        w = self.worst
        worst = (f"worst {w.scenario} {w.metric} {w.difference:+.3g}{w.unit} (bar {w.tolerance:.3g}{w.unit})"
                 if w else "no closed-loop checks")
        if self.preview:
            return f"fidelity {self.headline}; {worst}"
        if self.unsettled:
            return f"fidelity gate not judged: {self.settling.line()}"
        return (f"fidelity gate {'passed' if self.passed else 'FAILED'}: {worst}"
                + ("" if self.passed else f", {len(self.failures)} of {len(self.checks)} checks outside the bar"))

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> tuple[GateCheck, ...]:
        return tuple(c for c in self.checks if not c.passed)

    @property
    def worst(self) -> GateCheck | None:
        return max(self.checks, key=lambda c: c.excess, default=None)

    def to_dict(self) -> dict:
        return {"bar": dataclasses.asdict(self.bar), "controller": self.controller, "passed": self.passed,
                "verdict": self.verdict, "headline": self.headline,
                "teacher_settling": self.settling.to_dict() if self.settling is not None else None,
                "checks": [{**dataclasses.asdict(c), "passed": c.passed} for c in self.checks]}


def row_checks(name: str, mode: str, teacher: ControllerRow, student: ControllerRow, bar: FidelityBar) -> list[GateCheck]:
    """The gate's four checks of one scenario (goodput, mean RTT, queue delay, drops)."""
    pct = bar.pct(mode)
    where = f"{mode} {name}"
    q_tol = max(pct, 100.0 * bar.queue_floor_us / teacher.queue_delay_mean_us) if teacher.queue_delay_mean_us > 0 else pct
    d_tol = max(bar.drop_margin, pct / 100.0 * teacher.drop_fraction)
    return [
        GateCheck(where, "goodput", teacher.goodput, student.goodput, student.goodput - teacher.goodput, bar.goodput, ""),
        GateCheck(where, "mean RTT", teacher.mean_latency_us, student.mean_latency_us,
                  100.0 * _rel(student.mean_latency_us, teacher.mean_latency_us), pct, "%"),
        GateCheck(where, "queue delay", teacher.queue_delay_mean_us, student.queue_delay_mean_us,
                  100.0 * _rel(student.queue_delay_mean_us, teacher.queue_delay_mean_us), q_tol, "%"),
        GateCheck(where, "drops", teacher.drop_fraction, student.drop_fraction,
                  student.drop_fraction - teacher.drop_fraction, d_tol, ""),
    ]


def judge(checks: Iterable[ClosedLoop], bar: FidelityBar, controller: str = "fixed_point",
          preview: bool = False) -> FidelityVerdict:
    """Every scenario of every closed-loop table, ``controller`` vs the teacher (``preview``: a
    --quick compile's measurement, reported but not judged)."""
    out: list[GateCheck] = []
    tables = list(checks)
    for table in tables:
        for name, row in table.scenarios.items():
            out += row_checks(name, table.mode, row["teacher"], row[controller], bar)
    return FidelityVerdict(bar, controller, tuple(out), preview, assess(tables))


def _rel(value: float, reference: float) -> float:
    if reference == 0:
        return 0.0 if value == 0 else float("inf")
    return value / reference - 1.0
