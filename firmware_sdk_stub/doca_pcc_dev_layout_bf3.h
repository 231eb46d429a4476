/*
 * doca_pcc_dev_layout_bf3.h - rlcc's contract header: the DOCA 3.x BlueField-3 device layout ([H3]
 * in doca_pcc_dev.h: doca_pcc_dev_data_structure_le_bf3.h, doca_pcc_dev.h). Against DOCA 2.5: three
 * reserved words precede the general attributes (event 11 words), the TX QP number is the word
 * roce_tx.extra, the results gain probe_type_slot (rtt_req shares its word with probe_req), and
 * an algorithm may have more parameters and counters.
 * Numbers: rlcc.firmware_sdk_stub.doca_layout LAYOUTS["bf3"]. Include doca_pcc_dev.h, not this.
 */
#ifndef RLCC_DOCA_PCC_DEV_LAYOUT_BF3_H
#define RLCC_DOCA_PCC_DEV_LAYOUT_BF3_H

#include "doca_pcc_dev_layout_common.h"

#define DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO (0x2C)
#define DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO (0x3F)

/* Results: the new rate, the RTT (probe) request bit, and which probe type to send. */
typedef struct rlcc_doca_results {
    uint32_t rate;
    union {
        uint32_t rtt_req;
        uint32_t probe_req;
    };
    uint32_t probe_type_slot;
} doca_pcc_dev_results_t;

typedef struct rlcc_doca_event_general_attr {
    uint32_t ev_type : 8;
    uint32_t ev_subtype : 8;
    uint32_t port_num : 8;
    uint32_t flags : 8;
} doca_pcc_dev_event_general_attr_t;

/* TX extra word: the flow's QP number (read with doca_pcc_dev_get_flow_qpn). */
typedef struct rlcc_doca_roce_tx_extra {
    uint32_t flow_qpn : 24;
    uint32_t reserved : 8;
} doca_pcc_dev_roce_tx_extra_t;

typedef struct rlcc_doca_roce_tx {
    uint32_t first_timestamp;
    doca_pcc_dev_roce_tx_cntrs_t cntrs;
    doca_pcc_dev_roce_tx_extra_t extra;
    uint32_t reserved;
} doca_pcc_dev_roce_tx_t;

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
    uint32_t fw_data[3];
    unsigned char raw[16];
} doca_pcc_dev_event_spec_attr_t;

/* The event (big-endian words): three reserved words, then the DOCA 2.5 event's eight. */
typedef struct rlcc_doca_event {
    uint32_t reserved[3];
    doca_pcc_dev_event_general_attr_t ev_attr;
    uint32_t flow_tag;
    uint32_t sn;
    uint32_t timestamp;
    doca_pcc_dev_event_spec_attr_t ev_spec_attr;
} doca_pcc_dev_event_t;

_Static_assert(sizeof(doca_pcc_dev_results_t) == 12u, "the DOCA 3.x results are three words");
_Static_assert(sizeof(doca_pcc_dev_event_t) == 44u, "the BlueField-3 event is 11 words");

#endif /* RLCC_DOCA_PCC_DEV_LAYOUT_BF3_H */
