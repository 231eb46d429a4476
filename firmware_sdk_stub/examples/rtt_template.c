/*
 * rtt_template.c - reference "RTT template" congestion-control algorithm on the rlcc SDK stub.
 *
 * Behaviour modelled on the public description of the SDK's sample algorithm (our own code):
 *   - new flow (ctx rate word == 0): rate = NEW_FLOW_RATE, request an RTT probe;
 *   - CNP / NACK events only mark the flow (flags), the rate is unchanged;
 *   - RTT event, rtt = pcc_rtt_ns(ev) (wraparound-safe), then exactly one of
 *       NACK seen and rtt > BASE_RTT   -> strong decrease: rate *= STRONG_FACTOR
 *       CNP seen or rtt >= MAX_DELAY   -> medium decrease: rate *= MEDIUM_FACTOR
 *       rtt > BASE_RTT                 -> mild decrease:   rate *= (1 - UF)
 *       otherwise                      -> additive increase: rate += AI
 *     clamp to [MIN_RATE, PCC_MAX_RATE], clear the marks and the backoff, request the next
 *     RTT probe (rtt_req = 1);
 *   - TX event: if it carries PCC_TX_FLAG_RTT_REQ_SENT the probe send time is recorded;
 *     if a probe is outstanding for longer than RTT_TIMEOUT << backoff: timeout -> medium
 *     decrease, backoff++ (capped at MAX_BACKOFF), request a new probe. While the core is
 *     overloaded (attr overload bit) TX events skip the timeout check;
 *   - ACK (and the deprecated FW/NULL) events are disabled in user_init.
 * Factors are Q16.16 (pcc_fxp_mult), rates have 20 fractional bits. Parameter storage and commit,
 * context clearing and the rate clamp come from rlcc_runtime.h, the runtime rlcc-generated
 * firmware uses too.
 */
#include "pcc_sdk.h"
#include "rlcc_runtime.h"

/* ---- parameters (per slot; ids are indices into pcc_params[slot]) ---- */
enum rtt_tmpl_param {
    RTT_P_UF = 0,            /* Q16.16, (0, 1): mild decrease factor is 1 - UF */
    RTT_P_AI = 1,            /* rate units, (0, PCC_MAX_RATE] */
    RTT_P_BASE_RTT = 2,      /* ns, > 0 */
    RTT_P_MAX_DELAY = 3,     /* ns, > BASE_RTT */
    RTT_P_NEW_FLOW_RATE = 4, /* rate, [MIN_RATE, PCC_MAX_RATE] */
    RTT_P_MIN_RATE = 5,      /* rate, [1, PCC_MAX_RATE] */
    RTT_P_STRONG_FACTOR = 6, /* Q16.16, (0, 1) */
    RTT_P_MEDIUM_FACTOR = 7, /* Q16.16, (0, 1) */
    RTT_P_RTT_TIMEOUT = 8,   /* ns, > 0 */
    RTT_P_MAX_BACKOFF = 9,   /* [0, 15] */
    RTT_P_NUM = 10
};

#define RTT_DEF_UF 6554u               /* ~0.1 */
#define RTT_DEF_AI 52429u              /* ~5% of line rate */
#define RTT_DEF_BASE_RTT 13000u        /* 13 us */
#define RTT_DEF_MAX_DELAY 150000u      /* 150 us */
#define RTT_DEF_NEW_FLOW_RATE PCC_MAX_RATE
#define RTT_DEF_MIN_RATE PCC_MIN_RATE
#define RTT_DEF_STRONG_FACTOR 32768u   /* 0.5 */
#define RTT_DEF_MEDIUM_FACTOR 49152u   /* 0.75 */
#define RTT_DEF_RTT_TIMEOUT 1000000u   /* 1 ms */
#define RTT_DEF_MAX_BACKOFF 6u

/* ---- counters ---- */
enum rtt_tmpl_counter {
    RTT_C_RTT_EVENTS = 0,
    RTT_C_DECREASES = 1,
    RTT_C_INCREASES = 2,
    RTT_C_TIMEOUTS = 3,
    RTT_C_NEW_FLOWS = 4
};

/* ---- per-flow context words ---- */
enum rtt_tmpl_ctx {
    CTX_RATE = 0,       /* current rate; 0 = new flow */
    CTX_FLAGS = 1,      /* CTXF_* */
    CTX_LAST_RTT = 2,   /* last RTT sample, ns */
    CTX_PROBE_TS = 3,   /* when the outstanding probe was requested/sent, ns */
    CTX_BACKOFF = 4     /* probe-timeout backoff exponent */
};
#define CTXF_CNP_SEEN 1u
#define CTXF_NACK_SEEN 2u
#define CTXF_PROBE_OUT 4u

static const uint32_t rtt_tmpl_defaults[RTT_P_NUM] = {
    RTT_DEF_UF, RTT_DEF_AI, RTT_DEF_BASE_RTT, RTT_DEF_MAX_DELAY, RTT_DEF_NEW_FLOW_RATE,
    RTT_DEF_MIN_RATE, RTT_DEF_STRONG_FACTOR, RTT_DEF_MEDIUM_FACTOR, RTT_DEF_RTT_TIMEOUT,
    RTT_DEF_MAX_BACKOFF,
};

void user_init(uint32_t *disable_event_bitmask)
{
    rlcc_init_params(rtt_tmpl_defaults, RTT_P_NUM);
    *disable_event_bitmask = (UINT32_C(1) << PCC_EVENT_NULL) | (UINT32_C(1) << PCC_EVENT_FW) |
                             (UINT32_C(1) << PCC_EVENT_ACK);
}

static bool rtt_tmpl_params_valid(const uint32_t *p)
{
    return p[RTT_P_UF] > 0u && p[RTT_P_UF] < PCC_FACTOR_ONE &&
           p[RTT_P_AI] > 0u && p[RTT_P_AI] <= PCC_MAX_RATE &&
           p[RTT_P_BASE_RTT] > 0u && p[RTT_P_MAX_DELAY] > p[RTT_P_BASE_RTT] &&
           p[RTT_P_MIN_RATE] >= 1u && p[RTT_P_MIN_RATE] <= PCC_MAX_RATE &&
           p[RTT_P_NEW_FLOW_RATE] >= p[RTT_P_MIN_RATE] && p[RTT_P_NEW_FLOW_RATE] <= PCC_MAX_RATE &&
           p[RTT_P_STRONG_FACTOR] > 0u && p[RTT_P_STRONG_FACTOR] < PCC_FACTOR_ONE &&
           p[RTT_P_MEDIUM_FACTOR] > 0u && p[RTT_P_MEDIUM_FACTOR] < PCC_FACTOR_ONE &&
           p[RTT_P_RTT_TIMEOUT] > 0u && p[RTT_P_MAX_BACKOFF] <= 15u;
}

/* validates the whole resulting set (cross-parameter rules), then commits it atomically */
int user_set_algo_params(uint32_t port, uint32_t slot, uint32_t param_id_base, uint32_t n,
                         const uint32_t *new_values, uint32_t *params)
{
    return rlcc_set_params(port, slot, param_id_base, n, new_values, params, RTT_P_NUM, rtt_tmpl_params_valid);
}

static uint32_t clamp_rate(uint32_t rate, uint32_t min_rate)
{
    return rlcc_clamp_rate(rate, min_rate);
}

void user_algo(pcc_ctx_t *ctx, const pcc_event_t *ev, pcc_attr_t attr, pcc_results_t *results)
{
    uint32_t *c = ctx->w;
    uint32_t rate = c[CTX_RATE];
    uint32_t min_rate = pcc_param(attr, RTT_P_MIN_RATE);
    uint32_t now = pcc_ev_timestamp(ev);
    uint32_t rtt_req = 0;

    if (rate == 0u) { /* new flow */
        rlcc_ctx_clear(c);
        rate = clamp_rate(pcc_param(attr, RTT_P_NEW_FLOW_RATE), min_rate);
        c[CTX_FLAGS] = CTXF_PROBE_OUT;
        c[CTX_PROBE_TS] = now;
        rtt_req = 1u;
        pcc_counter_add(attr, RTT_C_NEW_FLOWS, 1u);
    }

    switch (pcc_ev_type(ev)) {
    case PCC_EVENT_CNP:
        c[CTX_FLAGS] |= CTXF_CNP_SEEN;
        break;
    case PCC_EVENT_NACK:
        c[CTX_FLAGS] |= CTXF_NACK_SEEN;
        break;
    case PCC_EVENT_RTT: {
        uint32_t rtt = pcc_rtt_ns(ev);
        uint32_t base = pcc_param(attr, RTT_P_BASE_RTT);
        uint32_t flags = c[CTX_FLAGS];
        if ((flags & CTXF_NACK_SEEN) != 0u && rtt > base) {
            rate = pcc_fxp_mult(rate, pcc_param(attr, RTT_P_STRONG_FACTOR));
            pcc_counter_add(attr, RTT_C_DECREASES, 1u);
        } else if ((flags & CTXF_CNP_SEEN) != 0u || rtt >= pcc_param(attr, RTT_P_MAX_DELAY)) {
            rate = pcc_fxp_mult(rate, pcc_param(attr, RTT_P_MEDIUM_FACTOR));
            pcc_counter_add(attr, RTT_C_DECREASES, 1u);
        } else if (rtt > base) {
            rate = pcc_fxp_mult(rate, PCC_FACTOR_ONE - pcc_param(attr, RTT_P_UF));
            pcc_counter_add(attr, RTT_C_DECREASES, 1u);
        } else {
            uint32_t ai = pcc_param(attr, RTT_P_AI);
            rate = (rate > PCC_MAX_RATE - ai) ? PCC_MAX_RATE : rate + ai; /* no wrap */
            pcc_counter_add(attr, RTT_C_INCREASES, 1u);
        }
        rate = clamp_rate(rate, min_rate);
        c[CTX_LAST_RTT] = rtt;
        c[CTX_FLAGS] = CTXF_PROBE_OUT;
        c[CTX_PROBE_TS] = now;
        c[CTX_BACKOFF] = 0u;
        rtt_req = 1u;
        pcc_counter_add(attr, RTT_C_RTT_EVENTS, 1u);
        break;
    }
    case PCC_EVENT_TX:
        if ((pcc_ev_flags(ev) & PCC_TX_FLAG_RTT_REQ_SENT) != 0u) {
            c[CTX_PROBE_TS] = now;
            c[CTX_FLAGS] |= CTXF_PROBE_OUT;
        } else if (!pcc_attr_overloaded(attr) && (c[CTX_FLAGS] & CTXF_PROBE_OUT) != 0u) {
            uint32_t backoff = c[CTX_BACKOFF];
            uint32_t timeout = pcc_param(attr, RTT_P_RTT_TIMEOUT);
            uint64_t limit = (uint64_t)timeout << (backoff & 15u);
            if ((uint64_t)(now - c[CTX_PROBE_TS]) > limit) {
                rate = clamp_rate(pcc_fxp_mult(rate, pcc_param(attr, RTT_P_MEDIUM_FACTOR)), min_rate);
                if (backoff < pcc_param(attr, RTT_P_MAX_BACKOFF)) {
                    c[CTX_BACKOFF] = backoff + 1u;
                }
                c[CTX_PROBE_TS] = now;
                rtt_req = 1u;
                pcc_counter_add(attr, RTT_C_TIMEOUTS, 1u);
            }
        }
        break;
    default: /* ACK, FW, NULL: nothing to do */
        break;
    }

    c[CTX_RATE] = rate;
    results->rate = rate;
    results->rtt_req = rtt_req;
}
