/*
 * pcc_sdk.h - rlcc's stub of a PCC-style (programmable congestion control) NIC firmware SDK.
 *
 * Models the device-side API of NVIDIA DOCA PCC from its public programming guide: user C
 * callbacks called per congestion-control event, a 48-byte per-flow context, an 8-word event
 * record with accessor functions, {rate, rtt_req} results, per-slot parameters/counters and
 * fixed-point helpers. It is NOT NVIDIA's header: names are rlcc's own (prefix pcc_/PCC_).
 *
 * Every number here mirrors rlcc.formats (core/formats.py); tests/test_formats_header.py
 * compiles this header and compares, so the two cannot drift.
 *
 * Freestanding: only <stdint.h>, <stddef.h>, <stdbool.h>, <stdarg.h>. No floating point.
 */
#ifndef PCC_SDK_H
#define PCC_SDK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcc_fxp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PCC_SDK_STUB_VERSION 1u

/* ---- rates and factors (rlcc.formats RATE_*, FACTOR_*) ---------------------------------- */
/* A rate is a fraction of line rate with 20 fractional bits, valid range (0, 1 << 20]. */
#define PCC_RATE_FRAC_BITS 20u
#define PCC_RATE_ONE (UINT32_C(1) << PCC_RATE_FRAC_BITS)
#define PCC_MAX_RATE PCC_RATE_ONE
#define PCC_MIN_RATE (UINT32_C(1) << 6)
/* Multiplicative factors are Q16.16. */
#define PCC_FACTOR_FRAC_BITS PCC_FXP_FRAC_BITS
#define PCC_FACTOR_ONE PCC_FXP_ONE

/* ---- event types and TX flags (rlcc.formats EVENT_*, TX_FLAG_*) -------------------------- */
enum pcc_event_type {
    PCC_EVENT_NULL = 0,
    PCC_EVENT_FW = 1, /* deprecated */
    PCC_EVENT_CNP = 2,
    PCC_EVENT_TX = 3, /* a TX burst ended */
    PCC_EVENT_ACK = 4,
    PCC_EVENT_NACK = 5,
    PCC_EVENT_RTT = 6,
    PCC_EVENT_NUM_TYPES = 7
};

#define PCC_TX_FLAG_ACK_EXPECTED (UINT32_C(1) << 0)
#define PCC_TX_FLAG_OVERLOADED (UINT32_C(1) << 1)
#define PCC_TX_FLAG_RTT_REQ_SENT (UINT32_C(1) << 2)

/* ---- event record: 8 host-order uint32 words, 32 bytes (rlcc.formats EV_*) -------------- */
#define PCC_EVENT_WORDS 8u
#define PCC_EVENT_BYTES (PCC_EVENT_WORDS * 4u)
/* word indices */
#define PCC_EV_W_ATTR 0u      /* {type:8 (low byte), subtype:8, port:8, flags:8} */
#define PCC_EV_W_FLOW_TAG 1u
#define PCC_EV_W_SN 2u
#define PCC_EV_W_TIMESTAMP 3u /* ns, wraps mod 2^32 */
#define PCC_EV_W_U0 4u        /* per-type union, words 4..7 */
#define PCC_EV_W_U1 5u
#define PCC_EV_W_U2 6u
#define PCC_EV_W_U3 7u

typedef struct pcc_event {
    uint32_t w[PCC_EVENT_WORDS];
} pcc_event_t;

/* general attributes */
static inline uint32_t pcc_ev_type(const pcc_event_t *ev) { return ev->w[PCC_EV_W_ATTR] & 0xFFu; }
static inline uint32_t pcc_ev_subtype(const pcc_event_t *ev) { return (ev->w[PCC_EV_W_ATTR] >> 8) & 0xFFu; }
static inline uint32_t pcc_ev_port(const pcc_event_t *ev) { return (ev->w[PCC_EV_W_ATTR] >> 16) & 0xFFu; }
static inline uint32_t pcc_ev_flags(const pcc_event_t *ev) { return (ev->w[PCC_EV_W_ATTR] >> 24) & 0xFFu; }
static inline uint32_t pcc_ev_flow_tag(const pcc_event_t *ev) { return ev->w[PCC_EV_W_FLOW_TAG]; }
static inline uint32_t pcc_ev_sn(const pcc_event_t *ev) { return ev->w[PCC_EV_W_SN]; }
static inline uint32_t pcc_ev_timestamp(const pcc_event_t *ev) { return ev->w[PCC_EV_W_TIMESTAMP]; }

/* RTT event */
static inline uint32_t pcc_ev_rtt_req_send_ts(const pcc_event_t *ev) { return ev->w[PCC_EV_W_U0]; }
static inline uint32_t pcc_ev_rtt_req_recv_ts(const pcc_event_t *ev) { return ev->w[PCC_EV_W_U1]; }
static inline uint32_t pcc_ev_rtt_resp_send_ts(const pcc_event_t *ev) { return ev->w[PCC_EV_W_U2]; }

/* TX event */
static inline uint32_t pcc_ev_tx_sent_units(const pcc_event_t *ev) { return ev->w[PCC_EV_W_U0] & 0xFFFFu; } /* 32-byte units */
static inline uint32_t pcc_ev_tx_sent_packets(const pcc_event_t *ev) { return ev->w[PCC_EV_W_U0] >> 16; }
static inline uint32_t pcc_ev_tx_flow_id(const pcc_event_t *ev) { return ev->w[PCC_EV_W_U1] & 0xFFFFFFu; }

/* ACK / NACK / CNP events */
static inline uint32_t pcc_ev_first_ts(const pcc_event_t *ev) { return ev->w[PCC_EV_W_U0]; }
static inline uint32_t pcc_ev_first_sn(const pcc_event_t *ev) { return ev->w[PCC_EV_W_U1]; }
static inline uint32_t pcc_ev_coalesced(const pcc_event_t *ev) { return ev->w[PCC_EV_W_U2] & 0xFFFFu; }

/*
 * pcc_rtt_ns: RTT sample of an RTT event in ns = timestamp - request_send_ts (mod 2^32).
 * Correct across one wraparound of the 32-bit ns clock (RTTs below ~4.29 s).
 */
static inline uint32_t pcc_rtt_ns(const pcc_event_t *ev)
{
    return pcc_ev_timestamp(ev) - pcc_ev_rtt_req_send_ts(ev);
}

/* ---- per-flow context: 48 bytes, zeroed for a new flow (rate word 0 means new) ---------- */
#define PCC_CTX_BYTES 48u
#define PCC_CTX_WORDS (PCC_CTX_BYTES / 4u)

typedef struct pcc_ctx {
    uint32_t w[PCC_CTX_WORDS];
} pcc_ctx_t;

_Static_assert(sizeof(pcc_ctx_t) == PCC_CTX_BYTES, "pcc_ctx_t must be 48 bytes");
_Static_assert(sizeof(pcc_event_t) == PCC_EVENT_BYTES, "pcc_event_t must be 32 bytes");

/* ---- algorithm attributes: slot in bits 0..3, overload flag bit 4 ----------------------- */
#define PCC_ATTR_SLOT_MASK 0xFu
#define PCC_ATTR_OVERLOAD_BIT (UINT32_C(1) << 4)

typedef struct pcc_attr {
    uint32_t raw;
} pcc_attr_t;

static inline uint32_t pcc_attr_slot(pcc_attr_t a) { return a.raw & PCC_ATTR_SLOT_MASK; }
static inline bool pcc_attr_overloaded(pcc_attr_t a) { return (a.raw & PCC_ATTR_OVERLOAD_BIT) != 0u; }
static inline pcc_attr_t pcc_attr_make(uint32_t slot, bool overloaded)
{
    pcc_attr_t a;
    a.raw = (slot & PCC_ATTR_SLOT_MASK) | (overloaded ? PCC_ATTR_OVERLOAD_BIT : 0u);
    return a;
}

/* ---- results ---------------------------------------------------------------------------- */
#define PCC_RESULT_WORDS 2u

typedef struct pcc_results {
    uint32_t rate;    /* new rate, 20 fractional bits, (0, PCC_MAX_RATE] */
    uint32_t rtt_req; /* 1: ask the NIC to send an RTT probe */
} pcc_results_t;

_Static_assert(sizeof(pcc_results_t) == PCC_RESULT_WORDS * 4u, "pcc_results_t must be 8 bytes");

/* ---- user callbacks (implemented by the algorithm) ------------------------------------- */
#define PCC_OK 0
#define PCC_FAIL 1

/* One call per event of one flow; ctx is restored between calls of the same flow. */
void user_algo(pcc_ctx_t *ctx, const pcc_event_t *ev, pcc_attr_t attr, pcc_results_t *results);
/* Once at load. Set bit (1 << event_type) in *disable_event_bitmask to mask an event type. */
void user_init(uint32_t *disable_event_bitmask);
/*
 * Host request to set parameters param_id_base .. param_id_base + n - 1 of (port, slot) to
 * new_values[0 .. n-1]. params is the slot's whole parameter array (PCC_NUM_PARAMS words);
 * the callee validates and stores into params[param_id_base + i]. Returns PCC_OK or PCC_FAIL
 * (on PCC_FAIL nothing should have been changed).
 */
int user_set_algo_params(uint32_t port, uint32_t slot, uint32_t param_id_base, uint32_t n,
                         const uint32_t *new_values, uint32_t *params);

/* ---- per-slot parameters and counters (storage in pcc_runtime.c) ----------------------- */
#define PCC_NUM_SLOTS 8u
#define PCC_NUM_PORTS 4u
#define PCC_NUM_PARAMS 32u
#define PCC_NUM_COUNTERS 16u

extern uint32_t pcc_params[PCC_NUM_SLOTS][PCC_NUM_PARAMS];
extern uint32_t pcc_counters[PCC_NUM_SLOTS][PCC_NUM_COUNTERS];

/* Parameter `id` of the slot in attr (slot and id are masked/clamped, never out of bounds). */
static inline uint32_t pcc_param(pcc_attr_t attr, uint32_t id)
{
    return pcc_params[pcc_attr_slot(attr) % PCC_NUM_SLOTS][id % PCC_NUM_PARAMS];
}
static inline void pcc_counter_add(pcc_attr_t attr, uint32_t id, uint32_t v)
{
    pcc_counters[pcc_attr_slot(attr) % PCC_NUM_SLOTS][id % PCC_NUM_COUNTERS] += v;
}
/* The runtime's entry for host parameter writes: bounds-checks, then calls user_set_algo_params. */
int pcc_host_set_params(uint32_t port, uint32_t slot, uint32_t param_id_base, uint32_t n,
                        const uint32_t *new_values);

/* ---- services (stubs in pcc_runtime.c; deterministic on every build) ------------------- */
/* printf: the stub discards the output (arguments are still evaluated, as for any call). */
static inline void pcc_printf(const char *fmt, ...)
{
    (void)fmt;
}
/* Trace ring buffer: pcc_trace appends (id, a, b); the harness does not export it. */
#define PCC_TRACE_ENTRIES 64u
void pcc_trace(uint32_t id, uint32_t a, uint32_t b);
/* Hardware thread rank of the caller (stub: pcc_stub_thread_rank, default 0). */
uint32_t pcc_thread_rank(void);
/*
 * Microsecond timer. Stub: the harness sets the simulated clock to each event's timestamp
 * before calling user_algo, so this returns timestamp_ns / 1000 (deterministic everywhere).
 */
uint32_t pcc_get_timer_us(void);
/* Port speed in Gb/s (stub: pcc_stub_port_speed_gbps[port], default 200; 0 if port invalid). */
uint32_t pcc_port_speed_gbps(uint32_t port);
/* Memory fence (full). */
static inline void pcc_fence(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* stub controls (set by harnesses/tests, not by algorithms) */
extern uint32_t pcc_stub_thread_rank;
extern uint32_t pcc_stub_now_ns;
extern uint32_t pcc_stub_port_speed_gbps[PCC_NUM_PORTS];
extern uint32_t pcc_trace_buf[PCC_TRACE_ENTRIES][3];
extern uint32_t pcc_trace_count;

/* ---- performance counters -------------------------------------------------------------- */
/*
 * pcc_rdcycle / pcc_rdinstret: the RISC-V cycle / instret CSRs as 64-bit values (rv32 reads
 * the high/low halves with the usual re-read loop). On a non-RISC-V host they return 0.
 */
static inline uint64_t pcc_rdcycle(void)
{
#if defined(__riscv) && (__riscv_xlen == 64)
    uint64_t v;
    __asm__ volatile("csrr %0, cycle" : "=r"(v) : : "memory");
    return v;
#elif defined(__riscv)
    uint32_t hi, lo, hi2;
    do {
        __asm__ volatile("csrr %0, cycleh" : "=r"(hi) : : "memory");
        __asm__ volatile("csrr %0, cycle" : "=r"(lo) : : "memory");
        __asm__ volatile("csrr %0, cycleh" : "=r"(hi2) : : "memory");
    } while (hi != hi2);
    return ((uint64_t)hi << 32) | lo;
#else
    return 0u;
#endif
}

static inline uint64_t pcc_rdinstret(void)
{
#if defined(__riscv) && (__riscv_xlen == 64)
    uint64_t v;
    __asm__ volatile("csrr %0, instret" : "=r"(v) : : "memory");
    return v;
#elif defined(__riscv)
    uint32_t hi, lo, hi2;
    do {
        __asm__ volatile("csrr %0, instreth" : "=r"(hi) : : "memory");
        __asm__ volatile("csrr %0, instret" : "=r"(lo) : : "memory");
        __asm__ volatile("csrr %0, instreth" : "=r"(hi2) : : "memory");
    } while (hi != hi2);
    return ((uint64_t)hi << 32) | lo;
#else
    return 0u;
#endif
}

#ifdef __cplusplus
}
#endif

#endif /* PCC_SDK_H */
