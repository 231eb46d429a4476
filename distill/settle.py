"""Does the teacher itself settle? The fidelity gate can only ask firmware to track a teacher
whose closed loop reaches an equilibrium, so a check the firmware misses where the teacher itself
limit-cycles is reported, not judged (``rlcc.distill.gate``: all misses there, exit 11).

A teacher that limit-cycles (rates and queue swinging by tens of percent forever) has no
equilibrium to match: its window means depend on the phase the measurement happens to catch,
and a student that tracks it perfectly in open loop still lands elsewhere. The measure is each
flow's rate over the measured (converged) window: its coefficient of variation, averaged over
the simulator's sampled flows. Measured on the zoo (examples/zoo, bench/results/zoo.json):
several trained policies settle (0.000-0.012) and several run a synchronized cycle of 0.10-0.16 at
64 flows (an under-trained one also 0.07 at 2048, where its firmware then misses the queue by 18%);
the hand-made bang-bang and momentum controllers swing 0.39-0.46 everywhere; the synthetic PD
controller 0.29 at 64 flows, 0.17 at 512 and 0.02 at 2048.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

import numpy as np

from rlcc.distill.closed_loop import ClosedLoop

# A flow whose rate varies by more than this over the window (std / mean) has not settled: the
# bundled policies sit at 0.000; a policy dithering around its equilibrium by a step or two of its
# factor stays near 0.01-0.02; the zoo's synchronized cycles reach 0.06-0.16 and its hard
# controllers 0.29-0.46.
RATE_SWING_MAX = 0.05


def rate_swing(result) -> float:
    """Mean over the sampled flows of std/mean of the flow's rate in the converged window of a
    ``rlcc.simulator.engine.SimResult`` (0 for a run without series in its window)."""
    s = result.series
    t = np.asarray(s["t_us"], dtype=np.float64)
    rates = np.asarray(s["rates"], dtype=np.float64)
    if len(t) == 0 or rates.ndim != 2:
        return 0.0
    inside = t >= result.scenario.duration_ms * 1e3 * result.scenario.converged_from
    w = rates[inside]
    if len(w) < 2:
        return 0.0
    mean = w.mean(axis=0)
    live = mean > 0
    if not np.any(live):
        return 0.0
    return float(np.mean(w.std(axis=0)[live] / mean[live]))


@dataclasses.dataclass(frozen=True)
class Settling:
    """The teacher's rate swing on every steady-state scenario of the gate."""

    swings: dict[str, float]  # scenario -> the teacher's rate swing
    limit: float = RATE_SWING_MAX

    @property
    def unsettled(self) -> dict[str, float]:
        return {k: v for k, v in self.swings.items() if v > self.limit}

    @property
    def settled(self) -> bool:
        return not self.unsettled

    def cycles_in(self, scenario: str) -> bool:
        """True if the teacher limit-cycles in ``scenario`` (a gate check's scenario name); a
        startup check reads the steady run of the same incast (its measured second half is where
        the same cycle shows)."""
        if scenario in self.unsettled:
            return True
        mode, _, name = scenario.partition(" ")
        return mode == "startup" and f"steady {name}" in self.unsettled

    def line(self) -> str:
        """One sentence: where the teacher does not settle, or its largest swing."""
        if not self.swings:
            return "no steady-state scenarios measured"
        if self.settled:
            name, v = max(self.swings.items(), key=lambda kv: kv[1])
            return f"the teacher settles: largest rate swing {v:.3f} ({name}), limit {self.limit:g}"
        items = ", ".join(f"{k} {v:.2f}" for k, v in sorted(self.unsettled.items(), key=lambda kv: -kv[1]))
        return (f"the teacher does not settle (a limit cycle: per-flow rate swing above {self.limit:g}) on "
                f"{len(self.unsettled)} of {len(self.swings)} steady-state scenarios: {items}")

    def to_dict(self) -> dict:
        return {"limit": self.limit, "settled": self.settled, "swings": dict(self.swings)}


def assess(tables: Iterable[ClosedLoop]) -> Settling:
    """The teacher's settling on every steady-state table's scenarios (the startup tables measure
    a transient: a swing there is the drain, not a limit cycle)."""
    swings = {}
    for table in tables:
        if table.mode != "steady":
            continue
        for name, row in table.scenarios.items():
            swings[f"{table.mode} {name}"] = row["teacher"].rate_swing
    return Settling(swings)
