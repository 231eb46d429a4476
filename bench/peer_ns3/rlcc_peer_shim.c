/* rlcc_peer_shim.c: the host-library face of an rlcc-generated firmware for the packet-level peer.
 *
 * firmware_lib.py compiles this file with a generated firmware.c and the SDK stub's host runtime
 * (firmware_sdk_stub/pcc_runtime.c) into one shared library; rlcc-peer.cc (CC_MODE 11) dlopens it
 * and calls these functions, one 48-byte context per flow, owned by the caller. The events are the
 * ones rlcc's closed-loop golden controller delivers (simulator/controllers/compiled.py
 * GoldenController): an RTT event whose timestamp is the probe's return time and whose request-send
 * word is its send time, both on the device clock (ns, mod 2^32); results.rate is the new rate as a
 * Q20 fraction of line rate. A flow that starts at a rate other than the model's initial one gets
 * the context GoldenController seeds (compare.py computes it with that controller and hands the
 * words over), so the seeding rule lives in Python alone.
 */
#include "rlcc_runtime.h"

#define RLCC_PEER_ABI 1u

/* ABI version of this shim (rlcc-peer.cc refuses a library with another). */
uint32_t rlcc_peer_abi(void) { return RLCC_PEER_ABI; }

/* Context words per flow (the caller allocates this many uint32 per flow). */
uint32_t rlcc_peer_ctx_words(void) { return RLCC_CTX_WORDS; }

/* Once, before any event: the firmware's user_init (every slot's parameters to the model's defaults).
 * Returns the firmware's disabled-event mask. */
uint32_t rlcc_peer_init(void)
{
    uint32_t mask = 0u;
    user_init(&mask);
    return mask;
}

/* Any event record (8 words) of one flow; slot 0, not overloaded. Returns results.rate (Q20). */
uint32_t rlcc_peer_event(uint32_t *ctx, const uint32_t *words, uint32_t *rtt_req)
{
    pcc_event_t ev;
    pcc_results_t res = {0u, 0u};
    uint32_t i;
    for (i = 0u; i < PCC_EVENT_WORDS; i++) {
        ev.w[i] = words[i];
    }
    pcc_stub_now_ns = ev.w[PCC_EV_W_TIMESTAMP]; /* as the harness does before each user_algo */
    user_algo((pcc_ctx_t *)ctx, &ev, pcc_attr_make(0u, false), &res);
    *rtt_req = res.rtt_req;
    return res.rate;
}

/* The RTT event of a returned probe (device-clock ns): the request left at send_ts, reached the
 * receiver at recv_ts, whose response left at resp_ts, and came back at now. */
uint32_t rlcc_peer_rtt_event(uint32_t *ctx, uint32_t now, uint32_t send_ts, uint32_t recv_ts, uint32_t resp_ts,
                             uint32_t *rtt_req)
{
    uint32_t w[PCC_EVENT_WORDS] = {0u};
    w[PCC_EV_W_ATTR] = (uint32_t)PCC_EVENT_RTT;
    w[PCC_EV_W_TIMESTAMP] = now;
    w[PCC_EV_W_U0] = send_ts;
    w[PCC_EV_W_U1] = recv_ts;
    w[PCC_EV_W_U2] = resp_ts;
    return rlcc_peer_event(ctx, w, rtt_req);
}
