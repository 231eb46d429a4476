/*
 * doca_pcc_dev_layout_common.h - rlcc's contract header: the DOCA PCC device records that are the
 * same in every layout rlcc knows (DOCA 2.5, DOCA 3.x BlueField-3 and ConnectX-8; [H], [H3] in
 * doca_pcc_dev.h). Included by each doca_pcc_dev_layout_*.h. Field names are the documented ones;
 * struct tags are rlcc's. Bit fields are little-endian (the DPA cores' order).
 */
#ifndef RLCC_DOCA_PCC_DEV_LAYOUT_COMMON_H
#define RLCC_DOCA_PCC_DEV_LAYOUT_COMMON_H

#include <stdint.h>

/* Per-flow algorithm context: 12 words, restored for every event of the flow. rlcc: zero for a
 * new flow (the reference RTT template treats a zero rate as a new flow [R]). */
typedef struct rlcc_doca_algo_ctxt {
    uint32_t data[12];
} doca_pcc_dev_algo_ctxt_t;

/* Event attributes of the algorithm call: algorithm slot and the overload flag. */
typedef struct rlcc_doca_attr {
    uint32_t algo_slot : 4;
    uint32_t overload : 1;
    uint32_t reserved : 27;
} doca_pcc_dev_attr_t;

/* ACK/NACK/CNP: number of hardware-coalesced events. */
typedef struct rlcc_doca_ack_nack_cnp_extra {
    uint32_t num_coalesced : 16;
    uint32_t reserved : 16;
} doca_pcc_dev_ack_nack_cnp_extra_t;

/* TX counters: sent bytes in 32-byte units and sent packets. */
typedef struct rlcc_doca_roce_tx_cntrs {
    uint32_t sent_32bytes : 16;
    uint32_t sent_pkts : 16;
} doca_pcc_dev_roce_tx_cntrs_t;

/* ACK/NACK/CNP attributes: first coalesced event's timestamp and serial number, extra word. */
typedef struct rlcc_doca_ack_nack_cnp {
    uint32_t first_timestamp;
    uint32_t first_sn;
    doca_pcc_dev_ack_nack_cnp_extra_t extra;
    uint32_t reserved;
} doca_pcc_dev_ack_nack_cnp_t;

_Static_assert(sizeof(doca_pcc_dev_algo_ctxt_t) == 48u, "the DOCA algorithm context is 12 words");
_Static_assert(sizeof(doca_pcc_dev_attr_t) == 4u, "doca_pcc_dev_attr_t is one word");
_Static_assert(sizeof(doca_pcc_dev_ack_nack_cnp_t) == 16u, "the ACK/NACK/CNP attributes are 4 words");

#endif /* RLCC_DOCA_PCC_DEV_LAYOUT_COMMON_H */
