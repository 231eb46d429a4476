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
 *   [H3] DOCA 3.x device headers: doca_pcc_dev.h, doca_pcc_dev_data_structures.h (and its CX8 branch),
 *        doca_pcc_dev_data_structure_le_bf3.h, doca_pcc_dev_event.h (docs/doca.md "Device layouts")
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
#define DOCA_PCC_DEV_ALGO_SLOT_INTERNAL (0xF)  /* slot of the library's built-in algorithm */
#define DOCA_PCC_DEV_ALGO_INDEX_INTERNAL (0xF) /* index of the library's built-in algorithm */

/* ---- data structures: one contract header per layout (DOCA 2.5, DOCA 3.x BlueField-3 and
 * ConnectX-8), chosen by RLCC_DOCA_LAYOUT as DOCA's own doca_pcc_dev_data_structures.h chooses by
 * device; the per-layout limits are there too. ---- */
#include "doca_pcc_dev_data_structures.h"

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
