"""The runtime's square root (``rlcc_isqrt52`` behind ``rlcc_sqrt_rate``, rlcc_runtime.h) is the exact
floor square root.

Built for the host with zig cc from the generated C (portable normalization, and the Zbb ``clz`` path by
defining ``__riscv_zbb``), compared with Python's ``math.isqrt`` on every ``rate << 20`` for
rate in 0..2^20, on every uint32 rate's extremes, on 10^6 random n < 2^52 of every magnitude and
on edge values (perfect squares and their neighbours, powers of two and theirs, 2^52 - 1); and
the estimate stage ``sqrt_q30`` is checked on all 3 * 2^30 normalized arguments against the
5-ulp bound the exactness argument in the template relies on.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from codegen_build import WARN, _run, compile_ok, host_cc

from rlcc import firmware_sdk_stub as sdk
from rlcc.formats import RATE_FRAC_BITS

DRIVER = r"""
#include "rlcc_runtime.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t pcc_params[PCC_NUM_SLOTS][PCC_NUM_PARAMS];

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "sweep") == 0) {
        /* |sqrt_q30(t) - sqrt(t * 2^30)| < 5 for every t in [2^30, 2^32), in integers:
         * (s - 5)^2 < t * 2^30 < (s + 5)^2. */
        unsigned long long bad = 0;
        uint64_t t;
        for (t = UINT64_C(1) << 30; t < (UINT64_C(1) << 32); t++) {
            const uint64_t s = rlcc_sqrt_q30((uint32_t)t), v = t << 30;
            if (s < 5u || (s - 5u) * (s - 5u) >= v || (s + 5u) * (s + 5u) <= v) {
                bad++;
            }
        }
        printf("%llu\n", bad);
        return 0;
    }
    if (argc == 4) {
        FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "wb");
        uint64_t n;
        if (in == NULL || out == NULL) {
            return 2;
        }
        while (fread(&n, sizeof n, 1, in) == 1) {
            const uint32_t r = strcmp(argv[1], "rate") == 0 ? rlcc_sqrt_rate((uint32_t)n) : rlcc_isqrt52(n);
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
    inp.write_bytes(np.asarray(values, dtype="<u8").tobytes())
    p = _run([exe, mode, inp, outp])
    assert p.returncode == 0, p.stderr
    return np.frombuffer(outp.read_bytes(), dtype="<u4").astype(np.int64)


def _check(values, got) -> None:
    want = [math.isqrt(int(v)) for v in values]
    bad = np.flatnonzero(np.asarray(want, dtype=np.int64) != got)
    assert len(bad) == 0, [(int(values[i]), int(got[i]), want[i]) for i in bad[:5]]


def test_every_valid_rate_exhaustive(sqrt_exe, tmp_path):
    rates = np.arange(0, (1 << 20) + 1, dtype=np.uint64)
    got = _run_values(sqrt_exe, "rate", rates, tmp_path)
    _check(rates << np.uint64(RATE_FRAC_BITS), got)


def test_uint32_rates_extremes(sqrt_exe, tmp_path):
    rng = np.random.default_rng(3)
    rates = np.concatenate([np.arange(0xFFFFFFFF - 70_000, 0xFFFFFFFF + 1),
                            rng.integers(0, 1 << 32, 200_000), [1 << 31, (1 << 31) - 1, (1 << 30) + 1]]).astype(np.uint64)
    got = _run_values(sqrt_exe, "rate", rates, tmp_path)
    _check(rates << np.uint64(RATE_FRAC_BITS), got)


def _edge_values() -> list[int]:
    rnd = random.Random(7)
    roots = set(range(0, 5000)) | {(1 << 26) - 1 - i for i in range(5000)}
    roots |= {1 << i for i in range(26)} | {(1 << i) - 1 for i in range(1, 27)} | {(1 << i) + 1 for i in range(26)}
    roots |= {rnd.randrange(1 << 26) for _ in range(100_000)}
    out = set()
    for s in roots:
        out.update((s * s - 1, s * s, s * s + 1, (s + 1) * (s + 1) - 1))
    for i in range(52):
        out.update(((1 << i) - 1, 1 << i, (1 << i) + 1))
    out.update(((1 << 52) - 1, (1 << 52) - 2, (1 << 52) - (1 << 20)))
    return sorted(v for v in out if 0 <= v < 1 << 52)


@pytest.mark.slow
def test_random_and_edge_arguments_below_2_52(sqrt_exe, tmp_path):
    rnd = random.Random(11)
    values = [rnd.getrandbits(rnd.randint(1, 52)) for _ in range(500_000)]  # every magnitude
    values += [rnd.getrandbits(52) for _ in range(500_000)]
    values += _edge_values()
    arr = np.array(values, dtype=np.uint64)
    assert len(arr) >= 1_000_000 and int(arr.max()) == (1 << 52) - 1
    _check(values, _run_values(sqrt_exe, "n", arr, tmp_path))


@pytest.mark.slow
def test_estimate_within_5_ulps_for_every_normalized_argument(sqrt_exe):
    """The bound behind the single correction step, over all t in [2^30, 2^32) (~10 s)."""
    if sqrt_exe.parent.name.startswith("isqrt_zbb"):
        pytest.skip("sqrt_q30 does not depend on the clz path")
    p = _run([sqrt_exe, "sweep"], timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "0"
