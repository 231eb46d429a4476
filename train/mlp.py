"""The deployable RL-CC network: a small MLP, forward and backward.

The papers' NIC network is bias-free ReLU with a tanh output (the default): with centered
features (``prev_action`` offset -1, ``delta`` scaled) the output is then exactly 0 (factor 1)
at the target operating point, so the equilibrium is the ``delta = 0`` fixed point by
construction. Users' policies differ (tanh hidden units, biases, a linear output read as a
factor or through the spec's linear map), so those are options of the same network; the policy
zoo (``examples/zoo``) trains each of them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

HIDDEN_ACTIVATIONS = ("relu", "tanh")
OUTPUTS = ("tanh", "identity")


@dataclasses.dataclass
class Mlp:
    """``y = out(act(act(x @ W0 + b0) @ W1 + b1) @ W2 + b2)``; ``weights[i]`` has shape (in, out);
    ``biases`` None: bias-free (the papers' network)."""

    weights: list[np.ndarray]
    biases: list[np.ndarray] | None = None
    hidden_activation: str = "relu"
    output: str = "tanh"

    @classmethod
    def init(cls, sizes: list[int], rng: np.random.Generator, out_scale: float = 0.1, *, bias: bool = False,
             hidden_activation: str = "relu", output: str = "tanh", out_bias: float = 0.0) -> "Mlp":
        """He-initialized hidden layers (Xavier for tanh); a small output layer so training starts
        near the output ``out_bias`` (factor 1 for the tanh maps at 0, a direct factor at 1)."""
        weights = []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            gain = 2.0 if hidden_activation == "relu" else 1.0
            std = np.sqrt(gain / n_in) * (out_scale if i == len(sizes) - 2 else 1.0)
            weights.append(rng.normal(0.0, std, size=(n_in, n_out)))
        biases = None
        if bias:
            biases = [np.zeros(n) for n in sizes[1:]]
            biases[-1][:] = out_bias
        return cls(weights, biases, hidden_activation, output)

    @property
    def activations(self) -> list[str]:
        return [self.hidden_activation] * (len(self.weights) - 1) + [self.output]

    def _layer(self, i: int, h: np.ndarray) -> np.ndarray:
        z = h @ self.weights[i]
        return z + self.biases[i] if self.biases is not None else z

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Outputs (B,) and the per-layer inputs the backward pass needs."""
        h = np.asarray(x, dtype=np.float64)
        cache = [h]
        for i in range(len(self.weights) - 1):
            z = self._layer(i, h)
            h = np.maximum(z, 0.0) if self.hidden_activation == "relu" else np.tanh(z)
            cache.append(h)
        z = self._layer(len(self.weights) - 1, h)[:, 0]
        y = np.tanh(z) if self.output == "tanh" else z
        cache.append(y)
        return y, cache

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.forward(x)[0]

    def backward(self, cache: list[np.ndarray], dy: np.ndarray) -> list[np.ndarray]:
        """Gradients of ``sum_b dy_b * y_b`` w.r.t. every parameter (``params`` order)."""
        y = cache[-1]
        dy = np.asarray(dy, dtype=np.float64)
        g = (dy * (1.0 - y * y) if self.output == "tanh" else dy)[:, None]
        n = len(self.weights)
        w_grads: list[np.ndarray] = [np.empty(0)] * n
        b_grads: list[np.ndarray] = [np.empty(0)] * n
        for i in range(n - 1, -1, -1):
            h_in = cache[i]
            w_grads[i] = h_in.T @ g
            b_grads[i] = g.sum(axis=0)
            if i:
                back = g @ self.weights[i].T
                g = back * (h_in > 0) if self.hidden_activation == "relu" else back * (1.0 - h_in * h_in)
        return w_grads + (b_grads if self.biases is not None else [])

    @property
    def params(self) -> list[np.ndarray]:
        return self.weights + (self.biases or [])

    def weighted_grads(self, obs: np.ndarray, dy: np.ndarray, bounds: list[tuple[int, int]] | None = None) -> list[np.ndarray]:
        """Gradients of ``sum_t dy_t * y(obs_t)``; each output depends on its own window only, so
        the flow ``bounds`` are not needed."""
        _, cache = self.forward(obs)
        return self.backward(cache, dy)

    def copy(self) -> "Mlp":
        return Mlp([w.copy() for w in self.weights], None if self.biases is None else [b.copy() for b in self.biases],
                   self.hidden_activation, self.output)
