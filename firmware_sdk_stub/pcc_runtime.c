/*
 * pcc_runtime.c - storage and service stubs of the rlcc PCC-style SDK stub.
 * Linked into every build (bare-metal and hosted). Deterministic: no real clock, no I/O.
 */
#include "pcc_sdk.h"

uint32_t pcc_params[PCC_NUM_SLOTS][PCC_NUM_PARAMS];
uint32_t pcc_counters[PCC_NUM_SLOTS][PCC_NUM_COUNTERS];

uint32_t pcc_stub_thread_rank;
uint32_t pcc_stub_now_ns;
uint32_t pcc_stub_port_speed_gbps[PCC_NUM_PORTS] = {200u, 200u, 200u, 200u};
uint32_t pcc_trace_buf[PCC_TRACE_ENTRIES][3];
uint32_t pcc_trace_count;

int pcc_host_set_params(uint32_t port, uint32_t slot, uint32_t param_id_base, uint32_t n,
                        const uint32_t *new_values)
{
    if (port >= PCC_NUM_PORTS || slot >= PCC_NUM_SLOTS || param_id_base > PCC_NUM_PARAMS ||
        n > PCC_NUM_PARAMS - param_id_base || (n != 0u && new_values == NULL)) {
        return PCC_FAIL;
    }
    return user_set_algo_params(port, slot, param_id_base, n, new_values, pcc_params[slot]);
}

void pcc_trace(uint32_t id, uint32_t a, uint32_t b)
{
    uint32_t i = pcc_trace_count % PCC_TRACE_ENTRIES;
    pcc_trace_buf[i][0] = id;
    pcc_trace_buf[i][1] = a;
    pcc_trace_buf[i][2] = b;
    pcc_trace_count++;
}

uint32_t pcc_thread_rank(void)
{
    return pcc_stub_thread_rank;
}

uint32_t pcc_get_timer_us(void)
{
    return pcc_stub_now_ns / 1000u;
}

uint32_t pcc_port_speed_gbps(uint32_t port)
{
    return port < PCC_NUM_PORTS ? pcc_stub_port_speed_gbps[port] : 0u;
}
