/* A "user algorithm" that evaluates every fixed-point helper on the event words and stores
 * the results in the context: runs the helpers through the harness on each target. */
#include "pcc_sdk.h"

void user_init(uint32_t *disable_event_bitmask) { *disable_event_bitmask = 0; }

int user_set_algo_params(uint32_t port, uint32_t slot, uint32_t param_id_base, uint32_t n,
                         const uint32_t *new_values, uint32_t *params)
{
    (void)port; (void)slot; (void)param_id_base; (void)n; (void)new_values; (void)params;
    return PCC_FAIL;
}

void user_algo(pcc_ctx_t *ctx, const pcc_event_t *ev, pcc_attr_t attr, pcc_results_t *results)
{
    const uint32_t *w = ev->w;
    uint64_t m = pcc_mult(w[1], w[2]);
    (void)attr;
    ctx->w[0] = pcc_fxp_mult(w[1], w[2]);
    ctx->w[1] = pcc_fxp_recip(w[3]);
    ctx->w[2] = (uint32_t)pcc_fxp_log2(w[4]);
    ctx->w[3] = pcc_fxp_pow2((int32_t)w[5]);
    ctx->w[4] = pcc_fls(w[6]);
    ctx->w[5] = (uint32_t)m;
    ctx->w[6] = (uint32_t)(m >> 32);
    ctx->w[7] = pcc_isqrt64(((uint64_t)w[6] << 32) | w[7]);
    ctx->w[8] = pcc_rtt_ns(ev);
    results->rate = 1;
    results->rtt_req = 0;
}
