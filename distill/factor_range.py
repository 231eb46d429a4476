"""The rate factors the teacher can produce, which bound the firmware's factor clamp.

Boosted trees add leaves, so the student's sum can leave the teacher's range (a tanh policy with
gain 0.2 never exceeds 1.2, yet its trees reached the spec clamp 1.25 in probe cells). Clamping
the sum to the teacher's achievable range, intersected with the spec clamp, removes factors the
teacher could never apply. The range is analytic when the graph ends in a bounded activation
(Tanh, Sigmoid: its output range through the spec's action map), otherwise the extremes of the
teacher's factors over the sampled states (a student never needs more, though the teacher
might reach beyond them on states the sampling did not visit).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from rlcc.policy import OnnxPolicy

ANALYTIC, SAMPLED = "analytic", "sampled"


@dataclasses.dataclass(frozen=True)
class FactorRange:
    """The teacher's clamped factors lie in [min, max] (within the spec clamp)."""

    min: float
    max: float
    source: str  # ANALYTIC or SAMPLED
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def teacher_factor_range(policy: OnnxPolicy, obs: np.ndarray) -> FactorRange:
    """The analytic range of ``policy``'s factors if its output activation is bounded, else the
    range over ``obs`` (the sampled policy inputs); both after the spec's clamp."""
    spec = policy.spec
    a = spec.action
    mapping = f"the {a.map} map (gain {a.gain:g})" if a.type == "tanh" else "the identity (factor output)"
    if policy.output_activation is not None:
        op, lo, hi = policy.output_activation
        f = spec.output_to_factor(np.array([lo, hi]))  # monotone maps: the extremes go to the extremes
        return FactorRange(float(f.min()), float(f.max()), ANALYTIC, f"{op} output [{lo:g}, {hi:g}] through {mapping}")
    f = spec.output_to_factor(policy.predict_raw(obs))
    return FactorRange(float(f.min()), float(f.max()), SAMPLED,
                       f"extremes of the teacher's factors over {len(obs)} sampled states")
