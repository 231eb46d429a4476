"""The window of a tree student distilled from a recurrent teacher, chosen by validation.

A recurrent teacher's action depends on its whole input history through its state; a tree
student sees the last ``k`` steps, which the device keeps in the per-flow context. Every
``k`` the context can hold is tried: plain trees under the compile's budget are fitted on the
teacher's closed-loop decisions seen through a ``k``-step window and scored on held-out
decisions (labels: the recurrent teacher's own actions along its trajectory). The shortest
window within ``WINDOW_TOLERANCE`` of the best held-out RMSE wins: a longer window costs context
bytes and split candidates for no measurable gain.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc import formats as fmt
from rlcc.distill.fit import FitConfig, fit_student
from rlcc.distill.sampling import Samples
from rlcc.spec import MAX_HISTORY, ObservationSpec

WINDOW_TOLERANCE = 0.05  # relative held-out RMSE a shorter window may give up
FIXED_CTX_BYTES = fmt.CTX_HISTORY * 4  # context words before the history window


@dataclasses.dataclass(frozen=True)
class WindowCandidate:
    k: int
    context_bytes: int  # per-flow context the window student uses (of fmt.CTX_BYTES)
    held_out_rmse: float


@dataclasses.dataclass(frozen=True)
class WindowChoice:
    """Report record: the chosen window and every candidate's validation score."""

    k: int
    max_k: int
    tolerance: float
    candidates: list[WindowCandidate]
    reason: str


def max_window(spec: ObservationSpec) -> int:
    """The longest window whose past steps fit the context's history words."""
    return max(k for k in range(1, MAX_HISTORY + 1) if (k - 1) * spec.n_features <= fmt.CTX_HISTORY_WORDS)


def context_bytes(spec: ObservationSpec, k: int) -> int:
    return FIXED_CTX_BYTES + 4 * (k - 1) * spec.n_features


def sub_window(samples: Samples, spec: ObservationSpec, k: int) -> Samples:
    """The samples seen through the last ``k`` steps of their ``spec.history``-step windows."""
    small = dataclasses.replace(spec, history=k)
    cols = np.empty(small.input_width, dtype=np.int64)
    for ago in range(k):
        for f in range(spec.n_features):
            cols[small.input_index(ago, f)] = spec.input_index(ago, f)
    return dataclasses.replace(samples, obs=np.ascontiguousarray(samples.obs[:, cols]),
                               raw=np.ascontiguousarray(samples.raw[:, :k]))


def choose(train: Samples, held: Samples, spec: ObservationSpec, student_spec, config: FitConfig) -> WindowChoice:
    """Fit and score every window ``1 .. spec.history`` (``spec``: the samples' window spec;
    ``student_spec(window spec)`` adds the student's derived inputs)."""
    found = []
    for k in range(1, spec.history + 1):
        s = student_spec(dataclasses.replace(spec, history=k))
        tr, ho = sub_window(train, spec, k), sub_window(held, spec, k)
        fit = fit_student(s.student_obs(tr.obs), tr.label, config)
        err = fit.ensemble.predict(s.student_obs(ho.obs)) - ho.label
        found.append(WindowCandidate(k, context_bytes(spec, k), round(float(np.sqrt(np.mean(err**2))), 6)))
    best = min(c.held_out_rmse for c in found)
    chosen = next(c for c in found if c.held_out_rmse <= best * (1 + WINDOW_TOLERANCE))
    return WindowChoice(chosen.k, spec.history, WINDOW_TOLERANCE, found,
                        f"shortest window within {WINDOW_TOLERANCE:.0%} of the best held-out RMSE ({best:.4g}); "
                        f"longest that fits the {fmt.CTX_BYTES}-byte context: {spec.history}")
