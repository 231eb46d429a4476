/*
 * harness_core.c - the table-driven harness loop shared by the bare-metal (harness.c) and
 * hosted (harness_host.c) builds. Layout and semantics: pcc_harness.h.
 */
#include "pcc_harness.h"

/* word copy of a context (a struct assignment could become a memcpy call; the bare-metal
 * build must not depend on libc) */
static void ctx_copy(pcc_ctx_t *dst, const pcc_ctx_t *src)
{
    uint32_t k;
    for (k = 0; k < PCC_CTX_WORDS; k++) {
        dst->w[k] = src->w[k];
    }
}

void rlcc_harness_run(const rlcc_in_prefix_t *in, const rlcc_in_record_t *recs, uint32_t capacity,
                      rlcc_out_header_t *out, rlcc_out_record_t *out_recs)
{
    uint32_t i, count, ncmd, mask = 0;

    out->magic = RLCC_HARNESS_OUT_MAGIC;
    out->version = RLCC_HARNESS_VERSION;
    out->count = 0;
    out->status = RLCC_STATUS_NOT_RUN;
    out->disable_event_mask = 0;
    out->n_param_cmds = 0;
    out->capacity = capacity;
    out->reserved = 0;
    for (i = 0; i < RLCC_HARNESS_MAX_PARAM_CMDS; i++) {
        out->param_status[i] = RLCC_PARAM_CMD_UNUSED;
    }

    if (in->hdr.magic != RLCC_HARNESS_IN_MAGIC) {
        out->status = RLCC_STATUS_BAD_MAGIC;
        return;
    }
    if (in->hdr.version != RLCC_HARNESS_VERSION) {
        out->status = RLCC_STATUS_BAD_VERSION;
        return;
    }
    count = in->hdr.count;
    ncmd = in->hdr.n_param_cmds;
    if (count > capacity) {
        out->status = RLCC_STATUS_TOO_MANY_RECORDS;
        return;
    }
    if (ncmd > RLCC_HARNESS_MAX_PARAM_CMDS) {
        out->status = RLCC_STATUS_TOO_MANY_PARAM_CMDS;
        return;
    }

    user_init(&mask);
    out->disable_event_mask = mask;

    out->n_param_cmds = ncmd;
    for (i = 0; i < ncmd; i++) {
        const rlcc_param_cmd_t *c = &in->param_cmds[i];
        out->param_status[i] =
            (uint32_t)pcc_host_set_params(c->port, c->slot, c->param_id_base, c->n, c->values);
    }

    for (i = 0; i < count; i++) {
        const rlcc_in_record_t *r = &recs[i];
        rlcc_out_record_t *o = &out_recs[i];
        pcc_ctx_t ctx;
        pcc_results_t res;
        pcc_attr_t attr;
        uint64_t c0, c1, n0, n1;

        ctx_copy(&ctx, ((r->flags & RLCC_REC_CHAIN_CTX) != 0u && i > 0u) ? &out_recs[i - 1u].ctx_out : &r->ctx_in);
        res.rate = 0;
        res.rtt_req = 0;
        attr.raw = r->attr;
        pcc_stub_now_ns = pcc_ev_timestamp(&r->event);
#ifdef RLCC_HARNESS_PREPARE_EVENT
        user_prepare_event(&r->event);
#endif

        c0 = pcc_rdcycle();
        n0 = pcc_rdinstret();
        user_algo(&ctx, &r->event, attr, &res);
        n1 = pcc_rdinstret();
        c1 = pcc_rdcycle();

        ctx_copy(&o->ctx_out, &ctx);
        o->rate = res.rate;
        o->rtt_req = res.rtt_req;
        o->cycles = c1 - c0;
        o->instret = n1 - n0;
        out->count = i + 1u;
    }
    out->status = RLCC_STATUS_DONE;
}
