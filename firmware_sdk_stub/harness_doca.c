/*
 * harness_doca.c - the harness adapter of --sdk doca firmware: the table-driven harness
 * (harness_core.c) calls the stub's user_* callbacks; these forward to the DOCA entry points the
 * firmware implements, so the same records, golden model, proof and cycle counts apply.
 *
 * Thin on purpose: the context, event and results are passed through (the DOCA 2.5 structures have
 * the stub's word layout, checked below), only the attribute word becomes a doca_pcc_dev_attr_t.
 * A DOCA algorithm serves one slot, so every record is presented at that slot (RLCC_DOCA_SLOT, from
 * the firmware's manifest); the overload flag is passed on. The golden model ignores the slot.
 */
#include "doca_pcc_dev_stub.h"
#include "pcc_sdk.h"

#ifndef RLCC_DOCA_SLOT
#error "define RLCC_DOCA_SLOT: the algorithm slot of the firmware (its manifest's sdk.slot)"
#endif

_Static_assert(sizeof(doca_pcc_dev_algo_ctxt_t) == sizeof(pcc_ctx_t), "context layouts differ");
_Static_assert(sizeof(doca_pcc_dev_event_t) == sizeof(pcc_event_t), "event layouts differ");
_Static_assert(sizeof(doca_pcc_dev_results_t) == sizeof(pcc_results_t), "results layouts differ");
_Static_assert(RLCC_DOCA_SLOT < DOCA_PCC_DEV_MAX_NUM_USER_SLOTS, "RLCC_DOCA_SLOT is not a user slot");

void user_init(uint32_t *disable_event_bitmask)
{
    doca_pcc_dev_user_init(disable_event_bitmask);
}

int user_set_algo_params(uint32_t port, uint32_t slot, uint32_t param_id_base, uint32_t n, const uint32_t *new_values,
                         uint32_t *params)
{
    return (int)rlcc_doca_stub_set_params(port, slot, param_id_base, n, new_values, params);
}

void user_algo(pcc_ctx_t *ctx, const pcc_event_t *ev, pcc_attr_t attr, pcc_results_t *results)
{
    doca_pcc_dev_attr_t a;
    a.algo_slot = RLCC_DOCA_SLOT;
    a.overload = pcc_attr_overloaded(attr) ? 1u : 0u;
    a.reserved = 0u;
    doca_pcc_dev_user_algo((doca_pcc_dev_algo_ctxt_t *)(void *)ctx, (doca_pcc_dev_event_t *)(uintptr_t)ev, &a,
                           (doca_pcc_dev_results_t *)(void *)results);
}
