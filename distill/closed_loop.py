"""Closed-loop measurements as typed records: teacher vs students, scenario by scenario.

``rlcc.distill.evaluate`` measures them, the fidelity gate (``rlcc.distill.gate``) judges them and
the compile report (``rlcc.distill.report_data``) carries them; they sit below all three.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class ControllerRow:
    """One controller's converged-window metrics on one scenario; diffs are vs the teacher
    (None on the teacher's own row)."""

    goodput: float
    mean_latency_us: float  # decision-weighted mean RTT
    queue_delay_mean_us: float  # time-averaged port queue delay
    drop_fraction: float  # dropped / offered bytes
    rate_swing: float = 0.0  # per-flow rate's coefficient of variation over the window (rlcc.distill.settle)
    goodput_diff: float | None = None
    latency_rel_diff: float | None = None
    queue_diff_us: float | None = None


@dataclasses.dataclass(frozen=True)
class ClosedLoop:
    """Teacher vs students on many-to-one incasts: ``scenarios[name][controller]``."""

    mode: str  # "startup" | "steady" (rlcc.distill.evaluate)
    duration_ms: float
    window_from: float  # fraction of the run where the measured window starts
    scenarios: dict[str, dict[str, ControllerRow]]
