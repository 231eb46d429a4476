/*
 * pcc_harness.h - the table-driven test harness of the rlcc SDK stub: table layout (C side).
 *
 * The Python mirror is rlcc.firmware_sdk_stub.harness_layout; tests/sdk/test_harness_layout.py
 * compiles this header and compares every size/offset/constant, so the two cannot drift.
 *
 * Input table  = rlcc_in_prefix_t (header + parameter commands) followed by count
 *                rlcc_in_record_t. Output table = rlcc_out_header_t followed by count
 *                rlcc_out_record_t. All fields little-endian (host order on RISC-V/x86).
 *
 * Run semantics (rlcc_harness_run, harness_core.c):
 *   1. check magic/version/count/n_param_cmds; on error set status and stop (count_out = 0);
 *   2. user_init(&mask) once, mask stored in the output header;
 *   3. apply each parameter command through pcc_host_set_params, status per command;
 *   4. for each record i: ctx = rec.ctx_in (or, if rec.flags has RLCC_REC_CHAIN_CTX and i > 0,
 *      the ctx_out of record i-1); results = {0, 0}; pcc_stub_now_ns = event timestamp;
 *      with RLCC_HARNESS_PREPARE_EVENT, user_prepare_event(&rec.event) (an adapter's own work,
 *      outside the measured window); read cycle/instret; user_algo(&ctx, &rec.event, rec.attr, &results); read again;
 *      store {ctx, rate, rtt_req, cycles delta, instret delta};
 *   5. status = RLCC_STATUS_DONE.
 * Parameters and counters persist across records (one "device load" per table).
 */
#ifndef PCC_HARNESS_H
#define PCC_HARNESS_H

#include "pcc_sdk.h"

#define RLCC_HARNESS_IN_MAGIC 0x49434C52u  /* "RLCI" little-endian */
#define RLCC_HARNESS_OUT_MAGIC 0x4F434C52u /* "RLCO" little-endian */
#define RLCC_HARNESS_VERSION 1u

/* Records per table of the bare-metal build (compile-time: -DRLCC_HARNESS_MAX_RECORDS=n). */
#ifndef RLCC_HARNESS_MAX_RECORDS
#define RLCC_HARNESS_MAX_RECORDS 4096u
#endif
#define RLCC_HARNESS_MAX_PARAM_CMDS 8u

/* rlcc_in_record_t.flags */
#define RLCC_REC_CHAIN_CTX 1u

/* rlcc_out_header_t.status */
#define RLCC_STATUS_NOT_RUN 0u
#define RLCC_STATUS_DONE 1u
#define RLCC_STATUS_BAD_MAGIC 2u
#define RLCC_STATUS_BAD_VERSION 3u
#define RLCC_STATUS_TOO_MANY_RECORDS 4u
#define RLCC_STATUS_TOO_MANY_PARAM_CMDS 5u

/* rlcc_out_header_t.param_status[i] for unused command slots */
#define RLCC_PARAM_CMD_UNUSED 0xFFFFFFFFu

typedef struct rlcc_in_header {
    uint32_t magic;        /* RLCC_HARNESS_IN_MAGIC */
    uint32_t version;      /* RLCC_HARNESS_VERSION */
    uint32_t count;        /* number of records */
    uint32_t n_param_cmds; /* used entries of param_cmds */
} rlcc_in_header_t;        /* 16 bytes */

typedef struct rlcc_param_cmd {
    uint32_t port;
    uint32_t slot;
    uint32_t param_id_base;
    uint32_t n;
    uint32_t values[PCC_NUM_PARAMS];
} rlcc_param_cmd_t; /* 144 bytes */

typedef struct rlcc_in_prefix {
    rlcc_in_header_t hdr;
    rlcc_param_cmd_t param_cmds[RLCC_HARNESS_MAX_PARAM_CMDS];
} rlcc_in_prefix_t; /* 1168 bytes */

typedef struct rlcc_in_record {
    pcc_ctx_t ctx_in;    /* 48 bytes */
    pcc_event_t event;   /* 32 bytes */
    uint32_t attr;       /* pcc_attr_t raw word: slot bits 0..3, overload bit 4 */
    uint32_t flags;      /* RLCC_REC_* */
} rlcc_in_record_t;      /* 88 bytes */

typedef struct rlcc_out_header {
    uint32_t magic;    /* RLCC_HARNESS_OUT_MAGIC */
    uint32_t version;
    uint32_t count;    /* records processed */
    uint32_t status;   /* RLCC_STATUS_* */
    uint32_t disable_event_mask; /* from user_init */
    uint32_t n_param_cmds;
    uint32_t capacity; /* records the table could hold */
    uint32_t reserved;
    uint32_t param_status[RLCC_HARNESS_MAX_PARAM_CMDS]; /* PCC_OK / PCC_FAIL / UNUSED */
} rlcc_out_header_t;   /* 64 bytes */

typedef struct rlcc_out_record {
    pcc_ctx_t ctx_out; /* 48 bytes */
    uint32_t rate;
    uint32_t rtt_req;
    uint64_t cycles;   /* cycle CSR delta around the user_algo call (0 on a host) */
    uint64_t instret;  /* instret CSR delta around the user_algo call (0 on a host) */
} rlcc_out_record_t;   /* 72 bytes */

_Static_assert(sizeof(rlcc_in_header_t) == 16u, "in header");
_Static_assert(sizeof(rlcc_param_cmd_t) == 16u + 4u * PCC_NUM_PARAMS, "param cmd");
_Static_assert(sizeof(rlcc_in_record_t) == 88u, "in record");
_Static_assert(sizeof(rlcc_out_header_t) == 64u, "out header");
_Static_assert(sizeof(rlcc_out_record_t) == 72u, "out record");

#ifdef RLCC_HARNESS_PREPARE_EVENT
/* An SDK adapter's work on the event before the measured user_algo call (harness_doca.c lays the
 * event out in the device's layout there: work the device's own event delivery does, not the algorithm). */
void user_prepare_event(const pcc_event_t *ev);
#endif

/* Run a table; `capacity` bounds the records the output can hold. */
void rlcc_harness_run(const rlcc_in_prefix_t *in, const rlcc_in_record_t *recs, uint32_t capacity,
                      rlcc_out_header_t *out, rlcc_out_record_t *out_recs);

#endif /* PCC_HARNESS_H */
