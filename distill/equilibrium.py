"""The teacher's equilibrium, and where the student gets linear terms (ramps) around it.

A settled flow sees the same RTT step after step and applies factors near 1: its window is
close to the teacher's fixed point, the window whose steps are all equal, with previous factor 1
and no CNP/NACK, at which the teacher answers exactly 1. The closed-loop equilibrium (standing
queue, RTT) is decided by how the policy's factor crosses 1 there, and a student that is a
staircase across that point dithers between two steps (measured: 6x the teacher's queue
oscillation at 2048 flows) and settles elsewhere. So the student gets one ramp per input of the
two newest steps whose feature declares an equilibrium half-width (``FeatureDef
.equilibrium_half_width``: delta and the previous factor), centered on the fixed point.

The fixed point is found on the teacher itself: the RTT at which its factor crosses 1, by
bisection, at a mid-sized incast's fair-share rate. The slopes (below and above the center, per
input) are the least-squares linearization of the teacher over the box of all ramp intervals,
fitted on the closed-loop samples inside the box, weighted by the time each decision governs:
the loop's own distribution there has correlated inputs (delta[t] and delta[t-1] move together,
the previous factor follows delta), and a fit on it is what the loop feels. Measured on the
bundled example, compile seeds 0..4: a closed-loop fit put the float student's worst steady and
startup difference at 0.10..0.61 of the fidelity bar; uniform samples left the firmware 1.3..3.8%
low in steady RTT (measured before the rate update carried its fraction, which explains part of
it: ``rlcc.formats.CTX_RATE_CARRY_SHIFT``). With too few closed-loop
samples in the box (a teacher the sampling never settled) the box is sampled uniformly instead
(teacher-labelled, every other input at its fixed-point value), so the fit stays well posed.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.distill.fit import FitResult, _spd_solve, shift_bias
from rlcc.distill.sampling import PREV, RATE, RAW_FIELDS, RTT, device_inputs, float_inputs
from rlcc.fxp import golden
from rlcc.fxp.model import FxModel
from rlcc.spec import ObservationSpec
from rlcc.tree_ir import FloatRamp

FactorFn = Callable[[np.ndarray], np.ndarray]

FAIR_SHARE_FLOWS = 64  # the rate of the fixed-point window: 1/64 of line rate
MAX_INFLATION = 4000.0  # RTT search range: base RTT .. 4000 x base (a full 32 MB buffer at 8 us)
BISECTION_STEPS = 60
CROSSING_GRID = 512  # log-spaced RTTs scanned for the teacher's first downward crossing of 1
BOX_SAMPLES = 8192  # uniform teacher-labelled samples of the box for the slopes (fallback)
MIN_LOOP_SAMPLES = 512  # closed-loop samples in the box needed to fit on them
SLOPE_RIDGE = 1e-9  # relative ridge of the normal equations (only guards a degenerate box)


@dataclasses.dataclass(frozen=True)
class RampSite:
    """Where a ramp goes: window input ``input`` around ``center`` (the teacher's fixed-point
    value of that input, scaled), linear within ``center -+ half_width``."""

    input: int
    center: float
    half_width: float


@dataclasses.dataclass(frozen=True)
class Equilibrium:
    """The teacher's fixed point: its RTT (ns) at the fair-share rate, the float policy inputs of
    that window, and the ramp sites derived from it (empty if the teacher has no such point)."""

    rtt_ns: float | None
    obs: np.ndarray | None
    sites: tuple[RampSite, ...]
    reason: str  # why there are no sites ("" when there are)

    def ramps(self, teacher: FactorFn, seed: int, obs: np.ndarray | None = None, label: np.ndarray | None = None,
              weight: np.ndarray | None = None) -> tuple[FloatRamp, ...]:
        """The ramps at ``sites``, slopes fitted on the samples ``obs`` (teacher inputs), ``label``
        (teacher factors), ``weight`` inside the box, or on uniform box samples if fewer than
        ``MIN_LOOP_SAMPLES`` are inside (module doc)."""
        if not self.sites:
            return ()
        if obs is not None:
            inside = self.in_box(obs)
            if np.count_nonzero(inside) >= MIN_LOOP_SAMPLES:
                w = None if weight is None else np.asarray(weight, dtype=np.float64)[inside]
                return fit_ramps(obs[inside], np.asarray(label, dtype=np.float64)[inside], self.sites, w)
        rng = np.random.default_rng(seed)
        obs = np.repeat(self.obs[None, :].astype(np.float32), BOX_SAMPLES, axis=0)
        for s in self.sites:
            obs[:, s.input] = (s.center + rng.uniform(-s.half_width, s.half_width, BOX_SAMPLES)).astype(np.float32)
        return fit_ramps(obs, np.asarray(teacher(obs), dtype=np.float64), self.sites)


    def in_box(self, obs: np.ndarray) -> np.ndarray:
        """Which rows of ``obs`` lie inside every ramp's interval."""
        inside = np.ones(len(obs), dtype=bool)
        for s in self.sites:
            inside &= np.abs(np.asarray(obs[:, s.input], dtype=np.float64) - s.center) < s.half_width
        return inside


def _window(spec: ObservationSpec, rtt_ns: np.ndarray) -> np.ndarray:
    raw = np.zeros((len(rtt_ns), spec.history, len(RAW_FIELDS)))
    raw[:, :, RTT] = np.asarray(rtt_ns, dtype=np.float64)[:, None]
    raw[:, :, RATE] = 1.0 / FAIR_SHARE_FLOWS
    raw[:, :, PREV] = 1.0
    return raw


def find(teacher: FactorFn, spec: ObservationSpec) -> Equilibrium:
    """The teacher's fixed point and the ramp sites around it (see the module doc)."""
    base = float(spec.reward.base_rtt_ns)
    sites_wanted = ramp_inputs(spec)
    if not sites_wanted:
        return Equilibrium(None, None, (), "no feature of the spec declares an equilibrium interval")
    lo, hi = np.log(base), np.log(base * MAX_INFLATION)
    f_lo, f_hi = (float(teacher(float_inputs(spec, _window(spec, np.exp([v]))))[0]) for v in (lo, hi))
    if not (f_lo >= 1.0 >= f_hi):
        return Equilibrium(None, None, (), f"the teacher's factor does not cross 1 between the base RTT and "
                                           f"{MAX_INFLATION:g}x it (factor {f_lo:.4f} .. {f_hi:.4f})")
    lo, hi = _first_crossing(teacher, spec, lo, hi)
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if float(teacher(float_inputs(spec, _window(spec, np.exp([mid]))))[0]) >= 1.0:
            lo = mid
        else:
            hi = mid
    rtt = float(np.exp(lo))
    obs = float_inputs(spec, _window(spec, np.array([rtt])))[0]
    sites = tuple(RampSite(j, float(np.float32(obs[j])), width) for j, width in sites_wanted)
    return Equilibrium(rtt, obs, sites, "")


def _first_crossing(teacher: FactorFn, spec: ObservationSpec, lo: float, hi: float) -> tuple[float, float]:
    """The bracket (log RTT) of the lowest RTT where the factor falls below 1: the equilibrium a
    flow reaches as its queue grows from empty. A teacher that crosses 1 once (monotone, e.g. the
    MLPs) keeps the whole range as its bracket; one that crosses several times (a recurrent
    teacher's window view, run open loop, can swing back above 1 past its equilibrium) gets the
    grid cell of its first downward crossing, not whichever crossing bisection would land on."""
    grid = np.linspace(lo, hi, CROSSING_GRID)
    above = np.asarray(teacher(float_inputs(spec, _window(spec, np.exp(grid)))), dtype=np.float64) >= 1.0
    down = np.flatnonzero(above[:-1] & ~above[1:])
    ups = np.count_nonzero(~above[:-1] & above[1:])
    if len(down) <= 1 and ups == 0:
        return lo, hi
    return float(grid[down[0]]), float(grid[down[0] + 1])


def ramp_inputs(spec: ObservationSpec) -> list[tuple[int, float]]:
    """(input index, half-width in the scaled input's units) of every input that gets a ramp:
    the newest two steps of each feature with an equilibrium half-width."""
    out = []
    for ago in range(min(2, spec.history)):
        for f, feat in enumerate(spec.features):
            width = vocab.get(feat.name).equilibrium_half_width
            if width is not None:
                out.append((spec.input_index(ago, f), abs(feat.scale) * float(width(spec.reward))))
    return sorted(out)


def fit_ramps(x: np.ndarray, y: np.ndarray, sites: tuple[RampSite, ...],
              weight: np.ndarray | None = None) -> tuple[FloatRamp, ...]:
    """Ramps at ``sites`` whose slopes (two per site) and a constant (dropped: the trees' bias
    takes it) are the (``weight``-ed) least-squares fit of ``y`` on inputs ``x``; the knots are
    float32 values."""
    f32 = lambda v: float(np.float32(v))  # noqa: E731 - the inputs are float32: so are the ramp's knots
    shells = [FloatRamp(s.input, f32(s.center - s.half_width), f32(s.center), f32(s.center + s.half_width), 1.0, 1.0)
              for s in sites]
    cols = [np.ones(len(y))]
    for r in shells:
        d = np.clip(np.asarray(x[:, r.input], dtype=np.float64), r.lo, r.hi) - r.center
        cols += [np.minimum(d, 0.0), np.maximum(d, 0.0)]
    a = np.column_stack(cols)
    n = a.shape[1]
    # normal equations by element-wise sums: no BLAS, so the same bits on every machine
    w = np.ones(len(y)) if weight is None else np.asarray(weight, dtype=np.float64)
    gram = np.array([[np.sum(w * a[:, i] * a[:, j]) for j in range(n)] for i in range(n)])
    rhs = np.array([np.sum(w * a[:, i] * y) for i in range(n)])
    coef = _spd_solve(gram + SLOPE_RIDGE * np.trace(gram) / n * np.eye(n), rhs)
    return tuple(dataclasses.replace(r, slope_below=float(coef[1 + 2 * k]), slope_above=float(coef[2 + 2 * k]))
                 for k, r in enumerate(shells))


def pin(fit: FitResult, model: FxModel, student: ObservationSpec, eq: Equilibrium,
        teacher: FactorFn) -> tuple[FitResult, FxModel, dict]:
    """The student shifted (its bias) so that at the teacher's fixed point it answers exactly
    what the teacher answers: the float ensemble to float precision, the fixed-point model to the
    LSB at the device's integer inputs of that window.

    A settled loop sits where the factor crosses 1 along equal windows, and there the student's
    net gain is small (the newest and the previous delta enter with opposite signs), so a small
    offset at the center moves the whole equilibrium: measured +0.00055 (36 LSB) at the fixed
    point of the bundled example's firmware, +0.0013 on a zoo policy; a zoo policy missed the
    gate with its steady mean RTT 3.4% below the teacher's at 512 flows. The least-squares fit
    does not hold the center exactly; this does. Returns the shifted pair and what was done
    (recorded in the model's provenance)."""
    raw = _window(student, np.array([eq.rtt_ns]))
    want = float(np.asarray(teacher(float_inputs(student, raw)), dtype=np.float64)[0])
    got = float(fit.ensemble.predict(student.student_obs(float_inputs(student, raw)))[0])
    fit = shift_bias(fit, want - got)
    total = int(golden.eval_trees(model, device_inputs(student, raw))[0][0])
    target = int(np.rint(want * fmt.FACTOR_ONE))
    info = {"rtt_ns": round(eq.rtt_ns, 3), "teacher_factor": round(want, 9), "float_shift": round(want - got, 9),
            "fixed_shift_lsb": target - total}
    model = dataclasses.replace(model, bias=model.bias + (target - total),
                                provenance={**model.provenance, "pinned_at_fixed_point": info})
    return fit, model, info
