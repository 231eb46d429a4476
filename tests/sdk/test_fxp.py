"""Fixed-point helpers of pcc_fxp.h against Python oracles (thousands of random values plus
0, extremes and boundaries; pow2 exhaustively over its whole non-saturated input range)."""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest


U32 = 0xFFFFFFFF
rng = np.random.default_rng(20261121)


@pytest.fixture(scope="module")
def fxp(sdk_build_dir, sdkt):
    exe = sdkt.build_host([sdkt.CSRC / "fxp_driver.c"], sdk_build_dir / "fxp_driver")
    env = sdkt.host_env()

    def call(func: str, args: np.ndarray) -> np.ndarray:
        data = np.ascontiguousarray(args, dtype="<u8").tobytes()
        p = subprocess.run([str(exe), func], input=data, capture_output=True, env=env)
        assert p.returncode == 0, p.stderr.decode()
        return np.frombuffer(p.stdout, dtype="<u8")

    return call


def u32_samples(n=20000) -> np.ndarray:
    edge = [0, 1, 2, 3, 0xFFFF, 0x10000, 0x10001, 0x7FFFFFFF, 0x80000000, 0x80000001, U32 - 1, U32]
    pw = [1 << k for k in range(32)] + [(1 << k) - 1 for k in range(1, 33)] + [(1 << k) + 1 for k in range(32)]
    rnd = rng.integers(0, 1 << 32, size=n, dtype=np.uint64)
    small = rng.integers(0, 1 << 12, size=n // 4, dtype=np.uint64)
    # log-uniform values to cover every magnitude
    lu = (2.0 ** rng.uniform(0, 32, size=n // 2)).astype(np.uint64) & U32
    return np.concatenate([np.array(edge + pw, dtype=np.uint64), rnd, small, lu])


def test_mult_and_fxp_mult(fxp):
    a = u32_samples()
    b = np.concatenate([a[::-1][: len(a) // 2], rng.integers(0, 1 << 32, size=len(a) - len(a) // 2, dtype=np.uint64)])
    pairs = np.stack([a, b], axis=1)
    got_m = fxp("mult", pairs)
    got_f = fxp("fxp_mult", pairs)
    for x, y, m, f in zip(a.tolist(), b.tolist(), got_m.tolist(), got_f.tolist()):
        assert m == x * y
        assert f == min((x * y) >> 16, U32), (x, y)


def test_fls(fxp):
    a = u32_samples()
    got = fxp("fls", a)
    assert got.tolist() == [int(x).bit_length() for x in a.tolist()]


def test_recip(fxp):
    a = u32_samples()
    got = fxp("recip", a)
    for x, r in zip(a.tolist(), got.tolist()):
        want = U32 if x <= 1 else (1 << 32) // x
        assert r == want, x


def test_isqrt64(fxp):
    r64 = rng.integers(0, 1 << 64, size=20000, dtype=np.uint64, endpoint=False)
    roots = rng.integers(0, 1 << 32, size=3000, dtype=np.uint64)
    sq = [int(r) * int(r) for r in roots.tolist()]
    vals = [0, 1, 2, 3, 4, (1 << 64) - 1, (1 << 64) - 2, (1 << 63), (U32 * U32), U32 * U32 - 1, U32 * U32 + 1]
    vals += sq + [max(s - 1, 0) for s in sq] + [min(s + 1, (1 << 64) - 1) for s in sq] + r64.tolist()
    vals += [1 << k for k in range(64)]
    got = fxp("isqrt", np.array(vals, dtype=np.uint64))
    for v, g in zip(vals, got.tolist()):
        assert g == math.isqrt(v), v


def test_log2_within_documented_error(fxp):
    a = u32_samples()
    got = fxp("log2", a).view(np.int64)  # sign-extended by the driver
    nz = a != 0
    assert got[~nz].tolist() == [-(1 << 31)] * int((~nz).sum())  # INT32_MIN at 0
    exact = np.log2(a[nz].astype(np.float64) / 65536.0) * 65536.0
    err = exact - got[nz].astype(np.float64)
    # documented: never above the exact value, below it by less than 2 ulp
    assert err.min() > -1e-6, a[nz][np.argmin(err)]
    assert err.max() < 2.0, a[nz][np.argmax(err)]
    # powers of two are exact
    pw = np.array([1 << k for k in range(32)], dtype=np.uint64)
    assert fxp("log2", pw).view(np.int64).tolist() == [(k - 16) * 65536 for k in range(32)]


def test_pow2_exhaustive_within_documented_error(fxp):
    lo, hi = -17 * 65536, 16 * 65536
    xs = np.arange(lo - 3, hi + 3, dtype=np.int64)
    got = fxp("pow2", xs.astype(np.uint64) & U32).astype(np.float64)
    exact = np.exp2(xs.astype(np.float64) / 65536.0) * 65536.0
    inrange = (xs >= lo) & (xs < hi)
    err = np.abs(got[inrange] - exact[inrange])
    bound = 0.5 + exact[inrange] * 2.0**-27 + 1e-6
    bad = np.nonzero(err > bound)[0]
    assert bad.size == 0, (xs[inrange][bad[:5]], got[inrange][bad[:5]], exact[inrange][bad[:5]])
    assert got[xs >= hi].tolist() == [float(U32)] * int((xs >= hi).sum())  # saturation
    assert got[xs < lo].tolist() == [0.0] * int((xs < lo).sum())  # underflow to 0
    ints = np.arange(-16, 16, dtype=np.int64) * 65536
    assert fxp("pow2", ints.astype(np.uint64) & U32).tolist() == [int(2.0 ** (k + 16)) for k in range(-16, 16)]
    big = np.array([hi, 0x7FFFFFFF, (1 << 32) - (1 << 31)], dtype=np.uint64)  # >= 16.0 and INT32_MIN
    assert fxp("pow2", big).tolist() == [U32, U32, 0]
