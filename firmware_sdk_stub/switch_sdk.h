/*
 * switch_sdk.h - the rlcc switch SDK stub: the telemetry and configuration interface of a commodity
 * switch SDK, as the switch agent of ACC (Yan et al., SIGCOMM 2021, section 4.1) uses it.
 *
 * Every monitoring interval the agent's collector reads, per egress queue, the bytes sent, the
 * ECN-marked packets and the queue depth from the forwarding chip's registers; the configurator
 * writes the queue's ECN template (Kmin, Kmax, Pmax). This header models that interface:
 *
 *   sw_read_queue_stats / sw_read_port_info : telemetry (statistics registers, port constants)
 *   sw_set_ecn                              : configuration (the queue's RED/ECN profile)
 *   sw_agent_queue_init / sw_agent_on_interval : the entry points the firmware implements
 *   sw_run_interval                         : the SDK's dispatcher: one monitoring interval over
 *                                             n_ports x n_queues queues (read, callback, set ECN)
 *
 * Device formats (the one source is rlcc.switch_spec; tests/sdk/test_switch_sdk.py compiles this
 * header and compares every constant): statistics are saturating u32 counters; utilizations are Q16
 * fractions computed as the high word of stat x util_mul, util_mul = round(2^48 / port bytes per
 * interval); Pmax is a Q16 probability. The stub's "registers" are plain arrays (sw_stub_*), which
 * the harness (switch_harness.c) fills; a real SDK reads them over the chip's register bus.
 */
#ifndef SWITCH_SDK_H
#define SWITCH_SDK_H

#include <stdint.h>

#define SW_STAT_MAX UINT32_C(0xFFFFFFFF) /* statistic registers saturate here */
#define SW_UTIL_FRAC_BITS 16u
#define SW_UTIL_ONE (UINT32_C(1) << SW_UTIL_FRAC_BITS)
#define SW_UTIL_MUL_SHIFT 32u /* util = (stat * util_mul) >> 32 */
#define SW_PMAX_FRAC_BITS 16u
#define SW_PMAX_ONE (UINT32_C(1) << SW_PMAX_FRAC_BITS)
#define SW_MAX_ACTIONS 64u /* ECN templates a policy may choose from */
#define SW_MAX_HISTORY 8u /* monitoring intervals in a policy's window */
#define SW_MAX_FEATURES 4u /* features per interval */
#define SW_CTX_WORDS 32u /* per-queue context of the firmware: >= 1 + (history - 1) x features */
#define SW_MAX_PORTS 64u
#define SW_MAX_QUEUES 8u /* egress queues per port */

#define SW_OK 0
#define SW_EINVAL (-1)

_Static_assert(SW_CTX_WORDS >= 1u + (SW_MAX_HISTORY - 1u) * SW_MAX_FEATURES, "context must hold any window");

/* Statistics of one egress queue over the last monitoring interval (collector input). */
typedef struct sw_queue_stats {
    uint32_t qlen_bytes; /* egress queue depth at the interval's end */
    uint32_t tx_bytes; /* bytes transmitted during the interval */
    uint32_t marked_pkts; /* ECN-marked packets transmitted during the interval */
} sw_queue_stats_t;

/* Per-port constants the SDK computes once from the port speed and the interval. */
typedef struct sw_port_info {
    uint32_t util_mul; /* round(2^48 / bytes per interval) */
} sw_port_info_t;

/* An ECN template: marking probability rises from 0 at kmin to pmax at kmax, 1 above kmax. */
typedef struct sw_ecn_config {
    uint32_t kmin_bytes;
    uint32_t kmax_bytes;
    uint32_t pmax_q16;
} sw_ecn_config_t;

/* Per-queue state owned by the SDK, opaque to it: the firmware's window and current template. */
typedef struct sw_queue_ctx {
    uint32_t w[SW_CTX_WORDS];
} sw_queue_ctx_t;

/* Optional debug output of one decision (the class scores); the dispatcher passes NULL. */
typedef struct sw_agent_trace {
    int32_t scores[SW_MAX_ACTIONS];
} sw_agent_trace_t;

/* ---- SDK services (switch_runtime.c) ---- */
int sw_read_queue_stats(uint32_t port, uint32_t queue, sw_queue_stats_t *stats);
int sw_read_port_info(uint32_t port, sw_port_info_t *info);
int sw_set_ecn(uint32_t port, uint32_t queue, const sw_ecn_config_t *cfg);

/* Bring up n_ports x n_queues queues: sw_agent_queue_init on each context, apply its template. */
int sw_init_queues(uint32_t n_ports, uint32_t n_queues, sw_queue_ctx_t *ctxs);
/* One monitoring interval: for each port and queue read the statistics, call sw_agent_on_interval
 * and apply the ECN template it chose. ctxs[port * n_queues + queue]. */
int sw_run_interval(uint32_t n_ports, uint32_t n_queues, sw_queue_ctx_t *ctxs);

/* ---- firmware entry points (the generated firmware implements them) ---- */
void sw_agent_queue_init(uint32_t port, uint32_t queue, sw_queue_ctx_t *ctx, sw_ecn_config_t *ecn);
/* One decision: update ctx from this interval's statistics, write the chosen template to *ecn and
 * return its index; trace (may be NULL) receives the class scores. */
uint32_t sw_agent_on_interval(uint32_t port, uint32_t queue, sw_queue_ctx_t *ctx, const sw_queue_stats_t *stats,
                              const sw_port_info_t *info, sw_ecn_config_t *ecn, sw_agent_trace_t *trace);

/* ---- the stub's registers (what a real SDK reads from / writes to the chip) ---- */
extern sw_queue_stats_t sw_stub_stats[SW_MAX_PORTS][SW_MAX_QUEUES];
extern sw_port_info_t sw_stub_port_info[SW_MAX_PORTS];
extern sw_ecn_config_t sw_stub_ecn[SW_MAX_PORTS][SW_MAX_QUEUES];

#endif /* SWITCH_SDK_H */
