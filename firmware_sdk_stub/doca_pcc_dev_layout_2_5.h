/*
 * doca_pcc_dev_layout_2_5.h - rlcc's contract header: the DOCA 2.5 LTS device layout ([H] in
 * doca_pcc_dev.h: doca_pcc_dev_data_structure_le.h, doca_pcc_dev.h). One layout for every device:
 * the event is 8 words with the general attributes first; the results are {rate, rtt_req}.
 * Numbers: rlcc.firmware_sdk_stub.doca_layout LAYOUTS["2.5"]. Include doca_pcc_dev.h, not this.
 */
#ifndef RLCC_DOCA_PCC_DEV_LAYOUT_2_5_H
#define RLCC_DOCA_PCC_DEV_LAYOUT_2_5_H

#include "doca_pcc_dev_layout_common.h"

#define DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO (0x1E)
#define DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO (0xF)

/* Results: the new rate (20 fractional bits, (0, 1]) and the RTT-probe request bit. */
typedef struct rlcc_doca_results {
    uint32_t rate;
    uint32_t rtt_req;
} doca_pcc_dev_results_t;

/* General attributes of every event: type, subtype, port, flags. */
typedef struct rlcc_doca_event_general_attr {
    uint32_t ev_type : 8;
    uint32_t ev_subtype : 8;
    uint32_t port_num : 8;
    uint32_t flags : 8;
} doca_pcc_dev_event_general_attr_t;

/* TX attributes: first coalesced timestamp, counters, the flow's QP number. */
typedef struct rlcc_doca_roce_tx {
    uint32_t first_timestamp;
    doca_pcc_dev_roce_tx_cntrs_t cntrs;
    uint32_t flow_qpn : 24;
    uint32_t reserved_qpn : 8;
    uint32_t reserved;
} doca_pcc_dev_roce_tx_t;

/* RTT response: request sent (requester clock), request received and response sent (responder clock). */
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

/* The event (big-endian words): general attributes, flow tag, serial number, ns timestamp, per-type
 * attributes. Read it through the accessors of doca_pcc_dev_event.h only. */
typedef struct rlcc_doca_event {
    doca_pcc_dev_event_general_attr_t ev_attr;
    uint32_t flow_tag;
    uint32_t sn;
    uint32_t timestamp;
    doca_pcc_dev_event_spec_attr_t ev_spec_attr;
} doca_pcc_dev_event_t;

_Static_assert(sizeof(doca_pcc_dev_results_t) == 8u, "the DOCA 2.5 results are two words");
_Static_assert(sizeof(doca_pcc_dev_event_t) == 32u, "the DOCA 2.5 event is 8 words");

#endif /* RLCC_DOCA_PCC_DEV_LAYOUT_2_5_H */
