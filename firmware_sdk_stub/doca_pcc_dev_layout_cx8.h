/*
 * doca_pcc_dev_layout_cx8.h - rlcc's contract header: the DOCA 3.x ConnectX-8 device layout ([H3] in
 * doca_pcc_dev.h: the CX8 branch of doca_pcc_dev_data_structures.h and doca_pcc_dev_event.h). Against
 * BlueField-3: the word before the general attributes (ev_dword2) holds every event's QP number and
 * TTL/hop limit, the port field is split into port_num and plane_num, the RTT attributes are four
 * data words (the accessors return the whole first three), and the TX extra word is the QP's
 * remaining window credits.
 * Numbers: rlcc.firmware_sdk_stub.doca_layout LAYOUTS["cx8"]. Include doca_pcc_dev.h, not this.
 */
#ifndef RLCC_DOCA_PCC_DEV_LAYOUT_CX8_H
#define RLCC_DOCA_PCC_DEV_LAYOUT_CX8_H

#include "doca_pcc_dev_layout_common.h"

#define DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO (0x2C)
#define DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO (0x3F)

typedef struct rlcc_doca_results {
    uint32_t rate;
    union {
        uint32_t rtt_req;
        uint32_t probe_req;
    };
    uint32_t probe_type_slot;
} doca_pcc_dev_results_t;

/* General attributes: the port field of earlier layouts is port and plane. */
typedef struct rlcc_doca_event_general_attr {
    uint32_t ev_type : 8;
    uint32_t ev_subtype : 8;
    uint32_t port_num : 4;
    uint32_t plane_num : 4;
    uint32_t flags : 8;
} doca_pcc_dev_event_general_attr_t;

/* Every event's second general word: the flow's QP number and the received TTL/hop limit. */
typedef struct rlcc_doca_event_general_dword2 {
    uint32_t flow_qpn : 24;
    uint32_t ttl_hoplimit : 8;
} doca_pcc_dev_event_general_dword2_t;

/* TX: the QP's remaining window credits. */
typedef struct rlcc_doca_roce_tx_credits_left {
    uint32_t credits_left : 24;
    uint32_t reserved : 8;
} doca_pcc_dev_roce_tx_credits_left_t;

typedef struct rlcc_doca_roce_tx {
    uint32_t first_timestamp;
    doca_pcc_dev_roce_tx_cntrs_t cntrs;
    doca_pcc_dev_roce_tx_credits_left_t credits;
    uint32_t reserved;
} doca_pcc_dev_roce_tx_t;

/* RTT data words 0..2: request sent, request received, response sent (the accessors return the
 * whole word); word 3: the response format version. */
typedef struct rlcc_doca_rtt_spec_data0 {
    uint32_t reserved : 2;
    uint32_t send_plane : 2;
    uint32_t req_send_timestamp : 28;
} doca_pcc_dev_rtt_spec_data0_t;

typedef struct rlcc_doca_rtt_spec_data1 {
    uint32_t port_type : 4;
    uint32_t req_recv_timestamp : 28;
} doca_pcc_dev_rtt_spec_data1_t;

typedef struct rlcc_doca_rtt_spec_data2 {
    uint32_t reserved : 4;
    uint32_t resp_send_timestamp : 28;
} doca_pcc_dev_rtt_spec_data2_t;

typedef struct rlcc_doca_rtt_spec_data3 {
    uint32_t version : 4;
    uint32_t reserved : 28;
} doca_pcc_dev_rtt_spec_data3_t;

typedef struct rlcc_doca_rtt_tstamp {
    doca_pcc_dev_rtt_spec_data0_t data0;
    doca_pcc_dev_rtt_spec_data1_t data1;
    doca_pcc_dev_rtt_spec_data2_t data2;
    doca_pcc_dev_rtt_spec_data3_t data3;
} doca_pcc_dev_rtt_tstamp_t;

typedef union rlcc_doca_event_spec_attr {
    doca_pcc_dev_roce_tx_t roce_tx;
    doca_pcc_dev_ack_nack_cnp_t ack_nack_cnp;
    doca_pcc_dev_rtt_tstamp_t rtt_tstamp;
    uint32_t fw_data[3];
    unsigned char raw[16];
} doca_pcc_dev_event_spec_attr_t;

/* The event (big-endian words): a reserved word, the vhca id word, ev_dword2, then the DOCA 2.5
 * event's eight words. */
typedef struct rlcc_doca_event {
    uint32_t reserved;
    uint32_t reserved_vhca : 16;
    uint32_t vhca_id : 16;
    doca_pcc_dev_event_general_dword2_t ev_dword2;
    doca_pcc_dev_event_general_attr_t ev_attr;
    uint32_t flow_tag;
    uint32_t sn;
    uint32_t timestamp;
    doca_pcc_dev_event_spec_attr_t ev_spec_attr;
} doca_pcc_dev_event_t;

_Static_assert(sizeof(doca_pcc_dev_results_t) == 12u, "the DOCA 3.x results are three words");
_Static_assert(sizeof(doca_pcc_dev_event_t) == 44u, "the ConnectX-8 event is 11 words");

#endif /* RLCC_DOCA_PCC_DEV_LAYOUT_CX8_H */
