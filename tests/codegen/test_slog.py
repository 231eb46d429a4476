"""The derived inputs' signed log (``rlcc.derived.slog_int``, the runtime's ``rlcc_slog`` and its
out-of-line ``rlcc_signed_log``) is Mitchell's log2 exactly, in Python and in C.

Oracles: Python's ``int.bit_length`` for the leading one (the implementations use a binary
search), the C compiler's ``__builtin_clz`` for every one of the 2^32 int32 arguments (host
build, ~10 s), and numpy's float log2 for the accuracy bound of the approximation. The RISC-V
build of ``rlcc_signed_log`` is proven equal to ``slog_int(d)`` for all int32 by ``rlcc-verify
--prove`` (tests/verify/test_prove.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from codegen_build import _run, host_driver

from rlcc import derived
from rlcc.fxp import golden

F = derived.MLOG_FRAC_BITS

DRIVER = r"""
#include "rlcc_runtime.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t pcc_params[PCC_NUM_SLOTS][PCC_NUM_PARAMS];

/* Mitchell log2 with the compiler's count of leading zeros for the leading one. */
static int32_t reference_slog(int32_t d)
{
    const uint32_t m = d < 0 ? 0u - (uint32_t)d : (uint32_t)d;
    const uint32_t u = m + 0x10000u;
    const uint32_t msb = 31u - (uint32_t)__builtin_clz(u);
    const int32_t lg = (int32_t)(((msb - 16u) << 16) + ((u - (1u << msb)) >> (msb - 16u)));
    return d < 0 ? -lg : lg;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "sweep") == 0) {
        unsigned long long bad = 0;
        uint64_t i;
        for (i = 0; i < (UINT64_C(1) << 32); i++) {
            const int32_t d = (int32_t)(uint32_t)i;
            bad += rlcc_slog(d) != reference_slog(d);
        }
        printf("%llu\n", bad);
        return 0;
    }
    if (argc == 4) {
        FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "wb");
        int32_t pair[2];
        if (in == NULL || out == NULL) {
            return 2;
        }
        while (fread(pair, sizeof pair, 1, in) == 1) {
            const int32_t r = strcmp(argv[1], "slog") == 0 ? rlcc_slog(pair[0]) : rlcc_signed_log(pair[0]) - rlcc_signed_log(pair[1]);
            fwrite(&r, sizeof r, 1, out);
        }
        fclose(in);
        fclose(out);
        return 0;
    }
    return 2;
}
"""


@pytest.fixture(scope="module")
def slog_exe(tmp_path_factory):
    return host_driver(tmp_path_factory.mktemp("slog"), DRIVER, "slog")


def _oracle(d: int) -> int:
    m = abs(d)
    u = m + (1 << F)
    e = u.bit_length() - 1
    lg = ((e - F) << F) + ((u - (1 << e)) >> (e - F))
    return -lg if d < 0 else lg


def _arguments() -> np.ndarray:
    rng = np.random.default_rng(5)
    edges = {0, 1, -1, 2**31 - 1, -(2**31)}
    for i in range(32):
        for v in ((1 << i) - 1, 1 << i, (1 << i) + 1, (1 << i) - (1 << 16), (1 << i) - (1 << 16) - 1):
            if -(2**31) <= v < 2**31:
                edges.update((v, -v) if v > -(2**31) else (v,))
    rand = rng.integers(-(2**31), 2**31, 200_000)
    small = rng.integers(-(1 << 20), 1 << 20, 100_000)  # the range deltas take in practice
    return np.unique(np.concatenate([np.array(sorted(edges), dtype=np.int64), rand, small]))


def test_python_slog_is_mitchell_log(tmp_path):
    args = _arguments()
    got = golden.NUMPY.slog(args)
    want = np.array([_oracle(int(d)) for d in args], dtype=np.int64)
    bad = np.flatnonzero(got != want)
    assert len(bad) == 0, [(int(args[i]), int(got[i]), int(want[i])) for i in bad[:5]]
    assert int(np.abs(got).max()) < 1 << (derived.SLOG_BITS - 1)  # the proof's 21-bit abstraction


def test_integer_log_within_a_unit_of_the_float_formula_and_mitchell_bound():
    m = _arguments()
    m = m[m >= 0]
    exact = golden.NUMPY.slog(m) / (1 << F)
    mitchell = derived.mlog2_float(m / (1 << F))
    assert np.all(np.abs(exact - mitchell) < 2.0 ** -F + 1e-12)  # truncation of the mantissa only
    true = np.log2(1.0 + m / (1 << F))
    err = true - mitchell
    assert np.all(err >= -1e-12) and float(err.max()) < 0.0861  # Mitchell: 0 <= log2 - approx <= 0.0861


def test_c_slog_and_log_ratio_equal_python(slog_exe, tmp_path):
    args = _arguments()
    rng = np.random.default_rng(9)
    prev = rng.permutation(args)
    inp, out = tmp_path / "in", tmp_path / "out"
    inp.write_bytes(np.stack([args, prev], axis=1).astype("<i4").tobytes())
    for mode, want in (("slog", golden.NUMPY.slog(args)),
                       ("ratio", derived.get("delta_log_ratio").device_value(golden.NUMPY, args, prev))):
        p = _run([slog_exe, mode, inp, out])
        assert p.returncode == 0, p.stderr
        got = np.frombuffer(out.read_bytes(), dtype="<i4").astype(np.int64)
        bad = np.flatnonzero(got != want)
        assert len(bad) == 0, (mode, [(int(args[i]), int(prev[i]), int(got[i]), int(want[i])) for i in bad[:5]])


def test_float_log_ratio_matches_device_value():
    """The float formula the float trees see and the device integer agree to the mantissa truncation."""
    rng = np.random.default_rng(2)
    cur, prev = rng.uniform(-8, 8, 5000), rng.uniform(-8, 8, 5000)
    d = derived.get("delta_log_ratio")
    dev = d.device_value(golden.NUMPY, np.round(cur * (1 << F)).astype(np.int64), np.round(prev * (1 << F)).astype(np.int64))
    assert np.all(np.abs(dev / (1 << d.frac_bits) - d.float_value(cur, prev)) < 4 * 2.0 ** -F + 1e-9)
    assert math.isclose(float(d.float_value(np.array([3.0]), np.array([1.0]))[0]), 1.0)  # log2(4) - log2(2)


@pytest.mark.slow
def test_every_int32_against_the_compilers_clz(slog_exe):
    """All 2^32 arguments, C against C with a different leading-one search (~10 s)."""
    p = _run([slog_exe, "sweep"], timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "0"
