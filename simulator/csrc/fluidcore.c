/* The single-switch block loop of rlcc's fluid simulator in C (``rlcc.simulator.kernel``).
 *
 * One block of steps [s, e) of ``rlcc.simulator.blocks`` on a one-port ``network.Fabric``, split
 * around the controller call: ``prep`` finds the flows whose probes return in the block (sorted
 * by step, their rate at their decision step, RTT, first decision), ``observe`` shifts their
 * policy input windows, ``post`` applies the decisions (previous factor, pending rate changes at
 * their step), steps the fabric, settles the changed flows' byte counters and sends the probes.
 *
 * It is the Python block loop (blocks.py ``_decide_block`` / ``_block``) with the same float
 * operations in the same order (compile with -ffp-contract=off: no fused multiply-add), so a run
 * is bit-identical either way (tests/simulator/test_kernel.py). Sums follow numpy's ``bincount``
 * and ``cumsum`` (sequential, from 0.0); scatters with repeated indices keep the last write and
 * read the values from before the scatter, as numpy's fancy assignment does.
 *
 * Arrays are numpy buffers held for the kernel's life (the per-flow columns of ``FlowState``,
 * the fabric's per-group arrays, which block mode updates in place, and output scratch); pending
 * rate changes (decided, not yet applied) live here, in decision order (= application order).
 *
 * On a topology (``fabric.PathFabric``) ``prep`` (which can also write the policy inputs) is
 * followed by ``path_post``: the rest of blocks.py ``_block_paths`` and ``PathFabric.step``, the
 * fabric arrays passed per call and updated in place (tests/simulator/test_kernel_paths.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npcompat.h"

enum {
    /* per flow */
    A_RATE, A_TX, A_NEXT_RET, A_PROBE_SENT, A_PREV, A_NDEC, A_SLOT, A_ACC, A_LAST, A_CNP_SEEN, A_NACK_SEEN,
    A_WINDOW, A_GROUP,
    /* fabric (updated in place) and run outputs */
    A_GROUP_HOST, A_G0, A_GSCALE, A_REF, A_GRATE, A_PLOAD, A_QSAMPLES, A_SERIES_FLOWS, A_RTT_STATS,
    /* block outputs (rows 0..nd-1 or 0..B-1 valid) */
    A_DUE, A_RET, A_JD, A_RATED, A_RTTI, A_RTTF, A_PREVD, A_FIRST, A_NEW, A_FAC, A_CNP, A_NACK, A_Q, A_LOADS, A_SER,
    N_ARRAYS
};

/* element type of each array: 'd' float64, 'i' int64, 'f' float32, '?' bool (sizes: Kernel_init) */
static const char FORMATS[N_ARRAYS] = {
    'd', 'd', 'd', 'd', 'd', 'i', 'i', 'd', 'd', 'i', 'i', 'd', 'i',
    'i', 'd', 'd', 'd', 'd', 'd', 'f', 'i', 'd',
    'i', 'd', 'i', 'd', 'i', 'd', 'd', '?', 'd', 'd', 'i', 'i', 'd', 'd', 'd',
};

#define MAX_FEATURES 64 /* features of one step (the vocabulary has 6) */

typedef struct {
    PyObject_HEAD
    Py_buffer view[N_ARRAYS];
    int nviews;
    /* sizes and constants */
    Py_ssize_t n, nG, nH, W, F, bmax, nsf, qrows;
    double dt, C, base, pkt, cap, buffer, kmin, kmax, pmax;
    long long L, block_steps, q_every, series_every, window_step;
    int oldest_first;
    /* typed pointers into the views */
    double *rate, *tx, *next_ret, *probe_sent, *prev, *acc, *last, *window;
    int64_t *n_dec, *slot, *cnp_seen, *nack_seen, *group, *group_host, *series_flows;
    double *g0, *gscale, *ref, *grate, *pload, *rtt_stats;
    float *qsamples;
    int64_t *due, *jd, *rtti, *cnp, *nack;
    double *ret, *rated, *rttf, *prevd, *newr, *fac, *Q, *loads, *ser;
    unsigned char *first;
    /* internal scratch */
    double *R, *S, *Hs, *dG, *P, *stG0, *stSc, *stRef;
    Py_ssize_t *st_of;
    const double **g0_of, **sc_of; /* per block step: the group integral state in force */
    double *D;                      /* per block step: port integrals minus those at the rebase */
    double *edges, *qd, *cur_tx;    /* per block step: decision edge, queueing delay; per series flow */
    unsigned char *flags, *is_series;
    int64_t *cnt, *tmp_idx, *tmp_jd, *tmp_pos; /* prep's due flows in flow order, their step, their row */
    /* pending rate changes: flow, new rate, application step; [phead, pend) in key order */
    int64_t *pidx, *pkey;
    double *pnew;
    Py_ssize_t phead, pend, pcap;
    /* the block's rate changes (pending ones first, then the block's own), and their scratch */
    int64_t *cidx, *cj, *cg;
    double *cnew, *txold, *Gc, *nacc;
    Py_ssize_t ccap;
    /* step features computed here (set_features) */
    int native, fcode[MAX_FEATURES];
    double fscale[MAX_FEATURES], foffset[MAX_FEATURES], target, beta, base_rtt_f;
    double *fcols; /* their scaled values for the block's rows, one column (n) per feature */
    /* state of the current block between prep and post */
    long long s, e;
    Py_ssize_t nd, npend;
    int prepped;
    /* path_post's scratch (grown on demand) */
    double *pscratch, *pdM;
    size_t pscap, pdm_n;
    const void *pchecked[5]; /* the index arrays path_post has checked */
    int32_t *pgc, *pfq;       /* their row-major copies: each group's rate cells, each flow's queues */
} Kernel;

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) PyErr_NoMemory();
    return p;
}

static void Kernel_dealloc(Kernel *k) {
    for (int i = 0; i < k->nviews; i++) PyBuffer_Release(&k->view[i]);
    void *bufs[] = {k->R, k->S, k->Hs, k->dG, k->P, k->stG0, k->stSc, k->stRef, k->st_of, (void *)k->g0_of, (void *)k->sc_of, k->D, k->edges, k->qd, k->cur_tx, k->flags, k->is_series, k->cnt, k->tmp_idx, k->tmp_jd, k->tmp_pos,
                    k->pidx, k->pkey, k->pnew, k->cidx, k->cj, k->cg, k->cnew, k->txold, k->Gc, k->nacc, k->pscratch, k->pdM, k->pgc, k->pfq, k->fcols};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

/* Grow the change and pending lists to hold ``need`` entries. */
static int reserve_changes(Kernel *k, Py_ssize_t need) {
    if (need <= k->ccap) return 0;
    Py_ssize_t cap = need > 2 * k->ccap ? need : 2 * k->ccap;
    int64_t *a = realloc(k->cidx, cap * sizeof *a); if (!a) goto fail; k->cidx = a;
    a = realloc(k->cj, cap * sizeof *a); if (!a) goto fail; k->cj = a;
    a = realloc(k->cg, cap * sizeof *a); if (!a) goto fail; k->cg = a;
    double *d = realloc(k->cnew, cap * sizeof *d); if (!d) goto fail; k->cnew = d;
    d = realloc(k->txold, cap * sizeof *d); if (!d) goto fail; k->txold = d;
    d = realloc(k->Gc, 3 * cap * sizeof *d); if (!d) goto fail; k->Gc = d;
    d = realloc(k->nacc, 3 * cap * sizeof *d); if (!d) goto fail; k->nacc = d;
    k->ccap = cap;
    return 0;
fail:
    PyErr_NoMemory();
    return -1;
}

static int reserve_pending(Kernel *k, Py_ssize_t extra) {
    if (k->phead > 0) { /* compact: drop the applied prefix */
        Py_ssize_t m = k->pend - k->phead;
        memmove(k->pidx, k->pidx + k->phead, m * sizeof *k->pidx);
        memmove(k->pkey, k->pkey + k->phead, m * sizeof *k->pkey);
        memmove(k->pnew, k->pnew + k->phead, m * sizeof *k->pnew);
        k->pend = m;
        k->phead = 0;
    }
    Py_ssize_t need = k->pend + extra;
    if (need <= k->pcap) return 0;
    Py_ssize_t cap = need > 2 * k->pcap ? need : 2 * k->pcap;
    int64_t *a = realloc(k->pidx, cap * sizeof *a); if (!a) goto fail; k->pidx = a;
    a = realloc(k->pkey, cap * sizeof *a); if (!a) goto fail; k->pkey = a;
    double *d = realloc(k->pnew, cap * sizeof *d); if (!d) goto fail; k->pnew = d;
    k->pcap = cap;
    return 0;
fail:
    PyErr_NoMemory();
    return -1;
}

/* Kernel(arrays, sizes, constants): arrays a tuple in the enum's order; sizes (n, groups, hosts,
 * window width, features, max block steps, series flows, queue sample rows); constants (dt, bytes
 * per ns, base RTT, packet bytes, host cap, buffer, kmin, kmax, pmax, latency steps, block steps,
 * q_every, series_every, oldest_first). */
static int Kernel_init(Kernel *k, PyObject *args, PyObject *kwds) {
    PyObject *arrays;
    static char *kwlist[] = {"arrays", "sizes", "constants", NULL};
    if (k->nviews) {
        PyErr_SetString(PyExc_RuntimeError, "Kernel already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!(nnnnnnnn)(dddddddddLLLLLp)", kwlist, &PyTuple_Type, &arrays,
                                     &k->n, &k->nG, &k->nH, &k->W, &k->F, &k->bmax, &k->nsf, &k->qrows,
                                     &k->dt, &k->C, &k->base, &k->pkt, &k->cap, &k->buffer, &k->kmin, &k->kmax, &k->pmax,
                                     &k->L, &k->block_steps, &k->q_every, &k->series_every, &k->window_step,
                                     &k->oldest_first))
        return -1;
    if (PyTuple_GET_SIZE(arrays) != N_ARRAYS) {
        PyErr_Format(PyExc_ValueError, "Kernel needs %d arrays", N_ARRAYS);
        return -1;
    }
    Py_ssize_t n = k->n, nG = k->nG, bmax = k->bmax;
    if (n < 1 || nG < 1 || k->nH < 1 || k->W < 0 || k->F < 0 || bmax < 1 || k->nsf < 0 || k->q_every < 1 ||
        k->series_every < 1 || k->L < 0 || k->block_steps < 1) {
        PyErr_SetString(PyExc_ValueError, "invalid Kernel sizes");
        return -1;
    }
    const Py_ssize_t count[N_ARRAYS] = {
        n, n, n, n, n, n, n, 3 * n, 3 * n, n, n, k->W * n, n,
        nG, 3 * nG, nG, 3, nG, 1, k->qrows, k->nsf, 4,
        n, n, n, n, n, n, n, n, n, n, n, n, bmax + 1, bmax, bmax * k->nsf,
    };
    for (int i = 0; i < N_ARRAYS; i++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(arrays, i), &k->view[i], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
            return -1;
        k->nviews = i + 1;
        if (!check_format(&k->view[i], FORMATS[i]) || k->view[i].len != count[i] * k->view[i].itemsize) {
            PyErr_Format(PyExc_ValueError, "Kernel array %d: wrong dtype or size", i);
            return -1;
        }
    }
#define BUF(i) (k->view[i].buf)
    k->rate = BUF(A_RATE); k->tx = BUF(A_TX); k->next_ret = BUF(A_NEXT_RET); k->probe_sent = BUF(A_PROBE_SENT);
    k->prev = BUF(A_PREV); k->n_dec = BUF(A_NDEC); k->slot = BUF(A_SLOT); k->acc = BUF(A_ACC); k->last = BUF(A_LAST);
    k->cnp_seen = BUF(A_CNP_SEEN); k->nack_seen = BUF(A_NACK_SEEN); k->window = BUF(A_WINDOW); k->group = BUF(A_GROUP);
    k->group_host = BUF(A_GROUP_HOST); k->g0 = BUF(A_G0); k->gscale = BUF(A_GSCALE); k->ref = BUF(A_REF);
    k->grate = BUF(A_GRATE); k->pload = BUF(A_PLOAD); k->qsamples = BUF(A_QSAMPLES); k->series_flows = BUF(A_SERIES_FLOWS);
    k->rtt_stats = BUF(A_RTT_STATS);
    k->due = BUF(A_DUE); k->ret = BUF(A_RET); k->jd = BUF(A_JD); k->rated = BUF(A_RATED); k->rtti = BUF(A_RTTI);
    k->rttf = BUF(A_RTTF); k->prevd = BUF(A_PREVD); k->first = BUF(A_FIRST);
    k->newr = BUF(A_NEW); k->fac = BUF(A_FAC); k->cnp = BUF(A_CNP); k->nack = BUF(A_NACK);
    k->Q = BUF(A_Q); k->loads = BUF(A_LOADS); k->ser = BUF(A_SER);
#undef BUF
    for (Py_ssize_t i = 0; i < n; i++)
        if (k->group[i] < 0 || k->group[i] >= nG) {
            PyErr_SetString(PyExc_ValueError, "Kernel: flow group out of range");
            return -1;
        }
    for (Py_ssize_t g = 0; g < nG; g++)
        if (k->group_host[g] < 0 || k->group_host[g] >= k->nH) {
            PyErr_SetString(PyExc_ValueError, "Kernel: group host out of range");
            return -1;
        }
    for (Py_ssize_t t = 0; t < k->nsf; t++)
        if (k->series_flows[t] < 0 || k->series_flows[t] >= n) {
            PyErr_SetString(PyExc_ValueError, "Kernel: series flow out of range");
            return -1;
        }
    if (!(k->R = xmalloc(bmax * nG * sizeof(double))) || !(k->S = xmalloc(bmax * nG * sizeof(double))) ||
        !(k->Hs = xmalloc(bmax * k->nH * sizeof(double))) || !(k->dG = xmalloc(bmax * nG * sizeof(double))) ||
        !(k->P = xmalloc(3 * bmax * sizeof(double))) || !(k->stG0 = xmalloc((bmax + 1) * 3 * nG * sizeof(double))) ||
        !(k->stSc = xmalloc((bmax + 1) * nG * sizeof(double))) || !(k->stRef = xmalloc((bmax + 1) * 3 * sizeof(double))) ||
        !(k->st_of = xmalloc(bmax * sizeof(Py_ssize_t))) ||
        !(k->g0_of = xmalloc(bmax * sizeof(double *))) || !(k->sc_of = xmalloc(bmax * sizeof(double *))) ||
        !(k->D = xmalloc(3 * bmax * sizeof(double))) || !(k->edges = xmalloc(bmax * sizeof(double))) ||
        !(k->qd = xmalloc(bmax * sizeof(double))) || !(k->cur_tx = xmalloc((k->nsf + 1) * sizeof(double))) || !(k->flags = xmalloc(bmax)) ||
        !(k->is_series = calloc(n, 1)) || !(k->cnt = xmalloc((bmax + 1) * sizeof(int64_t))) ||
        !(k->tmp_idx = xmalloc(n * sizeof(int64_t))) || !(k->tmp_jd = xmalloc(n * sizeof(int64_t))) ||
        !(k->tmp_pos = xmalloc(n * sizeof(int64_t))))
        return -1;
    for (Py_ssize_t t = 0; t < k->nsf; t++) k->is_series[k->series_flows[t]] = 1;
    return reserve_changes(k, n) < 0 || reserve_pending(k, n) < 0 ? -1 : 0;
}

/* prep(s, e[, obs]) -> (nd, npend): the block's decisions in step order (due, ret, jd, rate at the
 * decision step, RTT as int64 and float64, previous factor, first) and how many pending rate
 * changes take effect in the block. */
static void observe_rows(Kernel *k, const double **cols, const int *bcast, float *obs);

static PyObject *Kernel_prep(Kernel *k, PyObject *args) {
    long long s, e;
    PyObject *oo = Py_None;
    if (!PyArg_ParseTuple(args, "LL|O", &s, &e, &oo)) return NULL;
    Py_buffer ob = {0};
    if (oo != Py_None) { /* the policy inputs too (observe with the step features computed here) */
        if (!k->native || k->F < 1 || k->W % k->F) {
            PyErr_SetString(PyExc_ValueError, "prep: no features to compute");
            return NULL;
        }
        if (PyObject_GetBuffer(oo, &ob, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) return NULL;
        if (!check_format(&ob, 'f') || ob.len != k->n * k->W * 4) {
            PyBuffer_Release(&ob);
            PyErr_SetString(PyExc_ValueError, "prep: obs must be float32 (flows, width) C-contiguous");
            return NULL;
        }
    }
    Py_ssize_t B = (Py_ssize_t)(e - s);
    if (B < 1 || B > k->bmax) {
        if (oo != Py_None) PyBuffer_Release(&ob);
        PyErr_SetString(PyExc_ValueError, "prep: block length out of range");
        return NULL;
    }
    const double dt = k->dt;
    double *edges = k->edges;
    for (Py_ssize_t j = 0; j < B; j++) edges[j] = (double)(s + j) * dt + dt; /* step k decides next_ret < k*dt + dt */
    const double last = edges[B - 1];
    /* due flows by decision step jd (number of earlier edges <= ret), a stable counting sort;
     * the per-flow columns are read in flow order (nearly sequential), written in step order */
    int64_t *restrict cnt = k->cnt;
    memset(cnt, 0, (B + 1) * sizeof *cnt);
    Py_ssize_t nd = 0;
    const Py_ssize_t n = k->n;
    const double *restrict nr = k->next_ret;
    int64_t *restrict tmp_jd = k->tmp_jd, *restrict tmp_idx = k->tmp_idx; /* in flow order */
    for (Py_ssize_t i = 0; i < n; i++) { /* branch-free compaction: few flows are due */
        tmp_idx[nd] = i;
        nd += nr[i] < last;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
        double r = nr[tmp_idx[i]];
        int64_t j = 0;
        for (Py_ssize_t t = 0; t < B - 1; t++) j += r >= edges[t]; /* edges ascend: the first t with r < edge */
        tmp_jd[i] = j;
        cnt[j + 1]++;
    }
    for (Py_ssize_t j = 0; j < B; j++) cnt[j + 1] += cnt[j];
    int64_t *restrict due = k->due, *restrict jd = k->jd, *restrict rtti = k->rtti;
    double *restrict ret = k->ret, *restrict rated = k->rated, *restrict rttf = k->rttf, *restrict prevd = k->prevd;
    unsigned char *restrict first = k->first;
    const double *restrict rate = k->rate, *restrict sent = k->probe_sent, *restrict prev = k->prev;
    const int64_t *restrict n_dec = k->n_dec;
    for (Py_ssize_t i = 0; i < nd; i++) {
        int64_t f = tmp_idx[i], p = cnt[tmp_jd[i]]++;
        double r = nr[f];
        k->tmp_pos[i] = p;
        due[p] = f;
        jd[p] = tmp_jd[i];
        ret[p] = r;
        rated[p] = rate[f];
        rtti[p] = (int64_t)rint_even(r - sent[f]);
        rttf[p] = (double)rtti[p];
        prevd[p] = prev[f];
        first[p] = n_dec[f] == 0;
    }
    /* pending changes taking effect in the block; those decided less than a block before e may
     * change a due flow's rate before its decision step */
    Py_ssize_t np_ = 0;
    while (k->phead + np_ < k->pend && k->pkey[k->phead + np_] < e) np_++;
    if (np_ && nd) {
        int64_t *pos = k->slot;
        for (Py_ssize_t i = 0; i < nd; i++) pos[k->due[i]] = i;
        for (Py_ssize_t q = k->phead; q < k->phead + np_; q++) {
            long long key = k->pkey[q];
            if (!(key - k->L + k->block_steps < e)) continue;
            int64_t p = pos[k->pidx[q]];
            if (p >= 0 && key <= s + k->jd[p]) k->rated[p] = k->pnew[q];
        }
        for (Py_ssize_t i = 0; i < nd; i++) pos[k->due[i]] = -1;
    }
    k->s = s;
    k->e = e;
    k->nd = nd;
    k->npend = np_;
    k->prepped = 1;
    if (oo != Py_None) {
        observe_rows(k, NULL, NULL, ob.buf);
        PyBuffer_Release(&ob);
    }
    return Py_BuildValue("nn", nd, np_);
}

/* Fetch ``F`` step feature columns (float64, nd values or one) from a sequence. */
static int get_steps(Kernel *k, PyObject *seq, Py_buffer *views, const double **cols, int *bcast) {
    Py_ssize_t F = k->F;
    if (!PySequence_Check(seq) || PySequence_Size(seq) != F) {
        PyErr_Format(PyExc_ValueError, "observe: expected %zd feature columns", F);
        return -1;
    }
    for (Py_ssize_t c = 0; c < F; c++) {
        PyObject *item = PySequence_GetItem(seq, c);
        if (!item) return -1;
        int rc = PyObject_GetBuffer(item, &views[c], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT);
        Py_DECREF(item);
        if (rc < 0) {
            for (Py_ssize_t i = 0; i < c; i++) PyBuffer_Release(&views[i]);
            return -1;
        }
        Py_ssize_t m = views[c].len / 8;
        if (!check_format(&views[c], 'd') || (m != k->nd && m != 1)) {
            for (Py_ssize_t i = 0; i <= c; i++) PyBuffer_Release(&views[i]);
            PyErr_SetString(PyExc_ValueError, "observe: feature columns must be float64 of the batch's length");
            return -1;
        }
        cols[c] = views[c].buf;
        bcast[c] = m == 1 && k->nd != 1;
    }
    return 0;
}

/* The spec's features computed here (``set_features``): the count-free float formulas of the
 * vocabulary (core/features.py ``float_value``; tests/simulator/test_kernel.py compares them). */
enum { FEAT_PREV_ACTION, FEAT_RTT_INFLATION, FEAT_RATE, FEAT_DELTA, N_FEATS };

static inline double max0(double x) { /* np.maximum(x, 0.0): NaN kept */
    return (x >= 0.0 || x != x) ? x : 0.0;
}

/* set_features(codes, scales, offsets, target, beta, base_rtt_ns): compute the step features in
 * ``observe`` (value * scale + offset; value + offset where scale is 1, as blocks.py does). */
static PyObject *Kernel_set_features(Kernel *k, PyObject *args) {
    PyObject *codes, *scales, *offsets;
    double target, beta, base;
    if (!PyArg_ParseTuple(args, "O!O!O!ddd", &PyTuple_Type, &codes, &PyTuple_Type, &scales, &PyTuple_Type, &offsets,
                          &target, &beta, &base))
        return NULL;
    Py_ssize_t F = k->F;
    if (F < 1 || F > MAX_FEATURES || PyTuple_GET_SIZE(codes) != F || PyTuple_GET_SIZE(scales) != F ||
        PyTuple_GET_SIZE(offsets) != F) {
        PyErr_SetString(PyExc_ValueError, "set_features: one code, scale and offset per feature");
        return NULL;
    }
    for (Py_ssize_t a = 0; a < F; a++) {
        long code = PyLong_AsLong(PyTuple_GET_ITEM(codes, a));
        double sc = PyFloat_AsDouble(PyTuple_GET_ITEM(scales, a)), off = PyFloat_AsDouble(PyTuple_GET_ITEM(offsets, a));
        if (PyErr_Occurred()) return NULL;
        if (code < 0 || code >= N_FEATS) {
            PyErr_SetString(PyExc_ValueError, "set_features: unknown feature code");
            return NULL;
        }
        k->fcode[a] = (int)code;
        k->fscale[a] = sc;
        k->foffset[a] = off;
    }
    free(k->fcols);
    if (!(k->fcols = xmalloc(F * k->n * sizeof(double)))) return NULL;
    k->target = target;
    k->beta = beta;
    k->base_rtt_f = base;
    k->native = 1;
    Py_RETURN_NONE;
}

/* Feature ``a``'s scaled values of the block's rows into ``out``: value * scale + offset (value +
 * offset where scale is 1, as blocks.py does); one formula per loop, so the element loops vectorize. */
static void feature_column(const Kernel *k, int a, double *restrict out) {
    const Py_ssize_t nd = k->nd;
    const double sc = k->fscale[a], off = k->foffset[a], base = k->base_rtt_f, beta = k->beta, target = k->target;
    const double *restrict prevd = k->prevd, *restrict rttf = k->rttf, *restrict rated = k->rated;
    switch (k->fcode[a]) {
    case FEAT_PREV_ACTION:
        for (Py_ssize_t i = 0; i < nd; i++) out[i] = prevd[i];
        break;
    case FEAT_RTT_INFLATION:
        for (Py_ssize_t i = 0; i < nd; i++) out[i] = rttf[i] / base;
        break;
    case FEAT_RATE:
        for (Py_ssize_t i = 0; i < nd; i++) out[i] = rated[i];
        break;
    default:
        for (Py_ssize_t i = 0; i < nd; i++) out[i] = target - max0(rttf[i] / base - beta) * sqrt(max0(rated[i]));
    }
    if (sc != 1.0)
        for (Py_ssize_t i = 0; i < nd; i++) out[i] = out[i] * sc;
    for (Py_ssize_t i = 0; i < nd; i++) out[i] = out[i] + off;
}

/* Shift the due flows' windows by their step features (the columns ``cols``, a column broadcast
 * where ``bcast``; NULL: computed here, ``set_features``) and write the policy inputs (nd, W)
 * into ``obs``. */
static void observe_rows(Kernel *k, const double **cols, const int *bcast, float *obs) {
    const Py_ssize_t F = k->F, W = k->W, nd = k->nd, n = k->n;
    double *restrict win = k->window;
    const double *native[MAX_FEATURES];
    const int none[MAX_FEATURES] = {0};
    if (!cols) {
        for (Py_ssize_t a = 0; a < F; a++) {
            feature_column(k, (int)a, k->fcols + a * n);
            native[a] = k->fcols + a * n;
        }
        cols = native;
        bcast = none;
    }
    for (Py_ssize_t q = 0; q < nd; q++) { /* in flow order (prep's): the window columns' lines in sequence */
        const int64_t f = k->tmp_idx[q], i = k->tmp_pos[q];
        double st[MAX_FEATURES];
        for (Py_ssize_t a = 0; a < F; a++) st[a] = cols[a][bcast[a] ? 0 : i];
        float *row = obs + i * W;
        if (k->first[i] && W > F) { /* a first decision fills the whole window with its step */
            for (Py_ssize_t c = 0; c < W; c++) {
                double v = st[c % F];
                win[c * n + f] = v;
                row[c] = (float)v;
            }
            continue;
        }
        if (k->oldest_first) { /* slot c <- c + F, the step appended */
            for (Py_ssize_t c = 0; c < W - F; c++) {
                double v = win[(c + F) * n + f];
                win[c * n + f] = v;
                row[c] = (float)v;
            }
            for (Py_ssize_t a = 0; a < F; a++) {
                win[(W - F + a) * n + f] = st[a];
                row[W - F + a] = (float)st[a];
            }
        } else { /* newest first: slot c <- c - F (from the highest slot down), the step in front */
            for (Py_ssize_t c = W - 1; c >= F; c--) {
                double v = win[(c - F) * n + f];
                win[c * n + f] = v;
                row[c] = (float)v;
            }
            for (Py_ssize_t a = 0; a < F; a++) {
                win[a * n + f] = st[a];
                row[a] = (float)st[a];
            }
        }
    }
}

/* observe(steps, obs): shift the due flows' windows by the step's scaled features (F columns,
 * or None: computed here, ``set_features``) and write the policy inputs (nd, W) float32 into
 * ``obs`` (blocks.py ``_observe_window``). */
static PyObject *Kernel_observe(Kernel *k, PyObject *args) {
    PyObject *seq, *oo;
    Py_buffer ob;
    if (!k->prepped) {
        PyErr_SetString(PyExc_RuntimeError, "observe before prep");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO", &seq, &oo)) return NULL;
    const Py_ssize_t F = k->F, W = k->W, nd = k->nd;
    const int native = seq == Py_None;
    if (F < 1 || F > MAX_FEATURES || W % F || (native && !k->native)) {
        PyErr_SetString(PyExc_ValueError, "observe: no features to compute");
        return NULL;
    }
    if (PyObject_GetBuffer(oo, &ob, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) return NULL;
    if (!check_format(&ob, 'f') || ob.len != nd * W * 4) {
        PyBuffer_Release(&ob);
        PyErr_SetString(PyExc_ValueError, "observe: obs must be float32 (nd, width) C-contiguous");
        return NULL;
    }
    Py_buffer views[MAX_FEATURES];
    const double *cols[MAX_FEATURES];
    int bcast[MAX_FEATURES] = {0};
    if (!native && get_steps(k, seq, views, cols, bcast) < 0) {
        PyBuffer_Release(&ob);
        return NULL;
    }
    observe_rows(k, native ? NULL : cols, bcast, ob.buf);
    if (!native)
        for (Py_ssize_t c = 0; c < F; c++) PyBuffer_Release(&views[c]);
    PyBuffer_Release(&ob);
    Py_RETURN_NONE;
}

/* Group g's integral c ([scale, scale x drop, scale x mark] fraction over time) at the start of
 * block step j: g0 + scale x (port integral - its value at the rebase), with the state in force
 * at step j (``integral_table`` sets it up after the step loop). */
static inline double integral(const Kernel *k, Py_ssize_t j, int64_t g, int c) {
    return k->g0_of[j][g * 3 + c] + k->sc_of[j][g] * k->D[j * 3 + c];
}

static void integral_table(Kernel *k, Py_ssize_t B) {
    for (Py_ssize_t j = 0; j < B; j++) {
        Py_ssize_t st = k->st_of[j];
        const double *ref = st ? k->stRef + st * 3 : k->ref;
        k->g0_of[j] = st ? k->stG0 + st * 3 * k->nG : k->g0;
        k->sc_of[j] = st ? k->stSc + st * k->nG : k->gscale;
        for (int c = 0; c < 3; c++) k->D[j * 3 + c] = k->P[j * 3 + c] - ref[c];
    }
}

static inline int64_t floor_i64(double x) {
    double f = floor(x);
    return (f >= -9223372036854775808.0 && f < 9223372036854775808.0) ? (int64_t)f : INT64_MIN;
}

/* The controller's ``rates`` clipped to [min_rate, 1] into ``newr`` (numpy's clip: max then min,
 * NaN kept) and ``factors`` (None: new rate / rate) into ``fac`` (blocks.py ``_decide_block``). */
static int take_rates(Kernel *k, PyObject *no, PyObject *fo, double min_rate) {
    Py_buffer nb, fb = {0};
    const Py_ssize_t nd = k->nd;
    if (PyObject_GetBuffer(no, &nb, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (fo != Py_None && PyObject_GetBuffer(fo, &fb, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&nb);
        return -1;
    }
    if (!check_format(&nb, 'd') || nb.len != nd * 8 || (fo != Py_None && (!check_format(&fb, 'd') || fb.len != nd * 8))) {
        PyBuffer_Release(&nb);
        if (fo != Py_None) PyBuffer_Release(&fb);
        PyErr_SetString(PyExc_ValueError, "post: rates and factors must be float64 of the batch's length");
        return -1;
    }
    double *newr = k->newr, *fac = k->fac;
    for (Py_ssize_t i = 0; i < nd; i++) {
        double r = ((const double *)nb.buf)[i];
        r = r < min_rate ? min_rate : r;
        newr[i] = r > 1.0 ? 1.0 : r;
    }
    if (fo != Py_None) memcpy(fac, fb.buf, nd * sizeof(double));
    else for (Py_ssize_t i = 0; i < nd; i++) fac[i] = newr[i] / k->rated[i];
    PyBuffer_Release(&nb);
    if (fo != Py_None) PyBuffer_Release(&fb);
    return 0;
}

/* RTT sums (exact integer ns, then one float add per block) */
static void add_rtt_sums(Kernel *k) {
    int64_t rsum = 0;
    const Py_ssize_t nd = k->nd;
    for (Py_ssize_t i = 0; i < nd; i++) rsum += k->rtti[i];
    if (nd) {
        k->rtt_stats[0] += (double)rsum;
        k->rtt_stats[1] += (double)nd;
        if (k->s >= k->window_step) {
            k->rtt_stats[2] += (double)rsum;
            k->rtt_stats[3] += (double)nd;
        }
    }
}

/* The block's rate changes into cidx / cnew / cj (step in the block): the pending ones taking
 * effect in it, then its own (a prefix of the sorted decisions); the rest of its decisions join
 * the pending list. Returns the number of changes, -1 on error. */
static Py_ssize_t gather_changes(Kernel *k) {
    const long long s = k->s, e = k->e, L = k->L;
    const Py_ssize_t nd = k->nd;
    Py_ssize_t nin = 0;
    while (nin < nd && s + k->jd[nin] + L < e) nin++;
    const Py_ssize_t nchg = k->npend + nin;
    if (reserve_changes(k, nchg) < 0) return -1;
    for (Py_ssize_t i = 0; i < k->npend; i++) {
        Py_ssize_t q_ = k->phead + i;
        k->cidx[i] = k->pidx[q_];
        k->cnew[i] = k->pnew[q_];
        k->cj[i] = k->pkey[q_] - s;
    }
    for (Py_ssize_t i = 0; i < nin; i++) {
        k->cidx[k->npend + i] = k->due[i];
        k->cnew[k->npend + i] = k->newr[i];
        k->cj[k->npend + i] = k->jd[i] + L;
    }
    k->phead += k->npend;
    if (reserve_pending(k, nd - nin) < 0) return -1;
    for (Py_ssize_t i = nin; i < nd; i++) {
        k->pidx[k->pend] = k->due[i];
        k->pnew[k->pend] = k->newr[i];
        k->pkey[k->pend] = s + k->jd[i] + L;
        k->pend++;
    }
    return nchg;
}

/* post(rates, factors, fabric, dirty, unscaled, counted) -> (fabric, unscaled, load1 or None):
 * apply the block's decisions (the controller's ``rates``, clipped to [MIN_RATE, 1] here, and
 * ``factors``, None: new rate / rate), step the fabric, settle the changed flows, send the
 * probes, add the RTT sums. ``fabric``: (q, drop integral, mark integral, time, offered, dropped,
 * delivered). Fills the clipped rates and factors, Q (queue at each step's start, then at the
 * end), loads, the series rates of the block's series steps and, when ``counted``, the
 * decisions' CNP/NACK counts. */
static PyObject *Kernel_post(Kernel *k, PyObject *args) {
    PyObject *no, *fo;
    double q, d, m, time, offered, dropped, delivered, min_rate;
    int dirty, unscaled, counted;
    if (!k->prepped) {
        PyErr_SetString(PyExc_RuntimeError, "post before prep");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO(ddddddd)dppp", &no, &fo, &q, &d, &m, &time, &offered, &dropped, &delivered,
                          &min_rate, &dirty, &unscaled, &counted))
        return NULL;
    const Py_ssize_t nd = k->nd, n = k->n, nG = k->nG, nH = k->nH;
    if (take_rates(k, no, fo, min_rate) < 0) return NULL;
    double *fac = k->fac;
    const long long s = k->s, e = k->e;
    const Py_ssize_t B = (Py_ssize_t)(e - s);
    const double dt = k->dt, C = k->C;
    k->prepped = 0;
    add_rtt_sums(k);
    const Py_ssize_t nchg = gather_changes(k);
    if (nchg < 0) return NULL;
    /* changed flows: old sending rate, group, position (slot: the last one of a flow, as numpy's
     * fancy assignment keeps; a flow changing twice in a block takes the two-pass settle) */
    int dups = 0;
    for (Py_ssize_t i = 0; i < nchg; i++) {
        int64_t f = k->cidx[i];
        k->txold[i] = k->tx[f];
        k->cg[i] = k->group[f];
        dups |= k->slot[f] >= 0;
        k->slot[f] = i;
    }

    /* group rates, host scales and the port load of every step */
    const int have_R = nchg > 0 || dirty;
    int scaled = 0;
    double *R = k->R, *S = k->S, *loads = k->loads;
    unsigned char *flags = k->flags;
    memset(flags, 0, B);
    if (have_R) {
        if (nchg) {
            memset(k->dG, 0, B * nG * sizeof(double));
            for (Py_ssize_t i = 0; i < nchg; i++) k->dG[k->cj[i] * nG + k->cg[i]] += k->cnew[i] - k->txold[i];
            for (Py_ssize_t g = 0; g < nG; g++) R[g] = k->grate[g] + k->dG[g];
            for (Py_ssize_t j = 1; j < B; j++)
                for (Py_ssize_t g = 0; g < nG; g++) R[j * nG + g] = R[(j - 1) * nG + g] + k->dG[j * nG + g];
        } else {
            for (Py_ssize_t j = 0; j < B; j++) memcpy(R + j * nG, k->grate, nG * sizeof(double));
        }
        double hmax = -INFINITY;
        int hnan = 0;
        memset(k->Hs, 0, B * nH * sizeof(double));
        for (Py_ssize_t j = 0; j < B; j++)
            for (Py_ssize_t g = 0; g < nG; g++) k->Hs[j * nH + k->group_host[g]] += R[j * nG + g];
        for (Py_ssize_t i = 0; i < B * nH; i++) {
            if (k->Hs[i] != k->Hs[i]) hnan = 1;
            else if (k->Hs[i] > hmax) hmax = k->Hs[i];
        }
        if (unscaled && !hnan && hmax <= k->cap) { /* no NIC oversubscribed: scale 1 */
            for (Py_ssize_t j = 0; j < B; j++) {
                double acc = 0.0;
                for (Py_ssize_t g = 0; g < nG; g++) acc += R[j * nG + g];
                loads[j] = acc;
            }
        } else {
            scaled = 1;
            for (Py_ssize_t j = 0; j < B; j++) {
                double acc = 0.0;
                const double *prevS = j ? S + (j - 1) * nG : k->gscale;
                for (Py_ssize_t g = 0; g < nG; g++) {
                    double h = k->Hs[j * nH + k->group_host[g]];
                    double sg = h > k->cap ? k->cap / (h > 1e-300 ? h : 1e-300) : 1.0;
                    S[j * nG + g] = sg;
                    acc += sg * R[j * nG + g];
                    if (sg != prevS[g]) flags[j] = 1;
                }
                loads[j] = acc;
            }
        }
    } else {
        for (Py_ssize_t j = 0; j < B; j++) loads[j] = k->pload[0];
    }

    /* step the fabric (network.Fabric._step_single), rebasing the group integrals where a
     * host scale changes */
    const double kmin = k->kmin, kmax = k->kmax, pmax = k->pmax, buf = k->buffer, Cdt = C * dt;
    Py_ssize_t cur = 0, any_flag = 0;
    for (Py_ssize_t j = 0; j < B; j++) {
        k->st_of[j] = cur;
        k->P[j * 3] = time;
        k->P[j * 3 + 1] = d;
        k->P[j * 3 + 2] = m;
        k->Q[j] = q;
        if (flags[j]) {
            const double *g0 = cur ? k->stG0 + cur * 3 * nG : k->g0;
            const double *sc = cur ? k->stSc + cur * nG : k->gscale;
            const double *ref = cur ? k->stRef + cur * 3 : k->ref;
            double *ng0 = k->stG0 + (cur + 1) * 3 * nG;
            for (Py_ssize_t g = 0; g < nG; g++)
                for (int c = 0; c < 3; c++) ng0[g * 3 + c] = g0[g * 3 + c] + sc[g] * (k->P[j * 3 + c] - ref[c]);
            memcpy(k->stSc + (cur + 1) * nG, S + j * nG, nG * sizeof(double));
            memcpy(k->stRef + (cur + 1) * 3, k->P + j * 3, 3 * sizeof(double));
            cur++;
            any_flag = 1;
        }
        double mark;
        if (q <= kmin) mark = 0.0;
        else if (q >= kmax) mark = 1.0;
        else mark = pmax * (q - kmin) / (kmax - kmin);
        double inflow = loads[j] * C * dt;
        double q_new = q + inflow - Cdt;
        if (q_new < 0.0) q_new = 0.0;
        offered += inflow;
        if (q_new > buf) {
            double excess = q_new - buf;
            q_new = buf;
            double frac = excess / inflow;
            d += frac * dt;
            dropped += excess;
            mark *= 1.0 - frac;
            delivered += q + inflow - q_new - excess;
        } else {
            delivered += q + inflow - q_new;
        }
        if (mark != 0.0) m += mark * dt;
        q = q_new;
        time += dt;
    }
    k->Q[B] = q;
    if (k->q_every == 1) {
        for (Py_ssize_t j = 0; j < B; j++) k->qsamples[s + j] = (float)k->Q[j + 1];
    } else {
        for (Py_ssize_t j = 0; j < B; j++)
            if ((s + j) % k->q_every == 0) k->qsamples[(s + j) / k->q_every] = (float)k->Q[j + 1];
    }

    /* the integrals of every rate change at its step */
    integral_table(k, B);
    const int counting = counted && nd;
    if (counting || dups)
        for (Py_ssize_t i = 0; i < nchg; i++)
            for (int c = 0; c < 3; c++) k->Gc[i * 3 + c] = integral(k, k->cj[i], k->cg[i], c);

    /* series: the sending rates of the series flows after the changes up to each series step */
    if (k->nsf) {
        double *cur_tx = k->cur_tx;
        for (Py_ssize_t t = 0; t < k->nsf; t++) cur_tx[t] = k->tx[k->series_flows[t]];
        Py_ssize_t flushed = 0;
        for (Py_ssize_t j = 0; j < B; j++) {
            if ((s + j) % k->series_every) continue;
            for (; flushed < nchg && k->cj[flushed] <= j; flushed++) {
                int64_t f = k->cidx[flushed];
                if (!k->is_series[f]) continue;
                for (Py_ssize_t t = 0; t < k->nsf; t++)
                    if (k->series_flows[t] == f) cur_tx[t] = k->cnew[flushed];
            }
            memcpy(k->ser + j * k->nsf, cur_tx, k->nsf * sizeof(double));
        }
    }

    /* CNP/NACK counts of the decisions (someone records them), before the changes settle */
    if (counting) {
        const int64_t *cpos = k->slot;
        for (Py_ssize_t i = 0; i < nd; i++) {
            int64_t f = k->due[i], g = k->group[f];
            double accd[3], lastd[3], Gd[3];
            double txd = k->tx[f];
            for (int c = 0; c < 3; c++) {
                accd[c] = k->acc[c * n + f];
                lastd[c] = k->last[c * n + f];
                Gd[c] = integral(k, k->jd[i], g, c);
            }
            int64_t ce = cpos[f];
            if (ce >= 0 && k->cj[ce] <= k->jd[i]) { /* its rate changed at or before its decision step */
                double w = k->txold[ce] * C;
                for (int c = 0; c < 3; c++) {
                    accd[c] = accd[c] + w * (k->Gc[ce * 3 + c] - lastd[c]);
                    lastd[c] = k->Gc[ce * 3 + c];
                }
                txd = k->cnew[ce];
            }
            double w = txd * C;
            double drop = accd[1] + w * (Gd[1] - lastd[1]);
            double mk = accd[2] + w * (Gd[2] - lastd[2]);
            int64_t nk = floor_i64(drop / k->pkt) - k->nack_seen[f];
            int64_t cn = floor_i64(mk / k->pkt) - k->cnp_seen[f];
            k->cnp_seen[f] += cn;
            k->nack_seen[f] += nk;
            k->cnp[i] = cn;
            k->nack[i] = nk;
        }
    }

    /* settle the changed flows at their change step, then their new rates (flows.settle_cols:
     * every value from before the scatter, the last write of a flow kept) */
    double *restrict acc = k->acc, *restrict lst = k->last;
    if (dups) {
        for (Py_ssize_t i = 0; i < nchg; i++) {
            int64_t f = k->cidx[i];
            double w = k->txold[i] * C;
            for (int c = 0; c < 3; c++) k->nacc[i * 3 + c] = acc[c * n + f] + w * (k->Gc[i * 3 + c] - lst[c * n + f]);
        }
        for (Py_ssize_t i = 0; i < nchg; i++) {
            int64_t f = k->cidx[i];
            for (int c = 0; c < 3; c++) {
                acc[c * n + f] = k->nacc[i * 3 + c];
                lst[c * n + f] = k->Gc[i * 3 + c];
            }
        }
        for (Py_ssize_t i = 0; i < nchg; i++) {
            int64_t f = k->cidx[i];
            k->tx[f] = k->cnew[i];
            k->rate[f] = k->cnew[i];
            k->slot[f] = -1;
        }
    } else if (nchg) { /* each flow once: in flow order (the columns' cache lines in sequence) */
        int64_t *restrict slot = k->slot;
        for (Py_ssize_t f = 0; f < n; f++) {
            int64_t i = slot[f];
            if (i < 0) continue;
            slot[f] = -1;
            double w = k->txold[i] * C, G[3];
            if (counting) {
                G[0] = k->Gc[i * 3], G[1] = k->Gc[i * 3 + 1], G[2] = k->Gc[i * 3 + 2];
            } else {
                int64_t j = k->cj[i], g = k->cg[i];
                const double *g0 = k->g0_of[j] + 3 * g, sc = k->sc_of[j][g], *D = k->D + 3 * j;
                G[0] = g0[0] + sc * D[0], G[1] = g0[1] + sc * D[1], G[2] = g0[2] + sc * D[2]; /* integral() */
            }
            for (int c = 0; c < 3; c++) {
                acc[c * n + f] = acc[c * n + f] + w * (G[c] - lst[c * n + f]);
                lst[c * n + f] = G[c];
            }
            k->tx[f] = k->cnew[i];
            k->rate[f] = k->cnew[i];
        }
    }
    /* the decisions: previous factor and count (record_decision), then the next probe, back after
     * the base RTT plus the queue at the decision step */
    double *qd = k->qd; /* the queueing delay at each step's start */
    for (Py_ssize_t j = 0; j < B; j++) qd[j] = k->Q[j] / C;
    for (Py_ssize_t q_ = 0; q_ < nd; q_++) { /* in flow order (prep's), row i of the sorted batch */
        int64_t f = k->tmp_idx[q_], i = k->tmp_pos[q_];
        k->prev[f] = fac[i];
        k->n_dec[f] += 1;
        k->probe_sent[f] = k->ret[i];
        k->next_ret[f] = k->ret[i] + k->base + qd[k->jd[i]];
    }

    /* the fabric's per-group state at the block end (in place) */
    if (cur) {
        memcpy(k->g0, k->stG0 + cur * 3 * nG, 3 * nG * sizeof(double));
        memcpy(k->gscale, k->stSc + cur * nG, nG * sizeof(double));
        memcpy(k->ref, k->stRef + cur * 3, 3 * sizeof(double));
    }
    if (any_flag) {
        unscaled = 1;
        for (Py_ssize_t g = 0; g < nG; g++)
            if (!(k->gscale[g] == 1.0)) unscaled = 0;
    }
    (void)scaled;
    PyObject *load1 = Py_None;
    Py_INCREF(Py_None);
    if (have_R) {
        memcpy(k->grate, R + (B - 1) * nG, nG * sizeof(double));
        k->pload[0] = loads[B - 1];
        Py_DECREF(Py_None);
        load1 = PyFloat_FromDouble(loads[B - 1]);
        if (!load1) return NULL;
    }
    return Py_BuildValue("(ddddddd)NN", q, d, m, time, offered, dropped, delivered, PyBool_FromLong(unscaled), load1);
}

/* ---- a topology block after the controller call (blocks.py ``_block_paths``, fabric.py) ----------- */

/* numpy's np.maximum / np.minimum of two floats (NaN propagates; a tie keeps the first) */
static inline double np_max(double a, double b) { return (a >= b || a != a) ? a : b; }
static inline double np_min(double a, double b) { return (a <= b || a != a) ? a : b; }

/* numpy's sum of a contiguous float64 array (``ndarray.sum``): pairwise, 8 partial sums in
 * blocks of at most 128, halves split at a multiple of 8 (tests/simulator/test_kernel_paths.py
 * checks it against numpy on random data). */
static double np_sum(const double *a, Py_ssize_t n) {
    if (n < 8) {
        double r = 0.0;
        for (Py_ssize_t i = 0; i < n; i++) r += a[i];
        return r;
    }
    if (n <= 128) {
        double r[8];
        Py_ssize_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return np_sum(a, n2) + np_sum(a + n2, n - n2);
}

/* np.max: NaN if any */
static double np_maxv(const double *a, Py_ssize_t n) {
    double m = a[0];
    for (Py_ssize_t i = 1; i < n; i++) {
        if (a[i] != a[i]) return a[i];
        if (a[i] > m) m = a[i];
    }
    return m;
}

static PyObject *np_sum_py(PyObject *Py_UNUSED(mod), PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (!check_format(&b, 'd')) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "np_sum: float64 expected");
        return NULL;
    }
    double r = np_sum(b.buf, b.len / 8);
    PyBuffer_Release(&b);
    return PyFloat_FromDouble(r);
}

enum { F_HQR, F_HSUM, F_HSCALE, F_HBASE, F_HCAP, F_LOAD, F_QUEUE, F_ARRIVED, F_LOST, F_CAP, F_KMIN, F_KMAX, F_PMAX,
       F_SWITCH, F_BUFFERS, F_QPTR, F_QGROUPS, F_GDROP, F_GMARK, F_GCELLS, F_FBASE, F_FQ, F_QSAMPLES, F_SENDR, F_QSUMS,
       N_F };
static const char PF_FORMATS[N_F] = {'d', 'd', 'd', 'd', 'd', 'd', 'd', 'd', 'd', 'd', 'd', 'd', 'd',
                                     'i', 'd', 'i', 'i', 'd', 'd', 'i', 'd', 'i', 'd', 'd', 'd'};
static const unsigned char PF_WRITE[N_F] = {1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1};

/* out[q] = sum over rows h of scale[h] x m[h, q], added from 0.0 in row order (fabric.host_sums,
 * np.bincount's order); restrict: the element loop vectorizes, each element's sum still in order
 * (not inlined: inside path_post GCC drops the restrict and leaves the loop scalar) */
__attribute__((noinline)) static void add_scaled_rows(double *restrict out, const double *restrict m, const double *restrict scale,
                            Py_ssize_t rows, Py_ssize_t cols) {
    for (Py_ssize_t q = 0; q < cols; q++) out[q] = 0.0;
    for (Py_ssize_t h = 0; h < rows; h++) {
        const double sc = scale[h], *restrict row = m + h * cols;
        for (Py_ssize_t q = 0; q < cols; q++) out[q] += sc * row[q];
    }
}

#define MAX_CHAIN 64 /* changes of one flow in one block (at most one per step: block steps <= base RTT) */

/* path_post(rates, factors, fabric_arrays, (time, host_ref, send_rate, offered, dropped, qsum, qmax),
 * (kmin_min, buffer_min, alpha or -1, min_rate), dirty) -> the scalars after the block.
 * The whole topology block after the controller call (blocks.py ``_block_paths``), when nothing
 * is counted (no trace, no recording controller, no go-back-N) and the fabric is lossy and
 * untracked: the decisions (record_decision, RTT sums, pending changes); per step the rate
 * changes' per-(host, queue) sums added to the rate matrix and the fabric step
 * (``PathFabric.step``, ``_refresh``, ``_accrue``) and queue samples (``_Run.sample``); then,
 * in flow order, the changed flows settled with the integrals of their change's step and the
 * probes sent with the queueing delays of their decision's step; numpy's element operations in
 * the same order. Writes each step's send rate and queue sum (the series) and, for series
 * steps, the series flows' sending rates into ``ser``.
 * fabric_arrays: host_queue_rate, host_sum, host_scale, host_base, host_cap, link_load, queue,
 * arrived, lost, cap, kmin, kmax, pmax, switch, buffers, queue_ptr, queue_groups, group_drop,
 * group_mark, group_cells (hops, groups), flow_base, flow_queues (hops, flows), q_samples,
 * send_rates (B), queue_sums (B); updated in place. */
static PyObject *Kernel_path_post(Kernel *k, PyObject *args) {
    PyObject *no, *fo, *arrays;
    double time, href, send_rate, offered, dropped, qsum, qmax, kmin_min, buffer_min, alpha, min_rate;
    int dirty;
    if (!k->prepped) {
        PyErr_SetString(PyExc_RuntimeError, "path_post before prep");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOO!(ddddddd)(dddd)p", &no, &fo, &PyTuple_Type, &arrays, &time, &href, &send_rate,
                          &offered, &dropped, &qsum, &qmax, &kmin_min, &buffer_min, &alpha, &min_rate, &dirty))
        return NULL;
    if (PyTuple_GET_SIZE(arrays) != N_F) {
        PyErr_Format(PyExc_ValueError, "path_post needs %d fabric arrays", N_F);
        return NULL;
    }
    const Py_ssize_t n = k->n, nG = k->nG, nH = k->nH, nd = k->nd;
    const Py_ssize_t B = (Py_ssize_t)(k->e - k->s);
    Py_buffer b[N_F];
    int got = 0;
    PyObject *result = NULL;
    for (; got < N_F; got++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(arrays, got), &b[got],
                               PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (PF_WRITE[got] ? PyBUF_WRITABLE : 0)) < 0)
            goto done;
        if (!check_format(&b[got], PF_FORMATS[got])) {
            PyErr_Format(PyExc_ValueError, "path_post: array %d has the wrong dtype", got);
            got++;
            goto done;
        }
    }
    {
        const Py_ssize_t nQ1 = b[F_LOAD].len / 8, nQ = nQ1 - 1, nSw = b[F_BUFFERS].len / 8;
        const Py_ssize_t H = b[F_GCELLS].len / 8 / nG, nQG = b[F_QGROUPS].len / 8;
        const Py_ssize_t rows = b[F_QSAMPLES].len / 8 / (nQ1 ? nQ1 : 1);
        const double *hcap = b[F_HCAP].buf, *cap = b[F_CAP].buf, *kmin = b[F_KMIN].buf, *kmax = b[F_KMAX].buf;
        const double *pmax = b[F_PMAX].buf, *buffers = b[F_BUFFERS].buf, *fbase = b[F_FBASE].buf;
        const int64_t *sw = b[F_SWITCH].buf, *qptr = b[F_QPTR].buf, *qgroups = b[F_QGROUPS].buf;
        const int64_t *gcells = b[F_GCELLS].buf, *fq = b[F_FQ].buf;
        double *hqr = b[F_HQR].buf, *hsum = b[F_HSUM].buf, *hscale = b[F_HSCALE].buf, *hbase = b[F_HBASE].buf;
        double *load = b[F_LOAD].buf, *queue = b[F_QUEUE].buf, *arrived = b[F_ARRIVED].buf, *lost = b[F_LOST].buf;
        double *gdrop = b[F_GDROP].buf, *gmark = b[F_GMARK].buf, *qsamples = b[F_QSAMPLES].buf;
        double *sendr = b[F_SENDR].buf, *qsums = b[F_QSUMS].buf;
        if (nQ < 1 || nSw < 1 || H < 1 || b[F_HQR].len != nH * nQ1 * 8 || b[F_HSUM].len != nH * 8 ||
            b[F_HSCALE].len != nH * 8 || b[F_HBASE].len != nH * 8 || b[F_HCAP].len != nH * 8 ||
            b[F_QUEUE].len != nQ1 * 8 || b[F_ARRIVED].len != nQ1 * 8 || b[F_LOST].len != nQ1 * 8 ||
            b[F_CAP].len != nQ1 * 8 || b[F_KMIN].len != nQ1 * 8 || b[F_KMAX].len != nQ1 * 8 ||
            b[F_PMAX].len != nQ1 * 8 || b[F_SWITCH].len != nQ1 * 8 || b[F_QPTR].len != (nQ1 + 1) * 8 ||
            b[F_GDROP].len != nG * 8 || b[F_GMARK].len != nG * 8 || b[F_GCELLS].len != H * nG * 8 ||
            b[F_FBASE].len != n * 8 || b[F_FQ].len != H * n * 8 || b[F_QSAMPLES].len != rows * nQ1 * 8 ||
            b[F_SENDR].len < B * 8 || b[F_QSUMS].len < B * 8 || qptr[nQ1] > nQG) {
            PyErr_SetString(PyExc_ValueError, "path_post: inconsistent array sizes");
            goto done;
        }
        /* the topology's index arrays are fixed for a run: checked on first sight only */
        const void *seen[5] = {sw, qptr, qgroups, gcells, fq};
        const int fresh = memcmp(seen, k->pchecked, sizeof seen) != 0;
        for (Py_ssize_t q = 0; fresh && q < nQ1; q++)
            if (sw[q] < 0 || sw[q] >= nSw || qptr[q] < 0 || qptr[q] > qptr[q + 1]) {
                PyErr_SetString(PyExc_ValueError, "path_post: switch or queue pointer out of range");
                goto done;
            }
        for (Py_ssize_t i = 0; fresh && i < qptr[nQ1]; i++)
            if (qgroups[i] < 0 || qgroups[i] >= nG) {
                PyErr_SetString(PyExc_ValueError, "path_post: queue group out of range");
                goto done;
            }
        for (Py_ssize_t i = 0; fresh && i < H * nG; i++)
            if (gcells[i] < 0 || gcells[i] >= nH * nQ1) {
                PyErr_SetString(PyExc_ValueError, "path_post: rate cell out of range");
                goto done;
            }
        for (Py_ssize_t i = 0; fresh && i < H * n; i++)
            if (fq[i] < 0 || fq[i] >= nQ1) {
                PyErr_SetString(PyExc_ValueError, "path_post: flow queue out of range");
                goto done;
            }
        if (fresh) { /* row-major int32 copies: a group's cells, a flow's queues in one cache line */
            free(k->pgc);
            free(k->pfq);
            k->pgc = k->pfq = NULL;
            memset(k->pchecked, 0, sizeof k->pchecked);
            if (nH * nQ1 > INT32_MAX || !(k->pgc = xmalloc(H * nG * sizeof(int32_t))) ||
                !(k->pfq = xmalloc(H * n * sizeof(int32_t)))) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "path_post: too many rate cells");
                goto done;
            }
            for (Py_ssize_t g = 0; g < nG; g++)
                for (Py_ssize_t h = 0; h < H; h++) k->pgc[g * H + h] = (int32_t)gcells[h * nG + g];
            for (Py_ssize_t f = 0; f < n; f++)
                for (Py_ssize_t h = 0; h < H; h++) k->pfq[f * H + h] = (int32_t)fq[h * n + f];
            memcpy(k->pchecked, seen, sizeof seen);
        }
        const int32_t *restrict gc = k->pgc, *restrict fqr = k->pfq;
        if ((k->s + B - 1) / k->q_every >= rows) {
            PyErr_SetString(PyExc_ValueError, "path_post: queue samples too short");
            goto done;
        }
        /* scratch: a step's rate deltas, queue arrays, per-switch sums, per-group fractions, change order */
        const size_t need = 3 * (size_t)nH + 5 * (size_t)nQ1 + 3 * (size_t)nSw + 2 * (size_t)nG +
                            (size_t)k->bmax * (nH + nQ1 + 2 * nG);
        if ((size_t)(nH * nQ1 + nH) > k->pdm_n) { /* the deltas' buffer is all zeros between steps */
            free(k->pdM);
            k->pdm_n = 0;
            if (!(k->pdM = calloc(nH * nQ1 + nH, sizeof(double)))) {
                PyErr_NoMemory();
                goto done;
            }
            k->pdm_n = nH * nQ1 + nH;
        }
        if (need > k->pscap) {
            double *p = realloc(k->pscratch, need * sizeof(double));
            if (!p) {
                PyErr_NoMemory();
                goto done;
            }
            k->pscratch = p;
            k->pscap = need;
        }
        if (take_rates(k, no, fo, min_rate) < 0) goto done;
        k->prepped = 0;
        add_rtt_sums(k);
        const Py_ssize_t nchg = gather_changes(k);
        if (nchg < 0) goto done;
        double *dM = k->pdM, *dH = dM + nH * nQ1, *nsc = k->pscratch, *qn = nsc + nH;
        double *inflow = qn + nQ1, *drop = inflow + nQ1, *mark = drop + nQ1, *frac = mark + nQ1, *swa = frac + nQ1;
        double *swb = swa + nSw, *swc = swb + nSw, *tmpd = swc + nSw, *tmpm = tmpd + nG;
        const double dt = k->dt, C = k->C;
        const long long s = k->s;

        /* the changes in step order (stable: pending ones first, as sorted(pend + inblock)), each
         * with its old sending rate: the flow's previous change in the block, else tx. Sorted
         * copies: flow (Gc, as int64), step (cidx, once sorted), new rate (nacc), old rate
         * (txold), group (cg), the flow's previous change or -1 (cj, once sorted); slot: each
         * changed flow's last change. */
        int64_t *restrict cnt = k->cnt, *restrict slot = k->slot;
        int64_t *restrict sidx = (int64_t *)k->Gc, *restrict sgrp = k->cg, *restrict sj = k->cidx, *restrict prevr = k->cj;
        double *restrict snew = k->nacc, *restrict sold = k->txold;
        const int64_t *restrict group = k->group, *restrict ghost = k->group_host;
        double *restrict tx = k->tx, *restrict rate = k->rate;
        memset(cnt, 0, (B + 1) * sizeof *cnt);
        for (Py_ssize_t i = 0; i < nchg; i++) cnt[k->cj[i] + 1]++;
        for (Py_ssize_t j = 0; j < B; j++) cnt[j + 1] += cnt[j];
        for (Py_ssize_t i = 0; i < nchg; i++) {
            const int64_t r = cnt[k->cj[i]]++;
            sidx[r] = k->cidx[i];
            snew[r] = k->cnew[i];
        }
        for (Py_ssize_t j = B; j > 0; j--) cnt[j] = cnt[j - 1];
        cnt[0] = 0; /* cnt[j]..cnt[j+1]: the changes of step j */
        for (Py_ssize_t j = 0; j < B; j++)
            for (int64_t r = cnt[j]; r < cnt[j + 1]; r++) sj[r] = j;
        for (Py_ssize_t r = 0; r < nchg; r++) {
            const int64_t f = sidx[r], p = slot[f];
            sold[r] = p >= 0 ? snew[p] : tx[f];
            prevr[r] = p;
            sgrp[r] = group[f];
            slot[f] = r;
        }
        /* per step: the host integrals and queueing delays at its start; the group drop / mark
         * integrals in force (the arrays, or copies from before a step's _accrue changed them) */
        double *restrict hints = tmpm + nG, *restrict dly = hints + B * nH, *restrict gd_snap = dly + B * nQ1;
        double *restrict gm_snap = gd_snap + B * nG;
        const double **gd_of = k->g0_of, **gm_of = k->sc_of; /* (Kernel_post's scratch) */
        Py_ssize_t dstart = 0, mstart = 0, nsd = 0, nsm = 0;
        double *restrict cur_tx = k->cur_tx; /* the series flows' sending rates */
        for (Py_ssize_t t = 0; t < k->nsf; t++) cur_tx[t] = tx[k->series_flows[t]];

        const double Cdt = C * dt;
        for (Py_ssize_t j = 0; j < B; j++) {
            const long long kk = s + j;
            const Py_ssize_t c0 = cnt[j], c1 = cnt[j + 1];
            double *hint = hints + j * nH, *dl = dly + j * nQ1;
            for (Py_ssize_t h = 0; h < nH; h++) hint[h] = hbase[h] + hscale[h] * (time - href);
            for (Py_ssize_t q = 0; q < nQ1; q++) dl[q] = queue[q] / cap[q];
            /* the step's rate changes summed per (host, queue) cell from zero in change order, then
             * added to the rate matrix (numpy adds the whole (host, queue) array; the cells no
             * change touches get + 0.0, which changes no value: the matrix never holds -0.0), each
             * touched cell once, set back to zero */
            if (c1 > c0) {
                for (Py_ssize_t r = c0; r < c1; r++) {
                    const int64_t g = sgrp[r];
                    const double delta = snew[r] - sold[r];
                    for (Py_ssize_t h = 0; h < H; h++) dM[gc[g * H + h]] += delta;
                    dH[ghost[g]] += delta;
                    if (k->is_series[sidx[r]])
                        for (Py_ssize_t t = 0; t < k->nsf; t++)
                            if (k->series_flows[t] == sidx[r]) cur_tx[t] = snew[r];
                }
                for (Py_ssize_t r = c0; r < c1; r++) {
                    const int64_t g = sgrp[r], hst = ghost[g];
                    for (Py_ssize_t h = 0; h < H; h++) {
                        const int64_t c = gc[g * H + h];
                        hqr[c] = hqr[c] + dM[c];
                        dM[c] = 0.0;
                    }
                    hsum[hst] = hsum[hst] + dH[hst];
                    dH[hst] = 0.0;
                }
                dirty = 1;
            }
            /* PathFabric.step: _refresh when the rates changed (NIC scales, link loads in host order) */
            if (dirty) {
                int rebase = 0;
                for (Py_ssize_t h = 0; h < nH; h++) {
                    double sc = hcap[h] / np_max(hsum[h], hcap[h]);
                    if (sc != hscale[h]) rebase = 1;
                    nsc[h] = sc;
                }
                if (rebase) {
                    for (Py_ssize_t h = 0; h < nH; h++) hbase[h] = hbase[h] + hscale[h] * (time - href);
                    href = time;
                    memcpy(hscale, nsc, nH * sizeof(double));
                }
                add_scaled_rows(load, hqr, hscale, nH, nQ1);
                load[nQ] = 0.0;
                for (Py_ssize_t q = 0; q < nQ1; q++) load[q] = np_max(load[q], 0.0);
                double sr = 0.0;
                for (Py_ssize_t h = 0; h < nH; h++) sr += hscale[h] * hsum[h];
                send_rate = sr;
                dirty = 0;
            }
            for (Py_ssize_t q = 0; q < nQ1; q++) {
                inflow[q] = load[q] * Cdt;
                qn[q] = np_max((queue[q] + inflow[q]) - cap[q] * dt, 0.0);
            }
            double nsum = np_sum(qn, nQ1), nmax = np_maxv(qn, nQ1);
            const int marking = qmax > kmin_min;
            const double room = buffer_min - qsum;
            const int dropping = nsum > buffer_min || (alpha >= 0.0 && nmax > alpha * (0.0 > room ? 0.0 : room));
            if (dropping) {
                for (Py_ssize_t q = 0; q < nQ1; q++) drop[q] = 0.0;
                if (alpha >= 0.0) {
                    for (Py_ssize_t w = 0; w < nSw; w++) swa[w] = 0.0;
                    for (Py_ssize_t q = 0; q < nQ1; q++) swa[sw[q]] += queue[q];
                    for (Py_ssize_t q = 0; q < nQ1; q++) {
                        const double limit = alpha * np_max(buffers[sw[q]] - swa[sw[q]], 0.0);
                        drop[q] = np_min(np_max(qn[q] - np_max(limit, queue[q] - cap[q] * dt), 0.0), inflow[q]);
                        qn[q] -= drop[q];
                    }
                }
                for (Py_ssize_t w = 0; w < nSw; w++) swb[w] = 0.0;
                for (Py_ssize_t q = 0; q < nQ1; q++) swb[sw[q]] += qn[q];
                int over = 0;
                for (Py_ssize_t w = 0; w < nSw; w++) {
                    swb[w] = swb[w] - buffers[w]; /* excess */
                    over |= swb[w] > 0;
                }
                if (over) {
                    for (Py_ssize_t w = 0; w < nSw; w++) swc[w] = 0.0;
                    for (Py_ssize_t q = 0; q < nQ1; q++) swc[sw[q]] += inflow[q];
                    for (Py_ssize_t w = 0; w < nSw; w++) /* share */
                        swc[w] = swc[w] > 0 ? np_max(swb[w], 0.0) / np_max(swc[w], 1e-300) : 0.0;
                    for (Py_ssize_t q = 0; q < nQ1; q++) {
                        const double extra = np_min(swc[sw[q]] * inflow[q], qn[q]);
                        qn[q] -= extra;
                        drop[q] += extra;
                    }
                }
                qn[nQ] = 0.0;
                nsum = np_sum(qn, nQ1);
                nmax = np_maxv(qn, nQ1);
                for (Py_ssize_t q = 0; q < nQ1; q++) lost[q] += drop[q];
                dropped += np_sum(drop, nQ1);
            }
            if (marking || dropping) { /* PathFabric._accrue */
                int any_frac = 0, any_mark = 0, hit = 0;
                for (Py_ssize_t q = 0; q < nQ1; q++) {
                    const double x = queue[q];
                    const double ramp = pmax[q] * (x - kmin[q]) / np_max(kmax[q] - kmin[q], 1e-300);
                    const double mk = x > kmin[q] ? (x >= kmax[q] ? 1.0 : ramp) : 0.0;
                    frac[q] = dropping ? drop[q] / np_max(inflow[q], 1e-300) : 0.0;
                    mark[q] = mk * (1.0 - frac[q]);
                    any_frac |= frac[q] != 0.0;
                    any_mark |= mark[q] != 0.0;
                    if (q < nQ) hit |= frac[q] > 0 || mark[q] > 0;
                }
                if (hit && (any_frac || any_mark)) {
                    memset(tmpd, 0, nG * sizeof(double));
                    memset(tmpm, 0, nG * sizeof(double));
                    for (Py_ssize_t q = 0; q < nQ; q++) {
                        if (!(frac[q] > 0 || mark[q] > 0)) continue;
                        for (int64_t p = qptr[q]; p < qptr[q + 1]; p++) {
                            tmpd[qgroups[p]] += frac[q];
                            tmpm[qgroups[p]] += mark[q];
                        }
                    }
                    if (any_frac) { /* the steps so far keep the integrals from before */
                        memcpy(gd_snap + nsd * nG, gdrop, nG * sizeof(double));
                        for (; dstart <= j; dstart++) gd_of[dstart] = gd_snap + nsd * nG;
                        nsd++;
                    }
                    if (any_mark) {
                        memcpy(gm_snap + nsm * nG, gmark, nG * sizeof(double));
                        for (; mstart <= j; mstart++) gm_of[mstart] = gm_snap + nsm * nG;
                        nsm++;
                    }
                    for (Py_ssize_t g = 0; g < nG; g++) {
                        const double sc = hscale[ghost[g]] * dt;
                        if (any_frac) gdrop[g] = gdrop[g] + sc * tmpd[g];
                        if (any_mark) gmark[g] = gmark[g] + sc * tmpm[g];
                    }
                }
            }
            for (Py_ssize_t q = 0; q < nQ1; q++) {
                arrived[q] += inflow[q];
                queue[q] = qn[q];
            }
            offered += send_rate * C * dt;
            qsum = nsum;
            qmax = nmax;
            time += dt;
            /* _Run.sample: queue delays every q_every steps; the series' send rate, queue sum and rates */
            if (kk % k->q_every == 0) {
                double *row = qsamples + (kk / k->q_every) * nQ1;
                for (Py_ssize_t q = 0; q < nQ1; q++) row[q] = queue[q] / cap[q];
            }
            sendr[j] = send_rate;
            qsums[j] = qsum;
            if (kk % k->series_every == 0) memcpy(k->ser + j * k->nsf, cur_tx, k->nsf * sizeof(double));
        }
        for (; dstart < B; dstart++) gd_of[dstart] = gdrop;
        for (; mstart < B; mstart++) gm_of[mstart] = gmark;

        /* the changed flows in flow order (the per-flow columns' lines in sequence): settled at
         * each change's step, in step order (flows.settle_cols, or the replay of a flow changing
         * twice), then their last new rate */
        int64_t *restrict changed = k->tmp_jd; /* prep's scratch, free until the next prep */
        Py_ssize_t nch = 0;
        for (Py_ssize_t f = 0; f < n; f++) { /* branch-free compaction: about half the flows change */
            changed[nch] = f;
            nch += slot[f] >= 0;
        }
        for (Py_ssize_t u = 0; u < nch; u++) {
            const int64_t f = changed[u], r = slot[f];
            slot[f] = -1;
            int64_t chain[MAX_CHAIN], m = 0;
            for (int64_t x = r; x >= 0; x = prevr[x]) {
                if (m == MAX_CHAIN) {
                    PyErr_SetString(PyExc_RuntimeError, "path_post: a flow changes rate too often in one block");
                    goto done;
                }
                chain[m++] = x;
            }
            while (m > 0) {
                const int64_t x = chain[--m], g = sgrp[x], j = sj[x];
                const double w = sold[x] * C;
                const double now[3] = {hints[j * nH + ghost[g]], gd_of[j][g], gm_of[j][g]};
                for (int c = 0; c < 3; c++) {
                    k->acc[c * n + f] = k->acc[c * n + f] + w * (now[c] - k->last[c * n + f]);
                    k->last[c * n + f] = now[c];
                }
            }
            tx[f] = snew[r];
            rate[f] = snew[r];
        }
        /* the decisions in flow order (prep's): previous factor and count (record_decision), then
         * the next probe, back after the path's base RTT plus its queueing delays at the decision
         * step */
        for (Py_ssize_t q_ = 0; q_ < nd; q_++) {
            const int64_t f = k->tmp_idx[q_], i = k->tmp_pos[q_];
            k->prev[f] = k->fac[i];
            k->n_dec[f] += 1;
            const double *dl = dly + k->jd[i] * nQ1;
            double qd = dl[fqr[f * H]];
            for (Py_ssize_t h = 1; h < H; h++) qd = qd + dl[fqr[f * H + h]];
            k->probe_sent[f] = k->ret[i];
            k->next_ret[f] = k->ret[i] + fbase[f] + qd;
        }
        result = Py_BuildValue("(ddddddd)", time, href, send_rate, offered, dropped, qsum, qmax);
    }
done:
    for (int i = 0; i < got; i++) PyBuffer_Release(&b[i]);
    return result;
}

static PyObject *Kernel_pending(Kernel *k, PyObject *Py_UNUSED(ignored)) {
    return PyLong_FromSsize_t(k->pend - k->phead);
}

static PyMethodDef Kernel_methods[] = {
    {"prep", (PyCFunction)Kernel_prep, METH_VARARGS,
     "prep(s, e[, obs]) -> (decisions, pending changes in the block); obs (flows, width): observe too"},
    {"observe", (PyCFunction)Kernel_observe, METH_VARARGS, "observe(step_columns or None, obs): shift the windows, write obs"},
    {"set_features", (PyCFunction)Kernel_set_features, METH_VARARGS,
     "set_features(codes, scales, offsets, target, beta, base_rtt_ns): compute the step features in observe"},
    {"post", (PyCFunction)Kernel_post, METH_VARARGS, "post(rates, factors, fabric, min_rate, dirty, unscaled, counted)"},
    {"path_post", (PyCFunction)Kernel_path_post, METH_VARARGS,
     "path_post(rates, factors, fabric_arrays, fabric_scalars, constants, dirty) -> fabric_scalars: a topology block"},
    {"pending", (PyCFunction)Kernel_pending, METH_NOARGS, "number of decided, not yet applied rate changes"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rlcc.simulator._fluidcore.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Single-switch block loop of one simulator run (rlcc.simulator.kernel).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Kernel_init,
    .tp_dealloc = (destructor)Kernel_dealloc,
    .tp_methods = Kernel_methods,
};

/* policy_rates(y, rate, mode, gain, clamp_min, clamp_max, rate_min, factors, rates): a factor
 * controller's decision from its policy outputs ``y``, the numpy operations of
 * ``ObservationSpec.output_to_factor`` and ``FactorController.decide`` per element, in order:
 * mode 0: y are the factors (no map, no clamp); 1: clamp only (action type factor); 2: linear
 * 1 + gain*y; 3: asymmetric, y >= 0: 1 + gain*y, else 1 / (1 - gain*min(y, 0)) (= y there,
 * NaN included). Then factors clipped to [clamp_min, clamp_max] (modes 1-3) and rates =
 * clip(rate * factor, rate_min, 1); numpy's clip is max then min, NaN kept. */
static PyObject *policy_rates(PyObject *Py_UNUSED(mod), PyObject *args) {
    PyObject *objs[4];
    int mode;
    double gain, cmin, cmax, rmin;
    if (!PyArg_ParseTuple(args, "OOiddddOO", &objs[0], &objs[1], &mode, &gain, &cmin, &cmax, &rmin, &objs[2], &objs[3]))
        return NULL;
    Py_buffer b[4];
    int got = 0;
    for (; got < 4; got++)
        if (PyObject_GetBuffer(objs[got], &b[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (got >= 2 ? PyBUF_WRITABLE : 0)) < 0)
            goto done;
    Py_ssize_t n = b[0].len / 8;
    for (int i = 0; i < 4; i++)
        if (!check_format(&b[i], 'd') || b[i].len != n * 8) {
            PyErr_SetString(PyExc_ValueError, "policy_rates: float64 arrays of one length expected");
            goto done;
        }
    if (mode < 0 || mode > 3) {
        PyErr_SetString(PyExc_ValueError, "policy_rates: mode must be 0..3");
        goto done;
    }
    const double *y = b[0].buf, *rate = b[1].buf;
    double *fac = b[2].buf, *out = b[3].buf;
    /* one loop per mode without branches, so the loops vectorize: the tanh map's two cases as one
     * division, (1 + gain x y) / (1 - gain x 0) for y >= 0, else (1 + gain x 0) / (1 - gain x y):
     * the terms with 0 are exactly 1.0 (gain finite: the spec's (0, 1)), so the values are the two cases' */
    if (mode == 2)
        for (Py_ssize_t i = 0; i < n; i++) fac[i] = 1.0 + gain * y[i];
    else if (mode == 3)
        for (Py_ssize_t i = 0; i < n; i++) {
            const double f = y[i];
            const double pos = f >= 0 ? f : 0.0, neg = f >= 0 ? 0.0 : f; /* NaN: neg */
            fac[i] = (1.0 + gain * pos) / (1.0 - gain * neg);
        }
    else
        memmove(fac, y, n * sizeof(double));
    if (mode)
        for (Py_ssize_t i = 0; i < n; i++) {
            double f = fac[i];
            f = f < cmin ? cmin : f;
            fac[i] = f > cmax ? cmax : f;
        }
    for (Py_ssize_t i = 0; i < n; i++) {
        double r = rate[i] * fac[i];
        r = r < rmin ? rmin : r;
        out[i] = r > 1.0 ? 1.0 : r;
    }
done:
    for (int i = 0; i < got; i++) PyBuffer_Release(&b[i]);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"policy_rates", policy_rates, METH_VARARGS,
     "policy_rates(y, rate, mode, gain, clamp_min, clamp_max, rate_min, factors, rates): a factor controller's decision"},
    {"np_sum", np_sum_py, METH_O, "np_sum(float64 array): numpy's pairwise sum, as path_post computes it"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fluidcore", "C block loops of the fluid simulator (one switch port; a topology after the policy call).", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fluidcore(void) {
    if (PyType_Ready(&KernelType) < 0) return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (!mod) return NULL;
    Py_INCREF(&KernelType);
    if (PyModule_AddObject(mod, "Kernel", (PyObject *)&KernelType) < 0) {
        Py_DECREF(&KernelType);
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
