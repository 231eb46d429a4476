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
#define RLCC_RUNTIME_VERSION 4u

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
 * Exact floor square root of n < 2^52 (rlcc_sqrt_rate below): no division, no floats, no loop.
 *
 * 1. Normalize: k = even shift with n << k in [2^62, 2^64); t = top 32 bits of n << k, read as
 *    T = t / 2^30 in [1, 4) (Q2.30). Then sqrt(n) = 2^30 sqrt(M) / 2^(k/2 - 1), M = (n << k) / 2^62,
 *    and T <= M < T + 2^-30.
 * 2. Estimate r ~ 1/sqrt(T) (Q0.32) from a table of 192 entries indexed by the top 8 bits of t,
 *    each the minimax value for its interval, |r sqrt(T) - 1| < 2^-8.
 * 3. Two Goldschmidt iterations in 32-bit fixed point (one multiply-high each, mulhu on RV32):
 *    s = T r, u = 3 - s r, r = r u / 2, s = s u / 2. Each squares the relative error
 *    (e -> -3/2 e^2 - 1/2 e^3): 2^-8 -> < 2^-15 -> < 2^-29, plus a few ulps of truncation.
 *    s ~ 2^30 sqrt(T) (Q2.30, rlcc_sqrt_q30) is then within 5 ulps of 2^30 sqrt(T): checked for
 *    all 3 * 2^30 values of t by tests/codegen/test_isqrt.py (worst -4.25 .. +1.8 ulps). T -> M
 *    adds less than 2^30 * 2^-30 / (2 sqrt(T)) <= 1/2, so |s - 2^30 sqrt(M)| < 6.
 * 4. x = s >> (k/2 - 1). n < 2^52 gives k >= 12, a shift of at least 5 bits (6 < 2^5), so
 *    |s / 2^(k/2 - 1) - sqrt(n)| < 1 and x = floor(s / 2^(k/2 - 1)) is floor(sqrt(n)) - 1, + 0 or + 1.
 * 5. One exact step fixes that: x*x > n -> x - 1; else (x+1)^2 <= n, i.e. n - x*x >= 2x + 1 -> x + 1.
 */
#define RLCC_SQRT_INDEX_BITS 8u /* seed table index: the top bits of t */
#define RLCC_SQRT_TABLE_BASE 64u /* T >= 1: the top two bits of t are not both zero */

/* Even k with n << k in [2^62, 2^64) (n > 0): clz(n) rounded down to even. */
static inline uint32_t rlcc_sqrt_norm_shift(uint64_t n)
{
#if defined(__riscv_zbb)
    return (uint32_t)__builtin_clzll(n) & ~1u;
#else
    /* Portable (no libcall on RV32 without Zbb): pick the non-zero half, then a 16/8/4/2 search. */
    uint32_t w = (uint32_t)(n >> 32);
    uint32_t k = 0u;
    uint32_t c;
    if (w == 0u) {
        w = (uint32_t)n;
        k = 32u;
    }
    c = (uint32_t)(w < UINT32_C(0x10000)) << 4;
    w <<= c;
    k += c;
    c = (uint32_t)(w < UINT32_C(0x1000000)) << 3;
    w <<= c;
    k += c;
    c = (uint32_t)(w < UINT32_C(0x10000000)) << 2;
    w <<= c;
    k += c;
    return k + ((uint32_t)(w < UINT32_C(0x40000000)) << 1);
#endif
}

/* (a * b) >> 32: one mulhu on RV32. */
static inline uint32_t rlcc_mulhi32(uint32_t a, uint32_t b)
{
    return (uint32_t)(((uint64_t)a * b) >> 32);
}

/* 2^30 sqrt(t / 2^30) within 5 ulps, for t in [2^30, 2^32) (steps 2 and 3). */
static inline uint32_t rlcc_sqrt_q30(uint32_t t)
{
    /* entry i: round(2^16 * 2 / (sqrt(a) + sqrt(b))), [a, b) = [(i + 64) / 64, (i + 65) / 64) */
    static const uint16_t rsqrt[192] = {
        0xff02, 0xfd0e, 0xfb25, 0xf947, 0xf773, 0xf5aa, 0xf3ea, 0xf234, 0xf087, 0xeee3, 0xed47, 0xebb3, 0xea27, 0xe8a3,
        0xe727, 0xe5b2, 0xe443, 0xe2dc, 0xe17a, 0xe020, 0xdecb, 0xdd7d, 0xdc34, 0xdaf1, 0xd9b3, 0xd87b, 0xd748, 0xd61a,
        0xd4f1, 0xd3cd, 0xd2ad, 0xd192, 0xd07b, 0xcf69, 0xce5b, 0xcd51, 0xcc4a, 0xcb48, 0xca4a, 0xc94f, 0xc858, 0xc764,
        0xc674, 0xc587, 0xc49d, 0xc3b7, 0xc2d4, 0xc1f4, 0xc116, 0xc03c, 0xbf65, 0xbe90, 0xbdbe, 0xbcef, 0xbc23, 0xbb59,
        0xba91, 0xb9cc, 0xb90a, 0xb84a, 0xb78c, 0xb6d0, 0xb617, 0xb560, 0xb4ab, 0xb3f8, 0xb347, 0xb298, 0xb1eb, 0xb140,
        0xb097, 0xaff0, 0xaf4b, 0xaea8, 0xae06, 0xad66, 0xacc8, 0xac2b, 0xab90, 0xaaf7, 0xaa5f, 0xa9c9, 0xa934, 0xa8a1,
        0xa810, 0xa780, 0xa6f1, 0xa664, 0xa5d8, 0xa54d, 0xa4c4, 0xa43c, 0xa3b6, 0xa330, 0xa2ac, 0xa22a, 0xa1a8, 0xa128,
        0xa0a9, 0xa02b, 0x9fae, 0x9f32, 0x9eb8, 0x9e3e, 0x9dc6, 0x9d4e, 0x9cd8, 0x9c63, 0x9bef, 0x9b7b, 0x9b09, 0x9a98,
        0x9a28, 0x99b8, 0x994a, 0x98dd, 0x9870, 0x9804, 0x979a, 0x9730, 0x96c7, 0x965e, 0x95f7, 0x9591, 0x952b, 0x94c6,
        0x9462, 0x93ff, 0x939c, 0x933a, 0x92d9, 0x9279, 0x9219, 0x91bb, 0x915d, 0x90ff, 0x90a3, 0x9047, 0x8feb, 0x8f91,
        0x8f37, 0x8edd, 0x8e85, 0x8e2d, 0x8dd5, 0x8d7e, 0x8d28, 0x8cd3, 0x8c7e, 0x8c2a, 0x8bd6, 0x8b83, 0x8b30, 0x8ade,
        0x8a8d, 0x8a3c, 0x89eb, 0x899c, 0x894c, 0x88fe, 0x88af, 0x8862, 0x8815, 0x87c8, 0x877c, 0x8730, 0x86e5, 0x869a,
        0x8650, 0x8606, 0x85bd, 0x8574, 0x852c, 0x84e4, 0x849d, 0x8456, 0x840f, 0x83c9, 0x8384, 0x833f, 0x82fa, 0x82b5,
        0x8271, 0x822e, 0x81eb, 0x81a8, 0x8166, 0x8124, 0x80e2, 0x80a1, 0x8060, 0x8020,
    };
    const uint32_t three = UINT32_C(0xC0000000); /* 3.0 in Q2.30 */
    /* r ~ 1/sqrt(T), Q0.32 */
    uint32_t r = (uint32_t)rsqrt[(t >> (32u - RLCC_SQRT_INDEX_BITS)) - RLCC_SQRT_TABLE_BASE] << 16;
    uint32_t s = rlcc_mulhi32(t, r); /* ~ sqrt(T), Q2.30 */
    uint32_t u = three - rlcc_mulhi32(s, r);
    r = rlcc_mulhi32(r, u) << 1;
    s = rlcc_mulhi32(s, u) << 1;
    u = three - rlcc_mulhi32(s, r);
    return rlcc_mulhi32(s, u) << 1;
}

/* floor(sqrt(n)) for 0 <= n < 2^52, exact (method above). */
static inline uint32_t rlcc_isqrt52(uint64_t n)
{
    uint32_t k, x;
    uint64_t sq;
    if (n == 0u) {
        return 0u;
    }
    k = rlcc_sqrt_norm_shift(n);
    x = rlcc_sqrt_q30((uint32_t)((n << k) >> 32)) >> ((k >> 1) - 1u);
    sq = (uint64_t)x * x;
    if (sq > n) {
        return x - 1u;
    }
    return x + (uint32_t)(n - sq >= 2u * (uint64_t)x + 1u);
}

/*
 * The square root and the two wide products are kept out of line on purpose: rlcc-verify --prove
 * checks each of these functions on its own (the square root over every valid rate, the products
 * symbolically for all operands) and the event handler symbolically with them abstracted, so
 * each must stay a separate symbol. Their names are rlcc.codegen.context's SQRT_FUNCTION,
 * PENALTY_FUNCTION and RATE_PRODUCT_FUNCTION.
 */

/* floor(sqrt(rate << RATE_FRAC_BITS)) for any uint32 rate (argument below 2^52), exact. */
static __attribute__((noinline, unused)) uint32_t rlcc_sqrt_rate(uint32_t rate)
{
    return rlcc_isqrt52((uint64_t)rate << RLCC_RATE_FRAC_BITS);
}

/* (excess * root) >> SQRT_RATE_FRAC_BITS for any uint32 operands, exact. */
static __attribute__((noinline, unused)) uint64_t rlcc_penalty_product(uint32_t excess, uint32_t root)
{
    return ((uint64_t)excess * root) >> RLCC_SQRT_RATE_FRAC_BITS;
}

/* delta = target - ((max(inflation - beta, 0) * isqrt(rate << 20)) >> 20), saturated (Q16). */
static inline int32_t rlcc_delta(int32_t inflation, uint32_t rate, uint32_t target_q16, uint32_t beta_q16)
{
    const int64_t excess = rlcc_clamp64((int64_t)inflation - (int64_t)beta_q16, 0, RLCC_FEATURE_MAX);
    const uint64_t penalty = rlcc_penalty_product((uint32_t)excess, rlcc_sqrt_rate(rate)); /* < 2^37 */
    return (int32_t)rlcc_clamp64((int64_t)target_q16 - (int64_t)penalty, RLCC_FEATURE_MIN, RLCC_FEATURE_MAX);
}

/* Mitchell log2(1 + m / 2^16) in Q16 for m <= 2^31 (rlcc.derived.mlog2_int): the leading one of
 * u = m + 2^16 (bit 16..31: u >= 2^16, so the search starts at bit 16) by clz with Zbb, else by a
 * branch-free binary search over the top 16 bits, then exponent and 16 mantissa bits. */
static inline int32_t rlcc_mlog2(uint32_t m)
{
    const uint32_t u = m + 0x10000u;
#if defined(__riscv_zbb)
    const uint32_t msb = 31u - (uint32_t)__builtin_clz(u);
#else
    uint32_t v = u >> 16; /* >= 1 */
    uint32_t msb = 16u;
    uint32_t s;

    s = (v >= 0x100u) ? 8u : 0u;
    v >>= s;
    msb += s;
    s = (v >= 0x10u) ? 4u : 0u;
    v >>= s;
    msb += s;
    s = (v >= 0x4u) ? 2u : 0u;
    v >>= s;
    msb += s;
    msb += (v >= 0x2u) ? 1u : 0u;
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

/* Derived input delta_log_ratio: slog(cur) - slog(prev), |result| < 2^21 (rlcc.derived). Out of line
 * (one call for both logs): rlcc-verify --prove checks it alone, one argument at a time, and
 * abstracts it in the handler as the difference of one uninterpreted slog at the two arguments. */
static __attribute__((noinline, unused)) int32_t rlcc_log_ratio(int32_t cur, int32_t prev)
{
    return rlcc_slog(cur) - rlcc_slog(prev);
}

/* One ramp's term of the ensemble sum (Q16.16), rlcc.fxp.golden.ramp_value: trunc(d * k / 2^shift) with
 * d = clamp(x, lo, hi) - center and k = k_below if d < 0 else k_above. The generator guarantees
 * |d| * |k| < 2^31, so the signed product stays within 32 bits on RV32 and RV64, and C's division
 * truncates, as the term does (by a constant power of two: shifts, no divide). k is picked with a
 * mask rather than a branch: one taken branch costs more than the three ALU operations. */
static inline int32_t rlcc_ramp(int32_t x, int32_t lo, int32_t center, int32_t hi, int32_t k_below, int32_t k_above,
                                uint32_t shift)
{
    const int32_t d = (x < lo ? lo : x > hi ? hi : x) - center;
    const uint32_t below = 0u - (uint32_t)(d < 0);
    const int32_t k = rlcc_as_int32((uint32_t)k_above + (((uint32_t)k_below - (uint32_t)k_above) & below));
    return (d * k) / (INT32_C(1) << shift);
}

/* The ensemble sum clamped to [lo, hi] (the factor clamp parameters). */
static inline int32_t rlcc_clamp_factor(int32_t sum, uint32_t lo, uint32_t hi)
{
    return (int32_t)rlcc_clamp64((int64_t)sum, (int64_t)lo, (int64_t)hi);
}

/* rate * factor for any uint32 operands, exact; out of line (see above). */
static __attribute__((noinline, unused)) uint64_t rlcc_rate_product(uint32_t rate, uint32_t factor)
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
