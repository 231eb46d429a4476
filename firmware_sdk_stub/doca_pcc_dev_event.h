/*
 * doca_pcc_dev_event.h - rlcc's contract header for the DOCA PCC event accessors (subset).
 *
 * Names, argument and result types follow the public DOCA 2.5 header doca_pcc_dev_event.h ([H] in
 * doca_pcc_dev.h); NVIDIA recommends these "getter" functions over reading the event struct.
 * All times are ns with 1 ns granularity, 32 bits, wrapping [H].
 *
 * Byte order (rlcc: differs from the device, on purpose): on the device the NIC writes the event
 * in network byte order and each DOCA accessor byte-swaps the word it reads. rlcc's harness writes
 * events in host order, so these accessors return the stored word as is. Generated firmware reads
 * the event only through these accessors, so it sees the same values either way.
 */
#ifndef DOCA_PCC_DEV_EVENT_H_
#define DOCA_PCC_DEV_EVENT_H_

#include "doca_pcc_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every event: type, subtype, port and flags. */
static inline doca_pcc_dev_event_general_attr_t doca_pcc_dev_get_ev_attr(doca_pcc_dev_event_t *event)
{
    return event->ev_attr;
}

/* Every event: the flow tag telling flows apart. */
static inline uint32_t doca_pcc_dev_get_flowtag(doca_pcc_dev_event_t *event)
{
    return event->flow_tag;
}

/* Every event: its serial number. */
static inline uint32_t doca_pcc_dev_get_sn(doca_pcc_dev_event_t *event)
{
    return event->sn;
}

/* Every event: its timestamp (ns). */
static inline uint32_t doca_pcc_dev_get_timestamp(doca_pcc_dev_event_t *event)
{
    return event->timestamp;
}

/* TX/ACK/NACK/CNP: timestamp of the first coalesced event (ns). */
static inline uint32_t doca_pcc_dev_get_roce_first_timestamp(doca_pcc_dev_event_t *event)
{
    return event->ev_spec_attr.ack_nack_cnp.first_timestamp;
}

/* TX: sent 32-byte units and packets. */
static inline doca_pcc_dev_roce_tx_cntrs_t doca_pcc_dev_get_roce_tx_cntrs(doca_pcc_dev_event_t *event)
{
    return event->ev_spec_attr.roce_tx.cntrs;
}

/* ACK/NACK/CNP: serial number of the first coalesced event. */
static inline uint32_t doca_pcc_dev_get_roce_ack_first_sn(doca_pcc_dev_event_t *event)
{
    return event->ev_spec_attr.ack_nack_cnp.first_sn;
}

/* ACK/NACK/CNP: extra information, including the number of coalesced events. */
static inline doca_pcc_dev_ack_nack_cnp_extra_t doca_pcc_dev_get_ack_nack_cnp_extra(doca_pcc_dev_event_t *event)
{
    return event->ev_spec_attr.ack_nack_cnp.extra;
}

/* RTT: when the RTT request was sent (ns, the requester's clock). */
static inline uint32_t doca_pcc_dev_get_rtt_req_send_timestamp(doca_pcc_dev_event_t *event)
{
    return event->ev_spec_attr.rtt_tstamp.req_send_timestamp;
}

/* RTT: when the RTT request was received (ns, the responder's clock). */
static inline uint32_t doca_pcc_dev_get_rtt_req_recv_timestamp(doca_pcc_dev_event_t *event)
{
    return event->ev_spec_attr.rtt_tstamp.req_recv_timestamp;
}

/* RTT: when the RTT response was sent (ns, the responder's clock). */
static inline uint32_t doca_pcc_dev_get_rtt_resp_send_timestamp(doca_pcc_dev_event_t *event)
{
    return event->ev_spec_attr.rtt_tstamp.resp_send_timestamp;
}

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PCC_DEV_EVENT_H_ */
