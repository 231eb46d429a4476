/*
 * pcc_fxp.h - portable integer fixed-point helpers of the rlcc PCC-style SDK stub.
 *
 * On the modelled device (a NIC's congestion-control RISC-V cores) the Q16.16 reciprocal,
 * 2^x and log2 are custom instructions. This stub gives plain integer C versions with fully
 * defined behaviour (including at 0 and on overflow) so that the same source runs bit-exactly
 * on a host (gcc), on bare-metal rv32imc / rv64imac, and in the Python golden model.
 *
 * Rules kept by every helper: static inline, no floating point, no libc (only <stdint.h>),
 * no 64-bit division (rv32 would need a compiler_rt call), loop trip counts are constants.
 *
 * Formats: a "Q16.16" value v stands for v / 2^16. Unsigned unless stated.
 */
#ifndef PCC_FXP_H
#define PCC_FXP_H

#include <stdint.h>

#define PCC_FXP_FRAC_BITS 16u
#define PCC_FXP_ONE (UINT32_C(1) << PCC_FXP_FRAC_BITS)

/* pcc_mult: full 64-bit product a * b (exact, never overflows). */
static inline uint64_t pcc_mult(uint32_t a, uint32_t b)
{
    return (uint64_t)a * (uint64_t)b;
}

/*
 * pcc_fxp_mult: Q16.16 multiply, floor((a * b) / 2^16).
 * Typical use: a Q16.16 factor times a rate (20 fractional bits) gives a rate.
 * Rounding: truncation toward zero (floor, operands are unsigned).
 * Overflow: if the exact floor does not fit 32 bits the result saturates to UINT32_MAX.
 */
static inline uint32_t pcc_fxp_mult(uint32_t a, uint32_t b)
{
    uint64_t p = ((uint64_t)a * (uint64_t)b) >> PCC_FXP_FRAC_BITS;
    return (p > (uint64_t)UINT32_MAX) ? UINT32_MAX : (uint32_t)p;
}

/*
 * pcc_fls: "find last set", the 1-based index of the most significant set bit,
 * i.e. 32 - clz(x). pcc_fls(0) = 0, pcc_fls(1) = 1, pcc_fls(0x80000000) = 32.
 * Branchy binary search (5 steps); no Zbb needed.
 */
static inline uint32_t pcc_fls(uint32_t x)
{
    uint32_t n = 0;
    if (x >= (UINT32_C(1) << 16)) { n += 16u; x >>= 16; }
    if (x >= (UINT32_C(1) << 8)) { n += 8u; x >>= 8; }
    if (x >= (UINT32_C(1) << 4)) { n += 4u; x >>= 4; }
    if (x >= (UINT32_C(1) << 2)) { n += 2u; x >>= 2; }
    if (x >= (UINT32_C(1) << 1)) { n += 1u; x >>= 1; }
    return n + x; /* x is now 0 or 1 */
}

/*
 * pcc_fxp_recip: Q16.16 reciprocal, floor(2^32 / a) (= 1 / (a / 2^16) in Q16.16).
 * Exact floor for 2 <= a. a == 0 and a == 1 (true results 'infinity' and 2^32) saturate
 * to UINT32_MAX. Uses one native 32-bit unsigned division (rv*m has divu/remu).
 */
static inline uint32_t pcc_fxp_recip(uint32_t a)
{
    uint32_t q, r;
    if (a <= 1u) {
        return UINT32_MAX;
    }
    /* 2^32 = a * q + (r + 1) with q = floor((2^32-1)/a), r = (2^32-1) mod a */
    q = UINT32_MAX / a;
    r = UINT32_MAX % a;
    return (r == a - 1u) ? q + 1u : q;
}

/*
 * pcc_fxp_log2: log2 of an unsigned Q16.16 value, as a signed Q16.16 result.
 * Range: x in [1, 2^32-1] (2^-16 .. ~2^16) gives [-16.0, 16.0) i.e. [-1048576, 1048576).
 * Rounding: the integer part is exact; the 16 fraction bits come from 16 constant iterations
 * of the bit-by-bit squaring method with truncated Q1.31 squares, so the result never exceeds
 * the exact value and is below it by less than 2 ulp (2^-15); powers of two are exact.
 * At 0 (log2 0 = -infinity) the result is INT32_MIN.
 */
static inline int32_t pcc_fxp_log2(uint32_t x)
{
    uint32_t msb, m, frac = 0;
    int32_t ip;
    int i;
    if (x == 0u) {
        return INT32_MIN;
    }
    msb = pcc_fls(x) - 1u;                /* 0..31 */
    ip = (int32_t)msb - (int32_t)PCC_FXP_FRAC_BITS; /* -16..15 */
    m = x << (31u - msb);                 /* mantissa in Q1.31, [1, 2) */
    for (i = 0; i < 16; i++) {
        uint64_t sq = (uint64_t)m * (uint64_t)m; /* Q2.62, [1, 4) */
        frac <<= 1;
        if (sq >= (UINT64_C(1) << 63)) {   /* square >= 2: halve it, emit a 1 bit */
            m = (uint32_t)(sq >> 32);
            frac |= 1u;
        } else {
            m = (uint32_t)(sq >> 31);
        }
    }
    return ip * (int32_t)PCC_FXP_ONE + (int32_t)frac;
}

/*
 * pcc_fxp_pow2: 2^(x / 2^16) for a signed Q16.16 exponent, as an unsigned Q16.16 result.
 * pcc_fxp_pow2(0) = PCC_FXP_ONE exactly; every integer exponent in [-16, 15] is exact.
 * Overflow: x >= 16.0 (result >= 2^32 / 2^16) saturates to UINT32_MAX.
 * Underflow: results below 0.5 ulp round to 0 (x < -17.0 gives 0).
 * Rounding: the mantissa 2^frac is a product of up to 16 rounded Q1.31 constants
 * 2^(2^-k) (relative error < 2^-27), then rounded to nearest when shifted into Q16.16;
 * total error <= 0.5 ulp + result * 2^-27 (<= 32 ulp at the top of the range).
 */
static inline uint32_t pcc_fxp_pow2(int32_t x)
{
    /* round(2^(2^-k) * 2^31) for k = 1..16 */
    static const uint32_t pcc_pow2_tab[16] = {
        0xb504f334u, 0x9837f052u, 0x8b95c1e4u, 0x85aac368u,
        0x82cd8699u, 0x8164d1f4u, 0x80b1ed50u, 0x8058d7d3u,
        0x802c6437u, 0x8016302fu, 0x800b179du, 0x80058bafu,
        0x8002c5d0u, 0x800162e6u, 0x8000b173u, 0x800058b9u,
    };
    uint32_t ux, frac, s;
    int32_t ip;
    uint64_t m = UINT64_C(1) << 31; /* 1.0 in Q1.31 */
    int k;
    if (x >= 16 * (int32_t)PCC_FXP_ONE) {
        return UINT32_MAX;
    }
    if (x < -17 * (int32_t)PCC_FXP_ONE) {
        return 0u;
    }
    /* offset by +32.0 so that the split into integer/fraction needs no signed shift */
    ux = (uint32_t)x + (UINT32_C(32) << PCC_FXP_FRAC_BITS);
    ip = (int32_t)(ux >> PCC_FXP_FRAC_BITS) - 32; /* -17..15 */
    frac = ux & (PCC_FXP_ONE - 1u);
    for (k = 0; k < 16; k++) {
        if (frac & (UINT32_C(0x8000) >> k)) {
            m = (m * pcc_pow2_tab[k] + (UINT64_C(1) << 30)) >> 31;
        }
    }
    /* result = m * 2^ip in Q16.16 = m * 2^(ip + 16 - 31) = m >> (15 - ip), 0 <= 15 - ip <= 32 */
    s = (uint32_t)(15 - ip);
    if (s == 0u) {
        return (uint32_t)m;
    }
    return (uint32_t)((m + (UINT64_C(1) << (s - 1u))) >> s);
}

/*
 * pcc_isqrt64: floor(sqrt(v)) for any uint64 v; exact. Bit-by-bit method with exactly
 * 32 iterations, shifts/adds/compares only (no division, no multiplication).
 * pcc_isqrt64(0) = 0, pcc_isqrt64(UINT64_MAX) = UINT32_MAX.
 */
static inline uint32_t pcc_isqrt64(uint64_t v)
{
    uint64_t res = 0;
    uint64_t bit = UINT64_C(1) << 62;
    int i;
    for (i = 0; i < 32; i++) {
        if (v >= res + bit) {
            v -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    return (uint32_t)res;
}

#endif /* PCC_FXP_H */
