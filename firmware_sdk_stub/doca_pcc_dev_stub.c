/*
 * doca_pcc_dev_stub.c - rlcc's stand-in for the DOCA PCC device library functions that generated
 * --sdk doca firmware calls (declared in doca_pcc_dev_algo_access.h / doca_pcc_dev.h), on top of the
 * SDK stub's storage so that the table-driven harness and rlcc-verify --prove see the same memory as
 * for the stub flavour.
 *
 * rlcc: one parameter and counter array per slot, shared by every port (the stub's pcc_params /
 * pcc_counters; the harness sets parameters per slot). DOCA keeps them per port and slot; firmware
 * that asks for (port, slot) through the API, as rlcc's does, cannot tell the difference.
 */
#include "doca_pcc_dev_stub.h"
#include "pcc_sdk.h"

/* rlcc: an algorithm here has at most as many parameters and counters as the stub's per-slot arrays
 * hold (DOCA 3.x allows more than DOCA 2.5: doca_pcc_dev_layout_*.h); registering more FAILs. */
#define RLCC_DOCA_STUB_MAX_PARAMS                                                                                      \
    (DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO < PCC_NUM_PARAMS ? DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO : PCC_NUM_PARAMS)
#define RLCC_DOCA_STUB_MAX_COUNTERS                                                                                    \
    (DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO < PCC_NUM_COUNTERS ? DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO            \
                                                               : PCC_NUM_COUNTERS)
_Static_assert(DOCA_PCC_DEV_MAX_NUM_USER_SLOTS == PCC_NUM_SLOTS, "DOCA user slots are the stub's slots");
_Static_assert(DOCA_PCC_DEV_MAX_NUM_PORTS == PCC_NUM_PORTS, "DOCA ports are the stub's ports");

/* Registered algorithms: parameter count, defaults, limits, permissions; counter count. */
typedef struct rlcc_doca_algo {
    uint32_t registered;
    uint32_t n_params;
    uint32_t n_counters;
    uint32_t def[RLCC_DOCA_STUB_MAX_PARAMS];
    uint32_t max[RLCC_DOCA_STUB_MAX_PARAMS];
    uint32_t min[RLCC_DOCA_STUB_MAX_PARAMS];
    uint32_t writable[RLCC_DOCA_STUB_MAX_PARAMS];
} rlcc_doca_algo_t;

static rlcc_doca_algo_t rlcc_doca_algos[DOCA_PCC_DEV_MAX_NUM_ALGOS];
/* algorithm index of each (port, slot) plus one; 0 = no algorithm mapped */
static uint32_t rlcc_doca_slot_algo[DOCA_PCC_DEV_MAX_NUM_PORTS][DOCA_PCC_DEV_MAX_NUM_USER_SLOTS];

doca_pcc_dev_error_t doca_pcc_dev_algo_init_metadata(uint32_t algo_idx, const struct doca_pcc_dev_algo_meta_data *user_def,
                                                     uint32_t param_num, uint32_t counter_num)
{
    if (algo_idx >= DOCA_PCC_DEV_MAX_NUM_ALGOS || user_def == NULL || param_num > RLCC_DOCA_STUB_MAX_PARAMS ||
        counter_num > RLCC_DOCA_STUB_MAX_COUNTERS) {
        return DOCA_PCC_DEV_STATUS_FAIL;
    }
    rlcc_doca_algos[algo_idx].registered = 1u;
    rlcc_doca_algos[algo_idx].n_params = param_num;
    rlcc_doca_algos[algo_idx].n_counters = counter_num;
    return DOCA_PCC_DEV_STATUS_OK;
}

doca_pcc_dev_error_t doca_pcc_dev_algo_init_param(uint32_t algo_idx, uint32_t param_id, uint32_t default_value,
                                                  uint32_t max_value, uint32_t min_value, uint32_t permissions,
                                                  uint32_t param_desc_size, uint64_t param_desc_addr)
{
    rlcc_doca_algo_t *a;
    if (algo_idx >= DOCA_PCC_DEV_MAX_NUM_ALGOS || !rlcc_doca_algos[algo_idx].registered ||
        param_id >= rlcc_doca_algos[algo_idx].n_params || min_value > max_value || default_value < min_value ||
        default_value > max_value || param_desc_size == 0u || param_desc_addr == 0u) {
        return DOCA_PCC_DEV_STATUS_FAIL;
    }
    a = &rlcc_doca_algos[algo_idx];
    a->def[param_id] = default_value;
    a->max[param_id] = max_value;
    a->min[param_id] = min_value;
    a->writable[param_id] = permissions != 0u;
    return DOCA_PCC_DEV_STATUS_OK;
}

doca_pcc_dev_error_t doca_pcc_dev_algo_init_counter(uint32_t algo_idx, uint32_t counter_id, uint32_t max_value,
                                                    uint32_t permissions, uint32_t counter_desc_size,
                                                    uint64_t counter_desc_addr)
{
    (void)max_value;
    (void)permissions;
    if (algo_idx >= DOCA_PCC_DEV_MAX_NUM_ALGOS || !rlcc_doca_algos[algo_idx].registered ||
        counter_id >= rlcc_doca_algos[algo_idx].n_counters || counter_desc_size == 0u || counter_desc_addr == 0u) {
        return DOCA_PCC_DEV_STATUS_FAIL;
    }
    return DOCA_PCC_DEV_STATUS_OK;
}

doca_pcc_dev_error_t doca_pcc_dev_init_algo_slot(uint32_t portid, uint32_t algo_slot, uint32_t algo_idx, uint32_t algo_en)
{
    uint32_t i;
    const rlcc_doca_algo_t *a;
    if (portid >= DOCA_PCC_DEV_MAX_NUM_PORTS || algo_slot >= DOCA_PCC_DEV_MAX_NUM_USER_SLOTS ||
        algo_idx >= DOCA_PCC_DEV_MAX_NUM_ALGOS || !rlcc_doca_algos[algo_idx].registered) {
        return DOCA_PCC_DEV_STATUS_FAIL;
    }
    a = &rlcc_doca_algos[algo_idx];
    for (i = 0; i < PCC_NUM_PARAMS; i++) {
        pcc_params[algo_slot][i] = i < a->n_params ? a->def[i] : 0u;
    }
    for (i = 0; i < PCC_NUM_COUNTERS; i++) {
        pcc_counters[algo_slot][i] = 0u;
    }
    rlcc_doca_slot_algo[portid][algo_slot] = algo_en != 0u ? algo_idx + 1u : 0u;
    return DOCA_PCC_DEV_STATUS_OK;
}

/* the algorithm mapped to (port, slot), or NULL */
static const rlcc_doca_algo_t *rlcc_doca_algo_at(uint32_t port_num, uint32_t algo_slot)
{
    uint32_t idx;
    if (port_num >= DOCA_PCC_DEV_MAX_NUM_PORTS || algo_slot >= DOCA_PCC_DEV_MAX_NUM_USER_SLOTS) {
        return NULL;
    }
    idx = rlcc_doca_slot_algo[port_num][algo_slot];
    return idx == 0u ? NULL : &rlcc_doca_algos[idx - 1u];
}

uint32_t doca_pcc_dev_get_counters_num(uint32_t port_num, uint32_t algo_slot)
{
    const rlcc_doca_algo_t *a = rlcc_doca_algo_at(port_num, algo_slot);
    return a == NULL ? 0u : a->n_counters;
}

uint32_t doca_pcc_dev_get_algo_params_num(uint32_t port_num, uint32_t algo_slot)
{
    const rlcc_doca_algo_t *a = rlcc_doca_algo_at(port_num, algo_slot);
    return a == NULL ? 0u : a->n_params;
}

/* rlcc: the slot's array whatever the port (see above); the slot is reduced, never out of bounds. */
uint32_t *doca_pcc_dev_get_counters(uint32_t port_num, uint32_t algo_slot)
{
    (void)port_num;
    return pcc_counters[algo_slot % PCC_NUM_SLOTS];
}

uint32_t *doca_pcc_dev_get_algo_params(uint32_t port_num, uint32_t algo_slot)
{
    (void)port_num;
    return pcc_params[algo_slot % PCC_NUM_SLOTS];
}

/* rlcc: DOCA_PCC_DEV_ALGO_INDEX_INTERNAL where no algorithm is mapped (undocumented). */
uint32_t doca_pcc_dev_get_algo_index(uint32_t port_num, uint32_t algo_slot)
{
    uint32_t idx;
    if (port_num >= DOCA_PCC_DEV_MAX_NUM_PORTS || algo_slot >= DOCA_PCC_DEV_MAX_NUM_USER_SLOTS) {
        return DOCA_PCC_DEV_ALGO_INDEX_INTERNAL;
    }
    idx = rlcc_doca_slot_algo[port_num][algo_slot];
    return idx == 0u ? DOCA_PCC_DEV_ALGO_INDEX_INTERNAL : idx - 1u;
}

void doca_pcc_dev_default_internal_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
                                        const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results)
{
    (void)algo_ctxt;
    (void)event;
    (void)attr;
    results->rate = DOCA_PCC_DEV_MAX_RATE;
    results->rtt_req = 0u;
}

doca_pcc_dev_error_t rlcc_doca_stub_set_params(uint32_t port_num, uint32_t algo_slot, uint32_t param_id_base,
                                               uint32_t param_num, const uint32_t *new_param_values, uint32_t *params)
{
    const rlcc_doca_algo_t *a = rlcc_doca_algo_at(port_num, algo_slot);
    uint32_t i;
    if (a == NULL || param_id_base > a->n_params || param_num > a->n_params - param_id_base ||
        (param_num != 0u && new_param_values == NULL)) {
        return DOCA_PCC_DEV_STATUS_FAIL;
    }
    for (i = 0; i < param_num; i++) {
        const uint32_t id = param_id_base + i;
        if (!a->writable[id] || new_param_values[i] < a->min[id] || new_param_values[i] > a->max[id]) {
            return DOCA_PCC_DEV_STATUS_FAIL;
        }
    }
    return doca_pcc_dev_user_set_algo_params(port_num, algo_slot, param_id_base, param_num, new_param_values, params);
}
