"""The runtime's square root (``rlcc_isqrt_rate`` behind ``rlcc_sqrt_rate``, rlcc_runtime.h) is the
exact floor square root of ``min(rate, RATE_MAX) << RATE_FRAC_BITS``.

Built for the host with zig cc from the runtime header (portable normalization, and the Zbb ``clz``
path by defining ``__riscv_zbb``), compared with Python's ``math.isqrt`` on every rate of its domain
0 .. 2^20 and on uint32 rates above it (read as RATE_MAX, as the golden model reads them); the estimate
before the final correction is checked to be exact or one high on the whole domain, the bound that
one-sided correction step relies on.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from codegen_build import WARN, _run, compile_ok, host_cc

from rlcc import firmware_sdk_stub as sdk
from rlcc.formats import RATE_FRAC_BITS, RATE_MAX
from rlcc.fxp import golden

DRIVER = r"""
#include "rlcc_runtime.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t pcc_params[PCC_NUM_SLOTS][PCC_NUM_PARAMS];

int main(int argc, char **argv)
{
    if (argc == 4) {
        FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "wb");
        uint32_t v;
        if (in == NULL || out == NULL) {
            return 2;
        }
        while (fread(&v, sizeof v, 1, in) == 1) {
            const uint32_t r = strcmp(argv[1], "rate") == 0 ? rlcc_sqrt_rate(v) : rlcc_sqrt_estimate(v);
            fwrite(&r, sizeof r, 1, out);
        }
        fclose(in);
        fclose(out);
        return 0;
    }
    return 2;
}
"""


@pytest.fixture(scope="module", params=["portable", "zbb"])
def sqrt_exe(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"isqrt_{request.param}")
    drv = d / "driver.c"
    drv.write_text(DRIVER)
    extra = ["-D__riscv_zbb=1"] if request.param == "zbb" else []
    exe = d / "isqrt"
    compile_ok([*host_cc(), *WARN, "-O2", *extra, f"-I{sdk.SDK_DIR}", drv, "-o", exe])
    return exe


def _run_values(exe, mode: str, values: np.ndarray, tmp_path) -> np.ndarray:
    inp, outp = tmp_path / f"{mode}.in", tmp_path / f"{mode}.out"
    inp.write_bytes(np.asarray(values, dtype="<u4").tobytes())
    p = _run([exe, mode, inp, outp])
    assert p.returncode == 0, p.stderr
    return np.frombuffer(outp.read_bytes(), dtype="<u4").astype(np.int64)


def _exact(rates: np.ndarray) -> np.ndarray:
    return np.array([math.isqrt(min(int(r), RATE_MAX) << RATE_FRAC_BITS) for r in rates], dtype=np.int64)


def _first_bad(rates, got, want) -> list:
    bad = np.flatnonzero(got != want)
    return [(int(rates[i]), int(got[i]), int(want[i])) for i in bad[:5]]


def test_every_rate_of_the_domain_exhaustive(sqrt_exe, tmp_path):
    rates = np.arange(0, RATE_MAX + 1, dtype=np.uint32)
    got, want = _run_values(sqrt_exe, "rate", rates, tmp_path), _exact(rates)
    assert not _first_bad(rates, got, want)
    assert np.array_equal(golden.NUMPY.sqrt_rate(rates), want)  # the golden model's reading agrees


def test_rates_above_the_domain_read_as_rate_max(sqrt_exe, tmp_path):
    rng = np.random.default_rng(3)
    rates = np.concatenate([np.arange(RATE_MAX, RATE_MAX + 70_000), np.arange(0xFFFFFFFF - 70_000, 0xFFFFFFFF + 1),
                            rng.integers(RATE_MAX + 1, 1 << 32, 200_000), [1 << 31, (1 << 31) - 1]]).astype(np.uint32)
    got = _run_values(sqrt_exe, "rate", rates, tmp_path)
    assert np.all(got == math.isqrt(RATE_MAX << RATE_FRAC_BITS))
    assert np.array_equal(golden.NUMPY.sqrt_rate(rates), got)


def test_estimate_at_most_one_high_on_the_whole_domain(sqrt_exe, tmp_path):
    """The bound behind the one-sided correction step (steps 1-3 of the header's method)."""
    if sqrt_exe.parent.name.startswith("isqrt_zbb"):
        pytest.skip("the estimate does not depend on the clz path beyond the shift, checked by the exact test")
    rates = np.arange(1, RATE_MAX + 1, dtype=np.uint32)
    err = _run_values(sqrt_exe, "estimate", rates, tmp_path) - _exact(rates)
    assert err.min() >= 0 and err.max() <= 1, (int(err.min()), int(err.max()))
    assert err.max() == 1  # the correction is needed
