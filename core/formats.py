"""Fixed-point formats and device constants: the single source of truth.

Python (golden model, quantizer, verifier), the Jinja templates (which receive these values)
and the SDK stub header (checked against this module by tests/core/test_formats_header.py) all use
these numbers; nothing else may restate them.
"""

from __future__ import annotations

# Rate: fraction of line rate, unsigned, 20 fractional bits. Valid range (0, 1 << 20].
RATE_FRAC_BITS = 20
RATE_ONE = 1 << RATE_FRAC_BITS
RATE_MAX = RATE_ONE
RATE_MIN_DEFAULT = 1 << 6  # the SDK sample's minimum rate (about 6e-5 of line rate)

# Multiplicative factors (the policy's action) and other real-valued quantities: Q16.16.
FACTOR_FRAC_BITS = 16
FACTOR_ONE = 1 << FACTOR_FRAC_BITS

# Per-flow context kept by the PCC runtime between events.
CTX_BYTES = 48
CTX_WORDS = CTX_BYTES // 4

# Event types of the PCC-style SDK (firmware_sdk_stub/pcc_sdk.h: enum pcc_event_type).
EVENT_NULL = 0
EVENT_FW = 1  # deprecated
EVENT_CNP = 2
EVENT_TX = 3
EVENT_ACK = 4
EVENT_NACK = 5
EVENT_RTT = 6
EVENT_NAMES = {
    EVENT_NULL: "NULL",
    EVENT_FW: "FW",
    EVENT_CNP: "CNP",
    EVENT_TX: "TX",
    EVENT_ACK: "ACK",
    EVENT_NACK: "NACK",
    EVENT_RTT: "RTT",
}

# TX event flags (bits of the flags byte of the event attribute word).
TX_FLAG_ACK_EXPECTED = 1 << 0
TX_FLAG_OVERLOADED = 1 << 1
TX_FLAG_RTT_REQ_SENT = 1 << 2

EVENT_TYPE_MASK = 0xFF  # the event type is the low byte of the attribute word

# Event record: 8 little-endian uint32 words (32 bytes).
#   word 0: attribute {type:8, subtype:8, port:8, flags:8} (type in the low byte)
#   word 1: flow tag, word 2: sequence number, word 3: timestamp (ns, wraps mod 2^32)
#   words 4..7: per-type union
#     RTT:           [4] request send ts, [5] request receive ts, [6] response send ts (ns)
#     TX:            [4] sent 32-byte units (low 16) | sent packets (high 16), [5] flow id (24 bits)
#     ACK/NACK/CNP:  [4] first timestamp, [5] first sequence number, [6] coalesced count (low 16)
EVENT_WORDS = 8
EVENT_BYTES = EVENT_WORDS * 4
EV_ATTR, EV_FLOW_TAG, EV_SN, EV_TIMESTAMP = 0, 1, 2, 3
EV_U0, EV_U1, EV_U2, EV_U3 = 4, 5, 6, 7
EV_RTT_REQ_SEND_TS = EV_U0
EV_RTT_REQ_RECV_TS = EV_U1
EV_RTT_RESP_SEND_TS = EV_U2
EV_COALESCED = EV_U2

# CNP/ACK/NACK events carry how many events the hardware coalesced into this one (low 16 bits).
COALESCED_MASK = 0xFFFF

# Algorithm attribute word passed to user_algo: slot in bits 0..3, overload flag bit 4.
ATTR_SLOT_MASK = 0xF
ATTR_OVERLOAD_BIT = 1 << 4

# Results: {uint32 rate; uint32 rtt_req;}
RESULT_WORDS = 2

# ---- Policy features on the device -------------------------------------------------------
# Each feature's integer format (fractional bits of a signed 32-bit value) is declared with the
# feature in rlcc.features. The spec's affine scale/offset is never computed on the device: it is
# folded into the integer split thresholds at compile time.
# RTT inflation is computed without a division: infl_q16 = (rtt_ns * INV_BASE_RTT) >> INV_BASE_RTT_SHIFT
# with INV_BASE_RTT = round(2^(16 + INV_BASE_RTT_SHIFT) / base_rtt_ns).
INV_BASE_RTT_SHIFT = 16
# sqrt(rate) is kept with SQRT_RATE_FRAC_BITS fractional bits: isqrt(rate_q20 << RATE_FRAC_BITS).
SQRT_RATE_FRAC_BITS = RATE_FRAC_BITS
# Every feature saturates to this range so a threshold of INT32_MIN means "always true".
FEATURE_MIN = -(2**31) + 1
FEATURE_MAX = 2**31 - 1
COUNT_BITS = 16  # CNP/NACK counters are 16 bits each in the context's counts word
COUNT_MAX = (1 << COUNT_BITS) - 1
CNP_SHIFT = 0  # CNP count: low half of the counts word
NACK_SHIFT = COUNT_BITS  # NACK count: high half

# Per-flow context layout (word indices into the 12 x uint32 context) used by generated firmware.
CTX_RATE = 0  # current rate, RATE_FRAC_BITS; 0 = new flow (the runtime zeroes new contexts)
CTX_PREV_FACTOR = 1  # Q16.16 factor of the previous decision
CTX_COUNTS = 2  # CNP count (low 16 bits) | NACK count (high 16 bits) since the last decision
CTX_FLAGS = 3  # bit 0: history window valid; bits 16..31: the rate update's carried remainder
CTX_FLAG_HISTORY_VALID = 1
# The rate update carries the product's fraction (the bits below the rate's LSB) to the next update
# (error feedback) instead of truncating it: a factor within 1/rate of 1 would otherwise never move
# a small rate, and truncation only ever moves it down (measured: -4% steady RTT at 2048 flows).
CTX_RATE_CARRY_SHIFT = 16  # the carry's position in the flags word (its high half)
RATE_CARRY_MASK = (1 << FACTOR_FRAC_BITS) - 1  # the product bits carried
CTX_PROBE_TS = 4  # event timestamp (ns, mod 2^32) of the last RTT probe request (rtt_req = 1)
CTX_HISTORY = 5  # past steps' features (int32), newest step first, features in spec order
CTX_HISTORY_WORDS = CTX_WORDS - CTX_HISTORY  # room for (history - 1) * n_features values

# Tree ensemble arithmetic: leaves, bias and their sum are Q16.16 factors in int32.
LEAF_FRAC_BITS = FACTOR_FRAC_BITS

# RTT-probe loss recovery: a TX event on a running flow re-requests a probe (rtt_req = 1) when
# (timestamp - probe_ts) mod 2^32 >= the probe timeout. Default 4 ms: above the worst RTT the
# simulator's deepest queue can produce (a full 32 MB buffer drained at 100 Gb/s, 2.56 ms, plus
# the base RTT), so a probe that is merely slow is not re-requested. Overridable per model
# (rlcc-compile --probe-timeout-us) and per slot on the device (host parameter PROBE_TIMEOUT_NS).
PROBE_TIMEOUT_NS_DEFAULT = 4_000_000
PROBE_TIMEOUT_NS_MAX = 2**32 - 1  # elapsed time is measured mod 2^32
