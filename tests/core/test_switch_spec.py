"""The switch-agent spec: JSON round trip, device constants, and every bad-input rule (exit 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlcc.errors import BadInputError, ExitCode
from rlcc.switch_spec import (
    MIN_BYTES_PER_INTERVAL, UTIL_FRAC_BITS, UTIL_MUL_SHIFT, EcnTemplate, SwitchAgentSpec, SwitchReward, paper_templates,
)


def spec_dict(**over) -> dict:
    d = SwitchAgentSpec(actions=paper_templates()).to_dict()
    d.update(over)
    return d


def test_round_trip_and_layout():
    s = SwitchAgentSpec(actions=paper_templates())
    assert SwitchAgentSpec.from_json(s.to_json()) == s
    assert s.input_width == 12  # the paper: 4 features x k = 3 intervals
    assert s.input_index(0, 0) == 8 and s.input_index(2, 3) == 3
    assert s.input_names()[8] == "qlen[t]"


def test_util_mul_is_the_rounded_reciprocal():
    s = SwitchAgentSpec(actions=paper_templates(), interval_us=100.0)
    bpi = 100 / 8 * 100_000  # 100 Gb/s for 100 us, bytes
    mul = s.util_mul(100.0)
    assert mul == round(2 ** (UTIL_FRAC_BITS + UTIL_MUL_SHIFT) / bpi) and mul < 2**32
    # A full interval's bytes is 1.0 in Q16 up to the multiplier's rounding.
    assert abs((int(bpi) * mul >> UTIL_MUL_SHIFT) - (1 << UTIL_FRAC_BITS)) <= 1


def test_queue_score_steps_like_the_paper():
    r = SwitchReward()
    # E(n) = 20 KB x 2^n: L = 0 -> n = 0 -> 1.0; L = 30 KB -> n = 1 -> 0.9; beyond E(9) -> 0.
    assert r.queue_score(np.array([0.0, 20_000, 30_000, 20_000 * 2**9, 2e7])).tolist() == pytest.approx([1.0, 1.0, 0.9, 0.1, 0.0])
    assert r(np.array([1.0]), np.array([0.0]))[0] == pytest.approx(1.0)


@pytest.mark.parametrize("change, needle", [
    ({"actions": [{"kmin_bytes": 500, "kmax_bytes": 100, "pmax": 0.1}, {"kmin_bytes": 1, "kmax_bytes": 2, "pmax": 0.1}]}, "kmin_bytes <= kmax_bytes"),
    ({"actions": [{"kmin_bytes": 1, "kmax_bytes": 2, "pmax": 0.0}, {"kmin_bytes": 1, "kmax_bytes": 3, "pmax": 0.1}]}, "pmax in (0, 1]"),
    ({"actions": [{"kmin_bytes": 1, "kmax_bytes": 2, "pmax": 1.5}, {"kmin_bytes": 1, "kmax_bytes": 3, "pmax": 0.1}]}, "pmax in (0, 1]"),
    ({"actions": [{"kmin_bytes": 1, "kmax_bytes": 2, "pmax": 0.1}, {"kmin_bytes": 1, "kmax_bytes": 2, "pmax": 0.1}]}, "duplicates actions[0]"),
    ({"actions": [{"kmin_bytes": -1, "kmax_bytes": 2, "pmax": 0.1}, {"kmin_bytes": 1, "kmax_bytes": 2, "pmax": 0.1}]}, "kmin_bytes"),
    ({"actions": [{"kmin_bytes": 1, "kmax_bytes": 2**32, "pmax": 0.1}, {"kmin_bytes": 1, "kmax_bytes": 2, "pmax": 0.1}]}, "2^32-1"),
    ({"actions": [{"kmin_bytes": 1, "kmax_bytes": 2, "pmax": 0.1}]}, "2..64 ECN templates"),
    ({"actions": [{"kmin_bytes": 1, "kmax_bytes": 2}, {"kmin_bytes": 1, "kmax_bytes": 3, "pmax": 0.1}]}, "needs pmax"),
    ({"actions": [{"kmin_bytes": 1.5, "kmax_bytes": 2, "pmax": 0.1}, {"kmin_bytes": 1, "kmax_bytes": 3, "pmax": 0.1}]}, "integer"),
    ({"features": ["qlen", "bogus"]}, "unknown feature 'bogus'"),
    ({"features": ["qlen", "qlen"]}, "at most once"),
    ({"history": 0}, "'history'"),
    ({"interval_us": 0.1}, "'interval_us'"),
    ({"initial_action": 8}, "'initial_action'"),
    ({"rlcc_switch_agent": 2}, "must be 1"),
    ({"extra": 1}, "unknown key"),
])
def test_bad_specs_are_bad_input(change, needle):
    with pytest.raises(BadInputError) as exc:
        SwitchAgentSpec.from_json(json.dumps(spec_dict(**change)))
    assert needle in str(exc.value) and exc.value.exit_code == ExitCode.BAD_INPUT


def test_interval_below_sim_step_and_slow_ports_are_bad_input():
    s = SwitchAgentSpec(actions=paper_templates(), interval_us=2.0)
    assert s.check_sim_step(1000.0) == 2
    with pytest.raises(BadInputError, match="below the simulator step"):
        s.check_sim_step(4000.0)
    with pytest.raises(BadInputError, match=f">= {MIN_BYTES_PER_INTERVAL}"):
        s.util_mul(25.0)  # 25 Gb/s x 2 us = 6250 bytes per interval: the Q16 multiplier overflows 32 bits


def test_pmax_is_applied_as_q16():
    t = EcnTemplate(1, 2, 0.013)
    assert t.pmax_q16 == round(0.013 * 65536) and t.pmax_device == t.pmax_q16 / 65536
