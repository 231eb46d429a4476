/*
 * harness_doca.c - the harness adapter of --sdk doca firmware: the table-driven harness
 * (harness_core.c) calls the stub's user_* callbacks; these forward to the DOCA entry points the
 * firmware implements, so the same records, golden model, proof and cycle counts apply.
 *
 * The event is laid out as the device delivers it, in the layout rlcc-verify --doca-layout chose:
 * the byte offsets and byte order below come from rlcc.firmware_sdk_stub.doca_layout as compiler
 * definitions (DocaLayout.build_defines), not from the contract headers, so firmware that reads the
 * event through the DOCA accessors sees the record's values only where the header it was compiled
 * against and the layout table agree. The stub record's eight words map one to one onto the DOCA
 * general words and the four ev_spec_attr words; the other words are zero, except that where the
 * layout keeps the QP number outside ev_spec_attr (ConnectX-8 ev_dword2) a TX event's QP number
 * (spec word 2) is written there too. The results are read back from their table offsets.
 * A DOCA algorithm serves one slot, so every record is presented at that slot (RLCC_DOCA_SLOT, from
 * the firmware's manifest); the overload flag is passed on. The golden model ignores the slot.
 */
#include "doca_pcc_dev_stub.h"
#include "pcc_harness.h"

#ifndef RLCC_DOCA_SLOT
#error "define RLCC_DOCA_SLOT: the algorithm slot of the firmware (its manifest's sdk.slot)"
#endif
#ifndef RLCC_HARNESS_PREPARE_EVENT
#error "define RLCC_HARNESS_PREPARE_EVENT: the harness prepares the DOCA event (DocaLayout.build_defines)"
#endif
#if !defined(RLCC_DOCA_EVENT_BYTES) || !defined(RLCC_DOCA_EVENT_BIG_ENDIAN) || !defined(RLCC_DOCA_OFF_EV_ATTR) ||    \
    !defined(RLCC_DOCA_OFF_FLOW_TAG) || !defined(RLCC_DOCA_OFF_SN) || !defined(RLCC_DOCA_OFF_TIMESTAMP) ||          \
    !defined(RLCC_DOCA_OFF_SPEC) || !defined(RLCC_DOCA_OFF_QPN) || !defined(RLCC_DOCA_RESULTS_BYTES) ||             \
    !defined(RLCC_DOCA_OFF_RATE) || !defined(RLCC_DOCA_OFF_RTT_REQ)
#error "define the DOCA layout (RLCC_DOCA_EVENT_BYTES ...): rlcc.firmware_sdk_stub.doca_layout build_defines()"
#endif

#define RLCC_DOCA_EVENT_WORDS (RLCC_DOCA_EVENT_BYTES / 4u)
#define RLCC_DOCA_RESULTS_WORDS (RLCC_DOCA_RESULTS_BYTES / 4u)
#define RLCC_DOCA_SPEC_WORDS 4u

_Static_assert(sizeof(doca_pcc_dev_algo_ctxt_t) == sizeof(pcc_ctx_t), "context layouts differ");
_Static_assert(sizeof(doca_pcc_dev_event_t) == RLCC_DOCA_EVENT_BYTES, "the contract header's event has another size");
_Static_assert(sizeof(doca_pcc_dev_results_t) == RLCC_DOCA_RESULTS_BYTES,
               "the contract header's results have another size");
_Static_assert(RLCC_DOCA_EVENT_BYTES % 4u == 0u && RLCC_DOCA_RESULTS_BYTES % 4u == 0u, "records are whole words");
_Static_assert(RLCC_DOCA_OFF_SPEC + 4u * RLCC_DOCA_SPEC_WORDS <= RLCC_DOCA_EVENT_BYTES, "ev_spec_attr past the event");
_Static_assert(RLCC_DOCA_SLOT < DOCA_PCC_DEV_MAX_NUM_USER_SLOTS, "RLCC_DOCA_SLOT is not a user slot");

typedef union rlcc_doca_event_buf {
    doca_pcc_dev_event_t ev;
    uint32_t w[RLCC_DOCA_EVENT_WORDS];
} rlcc_doca_event_buf_t;

typedef union rlcc_doca_results_buf {
    doca_pcc_dev_results_t r;
    uint32_t w[RLCC_DOCA_RESULTS_WORDS];
} rlcc_doca_results_buf_t;

/* value v as the event word at byte offset off, in the device's byte order (the RISC-V cores are
 * little-endian: a big-endian word is stored byte-swapped) */
static void put_word(rlcc_doca_event_buf_t *e, uint32_t off, uint32_t v)
{
#if RLCC_DOCA_EVENT_BIG_ENDIAN
    v = (v >> 24) | ((v >> 8) & 0xFF00u) | ((v & 0xFF00u) << 8) | (v << 24);
#endif
    e->w[off / 4u] = v;
}

static void lay_out_event(rlcc_doca_event_buf_t *e, const pcc_event_t *ev)
{
    uint32_t k;
    for (k = 0u; k < RLCC_DOCA_EVENT_WORDS; k++) {
        put_word(e, 4u * k, 0u);
    }
    put_word(e, RLCC_DOCA_OFF_EV_ATTR, ev->w[PCC_EV_W_ATTR]);
    put_word(e, RLCC_DOCA_OFF_FLOW_TAG, ev->w[PCC_EV_W_FLOW_TAG]);
    put_word(e, RLCC_DOCA_OFF_SN, ev->w[PCC_EV_W_SN]);
    put_word(e, RLCC_DOCA_OFF_TIMESTAMP, ev->w[PCC_EV_W_TIMESTAMP]);
    for (k = 0u; k < RLCC_DOCA_SPEC_WORDS; k++) {
        put_word(e, RLCC_DOCA_OFF_SPEC + 4u * k, ev->w[PCC_EV_W_U0 + k]);
    }
    if ((RLCC_DOCA_OFF_QPN < RLCC_DOCA_OFF_SPEC || RLCC_DOCA_OFF_QPN >= RLCC_DOCA_OFF_SPEC + 4u * RLCC_DOCA_SPEC_WORDS) &&
        pcc_ev_type(ev) == PCC_EVENT_TX) {
        put_word(e, RLCC_DOCA_OFF_QPN, ev->w[PCC_EV_W_U2] & 0xFFFFFFu);
    }
}

/* The harness lays each record's event out before it starts counting cycles (RLCC_HARNESS_PREPARE_EVENT,
 * pcc_harness.h), as the device delivers the event ready: user_algo then uses that copy. Called
 * without it (rlcc-verify --prove executes user_algo alone), user_algo lays the event out itself. */
static rlcc_doca_event_buf_t rlcc_doca_prepared;
const pcc_event_t *rlcc_doca_prepared_for;

void user_prepare_event(const pcc_event_t *ev)
{
    lay_out_event(&rlcc_doca_prepared, ev);
    rlcc_doca_prepared_for = ev;
}

void user_init(uint32_t *disable_event_bitmask)
{
    doca_pcc_dev_user_init(disable_event_bitmask);
}

int user_set_algo_params(uint32_t port, uint32_t slot, uint32_t param_id_base, uint32_t n, const uint32_t *new_values,
                         uint32_t *params)
{
    return (int)rlcc_doca_stub_set_params(port, slot, param_id_base, n, new_values, params);
}

void user_algo(pcc_ctx_t *ctx, const pcc_event_t *ev, pcc_attr_t attr, pcc_results_t *results)
{
    doca_pcc_dev_attr_t a;
    rlcc_doca_event_buf_t own;
    rlcc_doca_event_buf_t *e = &own;
    rlcc_doca_results_buf_t r;
    uint32_t k;
    a.algo_slot = RLCC_DOCA_SLOT;
    a.overload = pcc_attr_overloaded(attr) ? 1u : 0u;
    a.reserved = 0u;
    if (rlcc_doca_prepared_for == ev) {
        e = &rlcc_doca_prepared;
        rlcc_doca_prepared_for = 0;
    } else {
        lay_out_event(&own, ev);
    }
    for (k = 0u; k < RLCC_DOCA_RESULTS_WORDS; k++) {
        r.w[k] = 0u;
    }
    doca_pcc_dev_user_algo((doca_pcc_dev_algo_ctxt_t *)(void *)ctx, &e->ev, &a, &r.r);
    results->rate = r.w[RLCC_DOCA_OFF_RATE / 4u];
    results->rtt_req = r.w[RLCC_DOCA_OFF_RTT_REQ / 4u];
}
