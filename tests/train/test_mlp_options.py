"""The trainer's network options beyond the papers' (tanh hidden units, biases, a linear output):
exact gradients (checked against finite differences) and configs that stay byte-identical."""

from __future__ import annotations

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.train.config import TrainConfig
from rlcc.train.mlp import Mlp


@pytest.mark.parametrize("act,bias,output", [("relu", False, "tanh"), ("tanh", False, "tanh"), ("relu", True, "tanh"),
                                             ("tanh", True, "identity"), ("relu", True, "identity")])
def test_gradients_match_finite_differences(act, bias, output):
    rng = np.random.default_rng(0)
    net = Mlp.init([4, 6, 5, 1], rng, 1.0, bias=bias, hidden_activation=act, output=output, out_bias=0.3)
    if bias:
        for b in net.biases:
            b += rng.normal(0, 0.1, b.shape)
    x = rng.normal(0, 1, (7, 4))
    dy = rng.normal(0, 1, 7)
    grads = net.weighted_grads(x, dy)
    assert len(grads) == len(net.params) == (6 if bias else 3)
    eps = 1e-6
    for p, g in zip(net.params, grads):
        flat, gflat = p.reshape(-1), g.reshape(-1)
        for i in range(0, flat.size, max(1, flat.size // 5)):
            keep = flat[i]
            flat[i] = keep + eps
            up = float(dy @ net(x))
            flat[i] = keep - eps
            down = float(dy @ net(x))
            flat[i] = keep
            assert gflat[i] == pytest.approx((up - down) / (2 * eps), rel=1e-4, abs=1e-7)


def test_a_direct_factor_starts_at_one():
    net = Mlp.init([4, 8, 1], np.random.default_rng(1), 0.1, bias=True, output="identity", out_bias=1.0)
    assert np.allclose(net(np.zeros((3, 4))), 1.0)


def test_configs_write_the_new_options_only_when_set():
    assert "activation" not in TrainConfig().to_dict() and "bias" not in TrainConfig().to_dict()
    cfg = TrainConfig(activation="tanh", bias=True, output="identity")
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(BadInputError, match="'activation' must be one of relu, tanh"):
        TrainConfig(activation="gelu")
