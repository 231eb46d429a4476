"""The feature registry: float and integer formulas agree, inverses invert, registration is checked."""

from __future__ import annotations

import numpy as np
import pytest

from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.fxp import golden
from rlcc.fxp.model import FxConstants
from rlcc.spec import Feature, ObservationSpec

SPEC = ObservationSpec(features=tuple(Feature(n) for n in vocab.known()), history=1)
CONSTS = FxConstants.from_spec(SPEC)


def _steps(n: int = 4000, seed: int = 0):
    rng = np.random.default_rng(seed)
    rtt = rng.integers(1_000, 400_000, n)
    rate_q = rng.integers(64, fmt.RATE_MAX + 1, n)
    prev_q = rng.integers(int(0.8 * fmt.FACTOR_ONE), int(1.25 * fmt.FACTOR_ONE), n)
    cnp, nack = rng.integers(0, 50, n), rng.integers(0, 50, n)
    return rtt, rate_q, prev_q, cnp, nack


@pytest.mark.parametrize("name", vocab.known())
def test_device_formula_is_the_float_formula_in_fixed_point(name: str) -> None:
    """Independent check of each integer formula: its value / 2^frac_bits tracks the float formula
    evaluated on the same (dequantized) step, to within the formats' rounding."""
    rtt, rate_q, prev_q, cnp, nack = _steps()
    f = SPEC.feature_names.index(name)
    device = golden.step_features(SPEC, CONSTS, rtt, rate_q, prev_q, cnp, nack)[:, f]
    real = SPEC.raw_step_features(prev_q / fmt.FACTOR_ONE, rtt, rate_q / fmt.RATE_ONE, cnp, nack)[:, f]
    scale = 1 << vocab.get(name).frac_bits
    # context fields are exact; RTT formulas truncate the Q16 base-RTT reciprocal, sqrt and product
    tolerance = 0.0 if vocab.get(name).context_field else 4.0 / scale + 1e-4 * np.abs(real)
    assert np.all(np.abs(device / scale - real) <= tolerance), name


@pytest.mark.parametrize("name", [n for n in vocab.known() if vocab.get(n).rtt_driven])
def test_rtt_inverse_reaches_the_value(name: str) -> None:
    feat, f = vocab.get(name), SPEC.feature_names.index(name)
    rng = np.random.default_rng(1)
    lo, hi = feat.device_range(CONSTS)
    values = rng.integers(max(lo, -20 * fmt.FACTOR_ONE), min(hi, 20 * fmt.FACTOR_ONE), 500)
    rate = rng.integers(64, fmt.RATE_MAX + 1, 500)
    rtt = feat.rtt_inverse(CONSTS, values, rate)
    ok = rtt <= 0xFFFFFFFF
    got = golden.step_features(SPEC, CONSTS, rtt[ok], rate[ok], np.full(ok.sum(), fmt.FACTOR_ONE), 0, 0)[:, f]
    assert ok.mean() > 0.5
    assert np.all(feat.rtt_direction * (got - values[ok]) >= 0)  # reached (rising: >=, falling: <=)


@pytest.mark.parametrize("name", [n for n in vocab.known() if vocab.get(n).context_field])
def test_context_field_inverse_is_what_the_golden_model_reads(name: str) -> None:
    fld, f = vocab.get(name).context_field, SPEC.feature_names.index(name)
    lo, hi = vocab.get(name).device_range(CONSTS)
    values = np.array([lo, hi, (lo + hi) // 2, max(lo, 1)], dtype=np.int64)
    ctx = np.zeros((4, fmt.CTX_WORDS), dtype=np.int64)
    ctx[:, fmt.CTX_RATE] = 300007
    ctx[:, fmt.CTX_COUNTS] = 0x12345678
    ctx[:, fld.word] = fld.store(ctx[:, fld.word], values)
    ev = golden.make_events(np.full(4, fmt.EVENT_RTT), np.full(4, 50_000), np.full(4, 40_000))
    got = golden.step(golden_model(), ctx.astype(np.uint32), ev).features[:, SPEC.input_index(0, f)]
    expected = values.astype(np.int32).astype(np.int64) if name == "prev_action" else values  # int32 word
    assert np.array_equal(got, expected)


def golden_model():
    from rlcc.fxp.model import FxModel

    return FxModel(spec=SPEC, constants=CONSTS, trees=(), bias=fmt.FACTOR_ONE)


def test_registration_rules() -> None:
    existing = vocab.get("rate")
    with pytest.raises(ValueError, match="already registered"):
        vocab.register(existing)
    with pytest.raises(ValueError, match="exactly one inverse"):
        vocab.register(vocab.FeatureDef("bad", "no inverse", 0, lambda s: s.rate, lambda d: d.rate, lambda c: (0, 1), 0))
    with pytest.raises(Exception, match="unknown feature|known:"):
        ObservationSpec(features=(Feature("not_a_feature"),))
