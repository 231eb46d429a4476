/*
 * switch_harness.h - the table-driven harness of the switch SDK stub: table layout (C side).
 *
 * The Python mirror is rlcc.firmware_sdk_stub.switch_layout; tests/sdk/test_switch_sdk.py compiles
 * this header and compares every size, offset and constant.
 *
 * Input table = sw_harness_in_header_t + count sw_harness_in_record_t; output table =
 * sw_harness_out_header_t + count sw_harness_out_record_t. Two modes:
 *   SW_MODE_DECISION: one sw_agent_on_interval call per record, timed (trace NULL, as the
 *     dispatcher calls it), then repeated on a copy of the same context with a trace for the scores.
 *     ctx = the record's ctx_in, or the previous record's ctx_out (SW_REC_CHAIN_CTX), or, with
 *     SW_REC_INIT, sw_agent_queue_init's context and template (no decision; action SW_NO_ACTION).
 *   SW_MODE_INTERVAL: records in groups of n_ports x n_queues (record j: port j / n_queues, queue
 *     j % n_queues) fill the stub's registers; one timed sw_run_interval per group. A record's ctx_in
 *     seeds its queue's context unless SW_REC_CHAIN_CTX (the context from the previous interval).
 *     Every record of a group reports the group's cycles; action is SW_NO_ACTION.
 */
#ifndef SWITCH_HARNESS_H
#define SWITCH_HARNESS_H

#include "switch_sdk.h"

#define SW_HARNESS_IN_MAGIC 0x49575352u /* "RSWI" little-endian */
#define SW_HARNESS_OUT_MAGIC 0x4F575352u /* "RSWO" little-endian */
#define SW_HARNESS_VERSION 1u

#ifndef SW_HARNESS_MAX_RECORDS
#define SW_HARNESS_MAX_RECORDS 2048u
#endif

#define SW_MODE_DECISION 0u
#define SW_MODE_INTERVAL 1u

#define SW_REC_CHAIN_CTX 1u
#define SW_REC_INIT 2u

#define SW_NO_ACTION 0xFFFFFFFFu

#define SW_STATUS_NOT_RUN 0u
#define SW_STATUS_DONE 1u
#define SW_STATUS_BAD_MAGIC 2u
#define SW_STATUS_BAD_VERSION 3u
#define SW_STATUS_TOO_MANY_RECORDS 4u
#define SW_STATUS_BAD_SHAPE 5u
#define SW_STATUS_SDK_ERROR 6u

typedef struct sw_harness_in_header {
    uint32_t magic;
    uint32_t version;
    uint32_t count;
    uint32_t mode; /* SW_MODE_* */
    uint32_t n_ports; /* SW_MODE_INTERVAL */
    uint32_t n_queues; /* SW_MODE_INTERVAL */
    uint32_t reserved[2];
} sw_harness_in_header_t; /* 32 bytes */

typedef struct sw_harness_in_record {
    uint32_t port;
    uint32_t queue;
    uint32_t util_mul;
    uint32_t flags; /* SW_REC_* */
    sw_queue_stats_t stats;
    uint32_t reserved;
    sw_queue_ctx_t ctx_in;
} sw_harness_in_record_t; /* 160 bytes */

typedef struct sw_harness_out_header {
    uint32_t magic;
    uint32_t version;
    uint32_t count; /* records processed */
    uint32_t status;
    uint32_t capacity;
    uint32_t reserved[3];
} sw_harness_out_header_t; /* 32 bytes */

typedef struct sw_harness_out_record {
    sw_queue_ctx_t ctx_out;
    sw_ecn_config_t ecn;
    uint32_t action;
    uint64_t cycles; /* cycle CSR delta of the decision (or of the record's whole interval) */
    uint64_t instret; /* instret CSR delta, likewise */
    int32_t scores[SW_MAX_ACTIONS];
} sw_harness_out_record_t; /* 416 bytes */

_Static_assert(sizeof(sw_harness_in_header_t) == 32u, "in header");
_Static_assert(sizeof(sw_harness_in_record_t) == 160u, "in record");
_Static_assert(sizeof(sw_harness_out_header_t) == 32u, "out header");
_Static_assert(sizeof(sw_harness_out_record_t) == 416u, "out record");

#endif /* SWITCH_HARNESS_H */
