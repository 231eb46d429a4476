/*
 * switch_harness.c - bare-metal (rv32imc / rv64imac) harness of the switch SDK stub; layout and
 * semantics: switch_harness.h. Started by crt0.S (rlcc_main), stops at its final ebreak. The runner
 * writes sw_harness_in (NOLOAD section .rlcc_in, not cleared) before the start and reads
 * sw_harness_out after the stop.
 */
#include "switch_harness.h"

#include "pcc_sdk.h" /* pcc_rdcycle / pcc_rdinstret */

typedef struct sw_harness_in_table {
    sw_harness_in_header_t hdr;
    sw_harness_in_record_t rec[SW_HARNESS_MAX_RECORDS];
} sw_harness_in_table_t;

typedef struct sw_harness_out_table {
    sw_harness_out_header_t hdr;
    sw_harness_out_record_t rec[SW_HARNESS_MAX_RECORDS];
} sw_harness_out_table_t;

__attribute__((section(".rlcc_in"), used, aligned(8))) sw_harness_in_table_t sw_harness_in;
__attribute__((used, aligned(8))) sw_harness_out_table_t sw_harness_out;

static sw_queue_ctx_t sw_harness_ctxs[SW_MAX_PORTS * SW_MAX_QUEUES];

void rlcc_main(void);

/* word copy (a struct assignment could become a memcpy call; bare metal has no libc) */
static void ctx_copy(sw_queue_ctx_t *dst, const sw_queue_ctx_t *src)
{
    uint32_t k;
    for (k = 0; k < SW_CTX_WORDS; k++) {
        dst->w[k] = src->w[k];
    }
}

static void clear_scores(sw_harness_out_record_t *o)
{
    uint32_t k;
    for (k = 0; k < SW_MAX_ACTIONS; k++) {
        o->scores[k] = 0;
    }
}

static void run_decision(const sw_harness_in_record_t *r, sw_harness_out_record_t *o,
                         const sw_harness_out_record_t *prev)
{
    sw_queue_ctx_t ctx, again;
    sw_agent_trace_t trace;
    sw_ecn_config_t ecn, ecn2;
    sw_port_info_t info;
    uint64_t c0, c1, n0, n1;
    uint32_t k;

    clear_scores(o);
    if ((r->flags & SW_REC_INIT) != 0u) {
        sw_agent_queue_init(r->port, r->queue, &ctx, &ecn);
        ctx_copy(&o->ctx_out, &ctx);
        o->ecn = ecn;
        o->action = SW_NO_ACTION;
        o->cycles = 0;
        o->instret = 0;
        return;
    }
    ctx_copy(&ctx, ((r->flags & SW_REC_CHAIN_CTX) != 0u && prev != 0) ? &prev->ctx_out : &r->ctx_in);
    ctx_copy(&again, &ctx);
    info.util_mul = r->util_mul;

    c0 = pcc_rdcycle();
    n0 = pcc_rdinstret();
    o->action = sw_agent_on_interval(r->port, r->queue, &ctx, &r->stats, &info, &ecn, 0);
    n1 = pcc_rdinstret();
    c1 = pcc_rdcycle();

    for (k = 0; k < SW_MAX_ACTIONS; k++) {
        trace.scores[k] = 0;
    }
    (void)sw_agent_on_interval(r->port, r->queue, &again, &r->stats, &info, &ecn2, &trace);
    ctx_copy(&o->ctx_out, &ctx);
    o->ecn = ecn;
    o->cycles = c1 - c0;
    o->instret = n1 - n0;
    for (k = 0; k < SW_MAX_ACTIONS; k++) {
        o->scores[k] = trace.scores[k];
    }
}

static uint32_t run_interval(const sw_harness_in_header_t *h, const sw_harness_in_record_t *recs,
                             sw_harness_out_record_t *outs)
{
    uint32_t group = h->n_ports * h->n_queues, j;
    uint64_t c0, c1, n0, n1;
    int rc;

    for (j = 0; j < group; j++) {
        const sw_harness_in_record_t *r = &recs[j];
        sw_stub_stats[r->port][r->queue] = r->stats;
        sw_stub_port_info[r->port].util_mul = r->util_mul;
        if ((r->flags & SW_REC_CHAIN_CTX) == 0u) {
            ctx_copy(&sw_harness_ctxs[r->port * h->n_queues + r->queue], &r->ctx_in);
        }
    }
    c0 = pcc_rdcycle();
    n0 = pcc_rdinstret();
    rc = sw_run_interval(h->n_ports, h->n_queues, sw_harness_ctxs);
    n1 = pcc_rdinstret();
    c1 = pcc_rdcycle();
    for (j = 0; j < group; j++) {
        const sw_harness_in_record_t *r = &recs[j];
        sw_harness_out_record_t *o = &outs[j];
        clear_scores(o);
        ctx_copy(&o->ctx_out, &sw_harness_ctxs[r->port * h->n_queues + r->queue]);
        o->ecn = sw_stub_ecn[r->port][r->queue];
        o->action = SW_NO_ACTION;
        o->cycles = c1 - c0;
        o->instret = n1 - n0;
    }
    return rc == SW_OK ? SW_STATUS_DONE : SW_STATUS_SDK_ERROR;
}

static uint32_t check_interval_shape(const sw_harness_in_header_t *h)
{
    uint32_t group = h->n_ports * h->n_queues, j;

    if (h->n_ports == 0u || h->n_ports > SW_MAX_PORTS || h->n_queues == 0u || h->n_queues > SW_MAX_QUEUES ||
        h->count % group != 0u) {
        return SW_STATUS_BAD_SHAPE;
    }
    for (j = 0; j < h->count; j++) {
        const sw_harness_in_record_t *r = &sw_harness_in.rec[j];
        if (r->port != (j % group) / h->n_queues || r->queue != j % h->n_queues) {
            return SW_STATUS_BAD_SHAPE;
        }
    }
    return SW_STATUS_DONE;
}

void rlcc_main(void)
{
    const sw_harness_in_header_t *h = &sw_harness_in.hdr;
    sw_harness_out_header_t *out = &sw_harness_out.hdr;
    uint32_t i, status;

    out->magic = SW_HARNESS_OUT_MAGIC;
    out->version = SW_HARNESS_VERSION;
    out->count = 0;
    out->status = SW_STATUS_NOT_RUN;
    out->capacity = SW_HARNESS_MAX_RECORDS;
    if (h->magic != SW_HARNESS_IN_MAGIC) {
        out->status = SW_STATUS_BAD_MAGIC;
        return;
    }
    if (h->version != SW_HARNESS_VERSION) {
        out->status = SW_STATUS_BAD_VERSION;
        return;
    }
    if (h->count > SW_HARNESS_MAX_RECORDS) {
        out->status = SW_STATUS_TOO_MANY_RECORDS;
        return;
    }
    if (h->mode == SW_MODE_DECISION) {
        for (i = 0; i < h->count; i++) {
            run_decision(&sw_harness_in.rec[i], &sw_harness_out.rec[i], i > 0u ? &sw_harness_out.rec[i - 1u] : 0);
            out->count = i + 1u;
        }
        out->status = SW_STATUS_DONE;
        return;
    }
    status = h->mode == SW_MODE_INTERVAL ? check_interval_shape(h) : SW_STATUS_BAD_SHAPE;
    for (i = 0; status == SW_STATUS_DONE && i < h->count; i += h->n_ports * h->n_queues) {
        status = run_interval(h, &sw_harness_in.rec[i], &sw_harness_out.rec[i]);
        out->count = i + h->n_ports * h->n_queues;
    }
    out->status = status;
}
