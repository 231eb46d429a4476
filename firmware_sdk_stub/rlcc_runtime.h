/*
 * rlcc_runtime.h - the model-independent runtime of rlcc-generated congestion-control firmware.
 *
 * Every rlcc-generated <name>.c includes this header (or has it inlined at render time by
 * rlcc-compile, from this one file); the generated file itself holds only the model: inputs,
 * thresholds, leaves, bias, parameters and the glue calling the steps below. The SDK example
 * algorithm (examples/rtt_template.c) uses the generic parts (parameters, rate clamp, new flows).
 * Audited and tested once (tests/sdk/test_runtime.py, tests/codegen/test_isqrt.py); rlcc-verify
 * --prove checks the generated firmware built with it against rlcc.fxp.golden.
 *
 * Per-event semantics (rlcc.fxp.golden, normative, bit for bit):
 *   new flow (context rate 0, any event): rate = initial rate, previous factor 1.0, history invalid,
 *     probe_ts = event timestamp, rtt_req = 1;
 *   CNP/NACK: 16-bit saturating counters += max(1, coalesced);
 *   RTT: features -> window -> trees -> factor -> rate, context history shifted,
 *     probe_ts = timestamp, rtt_req = 1;
 *   TX (probe loss recovery): if (timestamp - probe_ts) mod 2^32 >= probe timeout, probe_ts =
 *     timestamp and rtt_req = 1 (a lost probe or response is re-requested); else rtt_req = 0;
 *   other events: no change, rtt_req = 0. The rate changes only on RTT events (and new flows).
 * Action: factor = clamp(bias + sum of tree leaves, clamp_min, clamp_max) in Q16.16;
 * p = rate * factor + carry, rate' = clamp(p >> 16, rate_min, 2^20), carry' = p mod 2^16 (error
 * feedback: the carry lives in the flags word's high half).
 *
 * Identifiers: RLCC_ / rlcc_ prefix. Freestanding C11: no heap, no floating point, no libc, no
 * 64-bit division. Format values mirror rlcc.formats (checked by tests/sdk/test_runtime.py).
 */
#ifndef RLCC_RUNTIME_H
#define RLCC_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "pcc_sdk.h"

/* Bumped on every change of behaviour or interface; generated firmware checks it. */
#define RLCC_RUNTIME_VERSION 7u

/* ---- formats and context layout (values from rlcc.formats) ---- */
#define RLCC_RATE_FRAC_BITS UINT32_C(20)
#define RLCC_RATE_MAX UINT32_C(1048576)
#define RLCC_FACTOR_FRAC_BITS UINT32_C(16)
#define RLCC_FACTOR_ONE UINT32_C(65536)
#define RLCC_CTX_BYTES UINT32_C(48)
#define RLCC_CTX_WORDS UINT32_C(12)
#define RLCC_CTX_RATE UINT32_C(0)
#define RLCC_CTX_PREV_FACTOR UINT32_C(1)
#define RLCC_CTX_COUNTS UINT32_C(2)
#define RLCC_CTX_FLAGS UINT32_C(3)
#define RLCC_CTX_FLAG_HISTORY_VALID UINT32_C(1)
#define RLCC_CTX_RATE_CARRY_SHIFT UINT32_C(16)
#define RLCC_RATE_CARRY_MASK UINT32_C(65535)
#define RLCC_CTX_PROBE_TS UINT32_C(4)
#define RLCC_CTX_HISTORY UINT32_C(5)
#define RLCC_CTX_HISTORY_WORDS UINT32_C(7)
#define RLCC_INV_BASE_RTT_SHIFT UINT32_C(16)
#define RLCC_SQRT_RATE_FRAC_BITS UINT32_C(20)
#define RLCC_COUNT_MAX UINT32_C(65535)
#define RLCC_LEAF_FRAC_BITS UINT32_C(16)
#define RLCC_EVENT_NULL UINT32_C(0)
#define RLCC_EVENT_FW UINT32_C(1)
#define RLCC_EVENT_CNP UINT32_C(2)
#define RLCC_EVENT_TX UINT32_C(3)
#define RLCC_EVENT_ACK UINT32_C(4)
#define RLCC_EVENT_NACK UINT32_C(5)
#define RLCC_EVENT_RTT UINT32_C(6)
#define RLCC_FEATURE_MIN INT32_C(-2147483647)
#define RLCC_FEATURE_MAX INT32_C(2147483647)
#define RLCC_CNP_SHIFT 0u /* CNP count: low half of the counts word */
#define RLCC_NACK_SHIFT 16u /* NACK count: high half of the counts word */

_Static_assert(sizeof(pcc_ctx_t) == RLCC_CTX_BYTES, "context size differs from rlcc.formats");
_Static_assert(RLCC_CTX_WORDS == PCC_CTX_WORDS, "context words differ from the SDK");
_Static_assert(RLCC_RATE_MAX == PCC_MAX_RATE, "rate format differs from the SDK");
_Static_assert(RLCC_FACTOR_ONE == PCC_FACTOR_ONE, "factor format differs from the SDK");
_Static_assert(RLCC_EVENT_NULL == PCC_EVENT_NULL, "event type NULL differs from the SDK");
_Static_assert(RLCC_EVENT_FW == PCC_EVENT_FW, "event type FW differs from the SDK");
_Static_assert(RLCC_EVENT_CNP == PCC_EVENT_CNP, "event type CNP differs from the SDK");
_Static_assert(RLCC_EVENT_TX == PCC_EVENT_TX, "event type TX differs from the SDK");
_Static_assert(RLCC_EVENT_ACK == PCC_EVENT_ACK, "event type ACK differs from the SDK");
_Static_assert(RLCC_EVENT_NACK == PCC_EVENT_NACK, "event type NACK differs from the SDK");
_Static_assert(RLCC_EVENT_RTT == PCC_EVENT_RTT, "event type RTT differs from the SDK");

/* ---- small helpers ---- */

/* 32-bit registers (RV32): a few helpers have a 32-bit form there, exact for the same operands,
 * where their int64 form would take two registers per value (rlcc-verify --prove checks each
 * target's build). */
#if defined(__riscv_xlen) && __riscv_xlen == 32
#define RLCC_NARROW_REGS 1
#else
#define RLCC_NARROW_REGS 0
#endif

/* Two's-complement reinterpretation of a context word (portable, no implementation-defined cast). */
static inline int32_t rlcc_as_int32(uint32_t w)
{
    return w <= (uint32_t)INT32_MAX ? (int32_t)w : -(int32_t)(~w) - 1;
}

static inline int64_t rlcc_clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* A rate clamped to [lo, 2^20]. */
static inline uint32_t rlcc_clamp_rate(uint64_t r, uint32_t lo)
{
    return r < lo ? lo : (r > RLCC_RATE_MAX ? RLCC_RATE_MAX : (uint32_t)r);
}

/* ---- parameters ---- */

/* The parameter array of the event's slot (pcc_param without a slot lookup per read). */
static inline const uint32_t *rlcc_slot_params(pcc_attr_t attr)
{
    return pcc_params[pcc_attr_slot(attr) % PCC_NUM_SLOTS];
}

/* Every slot's parameters: the first n from defaults, the rest 0. */
static inline void rlcc_init_params(const uint32_t *defaults, uint32_t n)
{
    uint32_t s, p;
    for (s = 0; s < PCC_NUM_SLOTS; s++) {
        for (p = 0; p < PCC_NUM_PARAMS; p++) {
            pcc_params[s][p] = p < n ? defaults[p] : 0u;
        }
    }
}

/* Validity of a whole parameter set of an algorithm (its cross-parameter rules). */
typedef bool (*rlcc_params_valid_fn)(const uint32_t *p);

/* user_set_algo_params for an algorithm with n_params parameters: validates the whole resulting
 * set, then commits it (all or nothing). */
static inline int rlcc_set_params(uint32_t port, uint32_t slot, uint32_t param_id_base, uint32_t n,
                                  const uint32_t *new_values, uint32_t *params, uint32_t n_params,
                                  rlcc_params_valid_fn valid)
{
    uint32_t tmp[PCC_NUM_PARAMS];
    uint32_t i;
    if (port >= PCC_NUM_PORTS || slot >= PCC_NUM_SLOTS || params == NULL || n_params > PCC_NUM_PARAMS ||
        param_id_base > n_params || n > n_params - param_id_base || (n != 0u && new_values == NULL)) {
        return PCC_FAIL;
    }
    for (i = 0; i < n_params; i++) {
        tmp[i] = params[i];
    }
    for (i = 0; i < n; i++) {
        tmp[param_id_base + i] = new_values[i];
    }
    if (!valid(tmp)) {
        return PCC_FAIL;
    }
    for (i = 0; i < n; i++) {
        params[param_id_base + i] = new_values[i];
    }
    return PCC_OK;
}

/* ---- per-event steps ---- */

/* All context words zero. */
static inline void rlcc_ctx_clear(uint32_t c[RLCC_CTX_WORDS])
{
    uint32_t i;
    for (i = 0; i < RLCC_CTX_WORDS; i++) {
        c[i] = 0u;
    }
}

/* A zeroed context is a new flow: initial rate, previous factor 1.0, no history; its first
 * event requests a probe (rtt_req = 1), so the probe clock starts now. */
static inline void rlcc_start_flow(uint32_t c[RLCC_CTX_WORDS], uint32_t now, uint32_t rate_initial)
{
    rlcc_ctx_clear(c);
    c[RLCC_CTX_RATE] = rate_initial;
    c[RLCC_CTX_PREV_FACTOR] = RLCC_FACTOR_ONE;
    c[RLCC_CTX_PROBE_TS] = now;
}

/* TX event: re-request an RTT probe when the last request is timeout_ns old or older (the probe
 * or its response was lost). Elapsed time is mod 2^32 (timestamps wrap). On a new flow
 * probe_ts == now, elapsed 0 < timeout: no change (rlcc_start_flow already requested one). */
static inline uint32_t rlcc_probe_timeout(uint32_t c[RLCC_CTX_WORDS], uint32_t now, uint32_t timeout_ns)
{
    if (now - c[RLCC_CTX_PROBE_TS] >= timeout_ns) {
        c[RLCC_CTX_PROBE_TS] = now;
        return 1u;
    }
    return 0u;
}

/* CNP/NACK: add max(1, coalesced) to the 16-bit counter at `shift`, saturating. */
static inline void rlcc_count_event(uint32_t c[RLCC_CTX_WORDS], uint32_t coalesced, uint32_t shift)
{
    const uint32_t counts = c[RLCC_CTX_COUNTS];
    uint32_t sum = ((counts >> shift) & RLCC_COUNT_MAX) + (coalesced == 0u ? 1u : coalesced);
    if (sum > RLCC_COUNT_MAX) {
        sum = RLCC_COUNT_MAX;
    }
    c[RLCC_CTX_COUNTS] = (counts & ~(RLCC_COUNT_MAX << shift)) | (sum << shift);
}

/* Counter of a CNP/NACK count feature (shift: RLCC_CNP_SHIFT or RLCC_NACK_SHIFT). */
static inline uint32_t rlcc_count(const uint32_t c[RLCC_CTX_WORDS], uint32_t shift)
{
    return (c[RLCC_CTX_COUNTS] >> shift) & RLCC_COUNT_MAX;
}

/* RTT / base RTT in Q16 via the reciprocal: (rtt_ns * INV_BASE_RTT) >> INV_BASE_RTT_SHIFT, saturated. */
static inline int32_t rlcc_rtt_inflation(uint32_t rtt_ns, uint32_t inv_base_rtt)
{
    const uint64_t q = ((uint64_t)rtt_ns * inv_base_rtt) >> RLCC_INV_BASE_RTT_SHIFT;
    return q > (uint64_t)RLCC_FEATURE_MAX ? RLCC_FEATURE_MAX : (int32_t)q;
}

/*
 * Exact floor(sqrt(r << RATE_FRAC_BITS)), r = min(rate, RATE_MAX) (rlcc_sqrt_rate below): no
 * division, no floats, no loop. Every event keeps a context's rate within RATE_MAX = 2^20
 * (rlcc-verify --prove's "reachable rates"); a larger one, only in a corrupted context, is read as
 * RATE_MAX, as rlcc.fxp.golden does. The domain is thus the 2^20 + 1 rates 0 .. 2^20, all of which
 * tests/codegen/test_isqrt.py and rlcc-verify --prove check; the steps say why it is fast.
 *
 * 1. Normalize: k = even shift with t = r << k in [2^30, 2^32) (1 <= r <= 2^20, so k >= 10),
 *    T = t / 2^30 in [1, 4). Then sqrt(r << 20) = 2^30 sqrt(T) / 2^(5 + k/2).
 * 2. Seed r0 ~ 1/sqrt(T) (Q0.32) from a table of 768 entries indexed by the top 10 bits of t, each
 *    the minimax value for its interval: |r0 sqrt(T) - 1| < 2^-10.
 * 3. One Goldschmidt iteration in 32-bit fixed point (one multiply-high each, mulhu on RV32):
 *    s = T r0, u = 3 - s r0, s = s u / 2, squaring the relative error (e -> -3/2 e^2 - 1/2 e^3):
 *    s ~ 2^30 sqrt(T) (Q2.30) within about 2^-20, plus truncation.
 * 4. x = s / 2^(5 + k/2) rounded to nearest: within 1 of floor(sqrt(r << 20)) for every rate
 *    (measured over the whole domain: -1 .. +1).
 * 5. One exact step fixes that: x*x > n -> x - 1; else (x+1)^2 <= n, i.e. n - x*x >= 2x + 1 -> x + 1.
 *    With x within 1 of s = floor(sqrt(n)), -(2s + 1) <= n - x*x < 4s <= 2^22: the difference is
 *    exact in 32 bits (mod 2^32, read as an int32), so on RV32 the step needs the low product word
 *    only.
 */
#define RLCC_SQRT_INDEX_BITS 10u /* seed table index: the top bits of t */
#define RLCC_SQRT_TABLE_BASE 256u /* T >= 1: the top two bits of t are not both zero */

#if !defined(__riscv_zbb)
/* floor(log2(b)) of a byte b >= 1 (entry 0 unused): the leading one without Zbb's clz in one
 * load, where a branch-free search takes four compare-and-shift steps. */
static const uint8_t rlcc_log2_byte[256] = {
    0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
};

/* Index of the leading one of v, 0 < v < 2^24: one or two compares and one table load. */
static inline uint32_t rlcc_msb24(uint32_t v)
{
    if (v >= 0x10000u) {
        return 16u + rlcc_log2_byte[v >> 16];
    }
    return v >= 0x100u ? 8u + rlcc_log2_byte[v >> 8] : rlcc_log2_byte[v];
}
#endif

/* Even k with r << k in [2^30, 2^32) (0 < r <= 2^20): clz(r) rounded down to even. */
static inline uint32_t rlcc_sqrt_norm_shift(uint32_t r)
{
#if defined(__riscv_zbb)
    return (uint32_t)__builtin_clz(r) & ~1u;
#else
    return (31u - rlcc_msb24(r)) & ~1u; /* r <= 2^20: below 2^24 */
#endif
}

/* (a * b) >> 32: one mulhu on RV32. */
static inline uint32_t rlcc_mulhi32(uint32_t a, uint32_t b)
{
    return (uint32_t)(((uint64_t)a * b) >> 32);
}

/* 2^30 sqrt(t / 2^30), t in [2^30, 2^32), within about 2^-20 relative (steps 2 and 3). */
static inline uint32_t rlcc_sqrt_q30(uint32_t t)
{
    /* entry i: round(2^16 * 2 / (sqrt(a) + sqrt(b))), [a, b) = [(i + 256) / 256, (i + 257) / 256) */
    static const uint16_t rsqrt[768] = {
        0xffc0, 0xff41, 0xfec2, 0xfe45, 0xfdc8, 0xfd4b, 0xfcd0, 0xfc55, 0xfbda, 0xfb61, 0xfae8, 0xfa70, 0xf9f8, 0xf982,
        0xf90b, 0xf896, 0xf821, 0xf7ad, 0xf739, 0xf6c6, 0xf654, 0xf5e2, 0xf571, 0xf500, 0xf491, 0xf421, 0xf3b3, 0xf344,
        0xf2d7, 0xf26a, 0xf1fd, 0xf192, 0xf126, 0xf0bc, 0xf052, 0xefe8, 0xef7f, 0xef16, 0xeeae, 0xee47, 0xede0, 0xed79,
        0xed14, 0xecae, 0xec49, 0xebe5, 0xeb81, 0xeb1d, 0xeabb, 0xea58, 0xe9f6, 0xe995, 0xe934, 0xe8d3, 0xe873, 0xe814,
        0xe7b4, 0xe756, 0xe6f8, 0xe69a, 0xe63c, 0xe5e0, 0xe583, 0xe527, 0xe4cb, 0xe470, 0xe416, 0xe3bb, 0xe361, 0xe308,
        0xe2af, 0xe256, 0xe1fe, 0xe1a6, 0xe14f, 0xe0f7, 0xe0a1, 0xe04b, 0xdff5, 0xdf9f, 0xdf4a, 0xdef5, 0xdea1, 0xde4d,
        0xddf9, 0xdda6, 0xdd53, 0xdd01, 0xdcae, 0xdc5d, 0xdc0b, 0xdbba, 0xdb69, 0xdb19, 0xdac9, 0xda79, 0xda2a, 0xd9db,
        0xd98c, 0xd93d, 0xd8ef, 0xd8a2, 0xd854, 0xd807, 0xd7ba, 0xd76e, 0xd722, 0xd6d6, 0xd68b, 0xd63f, 0xd5f5, 0xd5aa,
        0xd560, 0xd516, 0xd4cc, 0xd483, 0xd43a, 0xd3f1, 0xd3a8, 0xd360, 0xd318, 0xd2d1, 0xd289, 0xd242, 0xd1fb, 0xd1b5,
        0xd16f, 0xd129, 0xd0e3, 0xd09e, 0xd059, 0xd014, 0xcfcf, 0xcf8b, 0xcf47, 0xcf03, 0xcebf, 0xce7c, 0xce39, 0xcdf6,
        0xcdb4, 0xcd71, 0xcd2f, 0xccee, 0xccac, 0xcc6b, 0xcc2a, 0xcbe9, 0xcba8, 0xcb68, 0xcb28, 0xcae8, 0xcaa8, 0xca69,
        0xca2a, 0xc9eb, 0xc9ac, 0xc96e, 0xc930, 0xc8f2, 0xc8b4, 0xc876, 0xc839, 0xc7fc, 0xc7bf, 0xc782, 0xc746, 0xc709,
        0xc6cd, 0xc692, 0xc656, 0xc61a, 0xc5df, 0xc5a4, 0xc569, 0xc52f, 0xc4f4, 0xc4ba, 0xc480, 0xc447, 0xc40d, 0xc3d4,
        0xc39a, 0xc361, 0xc329, 0xc2f0, 0xc2b7, 0xc27f, 0xc247, 0xc20f, 0xc1d8, 0xc1a0, 0xc169, 0xc132, 0xc0fb, 0xc0c4,
        0xc08e, 0xc057, 0xc021, 0xbfeb, 0xbfb5, 0xbf80, 0xbf4a, 0xbf15, 0xbee0, 0xbeab, 0xbe76, 0xbe41, 0xbe0d, 0xbdd8,
        0xbda4, 0xbd70, 0xbd3d, 0xbd09, 0xbcd6, 0xbca2, 0xbc6f, 0xbc3c, 0xbc09, 0xbbd7, 0xbba4, 0xbb72, 0xbb40, 0xbb0e,
        0xbadc, 0xbaaa, 0xba79, 0xba47, 0xba16, 0xb9e5, 0xb9b4, 0xb983, 0xb953, 0xb922, 0xb8f2, 0xb8c2, 0xb891, 0xb862,
        0xb832, 0xb802, 0xb7d3, 0xb7a3, 0xb774, 0xb745, 0xb716, 0xb6e8, 0xb6b9, 0xb68a, 0xb65c, 0xb62e, 0xb600, 0xb5d2,
        0xb5a4, 0xb577, 0xb549, 0xb51c, 0xb4ee, 0xb4c1, 0xb494, 0xb467, 0xb43b, 0xb40e, 0xb3e2, 0xb3b5, 0xb389, 0xb35d,
        0xb331, 0xb305, 0xb2d9, 0xb2ae, 0xb282, 0xb257, 0xb22c, 0xb201, 0xb1d6, 0xb1ab, 0xb180, 0xb156, 0xb12b, 0xb101,
        0xb0d6, 0xb0ac, 0xb082, 0xb058, 0xb02f, 0xb005, 0xafdb, 0xafb2, 0xaf89, 0xaf5f, 0xaf36, 0xaf0d, 0xaee5, 0xaebc,
        0xae93, 0xae6b, 0xae42, 0xae1a, 0xadf2, 0xadca, 0xada2, 0xad7a, 0xad52, 0xad2a, 0xad03, 0xacdb, 0xacb4, 0xac8d,
        0xac65, 0xac3e, 0xac17, 0xabf1, 0xabca, 0xaba3, 0xab7d, 0xab56, 0xab30, 0xab0a, 0xaae4, 0xaabe, 0xaa98, 0xaa72,
        0xaa4c, 0xaa27, 0xaa01, 0xa9dc, 0xa9b6, 0xa991, 0xa96c, 0xa947, 0xa922, 0xa8fd, 0xa8d8, 0xa8b3, 0xa88f, 0xa86a,
        0xa846, 0xa822, 0xa7fe, 0xa7d9, 0xa7b5, 0xa791, 0xa76e, 0xa74a, 0xa726, 0xa703, 0xa6df, 0xa6bc, 0xa698, 0xa675,
        0xa652, 0xa62f, 0xa60c, 0xa5e9, 0xa5c6, 0xa5a4, 0xa581, 0xa55e, 0xa53c, 0xa519, 0xa4f7, 0xa4d5, 0xa4b3, 0xa491,
        0xa46f, 0xa44d, 0xa42b, 0xa409, 0xa3e8, 0xa3c6, 0xa3a5, 0xa383, 0xa362, 0xa341, 0xa320, 0xa2ff, 0xa2de, 0xa2bd,
        0xa29c, 0xa27b, 0xa25a, 0xa23a, 0xa219, 0xa1f9, 0xa1d8, 0xa1b8, 0xa198, 0xa178, 0xa158, 0xa138, 0xa118, 0xa0f8,
        0xa0d8, 0xa0b8, 0xa099, 0xa079, 0xa05a, 0xa03a, 0xa01b, 0x9ffc, 0x9fdc, 0x9fbd, 0x9f9e, 0x9f7f, 0x9f60, 0x9f41,
        0x9f23, 0x9f04, 0x9ee5, 0x9ec7, 0x9ea8, 0x9e8a, 0x9e6b, 0x9e4d, 0x9e2f, 0x9e11, 0x9df3, 0x9dd5, 0x9db7, 0x9d99,
        0x9d7b, 0x9d5d, 0x9d3f, 0x9d22, 0x9d04, 0x9ce7, 0x9cc9, 0x9cac, 0x9c8f, 0x9c71, 0x9c54, 0x9c37, 0x9c1a, 0x9bfd,
        0x9be0, 0x9bc3, 0x9ba6, 0x9b8a, 0x9b6d, 0x9b50, 0x9b34, 0x9b17, 0x9afb, 0x9adf, 0x9ac2, 0x9aa6, 0x9a8a, 0x9a6e,
        0x9a52, 0x9a36, 0x9a1a, 0x99fe, 0x99e2, 0x99c6, 0x99ab, 0x998f, 0x9973, 0x9958, 0x993c, 0x9921, 0x9905, 0x98ea,
        0x98cf, 0x98b4, 0x9899, 0x987d, 0x9862, 0x9847, 0x982d, 0x9812, 0x97f7, 0x97dc, 0x97c1, 0x97a7, 0x978c, 0x9772,
        0x9757, 0x973d, 0x9722, 0x9708, 0x96ee, 0x96d4, 0x96ba, 0x969f, 0x9685, 0x966b, 0x9651, 0x9638, 0x961e, 0x9604,
        0x95ea, 0x95d1, 0x95b7, 0x959d, 0x9584, 0x956a, 0x9551, 0x9538, 0x951e, 0x9505, 0x94ec, 0x94d3, 0x94b9, 0x94a0,
        0x9487, 0x946e, 0x9455, 0x943d, 0x9424, 0x940b, 0x93f2, 0x93da, 0x93c1, 0x93a8, 0x9390, 0x9377, 0x935f, 0x9346,
        0x932e, 0x9316, 0x92fe, 0x92e5, 0x92cd, 0x92b5, 0x929d, 0x9285, 0x926d, 0x9255, 0x923d, 0x9225, 0x920e, 0x91f6,
        0x91de, 0x91c6, 0x91af, 0x9197, 0x9180, 0x9168, 0x9151, 0x9139, 0x9122, 0x910b, 0x90f4, 0x90dc, 0x90c5, 0x90ae,
        0x9097, 0x9080, 0x9069, 0x9052, 0x903b, 0x9024, 0x900d, 0x8ff7, 0x8fe0, 0x8fc9, 0x8fb2, 0x8f9c, 0x8f85, 0x8f6f,
        0x8f58, 0x8f42, 0x8f2b, 0x8f15, 0x8eff, 0x8ee8, 0x8ed2, 0x8ebc, 0x8ea6, 0x8e90, 0x8e7a, 0x8e64, 0x8e4e, 0x8e38,
        0x8e22, 0x8e0c, 0x8df6, 0x8de0, 0x8dca, 0x8db5, 0x8d9f, 0x8d89, 0x8d74, 0x8d5e, 0x8d49, 0x8d33, 0x8d1e, 0x8d08,
        0x8cf3, 0x8cdd, 0x8cc8, 0x8cb3, 0x8c9e, 0x8c88, 0x8c73, 0x8c5e, 0x8c49, 0x8c34, 0x8c1f, 0x8c0a, 0x8bf5, 0x8be0,
        0x8bcb, 0x8bb7, 0x8ba2, 0x8b8d, 0x8b78, 0x8b64, 0x8b4f, 0x8b3a, 0x8b26, 0x8b11, 0x8afd, 0x8ae8, 0x8ad4, 0x8abf,
        0x8aab, 0x8a97, 0x8a82, 0x8a6e, 0x8a5a, 0x8a46, 0x8a32, 0x8a1e, 0x8a09, 0x89f5, 0x89e1, 0x89cd, 0x89b9, 0x89a6,
        0x8992, 0x897e, 0x896a, 0x8956, 0x8942, 0x892f, 0x891b, 0x8907, 0x88f4, 0x88e0, 0x88cd, 0x88b9, 0x88a6, 0x8892,
        0x887f, 0x886b, 0x8858, 0x8845, 0x8831, 0x881e, 0x880b, 0x87f8, 0x87e5, 0x87d2, 0x87be, 0x87ab, 0x8798, 0x8785,
        0x8772, 0x875f, 0x874c, 0x873a, 0x8727, 0x8714, 0x8701, 0x86ee, 0x86dc, 0x86c9, 0x86b6, 0x86a4, 0x8691, 0x867e,
        0x866c, 0x8659, 0x8647, 0x8634, 0x8622, 0x8610, 0x85fd, 0x85eb, 0x85d9, 0x85c6, 0x85b4, 0x85a2, 0x8590, 0x857e,
        0x856b, 0x8559, 0x8547, 0x8535, 0x8523, 0x8511, 0x84ff, 0x84ed, 0x84db, 0x84c9, 0x84b8, 0x84a6, 0x8494, 0x8482,
        0x8471, 0x845f, 0x844d, 0x843b, 0x842a, 0x8418, 0x8407, 0x83f5, 0x83e4, 0x83d2, 0x83c1, 0x83af, 0x839e, 0x838c,
        0x837b, 0x836a, 0x8358, 0x8347, 0x8336, 0x8325, 0x8314, 0x8302, 0x82f1, 0x82e0, 0x82cf, 0x82be, 0x82ad, 0x829c,
        0x828b, 0x827a, 0x8269, 0x8258, 0x8247, 0x8236, 0x8226, 0x8215, 0x8204, 0x81f3, 0x81e2, 0x81d2, 0x81c1, 0x81b0,
        0x81a0, 0x818f, 0x817f, 0x816e, 0x815e, 0x814d, 0x813d, 0x812c, 0x811c, 0x810b, 0x80fb, 0x80ea, 0x80da, 0x80ca,
        0x80ba, 0x80a9, 0x8099, 0x8089, 0x8079, 0x8068, 0x8058, 0x8048, 0x8038, 0x8028, 0x8018, 0x8008,
    };
    const uint32_t three = UINT32_C(0xC0000000); /* 3.0 in Q2.30 */
    const uint32_t r = (uint32_t)rsqrt[(t >> (32u - RLCC_SQRT_INDEX_BITS)) - RLCC_SQRT_TABLE_BASE] << 16;
    const uint32_t s = rlcc_mulhi32(t, r); /* ~ sqrt(T), Q2.30 */
    return rlcc_mulhi32(s, three - rlcc_mulhi32(s, r)) << 1;
}

/* sqrt(r << RATE_FRAC_BITS) within 1, for 0 < r <= 2^20 (steps 1 to 4). */
static inline uint32_t rlcc_sqrt_estimate(uint32_t r)
{
    const uint32_t k = rlcc_sqrt_norm_shift(r);
    return ((rlcc_sqrt_q30(r << k) >> (4u + (k >> 1))) + 1u) >> 1; /* / 2^(5 + k/2), rounded */
}

/* floor(sqrt(r << RATE_FRAC_BITS)) for 0 <= r <= 2^20, exact (step 5). */
static inline uint32_t rlcc_isqrt_rate(uint32_t r)
{
    uint32_t x;
    if (r == 0u) {
        return 0u;
    }
    x = rlcc_sqrt_estimate(r);
#if RLCC_NARROW_REGS
    {
        /* n - x^2 in one 32-bit word (mod 2^32), exact: |n - x^2| < 2^22 */
        const int32_t d = rlcc_as_int32((r << RLCC_RATE_FRAC_BITS) - x * x);
        if (d < 0) {
            return x - 1u;
        }
        return x + (uint32_t)(d > (int32_t)(2u * x));
    }
#else
    {
        const uint64_t n = (uint64_t)r << RLCC_RATE_FRAC_BITS;
        const uint64_t sq = (uint64_t)x * x;
        if (sq > n) {
            return x - 1u;
        }
        return x + (uint32_t)(n - sq >= 2u * (uint64_t)x + 1u);
    }
#endif
}

/*
 * The square root is kept out of line on purpose: rlcc-verify --prove checks it on its own (over
 * every valid rate) and the event handler symbolically with it abstracted, so it must stay a
 * separate symbol (rlcc.codegen.context's SQRT_FUNCTION). The wide products are inline (one mul on
 * RV64, a mul and a mulhu on RV32): the prover reads each as one opaque product of its two 32-bit
 * operands, the same one the golden model takes (a call would cost more than the multiply).
 */
/* floor(sqrt(min(rate, RATE_MAX) << RATE_FRAC_BITS)) for any uint32 rate, exact. */
static __attribute__((noinline, unused)) uint32_t rlcc_sqrt_rate(uint32_t rate)
{
    return rlcc_isqrt_rate(rate < RLCC_RATE_MAX ? rate : RLCC_RATE_MAX);
}

/* (excess * root) >> SQRT_RATE_FRAC_BITS for any uint32 operands, exact. */
static inline uint64_t rlcc_penalty_product(uint32_t excess, uint32_t root)
{
    return ((uint64_t)excess * root) >> RLCC_SQRT_RATE_FRAC_BITS;
}

/* delta = target - ((max(inflation - beta, 0) * isqrt(min(rate, 2^20) << 20)) >> 20), saturated (Q16). */
static inline int32_t rlcc_delta(int32_t inflation, uint32_t rate, uint32_t target_q16, uint32_t beta_q16)
{
#if RLCC_NARROW_REGS
    /* In 32-bit words (RV32): for inflation >= 0 (rlcc_rtt_inflation's range) inflation - beta <=
     * INT32_MAX, so the excess needs no upper clamp; excess < 2^31 and the root <= 2^20 keep the
     * penalty below 2^31 (the product's high word is 0), so target - penalty >= -(2^31 - 1) =
     * FEATURE_MIN and only the upper clamp can bind. A negative inflation counts as no excess. */
    const uint32_t excess = inflation > 0 && (uint32_t)inflation > beta_q16 ? (uint32_t)inflation - beta_q16 : 0u;
    const uint32_t penalty = (uint32_t)rlcc_penalty_product(excess, rlcc_sqrt_rate(rate)); /* < 2^31 */
    const uint32_t diff = target_q16 - penalty; /* mod 2^32 */
    return target_q16 >= penalty && diff > (uint32_t)RLCC_FEATURE_MAX ? RLCC_FEATURE_MAX : rlcc_as_int32(diff);
#else
    const int64_t excess = rlcc_clamp64((int64_t)inflation - (int64_t)beta_q16, 0, RLCC_FEATURE_MAX);
    const uint64_t penalty = rlcc_penalty_product((uint32_t)excess, rlcc_sqrt_rate(rate)); /* < 2^31 */
    return (int32_t)rlcc_clamp64((int64_t)target_q16 - (int64_t)penalty, RLCC_FEATURE_MIN, RLCC_FEATURE_MAX);
#endif
}

/* Mitchell log2(1 + m / 2^16) in Q16 for m <= 2^31 (rlcc.derived.mlog2_int): the leading one of
 * u = m + 2^16 (bit 16..31: u >= 2^16, so the search starts at bit 16) by clz with Zbb, else by
 * rlcc_msb24 over the top 16 bits (a compare and a byte-table load), then exponent and 16 mantissa
 * bits. */
static inline int32_t rlcc_mlog2(uint32_t m)
{
    const uint32_t u = m + 0x10000u;
#if defined(__riscv_zbb)
    const uint32_t msb = 31u - (uint32_t)__builtin_clz(u);
#else
    const uint32_t msb = 16u + rlcc_msb24(u >> 16); /* u >> 16: 1 .. 2^16 */
#endif
    return (int32_t)(((msb - 16u) << 16) + ((u - (1u << msb)) >> (msb - 16u)));
}

/* sign(d) * mlog2(1 + |d|) of a Q16 value, |result| < 2^20; |d| <= 2^31 fits uint32_t. */
static inline int32_t rlcc_slog(int32_t d)
{
    const uint32_t m = d < 0 ? 0u - (uint32_t)d : (uint32_t)d;
    const int32_t lg = rlcc_mlog2(m);
    return d < 0 ? -lg : lg;
}

/* The state of derived input delta_log_ratio = slog(delta[t]) - slog(delta[t-1]) (rlcc.derived):
 * slog of this step's delta, kept in the context for the next step, so one log per decision. Out
 * of line: rlcc-verify --prove checks it alone and abstracts it in the handler as one
 * uninterpreted slog. */
static __attribute__((noinline, unused)) int32_t rlcc_signed_log(int32_t d)
{
    return rlcc_slog(d);
}

/* A ramp's term below its center, lo <= x < center (rlcc.fxp.golden.ramp_value): trunc((x - center)
 * * k / 2^shift). The sign of the product is known (that of -k), so the truncating division is a
 * logical shift of |x - center| * |k| (the generator guarantees it is below 2^31), negated where
 * the product is negative. The slopes are literals: the signs and magnitudes fold at compile time. */
static inline int32_t rlcc_ramp_below(int32_t x, int32_t center, int32_t k, uint32_t shift)
{
    const uint32_t m = (((uint32_t)center - (uint32_t)x) * (k < 0 ? 0u - (uint32_t)k : (uint32_t)k)) >> shift;
    return k > 0 ? -(int32_t)m : (int32_t)m;
}

/* A ramp's term at or above its center, center <= x <= hi: trunc((x - center) * k / 2^shift), as
 * rlcc_ramp_below with the product's sign that of k. */
static inline int32_t rlcc_ramp_above(int32_t x, int32_t center, int32_t k, uint32_t shift)
{
    const uint32_t m = (((uint32_t)x - (uint32_t)center) * (k < 0 ? 0u - (uint32_t)k : (uint32_t)k)) >> shift;
    return k < 0 ? -(int32_t)m : (int32_t)m;
}

/* One ramp's term of the ensemble sum (Q16.16), rlcc.fxp.golden.ramp_value: trunc(d * k / 2^shift) with
 * d = clamp(x, lo, hi) - center and k = k_below if d < 0 else k_above (lo <= center <= hi). Each side
 * needs one clamp only, on |d| = min(|x - center|, its side's width) (exact in uint32), and the
 * sign of d * k is known per side, so the truncating division is a logical shift of |d| * |k|
 * (the generator guarantees |d| * |k| < 2^31), negated where the product is negative. The slopes
 * are literals: the signs and magnitudes fold at compile time. (The bitmask tree style folds each
 * ramp into its input's search instead, rlcc_ramp_below and rlcc_ramp_above its linear pieces.) */
static inline int32_t rlcc_ramp(int32_t x, int32_t lo, int32_t center, int32_t hi, int32_t k_below, int32_t k_above,
                                uint32_t shift)
{
    uint32_t w, m;
    if (x < center) {
        w = (uint32_t)center - (uint32_t)x;
        w = w < (uint32_t)center - (uint32_t)lo ? w : (uint32_t)center - (uint32_t)lo;
        m = (w * (k_below < 0 ? 0u - (uint32_t)k_below : (uint32_t)k_below)) >> shift;
        return k_below > 0 ? -(int32_t)m : (int32_t)m; /* d < 0: d * k has the sign of -k */
    }
    w = (uint32_t)x - (uint32_t)center;
    w = w < (uint32_t)hi - (uint32_t)center ? w : (uint32_t)hi - (uint32_t)center;
    m = (w * (k_above < 0 ? 0u - (uint32_t)k_above : (uint32_t)k_above)) >> shift;
    return k_above < 0 ? -(int32_t)m : (int32_t)m;
}

/* The ensemble sum clamped to [lo, hi] (the factor clamp parameters, uint32). */
static inline int32_t rlcc_clamp_factor(int32_t sum, uint32_t lo, uint32_t hi)
{
#if RLCC_NARROW_REGS
    /* as the int64 compares below, in 32-bit words (RV32): a negative sum is below any lo */
    if (sum < 0 || (uint32_t)sum < lo) {
        return rlcc_as_int32(lo);
    }
    return (uint32_t)sum > hi ? rlcc_as_int32(hi) : sum;
#else
    return (int32_t)rlcc_clamp64((int64_t)sum, (int64_t)lo, (int64_t)hi);
#endif
}

/* rate * factor for any uint32 operands, exact. */
static inline uint64_t rlcc_rate_product(uint32_t rate, uint32_t factor)
{
    return (uint64_t)rate * factor;
}

/*
 * Rate update with error feedback: p = rate * factor + carry, rate' = clamp(p >> FACTOR_FRAC_BITS,
 * rate_min, RATE_MAX), and the fraction p mod 2^FACTOR_FRAC_BITS is the next update's carry, kept
 * in the flags word's high half (which also gets the history-valid bit). Truncating instead would
 * freeze a small rate under factors near 1 and bias every rate downwards.
 */
static inline uint32_t rlcc_next_rate(uint32_t *flags, uint32_t rate, int32_t factor, uint32_t rate_min)
{
    const uint32_t carry = *flags >> RLCC_CTX_RATE_CARRY_SHIFT;
    const uint64_t p = rlcc_rate_product(rate, (uint32_t)factor) + carry;
    const uint64_t scaled = p >> RLCC_FACTOR_FRAC_BITS;
    *flags = (((uint32_t)p & RLCC_RATE_CARRY_MASK) << RLCC_CTX_RATE_CARRY_SHIFT) | RLCC_CTX_FLAG_HISTORY_VALID;
    return rlcc_clamp_rate(scaled, rate_min);
}

#endif /* RLCC_RUNTIME_H */
