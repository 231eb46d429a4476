/*
 * doca_pcc_dev_event.h - rlcc's contract header for the DOCA PCC event accessors (subset).
 *
 * Names, argument and result types follow the public doca_pcc_dev_event.h of DOCA 2.5 and 3.x ([H],
 * [H3] in doca_pcc_dev.h); NVIDIA recommends these "getter" functions over reading the event struct,
 * and they are what keeps one algorithm source valid across the device layouts (DOCA 2.5, BlueField-3,
 * ConnectX-8: doca_pcc_dev_data_structures.h). All times are ns, 32 bits, wrapping.
 *
 * Byte order: the NIC writes every event word in network (big-endian) byte order and each accessor
 * byte-swaps the word it reads [H3]; rlcc's harness adapter (harness_doca.c) lays the words out the
 * same way. rlcc reads the four bytes of a word most significant first, which is that swap on the
 * little-endian DPA cores and needs no compiler built-in.
 */
#ifndef DOCA_PCC_DEV_EVENT_H_
#define DOCA_PCC_DEV_EVENT_H_

#include "doca_pcc_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rlcc: the big-endian event word at p, in the core's order. */
static inline uint32_t rlcc_doca_be_word(const void *p)
{
    const unsigned char *b = (const unsigned char *)p;
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | (uint32_t)b[3];
}

/* Every event: type, subtype, port (and plane on ConnectX-8) and flags. */
static inline doca_pcc_dev_event_general_attr_t doca_pcc_dev_get_ev_attr(doca_pcc_dev_event_t *event)
{
    union {
        uint32_t w;
        doca_pcc_dev_event_general_attr_t a;
    } u;
    u.w = rlcc_doca_be_word(&event->ev_attr);
    return u.a;
}

/* Every event: the flow tag telling flows apart. */
static inline uint32_t doca_pcc_dev_get_flowtag(doca_pcc_dev_event_t *event)
{
    return rlcc_doca_be_word(&event->flow_tag);
}

/* Every event: its serial number. */
static inline uint32_t doca_pcc_dev_get_sn(doca_pcc_dev_event_t *event)
{
    return rlcc_doca_be_word(&event->sn);
}

/* Every event: its timestamp (ns). */
static inline uint32_t doca_pcc_dev_get_timestamp(doca_pcc_dev_event_t *event)
{
    return rlcc_doca_be_word(&event->timestamp);
}

/* The flow's QP number: TX events on DOCA 2.5 and BlueField-3, every event on ConnectX-8 [H3]. */
static inline uint32_t doca_pcc_dev_get_flow_qpn(doca_pcc_dev_event_t *event)
{
#if RLCC_DOCA_LAYOUT == RLCC_DOCA_LAYOUT_2_5
    /* the word after cntrs, whose low 24 bits are the bit field flow_qpn */
    return rlcc_doca_be_word((const unsigned char *)&event->ev_spec_attr.roce_tx.cntrs + 4) & 0xFFFFFFu;
#elif RLCC_DOCA_LAYOUT == RLCC_DOCA_LAYOUT_BF3
    return rlcc_doca_be_word(&event->ev_spec_attr.roce_tx.extra) & 0xFFFFFFu;
#else
    return rlcc_doca_be_word(&event->ev_dword2) & 0xFFFFFFu;
#endif
}

/* TX/ACK/NACK/CNP: timestamp of the first coalesced event (ns). */
static inline uint32_t doca_pcc_dev_get_roce_first_timestamp(doca_pcc_dev_event_t *event)
{
    return rlcc_doca_be_word(&event->ev_spec_attr.ack_nack_cnp.first_timestamp);
}

/* TX: sent 32-byte units and packets. */
static inline doca_pcc_dev_roce_tx_cntrs_t doca_pcc_dev_get_roce_tx_cntrs(doca_pcc_dev_event_t *event)
{
    union {
        uint32_t w;
        doca_pcc_dev_roce_tx_cntrs_t c;
    } u;
    u.w = rlcc_doca_be_word(&event->ev_spec_attr.roce_tx.cntrs);
    return u.c;
}

/* ACK/NACK/CNP: serial number of the first coalesced event. */
static inline uint32_t doca_pcc_dev_get_roce_ack_first_sn(doca_pcc_dev_event_t *event)
{
    return rlcc_doca_be_word(&event->ev_spec_attr.ack_nack_cnp.first_sn);
}

/* ACK/NACK/CNP: extra information, including the number of coalesced events. */
static inline doca_pcc_dev_ack_nack_cnp_extra_t doca_pcc_dev_get_ack_nack_cnp_extra(doca_pcc_dev_event_t *event)
{
    union {
        uint32_t w;
        doca_pcc_dev_ack_nack_cnp_extra_t x;
    } u;
    u.w = rlcc_doca_be_word(&event->ev_spec_attr.ack_nack_cnp.extra);
    return u.x;
}

/* RTT: when the RTT request was sent (ns, the requester's clock; ConnectX-8: the whole data word 0). */
static inline uint32_t doca_pcc_dev_get_rtt_req_send_timestamp(doca_pcc_dev_event_t *event)
{
#if RLCC_DOCA_LAYOUT == RLCC_DOCA_LAYOUT_CX8
    return rlcc_doca_be_word(&event->ev_spec_attr.rtt_tstamp.data0);
#else
    return rlcc_doca_be_word(&event->ev_spec_attr.rtt_tstamp.req_send_timestamp);
#endif
}

/* RTT: when the RTT request was received (ns, the responder's clock; ConnectX-8: data word 1). */
static inline uint32_t doca_pcc_dev_get_rtt_req_recv_timestamp(doca_pcc_dev_event_t *event)
{
#if RLCC_DOCA_LAYOUT == RLCC_DOCA_LAYOUT_CX8
    return rlcc_doca_be_word(&event->ev_spec_attr.rtt_tstamp.data1);
#else
    return rlcc_doca_be_word(&event->ev_spec_attr.rtt_tstamp.req_recv_timestamp);
#endif
}

/* RTT: when the RTT response was sent (ns, the responder's clock; ConnectX-8: data word 2). */
static inline uint32_t doca_pcc_dev_get_rtt_resp_send_timestamp(doca_pcc_dev_event_t *event)
{
#if RLCC_DOCA_LAYOUT == RLCC_DOCA_LAYOUT_CX8
    return rlcc_doca_be_word(&event->ev_spec_attr.rtt_tstamp.data2);
#else
    return rlcc_doca_be_word(&event->ev_spec_attr.rtt_tstamp.resp_send_timestamp);
#endif
}

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PCC_DEV_EVENT_H_ */
