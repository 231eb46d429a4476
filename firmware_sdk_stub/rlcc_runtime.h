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

/* A new flow whose first event is an RTT decision: the context rlcc_start_flow leaves, except the
 * `rewritten` words from RLCC_CTX_HISTORY on (the history and the derived inputs' states), which
 * the decision stores without reading them first (the history is invalid), so they need no
 * clearing here. */
static inline void rlcc_start_flow_deciding(uint32_t c[RLCC_CTX_WORDS], uint32_t now, uint32_t rate_initial,
                                            uint32_t rewritten)
{
    uint32_t i;
    c[RLCC_CTX_RATE] = rate_initial;
    c[RLCC_CTX_PREV_FACTOR] = RLCC_FACTOR_ONE;
    c[RLCC_CTX_COUNTS] = 0u;
    c[RLCC_CTX_FLAGS] = 0u;
    c[RLCC_CTX_PROBE_TS] = now;
    for (i = RLCC_CTX_HISTORY + rewritten; i < RLCC_CTX_WORDS; i++) {
        c[i] = 0u;
    }
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
 * 2. s ~ 2^30 sqrt(T) (Q2.30) by linear interpolation between 769 knots floor(2^30 sqrt(1 + j/256)):
 *    the top 10 bits of t pick the interval, the next 11 are the fraction (one 32-bit multiply).
 * 3. x = s / 2^(5 + k/2) rounded to nearest: floor(sqrt(r << 20)) or one more, for every rate
 *    (the chord lies below the concave root and the fraction is truncated, so s is never high by
 *    more than the rounding; measured over the whole domain: 0 .. +1).
 * 4. One exact step fixes that: x*x > n -> x - 1. With x = s or s + 1, s = floor(sqrt(n)),
 *    -(2s + 1) <= n - x*x <= 2s <= 2^21: the difference is exact in 32 bits (mod 2^32, read as an
 *    int32), so on RV32 the step needs the low product word only.
 */
#define RLCC_SQRT_INDEX_BITS 10u /* interval index: the top bits of t */
#define RLCC_SQRT_TABLE_BASE 256u /* T >= 1: the top two bits of t are not both zero */
#define RLCC_SQRT_FRAC_BITS 11u /* interpolation fraction: the next bits of t */
#define RLCC_SQRT_KNOTS 769u /* 3 * RLCC_SQRT_TABLE_BASE intervals, both ends */

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

/* 2^30 sqrt(t / 2^30), t in [2^30, 2^32), from below within about 2^-20 relative (step 2). */
static inline uint32_t rlcc_sqrt_q30(uint32_t t)
{
    /* knot j: floor(2^30 sqrt(1 + j / 256)), j = 0 .. 768 (rlcc.codegen.context's sqrt plan) */
    static const uint32_t knots[RLCC_SQRT_KNOTS] = {
        0x40000000, 0x401ff803, 0x403fe01f, 0x405fb86b, 0x407f80fd, 0x409f39ed, 0x40bee353, 0x40de7d44, 0x40fe07d8,
        0x411d8325, 0x413cef40, 0x415c4c41, 0x417b9a3b, 0x419ad946, 0x41ba0976, 0x41d92ae1, 0x41f83d9a, 0x421741b8,
        0x4236374e, 0x42551e71, 0x4273f736, 0x4292c1af, 0x42b17df1, 0x42d02c10, 0x42eecc1e, 0x430d5e30, 0x432be258,
        0x434a58a9, 0x4368c136, 0x43871c11, 0x43a5694e, 0x43c3a8fe, 0x43e1db33, 0x44000000, 0x441e1775, 0x443c21a6,
        0x445a1ea2, 0x44780e7d, 0x4495f146, 0x44b3c70f, 0x44d18fe8, 0x44ef4be4, 0x450cfb11, 0x452a9d81, 0x45483344,
        0x4565bc6b, 0x45833904, 0x45a0a921, 0x45be0cd1, 0x45db6424, 0x45f8af29, 0x4615edef, 0x46332087, 0x465046ff,
        0x466d6166, 0x468a6fcb, 0x46a7723d, 0x46c468cb, 0x46e15383, 0x46fe3274, 0x471b05ac, 0x4737cd3a, 0x4754892a,
        0x4771398c, 0x478dde6e, 0x47aa77dd, 0x47c705e6, 0x47e38898, 0x48000000, 0x481c6c2a, 0x4838cd26, 0x485522ff,
        0x48716dc3, 0x488dad7e, 0x48a9e23f, 0x48c60c10, 0x48e22b00, 0x48fe3f1a, 0x491a486b, 0x493646ff, 0x49523ae4,
        0x496e2424, 0x498a02cd, 0x49a5d6e9, 0x49c1a086, 0x49dd5fae, 0x49f9146e, 0x4a14bed2, 0x4a305ee4, 0x4a4bf4b1,
        0x4a678044, 0x4a8301a8, 0x4a9e78e8, 0x4ab9e610, 0x4ad5492b, 0x4af0a244, 0x4b0bf165, 0x4b27369a, 0x4b4271ed,
        0x4b5da369, 0x4b78cb19, 0x4b93e907, 0x4baefd3e, 0x4bca07c8, 0x4be508b0, 0x4c000000, 0x4c1aedc1, 0x4c35d1fe,
        0x4c50acc2, 0x4c6b7e16, 0x4c864604, 0x4ca10496, 0x4cbbb9d5, 0x4cd665cc, 0x4cf10884, 0x4d0ba207, 0x4d26325e,
        0x4d40b993, 0x4d5b37af, 0x4d75acbb, 0x4d9018c1, 0x4daa7bc9, 0x4dc4d5de, 0x4ddf2708, 0x4df96f50, 0x4e13aebf,
        0x4e2de55e, 0x4e481336, 0x4e623850, 0x4e7c54b4, 0x4e96686b, 0x4eb0737e, 0x4eca75f5, 0x4ee46fd9, 0x4efe6132,
        0x4f184a09, 0x4f322a66, 0x4f4c0252, 0x4f65d1d3, 0x4f7f98f4, 0x4f9957bb, 0x4fb30e32, 0x4fccbc5f, 0x4fe6624c,
        0x50000000, 0x50199582, 0x503322db, 0x504ca812, 0x50662530, 0x507f9a3c, 0x5099073d, 0x50b26c3b, 0x50cbc93e,
        0x50e51e4e, 0x50fe6b70, 0x5117b0af, 0x5130ee0f, 0x514a2399, 0x51635155, 0x517c7749, 0x5195957c, 0x51aeabf6,
        0x51c7babd, 0x51e0c1da, 0x51f9c152, 0x5212b92d, 0x522ba972, 0x52449228, 0x525d7355, 0x52764d01, 0x528f1f32,
        0x52a7e9ee, 0x52c0ad3d, 0x52d96926, 0x52f21dae, 0x530acadd, 0x532370b9, 0x533c0f48, 0x5354a691, 0x536d369a,
        0x5385bf6b, 0x539e4108, 0x53b6bb79, 0x53cf2ec4, 0x53e79aef, 0x54000000, 0x54185dfd, 0x5430b4ed, 0x544904d5,
        0x54614dbc, 0x54798fa8, 0x5491ca9f, 0x54a9fea7, 0x54c22bc5, 0x54da5200, 0x54f2715d, 0x550a89e3, 0x55229b97,
        0x553aa67e, 0x5552aa9f, 0x556aa800, 0x55829ea6, 0x559a8e96, 0x55b277d7, 0x55ca5a6e, 0x55e23660, 0x55fa0bb3,
        0x5611da6d, 0x5629a292, 0x56416429, 0x56591f37, 0x5670d3c1, 0x568881cd, 0x56a0295f, 0x56b7ca7e, 0x56cf652e,
        0x56e6f975, 0x56fe8758, 0x57160edb, 0x572d9005, 0x57450adb, 0x575c7f61, 0x5773ed9c, 0x578b5593, 0x57a2b748,
        0x57ba12c3, 0x57d16807, 0x57e8b719, 0x58000000, 0x581742be, 0x582e7f5a, 0x5845b5d7, 0x585ce63c, 0x5874108d,
        0x588b34cd, 0x58a25304, 0x58b96b34, 0x58d07d62, 0x58e78994, 0x58fe8fcf, 0x59159015, 0x592c8a6d, 0x59437edb,
        0x595a6d63, 0x59715609, 0x598838d4, 0x599f15c6, 0x59b5ece4, 0x59ccbe34, 0x59e389b8, 0x59fa4f76, 0x5a110f73,
        0x5a27c9b1, 0x5a3e7e36, 0x5a552d07, 0x5a6bd626, 0x5a827999, 0x5a991765, 0x5aafaf8c, 0x5ac64213, 0x5adcceff,
        0x5af35653, 0x5b09d815, 0x5b205447, 0x5b36caee, 0x5b4d3c0f, 0x5b63a7ac, 0x5b7a0dcb, 0x5b906e6f, 0x5ba6c99d,
        0x5bbd1f58, 0x5bd36fa4, 0x5be9ba85, 0x5c000000, 0x5c164017, 0x5c2c7ad0, 0x5c42b02d, 0x5c58e033, 0x5c6f0ae6,
        0x5c853049, 0x5c9b5060, 0x5cb16b30, 0x5cc780bb, 0x5cdd9105, 0x5cf39c13, 0x5d09a1e8, 0x5d1fa288, 0x5d359df6,
        0x5d4b9436, 0x5d61854c, 0x5d77713b, 0x5d8d5808, 0x5da339b4, 0x5db91645, 0x5dceedbe, 0x5de4c022, 0x5dfa8d75,
        0x5e1055ba, 0x5e2618f5, 0x5e3bd72a, 0x5e51905b, 0x5e67448d, 0x5e7cf3c2, 0x5e929dff, 0x5ea84346, 0x5ebde39b,
        0x5ed37f01, 0x5ee9157d, 0x5efea710, 0x5f1433bf, 0x5f29bb8c, 0x5f3f3e7c, 0x5f54bc91, 0x5f6a35ce, 0x5f7faa38,
        0x5f9519d0, 0x5faa849b, 0x5fbfea9c, 0x5fd54bd5, 0x5feaa84b, 0x60000000, 0x601552f7, 0x602aa133, 0x603feab8,
        0x60552f89, 0x606a6fa9, 0x607fab1b, 0x6094e1e2, 0x60aa1401, 0x60bf417c, 0x60d46a54, 0x60e98e8e, 0x60feae2d,
        0x6113c932, 0x6128dfa2, 0x613df180, 0x6152fecd, 0x6168078e, 0x617d0bc5, 0x61920b75, 0x61a706a1, 0x61bbfd4c,
        0x61d0ef79, 0x61e5dd2a, 0x61fac664, 0x620fab27, 0x62248b78, 0x62396759, 0x624e3ecd, 0x626311d7, 0x6277e07a,
        0x628caab7, 0x62a17093, 0x62b63210, 0x62caef31, 0x62dfa7f8, 0x62f45c68, 0x63090c84, 0x631db84e, 0x63325fca,
        0x634702f9, 0x635ba1e0, 0x63703c80, 0x6384d2db, 0x639964f5, 0x63adf2d1, 0x63c27c70, 0x63d701d6, 0x63eb8305,
        0x64000000, 0x641478c8, 0x6428ed62, 0x643d5dcf, 0x6451ca12, 0x6466322e, 0x647a9624, 0x648ef5f8, 0x64a351ac,
        0x64b7a943, 0x64cbfcbe, 0x64e04c22, 0x64f4976f, 0x6508dea8, 0x651d21d1, 0x653160eb, 0x65459bf9, 0x6559d2fc,
        0x656e05f9, 0x658234f1, 0x65965fe5, 0x65aa86da, 0x65bea9d1, 0x65d2c8cd, 0x65e6e3cf, 0x65fafadb, 0x660f0df2,
        0x66231d17, 0x6637284d, 0x664b2f95, 0x665f32f2, 0x66733266, 0x66872df4, 0x669b259d, 0x66af1964, 0x66c3094c,
        0x66d6f556, 0x66eadd85, 0x66fec1db, 0x6712a25a, 0x67267f05, 0x673a57dd, 0x674e2ce5, 0x6761fe1f, 0x6775cb8e,
        0x67899532, 0x679d5b10, 0x67b11d28, 0x67c4db7d, 0x67d89611, 0x67ec4ce7, 0x68000000, 0x6813af5e, 0x68275b03,
        0x683b02f3, 0x684ea72e, 0x686247b7, 0x6875e490, 0x68897dbb, 0x689d133a, 0x68b0a50f, 0x68c4333c, 0x68d7bdc4,
        0x68eb44a8, 0x68fec7ea, 0x6912478d, 0x6925c392, 0x69393bfb, 0x694cb0cb, 0x69602203, 0x69738fa5, 0x6986f9b3,
        0x699a6030, 0x69adc31e, 0x69c1227d, 0x69d47e51, 0x69e7d69a, 0x69fb2b5c, 0x6a0e7c98, 0x6a21ca4f, 0x6a351485,
        0x6a485b3a, 0x6a5b9e71, 0x6a6ede2b, 0x6a821a6b, 0x6a955332, 0x6aa88883, 0x6abbba5e, 0x6acee8c6, 0x6ae213bd,
        0x6af53b45, 0x6b085f5f, 0x6b1b800e, 0x6b2e9d52, 0x6b41b72f, 0x6b54cda5, 0x6b67e0b7, 0x6b7af066, 0x6b8dfcb5,
        0x6ba105a4, 0x6bb40b37, 0x6bc70d6e, 0x6bda0c4b, 0x6bed07d0, 0x6c000000, 0x6c12f4da, 0x6c25e663, 0x6c38d49a,
        0x6c4bbf82, 0x6c5ea71d, 0x6c718b6c, 0x6c846c71, 0x6c974a2e, 0x6caa24a5, 0x6cbcfbd6, 0x6ccfcfc5, 0x6ce2a072,
        0x6cf56ddf, 0x6d08380e, 0x6d1aff01, 0x6d2dc2b9, 0x6d408338, 0x6d534080, 0x6d65fa91, 0x6d78b16f, 0x6d8b651b,
        0x6d9e1595, 0x6db0c2e0, 0x6dc36cfe, 0x6dd613f0, 0x6de8b7b7, 0x6dfb5856, 0x6e0df5ce, 0x6e209020, 0x6e33274e,
        0x6e45bb5a, 0x6e584c45, 0x6e6ada11, 0x6e7d64bf, 0x6e8fec51, 0x6ea270c9, 0x6eb4f228, 0x6ec7706f, 0x6ed9eba1,
        0x6eec63be, 0x6efed8c9, 0x6f114ac2, 0x6f23b9ac, 0x6f362588, 0x6f488e57, 0x6f5af41b, 0x6f6d56d5, 0x6f7fb687,
        0x6f921332, 0x6fa46cd9, 0x6fb6c37b, 0x6fc9171c, 0x6fdb67bc, 0x6fedb55d, 0x70000000, 0x701247a6, 0x70248c52,
        0x7036ce05, 0x70490cbf, 0x705b4883, 0x706d8152, 0x707fb72e, 0x7091ea17, 0x70a41a10, 0x70b6471a, 0x70c87135,
        0x70da9864, 0x70ecbca8, 0x70fede03, 0x7110fc75, 0x71231800, 0x713530a6, 0x71474668, 0x71595947, 0x716b6944,
        0x717d7662, 0x718f80a2, 0x71a18804, 0x71b38c8a, 0x71c58e36, 0x71d78d08, 0x71e98903, 0x71fb8228, 0x720d7877,
        0x721f6bf3, 0x72315c9c, 0x72434a74, 0x7255357d, 0x72671db7, 0x72790323, 0x728ae5c5, 0x729cc59b, 0x72aea2a8,
        0x72c07cee, 0x72d2546d, 0x72e42926, 0x72f5fb1c, 0x7307ca4f, 0x731996c0, 0x732b6072, 0x733d2764, 0x734eeb99,
        0x7360ad11, 0x73726bce, 0x738427d2, 0x7395e11d, 0x73a797b0, 0x73b94b8e, 0x73cafcb6, 0x73dcab2b, 0x73ee56ee,
        0x74000000, 0x7411a661, 0x74234a14, 0x7434eb1a, 0x74468973, 0x74582521, 0x7469be26, 0x747b5481, 0x748ce836,
        0x749e7944, 0x74b007ad, 0x74c19373, 0x74d31c95, 0x74e4a317, 0x74f626f8, 0x7507a83a, 0x751926de, 0x752aa2e5,
        0x753c1c51, 0x754d9323, 0x755f075b, 0x757078fb, 0x7581e804, 0x75935478, 0x75a4be57, 0x75b625a2, 0x75c78a5b,
        0x75d8ec83, 0x75ea4c1b, 0x75fba923, 0x760d039f, 0x761e5b8d, 0x762fb0f0, 0x764103c8, 0x76525417, 0x7663a1de,
        0x7674ed1e, 0x768635d8, 0x76977c0d, 0x76a8bfbe, 0x76ba00ed, 0x76cb3f9a, 0x76dc7bc6, 0x76edb573, 0x76feeca2,
        0x77102153, 0x77215388, 0x77328343, 0x7743b083, 0x7754db4a, 0x77660399, 0x77772972, 0x77884cd5, 0x77996dc3,
        0x77aa8c3d, 0x77bba845, 0x77ccc1db, 0x77ddd901, 0x77eeedb8, 0x78000000, 0x78110fda, 0x78221d48, 0x7833284b,
        0x784430e4, 0x78553713, 0x78663ada, 0x78773c3a, 0x78883b34, 0x789937c8, 0x78aa31f9, 0x78bb29c6, 0x78cc1f31,
        0x78dd123b, 0x78ee02e4, 0x78fef12f, 0x790fdd1b, 0x7920c6ab, 0x7931adde, 0x794292b5, 0x79537533, 0x79645558,
        0x79753324, 0x79860e99, 0x7996e7b7, 0x79a7be80, 0x79b892f5, 0x79c96517, 0x79da34e6, 0x79eb0264, 0x79fbcd91,
        0x7a0c966e, 0x7a1d5cfd, 0x7a2e213e, 0x7a3ee333, 0x7a4fa2dc, 0x7a60603a, 0x7a711b4e, 0x7a81d419, 0x7a928a9c,
        0x7aa33ed9, 0x7ab3f0cf, 0x7ac4a07f, 0x7ad54dec, 0x7ae5f915, 0x7af6a1fc, 0x7b0748a1, 0x7b17ed05, 0x7b288f2a,
        0x7b392f10, 0x7b49ccb8, 0x7b5a6824, 0x7b6b0153, 0x7b7b9847, 0x7b8c2d00, 0x7b9cbf81, 0x7bad4fc8, 0x7bbdddd9,
        0x7bce69b2, 0x7bdef356, 0x7bef7ac5, 0x7c000000, 0x7c108307, 0x7c2103dc, 0x7c318280, 0x7c41fef4, 0x7c527937,
        0x7c62f14c, 0x7c736733, 0x7c83daed, 0x7c944c7b, 0x7ca4bbdd, 0x7cb52915, 0x7cc59423, 0x7cd5fd09, 0x7ce663c6,
        0x7cf6c85d, 0x7d072acd, 0x7d178b18, 0x7d27e93e, 0x7d384541, 0x7d489f20, 0x7d58f6de, 0x7d694c7b, 0x7d799ff7,
        0x7d89f153, 0x7d9a4091, 0x7daa8db1, 0x7dbad8b4, 0x7dcb219b, 0x7ddb6866, 0x7debad17, 0x7dfbefae, 0x7e0c302c,
        0x7e1c6e91, 0x7e2caae0, 0x7e3ce518, 0x7e4d1d3a, 0x7e5d5347, 0x7e6d8740, 0x7e7db926, 0x7e8de8f9, 0x7e9e16ba,
        0x7eae426b, 0x7ebe6c0b, 0x7ece939c, 0x7edeb91e, 0x7eeedc93, 0x7efefdfa, 0x7f0f1d56, 0x7f1f3aa6, 0x7f2f55eb,
        0x7f3f6f26, 0x7f4f8658, 0x7f5f9b82, 0x7f6faea4, 0x7f7fbfbf, 0x7f8fced4, 0x7f9fdbe4, 0x7fafe6f0, 0x7fbfeff7,
        0x7fcff6fc, 0x7fdffbfe, 0x7feffeff, 0x80000000,
    };
    const uint32_t j = (t >> (32u - RLCC_SQRT_INDEX_BITS)) - RLCC_SQRT_TABLE_BASE;
    const uint32_t lo = knots[j];
    const uint32_t frac =
        (t >> (32u - RLCC_SQRT_INDEX_BITS - RLCC_SQRT_FRAC_BITS)) & ((1u << RLCC_SQRT_FRAC_BITS) - 1u);
    return lo + (((knots[j + 1u] - lo) * frac) >> RLCC_SQRT_FRAC_BITS); /* knots 2^21 apart at most: no overflow */
}

/* floor(sqrt(r << RATE_FRAC_BITS)) or one more, for 0 < r <= 2^20 (steps 1 to 3). */
static inline uint32_t rlcc_sqrt_estimate(uint32_t r)
{
    const uint32_t k = rlcc_sqrt_norm_shift(r);
    return ((rlcc_sqrt_q30(r << k) >> (4u + (k >> 1))) + 1u) >> 1; /* / 2^(5 + k/2), rounded */
}

/* floor(sqrt(r << RATE_FRAC_BITS)) for 0 <= r <= 2^20, exact (step 4). */
static inline uint32_t rlcc_isqrt_rate(uint32_t r)
{
    uint32_t x;
    if (r == 0u) {
        return 0u;
    }
    x = rlcc_sqrt_estimate(r);
#if RLCC_NARROW_REGS
    {
        /* n - x^2 in one 32-bit word (mod 2^32), exact: |n - x^2| <= 2^21 + 1 */
        const int32_t d = rlcc_as_int32((r << RLCC_RATE_FRAC_BITS) - x * x);
        return x - (uint32_t)(d < 0);
    }
#else
    {
        const uint64_t n = (uint64_t)r << RLCC_RATE_FRAC_BITS;
        return x - (uint32_t)((uint64_t)x * x > n);
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
    const int64_t d = (int64_t)target_q16 - (int64_t)penalty; /* >= -(2^31 - 1) = FEATURE_MIN: no lower clamp */
    return (int32_t)(d > RLCC_FEATURE_MAX ? RLCC_FEATURE_MAX : d);
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
