"""A ramp's term (``rlcc.fxp.golden.ramp_value`` and the runtime's ``rlcc_ramp``) is
``trunc(d * k / 2^shift)`` exactly, in Python and in C.

Oracle: Python's exact rationals (``fractions.Fraction``, truncated toward zero) over every input
value from three below the ramp's low end to three above its high end (beyond, both clamp) and
the int32 extremes, for ramps at the edges of what the model accepts (largest products, shift 0
and 30, negative and zero slopes, a one-value interval).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from codegen_build import _run, host_driver

from rlcc.errors import BadInputError
from rlcc.fxp import golden
from rlcc.fxp.model import INT32_MAX, INT32_MIN, Ramp

DRIVER = r"""
#include "rlcc_runtime.h"
#include <stdio.h>

uint32_t pcc_params[PCC_NUM_SLOTS][PCC_NUM_PARAMS];

int main(int argc, char **argv)
{
    int32_t rec[8];
    FILE *in, *out;
    if (argc != 3) {
        return 2;
    }
    in = fopen(argv[1], "rb");
    out = fopen(argv[2], "wb");
    if (in == NULL || out == NULL) {
        return 2;
    }
    while (fread(rec, sizeof rec, 1, in) == 1) { /* x, lo, center, hi, k_below, k_above, shift, unused */
        const int32_t r = rlcc_ramp(rec[0], rec[1], rec[2], rec[3], rec[4], rec[5], (uint32_t)rec[6]);
        fwrite(&r, sizeof r, 1, out);
    }
    fclose(in);
    fclose(out);
    return 0;
}
"""

RAMPS = [
    Ramp(0, 64225, 65536, 66847, -333, -340, 10),  # a previous-factor ramp of the example
    Ramp(0, -1258, 0, 1258, 3951, 2598, 10),  # a delta ramp
    Ramp(0, -1000, 0, 1000, (2**31 - 1) // 1000, -((2**31 - 1) // 1000), 0),  # largest products
    Ramp(0, -3, 5, 40, 7, 0, 30),  # shift 30, zero slope above, off-center interval
    Ramp(0, 17, 17, 17, 123, -456, 3),  # a one-value interval: the term is always 0
    Ramp(0, INT32_MIN + 1, 0, 0, 1, 5, 0),  # the widest side the model accepts
]


def _oracle(r: Ramp, x: int) -> int:
    d = min(max(x, r.lo), r.hi) - r.center
    return math.trunc(Fraction(d * (r.k_below if d < 0 else r.k_above), 2**r.shift))


def _xs(r: Ramp) -> np.ndarray:
    span = np.arange(r.lo - 3, r.hi + 4, dtype=np.int64) if r.hi - r.lo < 100_000 else \
        np.concatenate([np.arange(r.lo - 3, r.lo + 4), np.arange(-50, 50), np.random.default_rng(1).integers(r.lo, r.hi, 5000)])
    return np.unique(np.clip(np.concatenate([span, [INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX]]), INT32_MIN, INT32_MAX))


@pytest.fixture(scope="module")
def ramp_exe(tmp_path_factory):
    return host_driver(tmp_path_factory.mktemp("ramp"), DRIVER, "ramp")


@pytest.mark.parametrize("r", RAMPS, ids=lambda r: f"{r.lo}..{r.hi}:k{r.k_below},{r.k_above}>>{r.shift}")
def test_golden_and_c_ramp_equal_exact_truncation(r, ramp_exe, tmp_path):
    assert not r.problems(1), r.problems(1)
    xs = _xs(r)
    want = np.array([_oracle(r, int(x)) for x in xs], dtype=np.int64)
    got = golden.ramp_value(golden.NUMPY, r, xs)
    bad = np.flatnonzero(got != want)
    assert len(bad) == 0, [(int(xs[i]), int(got[i]), int(want[i])) for i in bad[:5]]
    rec = np.zeros((len(xs), 8), dtype=np.int64)
    rec[:, 0] = xs
    rec[:, 1:7] = [r.lo, r.center, r.hi, r.k_below, r.k_above, r.shift]
    inp, out = tmp_path / "in", tmp_path / "out"
    inp.write_bytes(rec.astype("<i4").tobytes())
    p = _run([ramp_exe, inp, out])
    assert p.returncode == 0, p.stderr
    c = np.frombuffer(out.read_bytes(), dtype="<i4").astype(np.int64)
    bad = np.flatnonzero(c != want)
    assert len(bad) == 0, [(int(xs[i]), int(c[i]), int(want[i])) for i in bad[:5]]


@pytest.mark.parametrize("ramp, problem", [
    (Ramp(0, 10, 5, 20, 1, 1, 0), "lo <= center <= hi"),
    (Ramp(0, -70000, 0, 10, 40000, 1, 0), "2^31"),
    (Ramp(0, -10, 0, 10, 1, 1, 31), "shift"),
    (Ramp(3, -10, 0, 10, 1, 1, 0), "input out of range"),
    (Ramp(0, INT32_MIN + 1, INT32_MAX, INT32_MAX, 0, 0, 0), "fit int32"),
])
def test_ramps_the_firmware_cannot_compute_exactly_are_refused(ramp, problem):
    assert any(problem in p for p in ramp.problems(2)), ramp.problems(2)


def test_model_with_a_bad_ramp_is_refused():
    from codegen_models import SYNTHETIC_SPEC, random_model
    import dataclasses

    model = random_model(SYNTHETIC_SPEC, n_trees=2, depth=2)
    with pytest.raises(BadInputError, match="ramp 0"):
        dataclasses.replace(model, ramps=(Ramp(0, -70000, 0, 10, 40000, 1, 0),))
