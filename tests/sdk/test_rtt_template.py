"""The reference rtt_template algorithm, hosted (zig UBSan build of harness_host.c; the gcc/clang
ASan build is in test_baremetal), with directed cases: each decision branch, wraparound RTT,
clamping, new flows, TX probe timeouts, parameter validation and the disable mask."""

from __future__ import annotations

import numpy as np
import pytest

from rlcc import formats as F
from rlcc.firmware_sdk_stub import harness_layout as hl

ONE = F.FACTOR_ONE
UF, AI, BASE, MAXD = 6554, 52429, 13000, 150000
NEW_RATE, MIN_RATE, STRONG, MEDIUM, TIMEOUT = F.RATE_MAX, F.RATE_MIN_DEFAULT, 32768, 49152, 1_000_000
# ctx words of rtt_template
RATE, FLAGS, LAST_RTT, PROBE_TS, BACKOFF = range(5)
CNP_SEEN, NACK_SEEN, PROBE_OUT = 1, 2, 4


def fxp(a, b):
    return min((a * b) >> 16, 0xFFFFFFFF)


def rec(recs, i, *, etype, ts=0, u=(0, 0, 0, 0), flags=0, ctx=None, slot=0, overloaded=False, chain=False):
    r = recs[i]
    r["event"][:] = [hl.event_attr_word(etype, 0, 0, flags), 0x1234, i, ts & 0xFFFFFFFF, *[x & 0xFFFFFFFF for x in u]]
    if ctx is not None:
        c = np.zeros(F.CTX_WORDS, dtype=np.uint32)
        c[: len(ctx)] = ctx
        r["ctx_in"][:] = c
    r["attr"] = hl.attr_word(slot, overloaded)
    r["flags"] = hl.REC_CHAIN_CTX if chain else 0


def rtt_ev(recs, i, rtt, rate, *, send_ts=1_000_000, **kw):
    rec(recs, i, etype=F.EVENT_RTT, ts=send_ts + rtt, u=(send_ts, send_ts + 100, send_ts + 200, 0),
        ctx=None if rate is None else [rate, PROBE_OUT], **kw)


@pytest.fixture
def run_host(rtt_host_exe, tmp_path, sdkt):
    def go(recs, cmds=(), ok=True):
        rc, out, err = sdkt.run_host_harness(rtt_host_exe, hl.pack_input(recs, cmds), tmp_path)
        assert (rc == 0) == ok, err
        assert "runtime error" not in err and "AddressSanitizer" not in err, err
        return hl.unpack_output(out, check=ok)

    return go


def test_decision_branches(run_host):
    R = 500_000
    recs = hl.new_records(8)
    rtt_ev(recs, 0, 20_000, R)                  # base < rtt < max delay: mild decrease 1 - UF
    rtt_ev(recs, 1, 5_000, R)                   # rtt <= base: additive increase
    rtt_ev(recs, 2, BASE, R)                    # rtt == base: increase (strictly greater decreases)
    rtt_ev(recs, 3, MAXD, R)                    # rtt >= max delay: medium decrease
    rec(recs, 4, etype=F.EVENT_CNP, ts=10, ctx=[R, PROBE_OUT])
    rtt_ev(recs, 5, 1_000, None, chain=True)    # CNP seen then low rtt: medium decrease
    rec(recs, 6, etype=F.EVENT_NACK, ts=10, ctx=[R, PROBE_OUT])
    rtt_ev(recs, 7, 20_000, None, chain=True)   # NACK seen and high rtt: strong decrease
    t = run_host(recs)
    rate = t.records["rate"].tolist()
    assert rate[0] == fxp(R, ONE - UF) == 449_996
    assert rate[1] == R + AI and rate[2] == R + AI
    assert rate[3] == fxp(R, MEDIUM)
    assert rate[4] == R and t.records["rtt_req"][4] == 0          # CNP only marks
    assert t.records["ctx_out"][4][FLAGS] & CNP_SEEN
    assert rate[5] == fxp(R, MEDIUM)
    assert rate[6] == R and t.records["ctx_out"][6][FLAGS] & NACK_SEEN
    assert rate[7] == fxp(R, STRONG) == R // 2
    for i in (0, 1, 2, 3, 5, 7):
        assert t.records["rtt_req"][i] == 1                        # next probe requested
        assert t.records["ctx_out"][i][FLAGS] == PROBE_OUT          # marks cleared
    assert t.records["ctx_out"][0][LAST_RTT] == 20_000
    assert t.disable_event_mask == (1 << F.EVENT_NULL) | (1 << F.EVENT_FW) | (1 << F.EVENT_ACK)


def test_nack_with_low_rtt_increases(run_host):
    recs = hl.new_records(2)
    rec(recs, 0, etype=F.EVENT_NACK, ctx=[300_000])
    rtt_ev(recs, 1, 2_000, None, chain=True)
    assert run_host(recs).records["rate"][1] == 300_000 + AI


def test_wraparound_rtt(run_host):
    recs = hl.new_records(2)
    send = (1 << 32) - 10_000  # the probe left just before the 32-bit ns clock wrapped
    rec(recs, 0, etype=F.EVENT_RTT, ts=send + 15_000, u=(send, 0, 0, 0), ctx=[400_000])  # rtt 15 us
    # event at ts 1000 (after the wrap), probe sent at 2^32 - 2000: rtt 3 us (not ~4.29 s)
    rec(recs, 1, etype=F.EVENT_RTT, ts=1_000, u=((1 << 32) - 2_000, 0, 0, 0), ctx=[400_000])
    t = run_host(recs)
    assert t.records["ctx_out"][0][LAST_RTT] == 15_000
    assert t.records["rate"][0] == fxp(400_000, ONE - UF)
    assert t.records["ctx_out"][1][LAST_RTT] == 3_000
    assert t.records["rate"][1] == 400_000 + AI


def test_clamping_and_new_flow(run_host):
    recs = hl.new_records(4)
    rtt_ev(recs, 0, 1_000, F.RATE_MAX - 10)          # increase clamps at max
    rec(recs, 1, etype=F.EVENT_NACK, ctx=[100])
    rtt_ev(recs, 2, 20_000, None, chain=True)        # 100 * 0.5 = 50 -> clamps at min 64
    rec(recs, 3, etype=F.EVENT_CNP, ts=777, ctx=[0] * 12)  # new flow
    t = run_host(recs)
    assert t.records["rate"][0] == F.RATE_MAX
    assert t.records["rate"][2] == MIN_RATE
    assert t.records["rate"][3] == NEW_RATE and t.records["rtt_req"][3] == 1
    c = t.records["ctx_out"][3]
    assert c[FLAGS] == PROBE_OUT | CNP_SEEN and c[PROBE_TS] == 777
    assert all(0 < r <= F.RATE_MAX for r in t.records["rate"].tolist())


def test_tx_probe_timeout_backoff_and_overload(run_host):
    recs = hl.new_records(5)
    R = 600_000
    rec(recs, 0, etype=F.EVENT_TX, ts=500 + TIMEOUT + 1, ctx=[R, PROBE_OUT, 0, 500, 0])       # timed out
    rec(recs, 1, etype=F.EVENT_TX, ts=500 + TIMEOUT, ctx=[R, PROBE_OUT, 0, 500, 0])           # not yet
    rec(recs, 2, etype=F.EVENT_TX, ts=500 + 2 * TIMEOUT, ctx=[R, PROBE_OUT, 0, 500, 1])       # backoff 1: not yet
    rec(recs, 3, etype=F.EVENT_TX, ts=500 + TIMEOUT + 1, ctx=[R, PROBE_OUT, 0, 500, 0], overloaded=True)
    rec(recs, 4, etype=F.EVENT_TX, ts=9_999, flags=F.TX_FLAG_RTT_REQ_SENT, ctx=[R, 0, 0, 500, 0])
    t = run_host(recs)
    r, q, c = t.records["rate"], t.records["rtt_req"], t.records["ctx_out"]
    assert (r[0], q[0], c[0][BACKOFF], c[0][PROBE_TS]) == (fxp(R, MEDIUM), 1, 1, 500 + TIMEOUT + 1)
    assert (r[1], q[1], c[1][BACKOFF]) == (R, 0, 0)
    assert (r[2], q[2], c[2][BACKOFF]) == (R, 0, 1)
    assert (r[3], q[3]) == (R, 0)  # overloaded: no timeout processing
    assert c[4][PROBE_TS] == 9_999 and c[4][FLAGS] & PROBE_OUT and q[4] == 0


def test_parameters_per_slot_and_validation(run_host):
    recs = hl.new_records(2)
    rtt_ev(recs, 0, 20_000, 500_000, slot=1)
    rtt_ev(recs, 1, 20_000, 500_000, slot=0)
    cmds = [
        hl.ParamCmd(slot=1, param_id_base=0, values=[0x8000]),      # UF 0.5 on slot 1: ok
        hl.ParamCmd(slot=2, param_id_base=0, values=[0]),           # UF 0: fail
        hl.ParamCmd(slot=2, param_id_base=0, values=[ONE]),         # UF 1.0: fail
        hl.ParamCmd(slot=2, param_id_base=3, values=[BASE]),        # max delay == base: fail
        hl.ParamCmd(slot=2, param_id_base=2, values=[20_000, 30_000]),  # base/max together: ok
        hl.ParamCmd(slot=2, param_id_base=9, values=[3, 4]),        # beyond the algo's params: fail
        hl.ParamCmd(slot=9, param_id_base=0, values=[100]),         # bad slot: fail (runtime)
        hl.ParamCmd(slot=2, param_id_base=4, values=[MIN_RATE - 1]),  # new-flow rate < min: fail
    ]
    t = run_host(recs, cmds)
    assert t.param_status == [0, 1, 1, 1, 0, 1, 1, 1]
    assert t.records["rate"][0] == fxp(500_000, ONE - 0x8000) == 250_000
    assert t.records["rate"][1] == fxp(500_000, ONE - UF)


def test_rejected_tables(rtt_host_exe, tmp_path, sdkt):
    buf = bytearray(hl.pack_input(hl.new_records(1)))
    buf[0] ^= 0xFF
    rc, out, _ = sdkt.run_host_harness(rtt_host_exe, bytes(buf), tmp_path)
    assert rc == 3 and hl.unpack_output(out, check=False).status == hl.STATUS_BAD_MAGIC
    rc, out, _ = sdkt.run_host_harness(rtt_host_exe, hl.pack_input(hl.new_records(2), count=5), tmp_path)
    assert rc == 3  # header claims more records than the file holds
