/*
 * switch_runtime.c - the switch SDK stub's services and dispatcher (switch_sdk.h).
 * Registers are plain arrays; reading one is a memory load here, a register-bus access on a real chip.
 */
#include "switch_sdk.h"

#include <stddef.h>

sw_queue_stats_t sw_stub_stats[SW_MAX_PORTS][SW_MAX_QUEUES];
sw_port_info_t sw_stub_port_info[SW_MAX_PORTS];
sw_ecn_config_t sw_stub_ecn[SW_MAX_PORTS][SW_MAX_QUEUES];

static int sw_valid(uint32_t port, uint32_t queue)
{
    return port < SW_MAX_PORTS && queue < SW_MAX_QUEUES;
}

int sw_read_queue_stats(uint32_t port, uint32_t queue, sw_queue_stats_t *stats)
{
    if (!sw_valid(port, queue) || stats == NULL) {
        return SW_EINVAL;
    }
    *stats = sw_stub_stats[port][queue];
    return SW_OK;
}

int sw_read_port_info(uint32_t port, sw_port_info_t *info)
{
    if (port >= SW_MAX_PORTS || info == NULL) {
        return SW_EINVAL;
    }
    *info = sw_stub_port_info[port];
    return SW_OK;
}

int sw_set_ecn(uint32_t port, uint32_t queue, const sw_ecn_config_t *cfg)
{
    if (!sw_valid(port, queue) || cfg == NULL || cfg->kmin_bytes > cfg->kmax_bytes || cfg->pmax_q16 > SW_PMAX_ONE) {
        return SW_EINVAL;
    }
    sw_stub_ecn[port][queue] = *cfg;
    return SW_OK;
}

static int sw_shape_ok(uint32_t n_ports, uint32_t n_queues, const sw_queue_ctx_t *ctxs)
{
    return n_ports <= SW_MAX_PORTS && n_queues <= SW_MAX_QUEUES && ctxs != NULL;
}

int sw_init_queues(uint32_t n_ports, uint32_t n_queues, sw_queue_ctx_t *ctxs)
{
    uint32_t port, queue;
    int rc = SW_OK;

    if (!sw_shape_ok(n_ports, n_queues, ctxs)) {
        return SW_EINVAL;
    }
    for (port = 0; port < n_ports; port++) {
        for (queue = 0; queue < n_queues; queue++) {
            sw_ecn_config_t ecn;
            sw_agent_queue_init(port, queue, &ctxs[port * n_queues + queue], &ecn);
            rc |= sw_set_ecn(port, queue, &ecn);
        }
    }
    return rc;
}

int sw_run_interval(uint32_t n_ports, uint32_t n_queues, sw_queue_ctx_t *ctxs)
{
    uint32_t port, queue;
    int rc = SW_OK;

    if (!sw_shape_ok(n_ports, n_queues, ctxs)) {
        return SW_EINVAL;
    }
    for (port = 0; port < n_ports; port++) {
        sw_port_info_t info;
        rc |= sw_read_port_info(port, &info);
        for (queue = 0; queue < n_queues; queue++) {
            sw_queue_stats_t stats;
            sw_ecn_config_t ecn;
            rc |= sw_read_queue_stats(port, queue, &stats);
            (void)sw_agent_on_interval(port, queue, &ctxs[port * n_queues + queue], &stats, &info, &ecn, NULL);
            rc |= sw_set_ecn(port, queue, &ecn);
        }
    }
    return rc;
}
