"""Adam (Kingma & Ba) for a list of numpy arrays, as a gradient *ascent* step.

ADPG produces an ascent direction, not a loss, so ``step`` adds ``lr * m_hat / sqrt(v_hat)``.
"""

from __future__ import annotations

import numpy as np


class Adam:
    def __init__(self, params: list[np.ndarray], lr: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> None:
        self.lr, self.b1, self.b2, self.eps = lr, beta1, beta2, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> None:
        """Update ``params`` in place along ``grads`` (ascent)."""
        self.t += 1
        c1, c2 = 1.0 - self.b1**self.t, 1.0 - self.b2**self.t
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= self.b1
            m += (1.0 - self.b1) * g
            v *= self.b2
            v += (1.0 - self.b2) * g * g
            p += self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)
