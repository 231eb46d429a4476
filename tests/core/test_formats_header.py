"""pcc_sdk.h must agree with rlcc.formats: compile a hosted program that prints the header's
constants, sizes, offsets and accessor word positions, and compare with the Python values."""

from __future__ import annotations

import subprocess

import pytest

from rlcc import formats
from rlcc.firmware_sdk_stub import SDK_DIR
from rlcc.verify.toolchain import host_compiler

PROG = r"""
#include <stdio.h>
#include <stddef.h>
#include "pcc_sdk.h"
#define P(name, v) printf("%s=%llu\n", name, (unsigned long long)(v))
int main(void) {
    pcc_event_t ev;
    unsigned k;
    P("RATE_FRAC_BITS", PCC_RATE_FRAC_BITS);
    P("RATE_ONE", PCC_RATE_ONE);
    P("RATE_MAX", PCC_MAX_RATE);
    P("RATE_MIN_DEFAULT", PCC_MIN_RATE);
    P("FACTOR_FRAC_BITS", PCC_FACTOR_FRAC_BITS);
    P("FACTOR_ONE", PCC_FACTOR_ONE);
    P("CTX_BYTES", PCC_CTX_BYTES);
    P("CTX_WORDS", PCC_CTX_WORDS);
    P("sizeof_ctx", sizeof(pcc_ctx_t));
    P("EVENT_NULL", PCC_EVENT_NULL);
    P("EVENT_FW", PCC_EVENT_FW);
    P("EVENT_CNP", PCC_EVENT_CNP);
    P("EVENT_TX", PCC_EVENT_TX);
    P("EVENT_ACK", PCC_EVENT_ACK);
    P("EVENT_NACK", PCC_EVENT_NACK);
    P("EVENT_RTT", PCC_EVENT_RTT);
    P("TX_FLAG_ACK_EXPECTED", PCC_TX_FLAG_ACK_EXPECTED);
    P("TX_FLAG_OVERLOADED", PCC_TX_FLAG_OVERLOADED);
    P("TX_FLAG_RTT_REQ_SENT", PCC_TX_FLAG_RTT_REQ_SENT);
    P("EVENT_WORDS", PCC_EVENT_WORDS);
    P("EVENT_BYTES", PCC_EVENT_BYTES);
    P("sizeof_event", sizeof(pcc_event_t));
    P("EV_ATTR", PCC_EV_W_ATTR);
    P("EV_FLOW_TAG", PCC_EV_W_FLOW_TAG);
    P("EV_SN", PCC_EV_W_SN);
    P("EV_TIMESTAMP", PCC_EV_W_TIMESTAMP);
    P("EV_U0", PCC_EV_W_U0);
    P("EV_U1", PCC_EV_W_U1);
    P("EV_U2", PCC_EV_W_U2);
    P("EV_U3", PCC_EV_W_U3);
    P("ATTR_SLOT_MASK", PCC_ATTR_SLOT_MASK);
    P("ATTR_OVERLOAD_BIT", PCC_ATTR_OVERLOAD_BIT);
    P("RESULT_WORDS", PCC_RESULT_WORDS);
    P("sizeof_results", sizeof(pcc_results_t));
    P("off_rate", offsetof(pcc_results_t, rate));
    P("off_rtt_req", offsetof(pcc_results_t, rtt_req));
    /* accessor -> word index: word k holds 0x01000000*(k+1) + 0x00ABCDEF-ish markers */
    for (k = 0; k < PCC_EVENT_WORDS; k++) ev.w[k] = 0x10u * (k + 1u) + 0x11000000u * (k + 1u);
    P("acc_timestamp", pcc_ev_timestamp(&ev));
    P("acc_flow_tag", pcc_ev_flow_tag(&ev));
    P("acc_sn", pcc_ev_sn(&ev));
    P("acc_rtt_req_send_ts", pcc_ev_rtt_req_send_ts(&ev));
    P("acc_rtt_req_recv_ts", pcc_ev_rtt_req_recv_ts(&ev));
    P("acc_rtt_resp_send_ts", pcc_ev_rtt_resp_send_ts(&ev));
    P("acc_first_ts", pcc_ev_first_ts(&ev));
    P("acc_first_sn", pcc_ev_first_sn(&ev));
    P("acc_coalesced", pcc_ev_coalesced(&ev));
    P("acc_tx_units", pcc_ev_tx_sent_units(&ev));
    P("acc_tx_packets", pcc_ev_tx_sent_packets(&ev));
    P("acc_tx_flow_id", pcc_ev_tx_flow_id(&ev));
    ev.w[PCC_EV_W_ATTR] = 0xA4B3C2D1u;
    P("acc_type", pcc_ev_type(&ev));
    P("acc_subtype", pcc_ev_subtype(&ev));
    P("acc_port", pcc_ev_port(&ev));
    P("acc_flags", pcc_ev_flags(&ev));
    P("attr_slot", pcc_attr_slot(pcc_attr_make(0x1Bu, true)));
    P("attr_raw", pcc_attr_make(0x1Bu, true).raw);
    return 0;
}
"""


@pytest.fixture(scope="module")
def header_values(tmp_path_factory) -> dict[str, int]:
    d = tmp_path_factory.mktemp("fmt")
    (d / "p.c").write_text(PROG)
    exe = d / "p"
    cc = [*host_compiler(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wconversion", f"-I{SDK_DIR}", str(d / "p.c"), "-o", str(exe)]
    p = subprocess.run(cc, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in (line.split("=") for line in out.split())}


def test_constants_match_formats(header_values):
    h = header_values
    names = [
        "RATE_FRAC_BITS", "RATE_ONE", "RATE_MAX", "RATE_MIN_DEFAULT", "FACTOR_FRAC_BITS", "FACTOR_ONE",
        "CTX_BYTES", "CTX_WORDS", "EVENT_NULL", "EVENT_FW", "EVENT_CNP", "EVENT_TX", "EVENT_ACK",
        "EVENT_NACK", "EVENT_RTT", "TX_FLAG_ACK_EXPECTED", "TX_FLAG_OVERLOADED", "TX_FLAG_RTT_REQ_SENT",
        "EVENT_WORDS", "EVENT_BYTES", "EV_ATTR", "EV_FLOW_TAG", "EV_SN", "EV_TIMESTAMP",
        "EV_U0", "EV_U1", "EV_U2", "EV_U3", "ATTR_SLOT_MASK", "ATTR_OVERLOAD_BIT", "RESULT_WORDS",
    ]
    for n in names:
        assert h[n] == getattr(formats, n), n


def test_sizes_and_offsets(header_values):
    h = header_values
    assert h["sizeof_ctx"] == formats.CTX_BYTES
    assert h["sizeof_event"] == formats.EVENT_BYTES
    assert h["sizeof_results"] == formats.RESULT_WORDS * 4
    assert (h["off_rate"], h["off_rtt_req"]) == (0, 4)


def test_accessors_read_the_formats_words(header_values):
    h = header_values

    def word(k):
        return (0x10 * (k + 1) + 0x11000000 * (k + 1)) & 0xFFFFFFFF

    assert h["acc_timestamp"] == word(formats.EV_TIMESTAMP)
    assert h["acc_flow_tag"] == word(formats.EV_FLOW_TAG)
    assert h["acc_sn"] == word(formats.EV_SN)
    assert h["acc_rtt_req_send_ts"] == word(formats.EV_RTT_REQ_SEND_TS)
    assert h["acc_rtt_req_recv_ts"] == word(formats.EV_RTT_REQ_RECV_TS)
    assert h["acc_rtt_resp_send_ts"] == word(formats.EV_RTT_RESP_SEND_TS)
    assert h["acc_coalesced"] == word(formats.EV_COALESCED) & 0xFFFF
    assert h["acc_first_ts"] == word(formats.EV_U0)
    assert h["acc_first_sn"] == word(formats.EV_U1)
    assert h["acc_tx_units"] == word(formats.EV_U0) & 0xFFFF
    assert h["acc_tx_packets"] == word(formats.EV_U0) >> 16
    assert h["acc_tx_flow_id"] == word(formats.EV_U1) & 0xFFFFFF
    # attribute word: type in the low byte, then subtype, port, flags
    assert (h["acc_type"], h["acc_subtype"], h["acc_port"], h["acc_flags"]) == (0xD1, 0xC2, 0xB3, 0xA4)
    assert h["attr_slot"] == 0x1B & formats.ATTR_SLOT_MASK
    assert h["attr_raw"] == (0x1B & formats.ATTR_SLOT_MASK) | formats.ATTR_OVERLOAD_BIT
