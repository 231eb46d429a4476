"""The switch agent's integer semantics: the statistics collector and the tree classifier.

The golden model of switch-agent firmware (``templates/switch_agent.c.j2``): per queue and
monitoring interval, raw device statistics -> integer features (:func:`collect`) -> the window of
the last k intervals (per-queue context) -> the classifier's integer scores -> the action index
-> its ECN template. Everything is exact integer arithmetic on numpy int64/uint64 arrays; the
simulator's agents call the same functions, so the teacher, the student and the firmware see the
same numbers.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc.class_trees import ClassEnsemble
from rlcc.switch_spec import STAT_MAX, UTIL_MUL_SHIFT, UTIL_ONE, SwitchAgentSpec


def saturate_u32(x: np.ndarray) -> np.ndarray:
    return np.minimum(np.asarray(x, dtype=np.int64), STAT_MAX)


def util_q16(count_bytes: np.ndarray, util_mul: np.ndarray) -> np.ndarray:
    """min((bytes * util_mul) >> 32, 1.0 in Q16): the high word of one 32 x 32 multiply."""
    prod = saturate_u32(count_bytes).astype(np.uint64) * np.asarray(util_mul, dtype=np.uint64)
    return np.minimum((prod >> np.uint64(UTIL_MUL_SHIFT)).astype(np.int64), UTIL_ONE)


def collect(spec: SwitchAgentSpec, qlen_bytes: np.ndarray, tx_bytes: np.ndarray, marked_pkts: np.ndarray,
            action: np.ndarray, util_mul: np.ndarray) -> np.ndarray:
    """Integer features (N, n_features) int64 of one interval, in the spec's feature order."""
    marked_bytes = saturate_u32(saturate_u32(marked_pkts) * spec.packet_bytes)
    per = {
        "qlen": lambda: saturate_u32(qlen_bytes),
        "tx_util": lambda: util_q16(tx_bytes, util_mul),
        "mark_util": lambda: util_q16(marked_bytes, util_mul),
        "ecn_action": lambda: np.asarray(action, dtype=np.int64),
    }
    n = len(np.asarray(action))
    return np.stack([np.broadcast_to(per[name](), (n,)) for name in spec.features], axis=1).astype(np.int64)


def initial_window(spec: SwitchAgentSpec, n: int) -> np.ndarray:
    """(n, input_width) int64: an idle queue's history (zero statistics) under the initial template."""
    w = np.zeros((n, spec.input_width), np.int64)
    if "ecn_action" in spec.features:
        f = spec.features.index("ecn_action")
        w[:, f :: spec.n_features] = spec.initial_action
    return w


def shift_window(spec: SwitchAgentSpec, window: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Drop the oldest interval, append ``step`` (N, n_features) as the newest (oldest first)."""
    return np.concatenate([window[:, spec.n_features :], step], axis=1)


def scores(model: ClassEnsemble, x: np.ndarray) -> np.ndarray:
    """Integer class scores (N, n_classes) int64 for integer inputs (N, n_inputs)."""
    x = np.asarray(x, dtype=np.int64)
    inputs, thr, leaves = model.tables()
    out = np.broadcast_to(np.asarray(model.bias, np.int64), (len(x), model.n_classes)).copy()
    if len(model.trees) == 0:
        return out
    bits = x[:, inputs] > thr  # (N, T, D)
    idx = bits.astype(np.int64) @ (1 << np.arange(inputs.shape[1], dtype=np.int64))
    for t in range(len(model.trees)):
        out += leaves[t][idx[:, t]]
    return out


def argmax_first(s: np.ndarray) -> np.ndarray:
    """Index of the largest score per row; ties go to the lowest index (the C loop's ``>``)."""
    return np.argmax(s, axis=1).astype(np.int64)


def decide(model: ClassEnsemble, x: np.ndarray) -> np.ndarray:
    return argmax_first(scores(model, x))


@dataclasses.dataclass
class GoldenAgent:
    """Per-queue golden switch agent: integer window state and the classifier."""

    spec: SwitchAgentSpec
    model: ClassEnsemble

    def step(self, window: np.ndarray, qlen_bytes, tx_bytes, marked_pkts, action, util_mul) -> tuple[np.ndarray, np.ndarray]:
        """One interval for N queues: (new window, chosen action index)."""
        feats = collect(self.spec, qlen_bytes, tx_bytes, marked_pkts, action, util_mul)
        new = shift_window(self.spec, window, feats)
        return new, decide(self.model, new)
