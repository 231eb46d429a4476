"""Adding a feature is one registry entry: a toy feature registered here (and nowhere else) goes
through the spec, the simulator, the golden model, the vector generators, the generated C and
bit-exact verification in the emulator with no other code change."""

from __future__ import annotations

import numpy as np
import pytest

from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.codegen import generate
from rlcc.fxp import golden
from rlcc.fxp.model import FxConstants, FxModel, Split, Tree
from rlcc.verify.generators import verification_set
from rlcc.simulator.controllers import callable_controller
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import ManyToOne
from rlcc.spec import Feature, ObservationSpec
from rlcc.verify.check import verify_firmware


def _excess_rtt(c, value, rate):
    """Smallest RTT whose excess inflation max(inflation - beta, 0) reaches ``value``."""
    del rate
    need = np.maximum(np.asarray(value, dtype=np.int64), 0) + c.beta_q16
    return np.where(np.asarray(value) <= 0, 0, vocab.ceil_div(need << 16, c.inv_base_rtt))


TOY = vocab.FeatureDef(
    "rtt_excess", "max(rtt_inflation - beta, 0): the queueing part of the RTT, in base RTTs",
    16,
    float_value=lambda s: np.maximum(s.inflation - s.reward.beta, 0.0),
    device_value=lambda d: vocab.imax(d.ops, d.inflation - d.c.beta_q16, 0),
    device_range=lambda c: (0, fmt.FEATURE_MAX),
    typical=fmt.FACTOR_ONE,
    rtt_inverse=_excess_rtt, rtt_direction=1,
    params=("INV_BASE_RTT", "BETA_Q16"), needs_inflation=True,
    c_expr="(inflation > (int32_t){param[BETA_Q16]} ? inflation - (int32_t){param[BETA_Q16]} : 0)",
)


@pytest.fixture()
def toy_spec(monkeypatch) -> ObservationSpec:
    monkeypatch.setitem(vocab.REGISTRY, TOY.name, TOY)
    return ObservationSpec(features=(Feature("prev_action"), Feature("rtt_excess", scale=0.5)), history=2)


def test_spec_and_simulator_see_the_toy_feature(toy_spec):
    seen = []

    def policy(obs: np.ndarray) -> np.ndarray:
        seen.append(obs[:, 3].copy())  # rtt_excess[t] (oldest_first: the current step is last)
        return np.where(obs[:, 3] > 0.5, 0.9, 1.05).astype(np.float32)

    simulate(ManyToOne(flows=16, duration_ms=3.0), callable_controller(policy, toy_spec))
    values = np.concatenate(seen)
    assert values.min() >= 0.0 and values.max() > 0.5  # queueing builds: the feature moves
    raw = toy_spec.raw_step_features(np.ones(3), np.array([8000.0, 16000.0, 40000.0]), np.full(3, 0.5))
    assert raw[:, 1].tolist() == [0.0, 0.5, 3.5]  # base RTT 8 us, beta 1.5


def test_firmware_with_the_toy_feature_is_bit_exact(toy_spec, tmp_path):
    c = FxConstants.from_spec(toy_spec)
    x_now, x_prev = toy_spec.input_index(0, 1), toy_spec.input_index(1, 1)
    trees = (
        Tree((Split(x_now, ">", fmt.FACTOR_ONE // 2, 0.25), Split(toy_spec.input_index(0, 0), ">", 65000, 0.0)),
             (3000, -2000, 1000, -6000)),
        Tree((Split(x_prev, ">", 3 * fmt.FACTOR_ONE, 1.5), Split(x_now, ">", 5 * fmt.FACTOR_ONE, 2.5)),
             (1500, -500, 800, -9000)),
    )
    model = FxModel(spec=toy_spec, constants=c, trees=trees, bias=fmt.FACTOR_ONE)
    vectors = verification_set(model, n_random=1024)[0]
    # the generators realized the toy feature's thresholds through its registry inverse
    g = golden.step(model, vectors.ctx_in, vectors.event)
    values = g.features[:, x_now]
    step = -(-c.inv_base_rtt // (1 << 16))  # inflation moves in steps of ~inv_base_rtt / 2^16 per ns of RTT
    for thr in (fmt.FACTOR_ONE // 2, 5 * fmt.FACTOR_ONE):
        assert np.any((values <= thr) & (values > thr - step)) and np.any(values > thr), thr
    paths = generate(model, tmp_path, vectors=vectors)
    assert "(inflation > (int32_t)p[FIRMWARE_P_BETA_Q16]" in paths["c"].read_text()
    for target in ("rv64imac", "rv32imc"):
        result = verify_firmware(paths["c"], target=target, random_count=2000)
        assert result.mismatches == 0 and result.vectors > 2000, target
