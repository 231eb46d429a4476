/* Swift's step-by-step loop on a single-port switch in C (``rlcc.simulator.swiftloop``).
 *
 * The step loop of ``engine._Run.run`` for the case the benchmarks and the suite run most: a
 * ``Swift`` controller on one switch port (``network.Fabric._single``), every flow started, no
 * trace, no finite flows. Per step: pending rate changes whose decision latency has elapsed,
 * the decisions of the flows whose probes return in the step (``_Run.decide`` with
 * ``Swift.decide``, go-back-N accounting included), Swift's pacing tick (``_Run.tick`` with
 * ``Swift.on_tick``), the fabric step (``Fabric._refresh`` / ``_step_single``) and the queue and
 * series samples. Same float operations in the same order as the Python path (compiled with
 * -ffp-contract=off), so a run is bit-identical either way (tests/simulator/test_swiftloop.py).
 * Sums follow numpy's ``bincount`` (sequential, from 0.0); ``np.clip`` is max then min.
 *
 * Arrays are numpy buffers held for the object's life: the ``FlowState`` columns, the fabric's
 * per-group arrays (rewritten in place at each refresh), Swift's per-flow state and the run's
 * sample arrays. Pending rate changes (decided, not applied yet) live here in decision order. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npcompat.h"

enum {
    /* per flow (FlowState) */
    A_RATE, A_TX, A_ACTIVE, A_NEXT_RET, A_PROBE_SENT, A_PREV, A_NDEC, A_ACC, A_LAST, A_CNP_SEEN, A_NACK_SEEN,
    A_SENT_AT_DEC, A_RESENT, A_DISCARDED, A_GROUP,
    /* fabric (rewritten in place) */
    A_GROUP_HOST, A_G0, A_GSCALE, A_REF, A_GRATE, A_PLOAD,
    /* Swift's per-flow state */
    A_CWND, A_CWND_EFF, A_PACED, A_PEND_RATE, A_PEND_CWND, A_QDELAY,
    /* run outputs */
    A_QSAMPLES, A_RTT_STATS, A_SERIES_FLOWS, A_SER_T, A_SER_Q, A_SER_RATES, A_SER_LOAD,
    N_ARRAYS
};

/* element type of each array: 'd' float64, 'i' int64, 'f' float32, '?' bool (sizes: Loop_init) */
static const char FORMATS[N_ARRAYS] = {
    'd', 'd', '?', 'd', 'd', 'd', 'i', 'd', 'd', 'i', 'i', 'd', 'd', 'd', 'i',
    'i', 'd', 'd', 'd', 'd', 'd',
    'd', 'd', '?', 'd', 'd', 'd',
    'f', 'd', 'i', 'd', 'd', 'd', 'd',
};

typedef struct {
    PyObject_HEAD
    Py_buffer view[N_ARRAYS];
    int nviews;
    Py_ssize_t n, nG, nH, nsf, qrows, srows;
    /* engine constants */
    double dt, C, base, pkt, cap, buffer, kmin, kmax, pmax, eng_min_rate;
    long long L, q_every, series_every, window_step;
    int go_back;
    /* Swift's constants */
    double ppn, ai, beta, max_mdf, min_cwnd, fs_a, fs_b, fs_max, base_target, tick_ns, swift_min_rate;
    /* typed pointers into the views */
    double *rate, *tx, *next_ret, *probe_sent, *prev, *acc, *last, *sent_at_dec, *resent, *discarded;
    int64_t *n_dec, *cnp_seen, *nack_seen, *group, *group_host, *series_flows;
    unsigned char *active, *paced;
    double *g0, *gscale, *ref, *grate, *pload;
    double *cwnd, *cwnd_eff, *pend_rate, *pend_cwnd, *qdelay;
    float *qsamples;
    double *rtt_stats, *ser_t, *ser_q, *ser_rates, *ser_load;
    /* scratch: due flows, per-group sums, host sums, the tick's new rates and changed flows */
    int64_t *due, *changed;
    double *gsum, *hsum, *newr, *gint; /* gint: the groups' integrals now, (3, groups) */
    /* pending rate changes: flow, new rate, application step; [phead, ptail) in decision order */
    int64_t *pidx, *pstep;
    double *pnew;
    Py_ssize_t phead, ptail, pcap;
    /* fabric and tick scalars (``Fabric._q`` etc.), exchanged with Python by ``run`` */
    double time, q, d, m, offered, delivered, dropped, next_tick;
    int dirty;
} Loop;

static void Loop_dealloc(Loop *k) {
    for (int i = 0; i < k->nviews; i++) PyBuffer_Release(&k->view[i]);
    void *bufs[] = {k->due, k->changed, k->gsum, k->hsum, k->newr, k->gint, k->pidx, k->pstep, k->pnew};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

/* Room for ``extra`` more pending changes (a ring buffer kept in order, compacted on growth). */
static int reserve_pending(Loop *k, Py_ssize_t extra) {
    Py_ssize_t used = k->ptail - k->phead;
    if (k->ptail + extra <= k->pcap) return 0;
    if (used + extra <= k->pcap / 2) { /* enough room once compacted */
        memmove(k->pidx, k->pidx + k->phead, used * sizeof(int64_t));
        memmove(k->pstep, k->pstep + k->phead, used * sizeof(int64_t));
        memmove(k->pnew, k->pnew + k->phead, used * sizeof(double));
    } else {
        Py_ssize_t cap = 2 * (used + extra);
        int64_t *pi = malloc(cap * sizeof(int64_t)), *ps = malloc(cap * sizeof(int64_t));
        double *pn = malloc(cap * sizeof(double));
        if (!pi || !ps || !pn) {
            free(pi); free(ps); free(pn);
            PyErr_NoMemory();
            return -1;
        }
        if (used) {
            memcpy(pi, k->pidx + k->phead, used * sizeof(int64_t));
            memcpy(ps, k->pstep + k->phead, used * sizeof(int64_t));
            memcpy(pn, k->pnew + k->phead, used * sizeof(double));
        }
        free(k->pidx); free(k->pstep); free(k->pnew);
        k->pidx = pi; k->pstep = ps; k->pnew = pn;
        k->pcap = cap;
    }
    k->phead = 0;
    k->ptail = used;
    return 0;
}

/* Loop(arrays, sizes, constants, swift): arrays a tuple in the enum's order; sizes (n, groups,
 * hosts, series flows, queue sample rows, series rows); constants (dt, bytes per ns, base RTT,
 * packet bytes, host cap, buffer, kmin, kmax, pmax, engine min rate, latency steps, q_every,
 * series_every, window step, go-back-N); swift (packets per ns, ai, beta, max_mdf, min_cwnd,
 * fs_a, fs_b, fs range ns, base target ns, tick ns, min rate). */
static int Loop_init(Loop *k, PyObject *args, PyObject *kwds) {
    PyObject *arrays;
    static char *kwlist[] = {"arrays", "sizes", "constants", "swift", NULL};
    if (k->nviews) {
        PyErr_SetString(PyExc_RuntimeError, "Loop already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!(nnnnnn)(ddddddddddLLLLp)(ddddddddddd)", kwlist, &PyTuple_Type,
                                     &arrays, &k->n, &k->nG, &k->nH, &k->nsf, &k->qrows, &k->srows,
                                     &k->dt, &k->C, &k->base, &k->pkt, &k->cap, &k->buffer, &k->kmin, &k->kmax, &k->pmax,
                                     &k->eng_min_rate, &k->L, &k->q_every, &k->series_every, &k->window_step, &k->go_back,
                                     &k->ppn, &k->ai, &k->beta, &k->max_mdf, &k->min_cwnd, &k->fs_a, &k->fs_b, &k->fs_max,
                                     &k->base_target, &k->tick_ns, &k->swift_min_rate))
        return -1;
    if (PyTuple_GET_SIZE(arrays) != N_ARRAYS) {
        PyErr_Format(PyExc_ValueError, "Loop needs %d arrays", N_ARRAYS);
        return -1;
    }
    Py_ssize_t n = k->n, nG = k->nG;
    if (n < 1 || nG < 1 || k->nH < 1 || k->nsf < 0 || k->q_every < 1 || k->series_every < 1 || k->L < 0 ||
        k->qrows < 1 || k->srows < 0) {
        PyErr_SetString(PyExc_ValueError, "invalid Loop sizes");
        return -1;
    }
    const Py_ssize_t count[N_ARRAYS] = {
        n, n, n, n, n, n, n, 3 * n, 3 * n, n, n, n, n, n, n,
        nG, 3 * nG, nG, 3, nG, 1,
        n, n, n, n, n, n,
        k->qrows, 4, k->nsf, k->srows, k->srows, k->srows * k->nsf, k->srows,
    };
    for (int i = 0; i < N_ARRAYS; i++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(arrays, i), &k->view[i], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
            return -1;
        k->nviews = i + 1;
        if (!check_format(&k->view[i], FORMATS[i]) || k->view[i].len != count[i] * k->view[i].itemsize) {
            PyErr_Format(PyExc_ValueError, "Loop array %d: wrong dtype or size", i);
            return -1;
        }
    }
#define BUF(i) (k->view[i].buf)
    k->rate = BUF(A_RATE); k->tx = BUF(A_TX); k->active = BUF(A_ACTIVE); k->next_ret = BUF(A_NEXT_RET);
    k->probe_sent = BUF(A_PROBE_SENT); k->prev = BUF(A_PREV); k->n_dec = BUF(A_NDEC); k->acc = BUF(A_ACC);
    k->last = BUF(A_LAST); k->cnp_seen = BUF(A_CNP_SEEN); k->nack_seen = BUF(A_NACK_SEEN);
    k->sent_at_dec = BUF(A_SENT_AT_DEC); k->resent = BUF(A_RESENT); k->discarded = BUF(A_DISCARDED);
    k->group = BUF(A_GROUP); k->group_host = BUF(A_GROUP_HOST); k->g0 = BUF(A_G0); k->gscale = BUF(A_GSCALE);
    k->ref = BUF(A_REF); k->grate = BUF(A_GRATE); k->pload = BUF(A_PLOAD);
    k->cwnd = BUF(A_CWND); k->cwnd_eff = BUF(A_CWND_EFF); k->paced = BUF(A_PACED); k->pend_rate = BUF(A_PEND_RATE);
    k->pend_cwnd = BUF(A_PEND_CWND); k->qdelay = BUF(A_QDELAY);
    k->qsamples = BUF(A_QSAMPLES); k->rtt_stats = BUF(A_RTT_STATS); k->series_flows = BUF(A_SERIES_FLOWS);
    k->ser_t = BUF(A_SER_T); k->ser_q = BUF(A_SER_Q); k->ser_rates = BUF(A_SER_RATES); k->ser_load = BUF(A_SER_LOAD);
#undef BUF
    for (Py_ssize_t i = 0; i < n; i++)
        if (k->group[i] < 0 || k->group[i] >= nG) {
            PyErr_SetString(PyExc_ValueError, "Loop: flow group out of range");
            return -1;
        }
    for (Py_ssize_t g = 0; g < nG; g++)
        if (k->group_host[g] < 0 || k->group_host[g] >= k->nH) {
            PyErr_SetString(PyExc_ValueError, "Loop: group host out of range");
            return -1;
        }
    for (Py_ssize_t t = 0; t < k->nsf; t++)
        if (k->series_flows[t] < 0 || k->series_flows[t] >= n) {
            PyErr_SetString(PyExc_ValueError, "Loop: series flow out of range");
            return -1;
        }
    k->due = malloc(n * sizeof(int64_t));
    k->changed = malloc(n * sizeof(int64_t));
    k->gsum = malloc(nG * sizeof(double));
    k->hsum = malloc(k->nH * sizeof(double));
    k->newr = malloc(n * sizeof(double));
    k->gint = malloc(3 * nG * sizeof(double));
    if (!k->due || !k->changed || !k->gsum || !k->hsum || !k->newr || !k->gint) {
        PyErr_NoMemory();
        return -1;
    }
    return reserve_pending(k, n);
}

/* ``Fabric.integrals`` of every group into ``gint`` (column c of group g at c * groups + g):
 * g0 + scale x (port integral - its value at the rebase). They hold until the next fabric step. */
static void group_integrals(Loop *k) {
    const double D[3] = {k->time - k->ref[0], k->d - k->ref[1], k->m - k->ref[2]};
    for (Py_ssize_t g = 0; g < k->nG; g++)
        for (int c = 0; c < 3; c++) k->gint[c * k->nG + g] = k->g0[3 * g + c] + k->gscale[g] * D[c];
}

/* ``_Run.settle`` of one flow: its counters up to now (``gint``) at its sending rate. */
static inline void settle(Loop *k, int64_t i) {
    double w = k->tx[i] * k->C;
    int64_t g = k->group[i];
    for (int c = 0; c < 3; c++) {
        double now = k->gint[c * k->nG + g];
        k->acc[c * k->n + i] = k->acc[c * k->n + i] + w * (now - k->last[c * k->n + i]);
        k->last[c * k->n + i] = now;
    }
}

/* ``_Run.set_rates`` of flows idx[0..m) (settled first): their new sending rates and the groups'
 * sums (``Fabric.add_rates``: a bincount of the changes added to every group). */
static void set_rates(Loop *k, const int64_t *idx, const double *newr, Py_ssize_t m) {
    for (Py_ssize_t j = 0; j < m; j++) settle(k, idx[j]);
    memset(k->gsum, 0, k->nG * sizeof(double));
    for (Py_ssize_t j = 0; j < m; j++) {
        int64_t i = idx[j];
        double tx = k->active[i] ? newr[j] : 0.0;
        k->gsum[k->group[i]] += tx - k->tx[i];
        k->tx[i] = tx;
        k->rate[i] = newr[j];
    }
    for (Py_ssize_t g = 0; g < k->nG; g++) k->grate[g] += k->gsum[g];
    k->dirty = 1;
}

/* ``_Run.apply_pending``: every pending change due by step ks, one decision step at a time. */
static void apply_pending(Loop *k, long long ks) {
    while (k->phead < k->ptail && k->pstep[k->phead] <= ks) {
        Py_ssize_t a = k->phead, b = a;
        while (b < k->ptail && k->pstep[b] == k->pstep[a]) b++;
        set_rates(k, k->pidx + a, k->pnew + a, b - a);
        k->phead = b;
    }
}

/* ``_Run.decide`` with ``Swift.decide`` for the flows whose probes return before t_end. */
static int decide(Loop *k, long long ks, double t_end) {
    Py_ssize_t n = k->n, nd = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (k->next_ret[i] < t_end) k->due[nd++] = i;
    if (!nd) return 0;
    if (k->L && reserve_pending(k, nd) < 0) return -1;
    double qd = k->q / k->C; /* the queueing delay the next probes see (``queue_delay``) */
    int64_t rsum = 0;
    for (Py_ssize_t j = 0; j < nd; j++) {
        int64_t i = k->due[j];
        double ret = k->next_ret[i];
        int64_t rtt = (int64_t)rint_even(ret - k->probe_sent[i]);
        rsum += rtt;
        settle(k, i);
        double sent = k->acc[i], dropb = k->acc[n + i], markb = k->acc[2 * n + i];
        int64_t nack = (int64_t)floor(dropb / k->pkt) - k->nack_seen[i];
        int64_t cnp = (int64_t)floor(markb / k->pkt) - k->cnp_seen[i];
        k->cnp_seen[i] += cnp;
        k->nack_seen[i] += nack;
        double rate = k->rate[i];
        if (k->go_back) { /* ``FlowState.go_back`` */
            double window = sent - k->sent_at_dec[i];
            k->sent_at_dec[i] = sent;
            if (nack > 0) {
                double lost = (double)nack * k->pkt;
                k->resent[i] += window > lost ? window : lost;
                double disc = window - lost;
                k->discarded[i] += disc > 0.0 ? disc : 0.0;
            }
        }
        /* Swift.decide */
        double delay = (double)rtt;
        if (k->n_dec[i] == 0) k->cwnd[i] = rate * delay * k->ppn;
        double cwnd = k->cwnd[i];
        double target = k->base_target + clip(k->fs_a / sqrt(cwnd) + k->fs_b, 0.0, k->fs_max);
        double nw;
        if (nack > 0) nw = cwnd * (1.0 - k->max_mdf);
        else if (delay < target) nw = cwnd >= 1.0 ? cwnd + k->ai : cwnd * (1.0 + k->ai);
        else {
            double f = 1.0 - k->beta * (delay - target) / delay, lo = 1.0 - k->max_mdf;
            nw = cwnd * (f < lo ? lo : f); /* np.maximum */
        }
        nw = clip(nw, k->min_cwnd, delay * k->ppn);
        k->cwnd[i] = nw;
        double rtt_now = k->base + k->qdelay[i];
        double r = clip(nw / (rtt_now * k->ppn), k->swift_min_rate, 1.0);
        k->pend_rate[i] = r;
        k->pend_cwnd[i] = nw;
        /* the engine: clip, previous factor, the change pending or applied, the next probe */
        double nr = clip(r, k->eng_min_rate, 1.0);
        k->prev[i] = nr / rate;
        k->n_dec[i] += 1;
        k->newr[j] = nr;
    }
    if (k->L == 0) {
        set_rates(k, k->due, k->newr, nd);
    } else {
        for (Py_ssize_t j = 0; j < nd; j++) {
            k->pidx[k->ptail] = k->due[j];
            k->pnew[k->ptail] = k->newr[j];
            k->pstep[k->ptail++] = ks + k->L;
        }
    }
    for (Py_ssize_t j = 0; j < nd; j++) {
        int64_t i = k->due[j];
        double ret = k->next_ret[i];
        k->probe_sent[i] = ret;
        k->next_ret[i] = ret + k->base + qd;
    }
    k->rtt_stats[0] += (double)rsum;
    k->rtt_stats[1] += (double)nd;
    if (ks >= k->window_step) {
        k->rtt_stats[2] += (double)rsum;
        k->rtt_stats[3] += (double)nd;
    }
    return 0;
}

/* ``_Run.tick`` with ``Swift.on_tick``: re-pace every flow whose window is in effect at
 * cwnd / (base RTT + queueing delay now); many changes settle every flow (the engine's branch). */
static void tick(Loop *k) {
    Py_ssize_t n = k->n, nc = 0;
    const double qd = k->q / k->C, den = (k->base + qd) * k->ppn, lo = k->swift_min_rate, elo = k->eng_min_rate;
    double *restrict rate = k->rate, *restrict pend_rate = k->pend_rate, *restrict cwnd_eff = k->cwnd_eff;
    double *restrict newr = k->newr, *restrict qdelay = k->qdelay;
    const double *restrict pend_cwnd = k->pend_cwnd;
    unsigned char *restrict paced_on = k->paced;
    const unsigned char *restrict active = k->active;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (rate[i] == pend_rate[i]) { /* the pending decision landed */
            cwnd_eff[i] = pend_cwnd[i];
            paced_on[i] = 1;
            pend_rate[i] = NAN;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        qdelay[i] = qd;
        double paced = cwnd_eff[i] / den;
        paced = paced < lo ? lo : paced;
        paced = paced > 1.0 ? 1.0 : paced;
        double nr = paced_on[i] && active[i] ? paced : rate[i];
        nr = nr < elo ? elo : nr;
        newr[i] = nr > 1.0 ? 1.0 : nr;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        k->changed[nc] = i;
        nc += active[i] && newr[i] != rate[i];
    }
    if (nc > n / 8) { /* every flow, unchanged ones (inactive: their own rate) with a zero change */
        double *restrict tx = k->tx, *restrict gsum = k->gsum;
        const int64_t *restrict group = k->group;
        for (int c = 0; c < 3; c++) {
            double *restrict acc = k->acc + c * n, *restrict last = k->last + c * n;
            const double *restrict G = k->gint + c * k->nG;
            for (Py_ssize_t i = 0; i < n; i++) {
                double now = G[group[i]];
                acc[i] = acc[i] + tx[i] * k->C * (now - last[i]);
                last[i] = now;
            }
        }
        memset(gsum, 0, k->nG * sizeof(double));
        for (Py_ssize_t i = 0; i < n; i++) {
            double nr = active[i] ? newr[i] : rate[i];
            double t = active[i] ? nr : 0.0;
            gsum[group[i]] += t - tx[i];
            tx[i] = t;
            rate[i] = nr;
        }
        for (Py_ssize_t g = 0; g < k->nG; g++) k->grate[g] += gsum[g];
        k->dirty = 1;
    } else if (nc) {
        for (Py_ssize_t j = 0; j < nc; j++) newr[j] = newr[k->changed[j]];
        set_rates(k, k->changed, newr, nc);
    }
}

/* ``Fabric._refresh`` on one port: rebase the group integrals, host scales, the port's load. */
static void refresh(Loop *k) {
    Py_ssize_t nG = k->nG;
    for (Py_ssize_t g = 0; g < nG; g++)
        for (int c = 0; c < 3; c++) k->g0[3 * g + c] = k->gint[c * nG + g];
    k->ref[0] = k->time; k->ref[1] = k->d; k->ref[2] = k->m;
    memset(k->hsum, 0, k->nH * sizeof(double));
    for (Py_ssize_t g = 0; g < nG; g++) k->hsum[k->group_host[g]] += k->grate[g];
    double load = 0.0;
    for (Py_ssize_t g = 0; g < nG; g++) {
        double hs = k->hsum[k->group_host[g]];
        double s = hs > k->cap ? k->cap / (hs > 1e-300 ? hs : 1e-300) : 1.0;
        k->gscale[g] = s;
        load += s * k->grate[g];
    }
    k->pload[0] = load;
    k->dirty = 0;
}

/* ``Fabric.step`` on one port (``_step_single``, no switch agent). */
static void fabric_step(Loop *k) {
    if (k->dirty) refresh(k);
    double dt = k->dt, q = k->q, mark;
    if (q <= k->kmin) mark = 0.0;
    else if (q >= k->kmax) mark = 1.0;
    else mark = k->pmax * (q - k->kmin) / (k->kmax - k->kmin);
    double inflow = k->pload[0] * k->C * dt;
    double q_new = q + inflow - k->C * dt;
    if (q_new < 0.0) q_new = 0.0;
    k->offered += inflow;
    if (q_new > k->buffer) {
        double excess = q_new - k->buffer;
        q_new = k->buffer;
        double frac = excess / inflow;
        k->d += frac * dt;
        k->dropped += excess;
        mark *= 1.0 - frac;
        k->delivered += q + inflow - q_new - excess;
    } else {
        k->delivered += q + inflow - q_new;
    }
    if (mark != 0.0) k->m += mark * dt;
    k->q = q_new;
    k->time += dt;
}

/* ``_Run.sample``: the queue sample and the series row of step ks. */
static void sample(Loop *k, long long ks) {
    if (ks % k->q_every == 0) k->qsamples[ks / k->q_every] = (float)k->q;
    if (ks % k->series_every == 0) {
        Py_ssize_t r = (Py_ssize_t)(ks / k->series_every);
        k->ser_t[r] = (double)ks * k->dt / 1e3;
        k->ser_q[r] = k->q / k->C / 1e3;
        for (Py_ssize_t t = 0; t < k->nsf; t++) k->ser_rates[r * k->nsf + t] = k->tx[k->series_flows[t]];
        k->ser_load[r] = k->pload[0];
    }
}

/* run(k0, k1, state) -> state: steps [k0, k1); state (time, q, d, m, offered, delivered,
 * dropped, dirty, next_tick) are the fabric's single-port scalars and the next tick time. */
static PyObject *Loop_run(Loop *k, PyObject *args) {
    long long k0, k1;
    if (!PyArg_ParseTuple(args, "LL(dddddddpd)", &k0, &k1, &k->time, &k->q, &k->d, &k->m, &k->offered,
                          &k->delivered, &k->dropped, &k->dirty, &k->next_tick))
        return NULL;
    if (k0 < 0 || k1 < k0 || (k1 > k0 && ((k1 - 1) / k->q_every >= k->qrows || (k1 - 1) / k->series_every >= k->srows))) {
        PyErr_SetString(PyExc_ValueError, "Loop.run: steps out of range");
        return NULL;
    }
    group_integrals(k);
    for (long long ks = k0; ks < k1; ks++) {
        double t = (double)ks * k->dt;
        apply_pending(k, ks);
        if (decide(k, ks, t + k->dt) < 0) return NULL;
        if (t >= k->next_tick) {
            tick(k);
            k->next_tick += k->tick_ns;
        }
        fabric_step(k);
        group_integrals(k);
        sample(k, ks);
    }
    return Py_BuildValue("(dddddddOd)", k->time, k->q, k->d, k->m, k->offered, k->delivered, k->dropped,
                         k->dirty ? Py_True : Py_False, k->next_tick);
}

/* push(step, flows, rates): a pending decision step's rate changes (the engine's deque at hand-over). */
static PyObject *Loop_push(Loop *k, PyObject *args) {
    long long step;
    PyObject *oi, *on;
    if (!PyArg_ParseTuple(args, "LOO", &step, &oi, &on)) return NULL;
    Py_buffer bi, bn;
    if (PyObject_GetBuffer(oi, &bi, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (PyObject_GetBuffer(on, &bn, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&bi);
        return NULL;
    }
    Py_ssize_t m = bi.len / 8;
    int ok = check_format(&bi, 'i') && check_format(&bn, 'd') && bn.len == bi.len;
    if (ok && k->phead < k->ptail && k->pstep[k->ptail - 1] >= step) ok = 0; /* steps must increase */
    const int64_t *idx = bi.buf;
    for (Py_ssize_t j = 0; ok && j < m; j++) ok = idx[j] >= 0 && idx[j] < k->n;
    if (!ok) PyErr_SetString(PyExc_ValueError, "Loop.push: int64 flows, float64 rates of one length, increasing steps");
    else if (reserve_pending(k, m) == 0) {
        for (Py_ssize_t j = 0; j < m; j++) {
            k->pidx[k->ptail] = idx[j];
            k->pnew[k->ptail] = ((const double *)bn.buf)[j];
            k->pstep[k->ptail++] = step;
        }
    }
    PyBuffer_Release(&bi);
    PyBuffer_Release(&bn);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef Loop_methods[] = {
    {"run", (PyCFunction)Loop_run, METH_VARARGS, "run(k0, k1, state) -> state: steps [k0, k1)"},
    {"push", (PyCFunction)Loop_push, METH_VARARGS, "push(step, flows, rates): pending rate changes"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LoopType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rlcc.simulator._swiftloop.Loop",
    .tp_basicsize = sizeof(Loop),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Swift's step loop on a single-port switch (rlcc.simulator.swiftloop).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Loop_init,
    .tp_dealloc = (destructor)Loop_dealloc,
    .tp_methods = Loop_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_swiftloop", "Swift's step loop of the single-switch fluid simulator in C.", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__swiftloop(void) {
    if (PyType_Ready(&LoopType) < 0) return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (!mod) return NULL;
    Py_INCREF(&LoopType);
    if (PyModule_AddObject(mod, "Loop", (PyObject *)&LoopType) < 0) {
        Py_DECREF(&LoopType);
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
