"""Manual gradients of the MLP against finite differences (the LSTM's BPTT: test_lstm.py)."""

from __future__ import annotations

import numpy as np

from rlcc.train.adpg import rollout_weights
from rlcc.train.mlp import Mlp


def test_mlp_backward_matches_finite_differences():
    rng = np.random.default_rng(0)
    mlp = Mlp.init([4, 12, 12, 1], rng, out_scale=1.0)
    x, dy = rng.normal(size=(16, 4)), rng.normal(size=16)
    _, cache = mlp.forward(x)
    grads = mlp.backward(cache, dy)
    eps = 1e-6
    for w, g in zip(mlp.weights, grads):
        for idx in [(0, 0), (w.shape[0] - 1, w.shape[1] - 1), (1, 0)]:
            old = w[idx]
            w[idx] = old + eps
            up = float(dy @ mlp(x))
            w[idx] = old - eps
            down = float(dy @ mlp(x))
            w[idx] = old
            assert abs((up - down) / (2 * eps) - g[idx]) < 1e-5


def test_rollout_weights_average_the_future_clipped_deltas():
    d = np.array([1.0, 2.0, -4.0, 0.5])
    w = rollout_weights(d, horizon=2, clip=1.0)
    np.testing.assert_allclose(w, [(1.0 - 1.0) / 2, (-1.0 + 0.5) / 2, 0.5, 0.5])


def test_adpg_direction_sign_raises_action_where_delta_is_positive():
    from rlcc.train.adam import Adam
    from rlcc.train.adpg import Rollout, adpg_direction

    rng = np.random.default_rng(2)
    mlp = Mlp.init([4, 12, 12, 1], rng)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    weight = np.where(x[:, 3] > 0, 0.05, -0.05)  # under-utilized where feature 3 > 0
    r = Rollout(None, x, weight, weight, np.zeros(0), [(0, 64)], {})
    before = mlp(x)
    opt = Adam(mlp.weights, 0.01)
    for _ in range(20):
        opt.step(mlp.weights, adpg_direction(mlp, [r]))
    after = mlp(x)
    assert np.mean(after[weight > 0] - before[weight > 0]) > 0
    assert np.mean(after[weight < 0] - before[weight < 0]) < 0
