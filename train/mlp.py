"""The deployable RL-CC network: a bias-free ReLU MLP with a tanh output, forward and backward.

Bias-free because the papers' NIC network has none; with centered features (``prev_action``
offset -1, ``delta`` scaled) the output is then exactly 0 (factor 1) at the target operating
point, so the equilibrium is the ``delta = 0`` fixed point by construction.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class Mlp:
    """``y = tanh(relu(relu(x @ W0) @ W1) @ W2)``; ``weights[i]`` has shape (in, out)."""

    weights: list[np.ndarray]

    @classmethod
    def init(cls, sizes: list[int], rng: np.random.Generator, out_scale: float = 0.1) -> "Mlp":
        """He-initialized hidden layers; a small output layer so training starts near factor 1."""
        weights = []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            std = np.sqrt(2.0 / n_in) * (out_scale if i == len(sizes) - 2 else 1.0)
            weights.append(rng.normal(0.0, std, size=(n_in, n_out)))
        return cls(weights)

    @property
    def activations(self) -> list[str]:
        return ["relu"] * (len(self.weights) - 1) + ["tanh"]

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Outputs (B,) and the per-layer inputs the backward pass needs."""
        h = np.asarray(x, dtype=np.float64)
        cache = [h]
        for w in self.weights[:-1]:
            h = np.maximum(h @ w, 0.0)
            cache.append(h)
        y = np.tanh(h @ self.weights[-1])[:, 0]
        cache.append(y)
        return y, cache

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.forward(x)[0]

    def backward(self, cache: list[np.ndarray], dy: np.ndarray) -> list[np.ndarray]:
        """Gradients of ``sum_b dy_b * y_b`` w.r.t. every weight matrix."""
        y = cache[-1]
        g = (np.asarray(dy, dtype=np.float64) * (1.0 - y * y))[:, None]
        grads: list[np.ndarray] = [np.empty(0)] * len(self.weights)
        for i in range(len(self.weights) - 1, -1, -1):
            h_in = cache[i]
            grads[i] = h_in.T @ g
            if i:
                g = (g @ self.weights[i].T) * (h_in > 0)
        return grads

    @property
    def params(self) -> list[np.ndarray]:
        return self.weights

    def weighted_grads(self, obs: np.ndarray, dy: np.ndarray, bounds: list[tuple[int, int]] | None = None) -> list[np.ndarray]:
        """Gradients of ``sum_t dy_t * y(obs_t)``; each output depends on its own window only, so
        the flow ``bounds`` are not needed."""
        _, cache = self.forward(obs)
        return self.backward(cache, dy)

    def copy(self) -> "Mlp":
        return Mlp([w.copy() for w in self.weights])
