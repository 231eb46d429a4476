"""Block-batched engine loop: decide a whole block of steps with one controller call.

Used by ``engine._Run`` when the controller declares ``batchable = True`` (its decisions depend
only on the policy input window and the batch rows, not on CNP/NACK counts or on call
grouping: ``FactorController``/``PolicyController`` whose spec has no count features), there is
no timer-driven controller, no finite-size flow, and ``block_steps >= 1``.

Why this is exact (same results as deciding step by step, bit for bit for row-wise policies):

* A probe's RTT is fixed when the probe is sent (base RTT + the egress queue at send time), and
  a flow sends its next probe when the previous one returns, so every probe returning in the
  next ``B <= floor(base RTT / dt)`` steps is already in flight at the block start and its RTT is
  known. New probes (sent in the block) return at least one base RTT later, i.e. after the block.
* A flow decides at most once per block (two decisions of one flow are >= base RTT apart).
* The other decision inputs are the flow's own state: previous factor, observation window,
  and its rate, which only its own earlier decisions change (the pending one, if any, is looked
  up by its application step). CNP/NACK counts are not inputs of a batchable controller; they
  are still computed at each decision's exact step for the trace, and handed after the block
  to a controller that records them (``block_counts(cnp, nack)``, rows in the decide call's
  order; e.g. the distillation sampler, which stores them with each sampled window), and to
  go-back-N's accounting (``FlowState.go_back``: the decision's NACKs and the flow's sent bytes;
  one-port go-back-N runs take the Python blocks, the C kernel has no go-back-N).
* What does depend on the block's evolution is applied at the exact step: each decision's new
  rate takes effect ``decision_latency`` steps after its probe's step; the next probe samples
  the queue of the decision's step; per-flow byte accounting is settled with the fabric
  integrals of the step the rate changed in (deferred to the block end, same arithmetic).

Per step only the fabric's scalar queue update runs in Python; group rates, host scales and
port loads of all the block's steps are computed with a handful of vectorized calls. On a
one-port fabric (``Fabric._single``: every many-to-one incast) the C kernel of
``rlcc.simulator.kernel`` runs the block instead, the same operations in the same order
(``_block_kernel``; ``BlockLoop.use_kernel = False`` selects this Python twin, the reference
tests/simulator/test_kernel.py compares it with). On a topology, unless someone counts CNP/NACKs
(a trace, a recording controller, go-back-N), a block is two C calls around the controller
(``_block_paths_c``): the kernel's ``prep`` finds the block's decisions, applies the pending changes
landing before them and writes the policy inputs, ``path_post`` does the rest of ``_block_paths``
(the pending list, rate-matrix sums, fabric steps, settles, probes, queue samples); counted runs
take the kernel's front half (``_rows_front``) and this module's numpy block end.
``use_kernel = False`` selects the numpy twins (tests/simulator/test_kernel_paths.py).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from rlcc import features as vocab
from rlcc.simulator.controllers.base import Decision, DecisionBatch
from rlcc.simulator.controllers.factor import rows_decider
from rlcc.simulator.kernel import BlockKernel

MIN_RATE = 1e-9
PROGRESS_EVERY = 1000


class BlockLoop:
    """Mixin for ``engine._Run``: per-flow state in its ``flows`` (``rlcc.simulator.flows``)."""

    use_kernel = True  # one-port fabrics run the C kernel (False: the Python blocks, same results)

    def _run_blocks(self, progress: Callable[[int], None] | None) -> None:
        fab, B = self.fabric, self.block_steps
        self._progress = progress
        block = self._block_paths if self.multi else self._block
        if not self.multi:
            self._offH = (np.arange(B)[:, None] * fab.n_hosts + fab.group_host[None, :]).ravel()
            self._offP = (np.arange(B)[:, None] * fab.n_ports + fab.group_port[None, :]).ravel()
            self._unscaled = bool((fab.group_scale == 1.0).all())
            if fab._single and self.use_kernel and not self.go_back:  # the kernel has no go-back-N
                self._kernel = BlockKernel(self)
                block = self._block_kernel
        self._front = self._ctl_rows = None
        if self.multi and self.use_kernel:
            fab = self.fabric
            counted = self.recorder is not None or self.block_counts is not None or self.go_back
            whole = not counted and fab.pfc is None and not fab._track  # the whole block in C
            self._front = BlockKernel(self, front_only=True, paths=whole)
            if whole:
                block = self._block_paths_c
                self._ctl_rows = rows_decider(self.ctl)
        k, dt = 0, self.dt
        while k < self.n_steps:
            e = min(k + B, self.n_steps)
            if k < self.window_step < e:
                e = self.window_step
            if k == self.window_step:
                self.snap_window = self.snapshot(k)
            if self.start_ptr < self.n and self.sorted_starts[self.start_ptr] <= k * dt:
                self.start_flows(k * dt)
            if self.start_ptr < self.n:  # a block never spans a later flow start
                nxt = self.sorted_starts[self.start_ptr]
                for kk in range(k + 1, e):
                    if nxt <= kk * dt:
                        e = kk
                        break
            block(k, e)
            k = e
        if progress is not None:
            progress(self.n_steps % PROGRESS_EVERY)
        self.snap_end = self.snapshot(self.n_steps)
        if self.snap_window is None:
            self.snap_window = self.snap_end

    def _observe_window(self, due, rtt, rate, first) -> np.ndarray:
        """``_observe`` for count-free specs (same values), the window read column by column.

        (Fancy indexing a (n, 4) array row-wise is ~10x slower than four 1-D gathers.)
        """
        spec = self.spec
        cols = self.flows.window_cols  # contiguous views
        F, W, M = spec.n_features, spec.input_width, len(due)
        if getattr(self, "_feat", None) is None:
            self._feat = [(vocab.get(f.name).float_value, f.scale, f.offset) for f in spec.features]
        raw_step = vocab.FloatStep(spec.reward, self.flows.prev_action[due], rtt, rate)  # count-free: no counters
        step = [(value(raw_step) if scale == 1.0 else value(raw_step) * scale) + offset  # (x * 1.0 == x)
                for value, scale, offset in self._feat]
        # slot c of the new window: oldest_first shifts left by F and appends the step
        if spec.step_order == "oldest_first":
            new = [cols[c + F][due] for c in range(W - F)] + step
        else:
            new = step + [cols[c][due] for c in range(W - F)]
        if W > F and first.any():
            for c in range(W):
                new[c] = np.where(first, step[c % F], new[c])
        obs = np.empty((M, W), np.float32)
        for c in range(W):
            cols[c][due] = new[c]
            obs[:, c] = new[c]
        return obs

    # ---- one block of steps [s, e) ----------------------------------------------------------
    def _decide_block(self, s: int, e: int) -> tuple:
        """Every decision of the block in one controller call (rows sorted by step ``jd``), and
        the rate changes taking effect in it: ``pend`` (decided earlier) and ``inblock``."""
        dt, B = self.dt, e - s
        fl = self.flows
        pend = []
        while self.pending and self.pending[0][0] < e:
            pend.append(self.pending.popleft())
        inblock: list = []
        ret = jd = rtt = rate = obs = new = factors = txd = None
        counted = False
        if self._front is not None:  # a topology: the rows in C
            due, nd, ret, jd, rtt, rate, first, obs = self._rows_front(s, e, pend)
        else:
            edges = np.arange(s, e, dtype=np.float64) * dt + dt  # step k decides next_ret < k*dt + dt
            due = np.flatnonzero(fl.next_ret < edges[-1])
            nd = len(due)
        if nd and self._front is None:
            ret = fl.next_ret[due]
            if B > 1:  # jd = searchsorted(edges, ret, "right"), by comparisons (ret < edges[-1])
                jd8 = np.zeros(nd, np.uint8 if B < 256 else np.uint16)
                for edge in edges[:-1].tolist():
                    jd8 += ret >= edge
                order = np.argsort(jd8, kind="stable")  # radix sort
                due, ret, jd = due[order], ret[order], jd8[order].astype(np.int64)
            else:
                jd = np.zeros(nd, np.int64)
            rate = fl.rate[due]
            self._apply_near_pending(rate, due, jd, s, e, pend)
            rtt = np.rint(ret - fl.probe_sent[due]).astype(np.int64)
            first = fl.n_dec[due] == 0
            obs = self._observe_window(due, rtt, rate, first) if self.spec is not None else None
        if nd:
            out = self.ctl.decide(DecisionBatch(due, ret, rtt, rate, None, None, first, obs))
            rates, factors = out if isinstance(out, Decision) else (out, None)
            new = np.clip(np.asarray(rates, dtype=np.float64).reshape(nd), MIN_RATE, 1.0)
            if factors is None:
                factors = new / rate
            fl.record_decision(due, factors)
            rsum = int(rtt.sum())  # exact integer ns: independent of how decisions are grouped
            self.rtt_stats[0:2] += (rsum, nd)
            if s >= self.window_step:
                self.rtt_stats[2:4] += (rsum, nd)
            L = self.latency_steps
            if B == 1:
                entry = (s + L, due, new)
                (inblock if L == 0 else self.pending).append(entry)
            else:
                counts = np.bincount(jd, minlength=B)
                ends = np.cumsum(counts)
                for j in np.flatnonzero(counts).tolist():
                    a, b = int(ends[j] - counts[j]), int(ends[j])
                    entry = (s + j + L, due[a:b], new[a:b])
                    (inblock if s + j + L < e else self.pending).append(entry)
            counted = self.recorder is not None or self.block_counts is not None or self.go_back
            txd = fl.tx[due] if counted else None
        return due, nd, ret, jd, rtt, rate, obs, new, factors, pend, inblock, counted, txd

    def _apply_near_pending(self, rate: np.ndarray, due: np.ndarray, jd: np.ndarray, s: int, e: int,
                            pend: list) -> None:
        """A decided-but-not-yet-applied own rate change taking effect before the probe, into ``rate``
        (the due flows' rates): only from decisions less than a block before e (two decisions of a
        flow are >= a block apart)."""
        near = [x for x in pend if x[0] - self.latency_steps + self.block_steps < e]
        if not near:
            return
        pos = self.flows.slot
        pos[due] = np.arange(len(due))
        for key, idx, new in near:
            p = pos[idx]
            m = p >= 0
            if m.any():
                pp, nn = p[m], new[m]
                ok = key <= s + jd[pp]
                rate[pp[ok]] = nn[ok]
        pos[due] = -1

    def _rows_front(self, s: int, e: int, pend: list) -> tuple:
        """The rows of ``_decide_block`` on a topology from the kernel's front half (``kernel.py``):
        the due flows sorted by step, their probes, RTTs, rates, first decisions and policy inputs,
        with the same values; the pending changes taking effect before a decision (``pend``) are
        applied to its rate here, before the windows are observed."""
        kr = self._front
        nd, _ = kr.core.prep(s, e)
        if not nd:
            return None, 0, None, None, None, None, None, None
        due, jd, rate = kr.due[:nd].copy(), kr.jd[:nd].copy(), kr.rate[:nd]  # rate: the kernel's, observe reads it
        self._apply_near_pending(rate, due, jd, s, e, pend)
        obs = self._observe_kernel(nd, rate, kr) if self.spec is not None else None
        return due, nd, kr.ret[:nd].copy(), jd, kr.rtt[:nd].copy(), rate.copy(), kr.first[:nd].copy(), obs

    def _block(self, s: int, e: int) -> None:
        dt, C, B = self.dt, self.C, e - s
        fab, fl = self.fabric, self.flows
        nG, nP = fab.n_groups, fab.n_ports
        due, nd, ret, jd, rtt, rate, obs, new, factors, pend, inblock, counted, txd = self._decide_block(s, e)

        # ---- rate changes applied in this block, and the fabric's loads per step -------------
        entries = pend + inblock
        if entries:
            if len(entries) == 1:
                key, chg_idx, chg_new = entries[0]
                chg_j = np.full(len(chg_idx), key - s, np.int64)
            else:
                chg_idx = np.concatenate([x[1] for x in entries])
                chg_new = np.concatenate([x[2] for x in entries])
                chg_j = np.repeat(np.array([x[0] - s for x in entries]), [len(x[1]) for x in entries])
            tx_old = fl.tx[chg_idx]
            cg = self.group[chg_idx]
            dG = np.bincount(chg_j * nG + cg, weights=chg_new - tx_old, minlength=B * nG).reshape(B, nG)
            R = np.cumsum(np.concatenate([fab.group_rate[None, :], dG]), axis=0)[1:]
        if entries or fab._dirty:
            if not entries:
                R = np.broadcast_to(fab.group_rate, (B, nG))
            Hs = np.bincount(self._offH[: B * nG], weights=R.ravel(), minlength=B * fab.n_hosts).reshape(B, fab.n_hosts)
            cap = self.net.host_cap
            if self._unscaled and Hs.max() <= cap:  # no NIC is oversubscribed: scale 1 (x * 1.0 == x)
                S = fab.group_scale
                loads = np.bincount(self._offP[: B * nG], weights=R.ravel(), minlength=B * nP).reshape(B, nP)
                flags = [False] * B
            else:
                S = np.where(Hs > cap, cap / np.maximum(Hs, 1e-300), 1.0)[:, fab.group_host]
                loads = np.bincount(self._offP[: B * nG], weights=(S * R).ravel(), minlength=B * nP).reshape(B, nP)
                prevS = np.concatenate([fab.group_scale[None, :], S[:-1]])
                flags = (S != prevS).any(axis=1).tolist()
        else:
            S = None
            loads = fab.port_load[None, :].repeat(B, axis=0)  # (cheaper than np.broadcast_to per block)
            flags = [False] * B

        # ---- step the fabric ---------------------------------------------------------------
        states = []  # (g0, scale, ref) in force at each step's start (before its rescale)
        cur = (fab.g0, fab.group_scale, fab.ref)
        if fab._single:
            Pl: list = []
            Ql: list = []
        else:
            P = np.empty((B, nP, 3))
            Q = np.empty((B, nP))
        gport = fab.group_port
        flushed = 0
        series_every, q_every = self.series_every, self.q_every
        progress = self._progress
        single = fab._single
        if single:
            kmin, kmax, pmax = fab._ecn0
            buf = fab.buffer
            q, d, m, time = fab._q, fab._d, fab._m, fab.time
            offered, dropped, delivered = fab.offered, fab.dropped, fab.delivered
            load_l = loads[:, 0].tolist()
            Cdt = C * dt
        for j in range(B):
            k = s + j
            states.append(cur)
            if single:
                Pl.append((time, d, m))
                Ql.append(q)
            else:
                P[j] = fab.port_integrals()
                Q[j] = fab.queue
            if flags[j]:
                g0, sc, ref = cur
                Pj = np.array([[time, d, m]]) if single else P[j].copy()
                cur = (g0 + sc[:, None] * (Pj[gport] - ref[gport]), S[j].copy(), Pj)
            if single:
                if q <= kmin:
                    mark = 0.0
                elif q >= kmax:
                    mark = 1.0
                else:
                    mark = pmax * (q - kmin) / (kmax - kmin)
                inflow = load_l[j] * C * dt
                q_new = q + inflow - Cdt
                if q_new < 0.0:
                    q_new = 0.0
                offered += inflow
                if q_new > buf:
                    excess = q_new - buf
                    q_new = buf
                    frac = excess / inflow
                    d += frac * dt
                    dropped += excess
                    mark *= 1.0 - frac
                    delivered += q + inflow - q_new - excess
                else:
                    delivered += q + inflow - q_new
                if mark:
                    m += mark * dt
                q = q_new
                time += dt
            else:
                fab.port_load = loads[j]
                fab._step_multi(dt)
                fab.time += dt
            if not single and k % q_every == 0:  # single port: after the loop, in one assignment
                self.q_samples[k // q_every] = fab.queue
            if k % series_every == 0:
                while flushed < len(entries) and entries[flushed][0] <= k:
                    _, idx, new_r = entries[flushed]
                    fl.tx[idx] = new_r
                    fl.rate[idx] = new_r
                    flushed += 1
                sr = self.series
                sr["t_us"].append(k * dt / 1e3)
                sr["queue_us"].append((q if single else float(fab.queue.sum())) / C / 1e3)
                sr["rates"].append(fl.tx[self.series_flows].copy())
                sr["load"].append(float(loads[j].sum()))
            if progress is not None and k % PROGRESS_EVERY == PROGRESS_EVERY - 1:
                progress(PROGRESS_EVERY)
        if single:
            fab._q, fab._d, fab._m, fab.time = q, d, m, time
            Ql.append(q)
            Q = np.array(Ql).reshape(B + 1, 1)  # queue at the start of each step, then at the block end
            if q_every == 1:  # the queue after each step
                self.q_samples[s:e] = Q[1:]
            else:
                ks = np.arange(s, e)
                sampled = np.flatnonzero(ks % q_every == 0)
                self.q_samples[ks[sampled] // q_every] = Q[sampled + 1]
            fab.offered, fab.dropped, fab.delivered = offered, dropped, delivered
        fab.g0, fab.group_scale, fab.ref = cur
        self._unscaled = bool((fab.group_scale == 1.0).all()) if any(flags) else self._unscaled
        if S is not None:
            fab.group_rate = np.array(R[-1])
            fab.port_load = np.array(loads[-1])
            fab._load1 = float(loads[-1, 0])
        fab._dirty = False

        if entries or (nd and counted):  # someone needs the group integrals of the block's steps
            if all(st is states[0] for st in states):  # no rescale in the block: one table
                g0, sc, ref = states[0]
                if single:  # every group is on port 0: broadcast instead of gathering
                    P = np.array(Pl).reshape(B, 1, 3)
                    table = g0[None] + sc[None, :, None] * (P - ref[0])  # (B, groups, 3)
                else:
                    table = g0[None] + sc[None, :, None] * (P[:, gport] - ref[gport][None])
            else:
                if single:
                    P = np.array(Pl).reshape(B, 1, 3)
                table = np.stack([st[0] + st[1][:, None] * (P[j][gport] - st[2][gport]) for j, st in enumerate(states)])
            tcols = np.ascontiguousarray(table.transpose(2, 0, 1).reshape(3, B * nG))

        def integrals_at(jarr: np.ndarray, groups: np.ndarray) -> list[np.ndarray]:
            """Group integrals [time, drop, mark] (3 arrays) at the start of block step jarr."""
            flat = jarr * nG + groups
            return [tc.take(flat) for tc in tcols]

        # ---- deferred per-flow accounting, probe bookkeeping, trace --------------------------
        if entries:
            Gc = integrals_at(chg_j, cg)
        if nd and counted:
            Gd = np.column_stack(integrals_at(jd, self.group[due]))
            accd, lastd = fl.acc[due], fl.last[due]
            if entries:
                cpos = fl.slot
                cpos[chg_idx] = np.arange(len(chg_idx))
                cp = cpos[due]
                cpos[chg_idx] = -1
                early = np.flatnonzero(cp >= 0)
                if len(early):
                    Gc2 = np.column_stack(Gc)
                    ce = cp[early]
                    early, ce = early[chg_j[ce] <= jd[early]], ce[chg_j[ce] <= jd[early]]
                    accd[early] = accd[early] + (tx_old[ce] * C)[:, None] * (Gc2[ce] - lastd[early])
                    lastd[early] = Gc2[ce]
                    txd[early] = chg_new[ce]
            acc_now = accd + (txd * C)[:, None] * (Gd - lastd)
            cnp, nack = fl.take_counts(due, acc_now[:, 1:], self.pkt)
            if self.go_back:
                fl.go_back(due, nack, acc_now[:, 0], self.pkt)
            if self.block_counts is not None:
                self.block_counts(cnp, nack)
            if self.recorder is not None:
                self._record(due, obs, ret, rtt, rate, cnp, nack, factors, new)
        if entries:
            fl.settle_cols(chg_idx, Gc, tx_old * C)  # same arithmetic as settle(), 1-D gathers
            fl.tx[chg_idx] = chg_new
            fl.rate[chg_idx] = chg_new
        if nd:
            qd = Q[jd, 0] / C if single else Q[jd, self.path[due]] / C
            fl.send_probes(due, ret, self.base, qd)

    # ---- one block on a one-port fabric, in C (``rlcc.simulator.kernel``) ----------------------
    def _block_kernel(self, s: int, e: int) -> None:
        """``_decide_block`` + ``_block`` for ``Fabric._single``: the kernel finds and sorts the
        block's decisions and, after the controller call, applies them and steps the fabric."""
        kr, fab = self._kernel, self.fabric
        kr.check_fabric(fab)
        nd, _ = kr.core.prep(s, e)
        obs = factors = None
        if nd:
            batch, rates, fac, obs, factors = self._decide_kernel(nd, kr)
            due, ret, rtt, rate = batch.flow_ids, batch.time_ns, batch.rtt_ns, batch.rate
        else:
            rates = fac = kr.no_rows
        counted = bool(nd) and (self.recorder is not None or self.block_counts is not None)
        state = (fab._q, fab._d, fab._m, fab.time, fab.offered, fab.dropped, fab.delivered)
        state, self._unscaled, load1 = kr.core.post(rates, fac, state, MIN_RATE, fab._dirty, self._unscaled, counted)
        fab._q, fab._d, fab._m, fab.time, fab.offered, fab.dropped, fab.delivered = state
        if load1 is not None:
            fab._load1 = load1
        fab._dirty = False
        every = self.series_every
        for k in range(-(-s // every) * every, e, every):
            j, sr = k - s, self.series
            sr["t_us"].append(k * self.dt / 1e3)
            sr["queue_us"].append(float(kr.queue[j + 1]) / self.C / 1e3)
            sr["rates"].append(kr.series_rates[j].copy())
            sr["load"].append(float(kr.loads[j]))
        if self._progress is not None:
            for _ in range(-(-(s + 1) // PROGRESS_EVERY) * PROGRESS_EVERY - 1, e, PROGRESS_EVERY):
                self._progress(PROGRESS_EVERY)
        if counted:
            cnp, nack = kr.cnp[:nd].copy(), kr.nack[:nd].copy()
            if self.block_counts is not None:
                self.block_counts(cnp, nack)
            if self.recorder is not None:
                new = kr.new[:nd].copy()
                self._record(due, obs, ret, rtt, rate, cnp, nack, kr.factors[:nd].copy() if factors is None else factors, new)

    def _decide_kernel(self, nd: int, kr: BlockKernel, obs: np.ndarray | None = None) -> tuple:
        """The controller call on the kernel's rows: (batch, rates, factors, policy inputs, the
        controller's own factors), rates and factors as contiguous float64 for the kernel (factors
        None: new rate / rate there). ``obs``: the policy inputs when ``prep`` wrote them."""
        due, ret, rtt = kr.due[:nd].copy(), kr.ret[:nd].copy(), kr.rtt[:nd].copy()
        rate, first = kr.rate[:nd].copy(), kr.first[:nd].copy()
        if obs is None and self.spec is not None:
            obs = self._observe_kernel(nd, rate, kr)
        batch = DecisionBatch(due, ret, rtt, rate, None, None, first, obs)
        out = self.ctl.decide(batch)
        rates, factors = out if isinstance(out, Decision) else (out, None)
        rates = np.asarray(rates, dtype=np.float64).reshape(nd)
        if not rates.flags.c_contiguous:
            rates = rates.copy()
        fac = factors
        if factors is not None and not (type(fac) is np.ndarray and fac.dtype == np.float64 and fac.shape == (nd,)
                                        and fac.flags.c_contiguous):
            fac = np.empty(nd)
            fac[:] = factors  # the assignment ``FlowState.record_decision`` does (casts, broadcasts)
        return batch, rates, fac, obs, factors

    def _observe_kernel(self, nd: int, rate: np.ndarray, kr: BlockKernel) -> np.ndarray:
        """``_observe_window`` with the kernel's gathers and windows; the step features in C too when
        the kernel has them all (``BlockKernel.native_features``), else here."""
        spec = self.spec
        obs = np.empty((nd, spec.input_width), np.float32)
        if kr.native_features:
            kr.core.observe(None, obs)
            return obs
        if getattr(self, "_feat", None) is None:
            self._feat = [(vocab.get(f.name).float_value, f.scale, f.offset) for f in spec.features]
        raw_step = vocab.FloatStep(spec.reward, kr.prev[:nd], kr.rtt_f[:nd], rate)  # count-free: no counters
        step = [np.asarray((value(raw_step) if scale == 1.0 else value(raw_step) * scale) + offset, dtype=np.float64)
                for value, scale, offset in self._feat]
        kr.core.observe(step, obs)
        return obs

    # ---- one block on a topology (``fabric.PathFabric``) -------------------------------------
    def _block_paths_c(self, s: int, e: int) -> None:
        """``_block_paths`` in two C calls around the controller: ``prep`` (the decisions, with the
        pending changes landing before them) and ``path_post`` (decisions applied, the rate-matrix
        sums, fabric steps, settles, probes, queue samples), the same operations in the same order
        (when nothing is counted and the fabric is lossy and untracked: ``_run_blocks``)."""
        kr, fab = self._front, self.fabric
        if kr.obs_rows is not None:  # the policy inputs written by prep (the windows shifted there)
            nd, _ = kr.core.prep(s, e, kr.obs_rows)
            obs = kr.obs_rows[:nd]
        else:
            nd, _ = kr.core.prep(s, e)
            obs = None
        rates = fac = kr.no_rows
        if nd:
            rows = self._ctl_rows
            if rows is not None and obs is not None:  # no batch: the rows straight to the controller
                rates, fac = kr.ctl_rates[:nd], kr.ctl_factors[:nd]
                rows(obs, kr.rate[:nd], fac, rates)
            else:
                _, rates, fac, _, _ = self._decide_kernel(nd, kr, obs)
        scalars = (fab.time, fab.host_ref, fab.send_rate, fab.offered, fab.dropped, fab._qsum, fab._qmax)
        consts = (fab._kmin_min, fab._buffer_min, -1.0 if fab.alpha is None else float(fab.alpha), MIN_RATE)
        arrays = (fab.host_queue_rate, fab.host_sum, fab.host_scale, fab.host_base, fab.host_cap, fab.link_load,
                  fab.queue, fab.arrived, fab.lost, fab.cap, fab.kmin, fab.kmax, fab.pmax, fab.switch, fab.buffers,
                  fab.queue_ptr, fab.queue_groups, fab.group_drop, fab.group_mark, fab.group_cells, self.flow_base,
                  fab.flow_queues, self.q_samples, kr.send_rates, kr.queue_sums)
        out = kr.core.path_post(rates, fac, arrays, scalars, consts, fab._dirty)
        fab.time, fab.host_ref, fab.send_rate, fab.offered, fab.dropped, fab._qsum, fab._qmax = out
        fab._dirty, fab._inflow = False, None
        every = self.series_every
        for k in range(-(-s // every) * every, e, every):  # _Run.sample's series
            j, sr = k - s, self.series
            sr["t_us"].append(k * self.dt / 1e3)
            sr["queue_us"].append(float(kr.queue_sums[j]) / self.C / 1e3)
            sr["rates"].append(kr.series_rates[j].copy())
            sr["load"].append(float(kr.send_rates[j]))
        if self._progress is not None:
            for _ in range(-(-(s + 1) // PROGRESS_EVERY) * PROGRESS_EVERY - 1, e, PROGRESS_EVERY):
                self._progress(PROGRESS_EVERY)

    def _block_paths(self, s: int, e: int) -> None:
        """The block's decisions in one call; per step only the fabric (its per-host rate matrix
        changes by the step's rate changes); per-flow accounting replayed after the block in step
        order with the integrals recorded at each step, so every settle, count and probe uses the
        same values as the step loop (bit-identical: tests/simulator/test_fabric.py)."""
        due, nd, ret, jd, rtt, rate, obs, new, factors, pend, inblock, counted, _ = self._decide_block(s, e)
        fab, fl, C, B, dt = self.fabric, self.flows, self.C, e - s, self.dt
        nQ1, nH = fab.n_queues + 1, fab.n_hosts
        entries = sorted(pend + inblock, key=lambda x: x[0])  # stable: step order, then decision order
        # Rate changes: old sending rates and per-step deltas.
        counting = bool(nd and counted)
        tx0 = olds = None
        changed = np.zeros(B, bool)
        if entries:
            js = np.repeat(np.array([x[0] - s for x in entries]), [len(x[1]) for x in entries])
            idx_all = np.concatenate([x[1] for x in entries])
            distinct = self._distinct(idx_all)
        if counting or (entries and not distinct):  # the sequential replay (a flow may change twice)
            tx0 = fl.tx.copy()  # sending rates at the block start (the replay advances it)
            cur = tx0.copy()
            olds = []
            for key, idx, nw in entries:
                olds.append(cur[idx])
                cur[idx] = nw
            if entries:
                old_all = np.concatenate(olds)
        elif entries:
            old_all = fl.tx[idx_all]
        if entries:
            delta = np.concatenate([x[2] for x in entries]) - old_all
            g = self.group[idx_all]
            host = fab.group_host[g]
            # cells (j, host, queue) of the per-host rate matrix, flow by flow (bincount's order)
            gc = fab.group_cells
            cells = np.empty((len(g), len(gc)), np.int64)
            base = js * (nH * nQ1)
            for h in range(len(gc)):
                np.add(base, gc[h].take(g), out=cells[:, h])
            dM = np.bincount(cells.ravel(), weights=np.repeat(delta, len(gc)), minlength=B * nH * nQ1)
            dM = dM.reshape(B, nH, nQ1)
            dH = np.bincount(js * nH + host, weights=delta, minlength=B * nH).reshape(B, nH)
        for x in entries:
            changed[x[0] - s] = True
        snaps = []  # integral state (host base, scale, ref, time; group drop, mark) at each step's start
        delays = np.empty((B, nQ1))  # queue bytes at each step's start, then their delays
        flushed = 0  # entries whose rates are in fl.tx / fl.rate (only the series reads them in the loop)
        for j in range(B):
            k = s + j
            snaps.append((fab.host_base, fab.host_scale, fab.host_ref, fab.time, fab.group_drop, fab.group_mark))
            delays[j] = fab.queue
            if changed[j]:
                fab.host_queue_rate += dM[j]
                fab.host_sum += dH[j]
                fab._dirty = True
            fab.step(dt)
            if k % self.series_every == 0:
                while flushed < len(entries) and entries[flushed][0] <= k:
                    fl.tx[entries[flushed][1]] = entries[flushed][2]
                    fl.rate[entries[flushed][1]] = entries[flushed][2]
                    flushed += 1
            self.sample(k)
            if self._progress is not None and k % PROGRESS_EVERY == PROGRESS_EVERY - 1:
                self._progress(PROGRESS_EVERY)
        for _, idx, nw in entries[flushed:]:
            fl.tx[idx] = nw
            fl.rate[idx] = nw
        delays /= fab.cap  # ``PathFabric.queue_delays`` at each step's start
        if entries or counting:  # ``PathFabric.host_integral`` at each step's start
            hints = np.empty((B, nH))
            for j, (b, sc, r, t, _, _) in enumerate(snaps):
                np.add(b, sc * (t - r), out=hints[j])
        if nd:  # the probes' queueing delays: the sum over each path's hops at the decision's step
            flat, off, fq = delays.ravel(), jd * nQ1, fab.flow_queues
            qd = flat.take(off + fq[0].take(due))
            for h in range(1, len(fq)):
                qd = qd + flat.take(off + fq[h].take(due))
        if entries and not counting and distinct:
            # Nothing counted and every changed flow changes once: settle all of them in one
            # call with the integrals of their steps (the same values and arithmetic per flow).
            gd = snaps[0][4], snaps[0][5]
            if any(sn[4] is not gd[0] or sn[5] is not gd[1] for sn in snaps):
                flat_g = js * fab.n_groups + g
                gd = [np.stack([sn[c] for sn in snaps]).ravel().take(flat_g) for c in (4, 5)]
            else:
                gd = [gd[0].take(g), gd[1].take(g)]
            hint = hints.ravel().take(js * nH + host)
            fl.settle_cols(idx_all, [hint, *gd], old_all * C)
        elif entries or counting:
            self._replay_paths(s, B, entries, olds, snaps, hints, tx0, due, jd if counting else None, obs, ret,
                               rtt, rate, factors, new)
        if nd:
            fl.send_probes(due, ret, self.base_rtt(due), qd)

    def _distinct(self, idx: np.ndarray) -> bool:
        """No flow index twice in ``idx`` (uses the ``slot`` scratch column)."""
        slot, pos = self.flows.slot, np.arange(len(idx))
        slot[idx] = pos
        ok = bool((slot[idx] == pos).all())
        slot[idx] = -1
        return ok

    def _replay_paths(self, s, B, entries, olds, snaps, hints, tx0, due, jd, obs, ret, rtt, rate, factors, new) -> None:
        """Replay the per-flow accounting in step order, as the step loop does it: at each step the
        changes decided at earlier steps, then the counts of the step's decisions (``jd`` not
        None: someone records them), then (zero decision latency) the step's own changes."""
        fab, fl, C = self.fabric, self.flows, self.C
        cuts = np.searchsorted(jd, np.arange(B + 1)) if jd is not None else None
        counts = []
        at: dict[int, list[int]] = {}
        for i, (key, _, _) in enumerate(entries):
            at.setdefault(key - s, []).append(i)
        late = self.latency_steps == 0
        for j in range(B):
            hint, gd, gm = hints[j], snaps[j][4], snaps[j][5]

            def settle(ids: np.ndarray, weight: np.ndarray) -> None:
                grp = self.group[ids]
                fl.settle_cols(ids, [hint[fab.group_host[grp]], gd[grp], gm[grp]], weight * C)

            mine = at.get(j, [])
            if not late:
                for i in mine:
                    settle(entries[i][1], olds[i])
                    tx0[entries[i][1]] = entries[i][2]
            if cuts is not None and cuts[j] < cuts[j + 1]:
                ids = due[cuts[j]:cuts[j + 1]]
                settle(ids, tx0[ids])
                cnp, nack = fl.take_counts(ids, fl.acc[ids, 1:], self.pkt)
                counts.append((cnp, nack))
                if self.go_back:
                    fl.go_back(ids, nack, fl.acc[ids, 0], self.pkt)
            if late:
                for i in mine:
                    settle(entries[i][1], olds[i])
                    tx0[entries[i][1]] = entries[i][2]
        if counts:
            cnp = np.concatenate([c[0] for c in counts])
            nack = np.concatenate([c[1] for c in counts])
            if self.block_counts is not None:
                self.block_counts(cnp, nack)
            if self.recorder is not None:
                self._record(due, obs, ret, rtt, rate, cnp, nack, factors, new)
