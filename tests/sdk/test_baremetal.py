"""The runtime works bare-metal: rtt_template linked with crt0.S/harness.c/link.ld for rv32imc
and rv64imac, run in unicorn on a mixed random table, gives exactly the hosted results."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlcc import formats as F
from rlcc.firmware_sdk_stub import harness_layout as hl

N = 1500


def random_table(n: int, seed: int = 3) -> tuple[np.ndarray, list]:
    rng = np.random.default_rng(seed)
    recs = hl.new_records(n)
    types = rng.choice([F.EVENT_RTT, F.EVENT_RTT, F.EVENT_TX, F.EVENT_CNP, F.EVENT_NACK, F.EVENT_ACK], size=n)
    flags = rng.integers(0, 8, size=n)
    ts = rng.integers(0, 1 << 32, size=n, dtype=np.uint64)
    rtt = np.where(rng.random(n) < 0.5, rng.integers(0, 30_000, size=n), rng.integers(0, 3_000_000, size=n))
    recs["event"][:, 0] = hl.event_attr_word(types, 0, rng.integers(0, 2, size=n), flags)
    recs["event"][:, 1] = rng.integers(0, 1 << 24, size=n)
    recs["event"][:, 2] = np.arange(n)
    recs["event"][:, 3] = ts.astype(np.uint32)
    recs["event"][:, 4] = ((ts - rtt.astype(np.uint64)) & 0xFFFFFFFF).astype(np.uint32)  # wraps too
    recs["event"][:, 5:] = rng.integers(0, 1 << 32, size=(n, 3), dtype=np.uint64).astype(np.uint32)
    ctx = rng.integers(0, 1 << 32, size=(n, F.CTX_WORDS), dtype=np.uint64).astype(np.uint32)
    ctx[:, 0] = np.where(rng.random(n) < 0.1, 0, rng.integers(1, F.RATE_MAX + 1, size=n))
    ctx[:, 1] &= 7
    ctx[:, 4] &= 15
    ctx[:, 3] = ((ts - rng.integers(0, 40_000_000, size=n).astype(np.uint64)) & 0xFFFFFFFF).astype(np.uint32)
    recs["ctx_in"] = ctx
    recs["attr"] = hl.attr_word(rng.integers(0, 3, size=n), rng.random(n) < 0.2)
    recs["flags"] = (rng.random(n) < 0.3).astype(np.uint32) * hl.REC_CHAIN_CTX
    cmds = [hl.ParamCmd(slot=1, param_id_base=0, values=[20_000, 10_000]),
            hl.ParamCmd(slot=2, param_id_base=8, values=[5_000, 3]),
            hl.ParamCmd(slot=2, param_id_base=0, values=[0])]  # rejected
    return recs, cmds


@pytest.fixture(scope="module")
def table_and_host(rtt_host_exe, tmp_path_factory, sdkt):
    recs, cmds = random_table(N)
    buf = hl.pack_input(recs, cmds)
    rc, out, err = sdkt.run_host_harness(rtt_host_exe, buf, tmp_path_factory.mktemp("bm"))
    assert rc == 0, err
    return buf, hl.unpack_output(out)


@pytest.mark.parametrize("target", ["rv32imc", "rv64imac"])
def test_riscv_matches_host(target, rtt_riscv_elf, table_and_host, sdkt):
    buf, host = table_and_host
    elf = rtt_riscv_elf(target)
    dev = hl.unpack_output(sdkt.run_unicorn(elf, buf))
    assert int(dev.header["count"]) == N and int(dev.header["capacity"]) == 2048
    assert dev.disable_event_mask == host.disable_event_mask
    assert dev.param_status == host.param_status == [0, 0, 1]
    for f in ("rate", "rtt_req", "ctx_out"):
        bad = np.nonzero(np.any((dev.records[f] != host.records[f]).reshape(N, -1), axis=1))[0]
        assert bad.size == 0, f"{target}: field {f} differs at records {bad[:10].tolist()}"
    assert np.all(host.records["cycles"] == 0) and np.all(host.records["instret"] == 0)
    assert np.all(dev.records["instret"] > 0)  # the CSR reads work (unicorn's counts are not exact)
    rates = dev.records["rate"]
    assert np.all((rates > 0) & (rates <= F.RATE_MAX))


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_system_compiler_asan_build_matches_zig_build(cc, table_and_host, sdk_build_dir, tmp_path, sdkt):
    """ASan (which zig cannot link) and a second compiler's code generation: same results."""
    from rlcc import firmware_sdk_stub as sdk

    buf, host = table_and_host
    exe = sdkt.build_host(sdk.runtime_sources("host") + [sdk.example_source("rtt_template")],
                          sdk_build_dir / f"rtt_host_{cc}_asan", cc=cc)
    rc, out, err = sdkt.run_host_harness(exe, buf, tmp_path)
    assert rc == 0 and "runtime error" not in err and "AddressSanitizer" not in err, err
    other = hl.unpack_output(out)
    for f in ("rate", "rtt_req", "ctx_out"):
        np.testing.assert_array_equal(other.records[f], host.records[f], err_msg=f)
    assert other.param_status == host.param_status

@pytest.mark.parametrize("target", ["rv32imc", "rv64imac"])
def test_riscv_capacity_overflow_is_reported(target, rtt_riscv_elf, sdkt):
    elf = rtt_riscv_elf(target)
    syms = hl.table_symbols(elf)
    assert hl.capacity_from_in_symbol_size(syms[hl.SYM_IN][1]) == 2048
    # header claims 4096 records, buffer holds 1: the harness must refuse, not overrun
    out = hl.unpack_output(sdkt.run_unicorn(elf, hl.pack_input(hl.new_records(1), count=4096)), check=False)
    assert out.status == hl.STATUS_TOO_MANY_RECORDS and int(out.header["count"]) == 0


@pytest.fixture(scope="module")
def fxp_table():
    rng = np.random.default_rng(11)
    n = 2000
    recs = hl.new_records(n)
    ev = rng.integers(0, 1 << 32, size=(n, 8), dtype=np.uint64)
    # mix in small magnitudes and edge values
    ev[::3] >>= rng.integers(0, 32, size=(len(ev[::3]), 8)).astype(np.uint64)
    ev[:8, 1:] = np.array([0, 1, 0xFFFFFFFF, 0x10000, 0x80000000, 2, 0xFFFF], dtype=np.uint64)[:7]
    ev[:, 5] = (rng.integers(-18 * 65536, 17 * 65536, size=n).astype(np.int64) & 0xFFFFFFFF).astype(np.uint64)
    recs["event"] = ev.astype(np.uint32)
    return hl.pack_input(recs)


@pytest.mark.parametrize("target", ["rv32imc", "rv64imac"])
def test_fxp_helpers_bit_exact_on_riscv(target, fxp_table, sdk_build_dir, tmp_path, sdkt):
    from rlcc import firmware_sdk_stub as sdk

    src = sdkt.CSRC / "fxp_algo.c"
    host = sdkt.build_host(sdk.runtime_sources("host") + [src], sdk_build_dir / "fxp_algo_host")
    rc, out, err = sdkt.run_host_harness(host, fxp_table, tmp_path)
    assert rc == 0, err
    want = hl.unpack_output(out).records
    # spot-check the host against Python so the comparison is anchored
    w = np.frombuffer(fxp_table, dtype=hl.IN_RECORD_DTYPE, offset=hl.IN_PREFIX_SIZE)["event"]
    for i in range(0, 2000, 97):
        a, b = int(w[i, 1]), int(w[i, 2])
        assert int(want["ctx_out"][i, 0]) == min((a * b) >> 16, 0xFFFFFFFF)
        assert int(want["ctx_out"][i, 7]) == math.isqrt((int(w[i, 6]) << 32) | int(w[i, 7]))
    elf = sdkt.build_riscv(target, [src], sdk_build_dir / f"fxp_algo_{target}.elf")
    got = hl.unpack_output(sdkt.run_unicorn(elf, fxp_table)).records
    bad = np.nonzero(np.any(got["ctx_out"] != want["ctx_out"], axis=1))[0]
    assert bad.size == 0, f"{target}: helpers differ from host at records {bad[:10].tolist()}"
