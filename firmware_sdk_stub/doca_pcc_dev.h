/*
 * doca_pcc_dev.h - rlcc's contract header for the NVIDIA DOCA PCC device API (subset).
 *
 * Declares the part of the public DOCA PCC device API that rlcc-generated firmware (rlcc-compile
 * --sdk doca) uses, with the documented names, types and semantics, so that the generated C is
 * compiled and verified here (the real SDK is not available on these machines). It is NOT
 * NVIDIA's header: no NVIDIA code is copied; every declaration cites what it follows:
 *   [G]  DOCA PCC programming guide, DOCA 2.5.x LTS, https://docs.nvidia.com/doca/archive/2-5-5/DOCA+PCC
 *   [H]  DOCA 2.5 device headers as published in the DOCA SDK API reference (group DOCA_PCC_DEVICE):
 *        doca_pcc_dev.h, doca_pcc_dev_common.h, doca_pcc_dev_data_structure_le.h
 *   [R]  the DOCA PCC reference application's device code (device/dev_main.c, rtt_template.c)
 * Where rlcc assumes rather than knows, the comment says "rlcc:"; firmware_sdk_stub/README.md has the
 * side-by-side table. The numbers are also in rlcc.codegen.sdk_flavours (tests/sdk/test_doca_headers.py).
 *
 * Freestanding C11 (<stdint.h> only), no floating point.
 */
#ifndef DOCA_PCC_DEV_H_
#define DOCA_PCC_DEV_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes [H doca_pcc_dev_common.h] ---- */
typedef enum {
    DOCA_PCC_DEV_STATUS_OK = 0,
    DOCA_PCC_DEV_STATUS_FAIL = 1,
} doca_pcc_dev_error_t;

/* ---- event types [H], [G "Events"] ---- */
typedef enum {
    DOCA_PCC_DEV_EVNT_NULL = 0,
    DOCA_PCC_DEV_EVNT_FW = 1, /* deprecated */
    DOCA_PCC_DEV_EVNT_ROCE_CNP = 2,
    DOCA_PCC_DEV_EVNT_ROCE_TX = 3, /* a TX packet burst ended */
    DOCA_PCC_DEV_EVNT_ROCE_ACK = 4,
    DOCA_PCC_DEV_EVNT_ROCE_NACK = 5,
    DOCA_PCC_DEV_EVNT_RTT = 6, /* RTT probe response */
} doca_pcc_dev_event_type_enum;

/* TX event flags (event general attribute 'flags') [H] */
#define DOCA_PCC_DEV_TX_FLAG_ACK_EXPECTED (1 << 0)
#define DOCA_PCC_DEV_TX_FLAG_OVERLOADED (1 << 1)
#define DOCA_PCC_DEV_TX_FLAG_RTT_REQ_SENT (1 << 2)

/* ---- rates and limits [H doca_pcc_dev.h] ---- */
#define DOCA_PCC_DEV_LOG_MAX_RATE (20) /* rates: fixed point with 20 fractional bits, (0, 1] */
#define DOCA_PCC_DEV_MAX_RATE (1U << DOCA_PCC_DEV_LOG_MAX_RATE)
#define DOCA_PCC_DEV_MAX_NUM_PORTS (4)
#define DOCA_PCC_DEV_MAX_NUM_USER_SLOTS (8)
#define DOCA_PCC_DEV_MAX_NUM_ALGOS (8)
#define DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO (0x1E)
#define DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO (0xF)
#define DOCA_PCC_DEV_ALGO_SLOT_INTERNAL (0xF)  /* slot of the library's built-in algorithm */
#define DOCA_PCC_DEV_ALGO_INDEX_INTERNAL (0xF) /* index of the library's built-in algorithm */

/* ---- data structures [H doca_pcc_dev_data_structure_le.h, DOCA 2.5]; little-endian bit fields.
 * Field names are the documented ones; struct tags are rlcc's. Newer DOCA releases (2.9+, per-device
 * BF3/CX8 headers) place reserved words before ev_attr and split port_num into port_num:3 and
 * plane_num:5: code that uses only the accessors (doca_pcc_dev_event.h), as rlcc's does, is
 * unaffected. ---- */

/* Per-flow algorithm context: 12 words, restored for every event of the flow [H], [G]. rlcc: zero
 * for a new flow (the reference RTT template treats a zero rate as a new flow [R]). */
typedef struct rlcc_doca_algo_ctxt {
    uint32_t data[12];
} doca_pcc_dev_algo_ctxt_t;

/* Event attributes of the algorithm call: algorithm slot and the overload flag [H]. */
typedef struct rlcc_doca_attr {
    uint32_t algo_slot : 4;
    uint32_t overload : 1;
    uint32_t reserved : 27;
} doca_pcc_dev_attr_t;

/* Results: the new rate (20 fractional bits, (0, 1]) and the RTT-probe request bit [H]. */
typedef struct rlcc_doca_results {
    uint32_t rate;
    uint32_t rtt_req;
} doca_pcc_dev_results_t;

/* General attributes of every event [H]. */
typedef struct rlcc_doca_event_general_attr {
    uint32_t ev_type : 8;
    uint32_t ev_subtype : 8;
    uint32_t port_num : 8;
    uint32_t flags : 8;
} doca_pcc_dev_event_general_attr_t;

/* ACK/NACK/CNP: number of hardware-coalesced events [H]. */
typedef struct rlcc_doca_ack_nack_cnp_extra {
    uint32_t num_coalesced : 16;
    uint32_t reserved : 16;
} doca_pcc_dev_ack_nack_cnp_extra_t;

/* TX counters: sent bytes in 32-byte units and sent packets [H]. */
typedef struct rlcc_doca_roce_tx_cntrs {
    uint32_t sent_32bytes : 16;
    uint32_t sent_pkts : 16;
} doca_pcc_dev_roce_tx_cntrs_t;

typedef struct rlcc_doca_roce_tx {
    uint32_t first_timestamp;
    doca_pcc_dev_roce_tx_cntrs_t cntrs;
    uint32_t flow_qpn : 24;
    uint32_t reserved_qpn : 8;
    uint32_t reserved;
} doca_pcc_dev_roce_tx_t;

typedef struct rlcc_doca_ack_nack_cnp {
    uint32_t first_timestamp;
    uint32_t first_sn;
    doca_pcc_dev_ack_nack_cnp_extra_t extra;
    uint32_t reserved;
} doca_pcc_dev_ack_nack_cnp_t;

typedef struct rlcc_doca_rtt_tstamp {
    uint32_t req_send_timestamp;
    uint32_t req_recv_timestamp;
    uint32_t resp_send_timestamp;
    uint32_t reserved;
} doca_pcc_dev_rtt_tstamp_t;

typedef union rlcc_doca_event_spec_attr {
    doca_pcc_dev_roce_tx_t roce_tx;
    doca_pcc_dev_ack_nack_cnp_t ack_nack_cnp;
    doca_pcc_dev_rtt_tstamp_t rtt_tstamp;
    uint32_t fw_data[4];
} doca_pcc_dev_event_spec_attr_t;

/* The event: general attributes, flow tag, serial number, ns timestamp, per-type attributes [H].
 * Read it through the accessors of doca_pcc_dev_event.h only ([H]: "The event info should not be
 * used directly through the struct"). */
typedef struct rlcc_doca_event {
    doca_pcc_dev_event_general_attr_t ev_attr;
    uint32_t flow_tag;
    uint32_t sn;
    uint32_t timestamp;
    doca_pcc_dev_event_spec_attr_t ev_spec_attr;
} doca_pcc_dev_event_t;

_Static_assert(sizeof(doca_pcc_dev_algo_ctxt_t) == 48u, "the DOCA algorithm context is 12 words");
_Static_assert(sizeof(doca_pcc_dev_attr_t) == 4u, "doca_pcc_dev_attr_t is one word");
_Static_assert(sizeof(doca_pcc_dev_results_t) == 8u, "doca_pcc_dev_results_t is two words");
_Static_assert(sizeof(doca_pcc_dev_event_t) == 32u, "the DOCA 2.5 event is 8 words");

/* ---- user callbacks: implemented by the algorithm, called by the library [H], [G] ---- */

/* One event of one flow: algo_ctxt is the flow's context, attr the algorithm slot; write results. */
void doca_pcc_dev_user_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
                            const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results);

/* Once at load: initialize every algorithm and slot; set bit (1 << event type) in
 * *disable_event_bitmask to drop that event type before any algorithm sees it. */
void doca_pcc_dev_user_init(uint32_t *disable_event_bitmask);

/* Host parameter write (PPCC command / MAD): validate new_param_values[0 .. param_num - 1] for
 * parameters param_id_base .. of (port_num, algo_slot) and store them into params; on FAIL no
 * parameter may have changed. */
doca_pcc_dev_error_t doca_pcc_dev_user_set_algo_params(uint32_t port_num, uint32_t algo_slot, uint32_t param_id_base,
                                                       uint32_t param_num, const uint32_t *new_param_values,
                                                       uint32_t *params);

/* ---- library function [H] ---- */

/* The library's built-in algorithm, for flows of a slot the user code does not serve. rlcc's stub
 * (doca_pcc_dev_stub.c) leaves the context alone and answers {DOCA_PCC_DEV_MAX_RATE, 0}. */
void doca_pcc_dev_default_internal_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
                                        const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PCC_DEV_H_ */
