"""Write examples/synthetic_mlp.onnx: a hand-designed (not trained) RL-CC-shaped policy.

SYNTHETIC: it stands in until `rlcc-train` ships a trained policy. Shape matches the papers'
deployable network (window of k=2 steps of [previous action, delta], 12-12 ReLU, no bias,
tanh output with the asymmetric map, gain 0.2). The weights implement
``y = tanh(D_t + (D_t - D_{t-1}))`` with ``D = 10 * delta`` through ReLU pass-through pairs,
so the policy raises the rate when delta > 0 and lowers it when delta < 0, reacting harder
to a change than to a persisting condition.

Usage: python examples/make_synthetic_policy.py [OUT.onnx]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from rlcc.onnx_export import mlp_to_onnx
from rlcc.spec import Action, Feature, ObservationSpec, Reward

SPEC = ObservationSpec(
    features=(Feature("prev_action"), Feature("delta", scale=10.0)),
    history=2,
    step_order="oldest_first",
    reward=Reward(target=0.064, beta=1.5, base_rtt_ns=8000),
    action=Action(type="tanh", map="asymmetric", gain=0.2, clamp_min=0.8, clamp_max=1.25),
)


def synthetic_weights() -> list[np.ndarray]:
    idx_prev = SPEC.input_index(1, 1)  # D_{t-1}
    idx_now = SPEC.input_index(0, 1)  # D_t
    w1 = np.zeros((SPEC.input_width, 12))
    w1[idx_now, 0], w1[idx_now, 1] = 1.0, -1.0  # relu(D_t), relu(-D_t)
    w1[idx_prev, 2], w1[idx_prev, 3] = 1.0, -1.0  # relu(D_{t-1}), relu(-D_{t-1})
    w2 = np.eye(12)
    w2[4:, 4:] = 0.0
    w3 = np.zeros((12, 1))
    w3[0:2, 0] = [2.0, -2.0]  # 2 * D_t
    w3[2:4, 0] = [-1.0, 1.0]  # - D_{t-1}
    return [w1, w2, w3]


def main(out: str) -> None:
    mlp_to_onnx(
        synthetic_weights(),
        ["relu", "relu", "tanh"],
        SPEC,
        out,
        producer="rlcc-synthetic",
        doc="Synthetic hand-designed RL-CC-shaped policy (not trained); see make_synthetic_policy.py",
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).with_name("synthetic_mlp.onnx")))
