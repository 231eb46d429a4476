"""Observable test vectors: one input per element a one-edit firmware mutation can touch, built
so that the edit changes the golden output, and confirmed against a mutated model.

Why: boundary vectors put a split's input at T-1 / T / T+1 but leave the other inputs random, so
the ensemble sum often lands in the factor clamp and the edited comparison (or leaf) is
invisible. Here the *other* inputs are chosen so that both outcomes of the comparison give
different clamped factors; the factor is stored in the context, so the edit shows at the outputs.

Targets (stable ids, one per vector):

- ``split:t{t}:l{k}:T-1|T|T+1``: the input of split ``k`` of tree ``t`` at that threshold offset,
  and flipping that comparison's outcome changes the clamped factor;
- ``leaf:t{t}:{i}``: a reachable leaf with an unclamped sum (leaf +-1 visible);
- ``leaf:t{t}:{i}:+1|-1``: only for a leaf without one, the edit alone: +1 is still visible at a
  sum exactly at ``clamp_min``, -1 at ``clamp_max`` (:func:`killed_by` names both targets);
- ``bias``: an unclamped sum (bias +-1 visible);
- ``clamp_min:-1|0|+1`` / ``clamp_max:-1|0|+1``: sum below / at / just above (resp. just below /
  at / above) the bound, nearest achievable to it, unclamped on the other side;
- ``rate_round``: ``rate * factor + carry`` leaves a fraction >= 1/2 below the rate's LSB, the new rate unclamped;
- ``probe_timeout:T-1|T|T+1``: a TX event at elapsed = timeout - 1 / timeout / timeout + 1;
- ``ramp:{i}:{constant}:+1|-1``: a one-off edit of ramp ``i``'s ``lo``, ``center``, ``hi``,
  ``k_below``, ``k_above`` or ``shift``: its input at the value nearest the center where the
  edit changes the term (:func:`ramp_witnesses`; its own interval in the search), sum unclamped.

Search: every policy input's feasible domain is cut by the thresholds of the splits on it into
intervals on which all comparisons are constant; one option per interval (current-step RTT
features, which share one RTT and rate, form one joint slot). Assignments of the other slots are
enumerated exhaustively when few, else sampled and improved greedily. Each vector is realized
into a context and an RTT event and kept only if ``golden.step`` on the mutated model differs.
A target without a vector is listed as unobservable with the reason and whether the search was
exhaustive (then it is a proof at the golden level).

With ramps the options' values are samples of a term that varies inside an interval: a ramp
input's intervals are also cut at the ramp's ``lo + 1``, ``center + 1`` and ``hi`` (the term is
constant or monotone on each), a failed search is retried with ramp inputs at their intervals'
ends, and a miss is claimed exhaustive only by interval bounds over every input's whole domain
(:class:`_Boxes`), never by the enumeration of realized options.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Callable

import numpy as np

from rlcc import derived as derived_vocab
from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.errors import BadInputError
from rlcc.fxp import golden
from rlcc.fxp.model import INT32_MAX, INT32_MIN, U32_MAX, FxConstants, FxModel, Ramp, Split, Tree
from rlcc.fxp.vectors import Vectors, concat, expected
from rlcc.spec import ObservationSpec

LIMIT = 1 << 14  # assignments enumerated exhaustively per target; larger searches sample + greedy
SAMPLE = 1 << 11  # random assignments a non-exhaustive search starts from
_PENALTY = float(2**40)  # subtracted from the score of an assignment that does not qualify


@dataclasses.dataclass(frozen=True)
class ObservableSet:
    """Vectors with one target id each, and the targets no feasible input observes."""

    vectors: Vectors
    targets: list[str]
    unobservable: list[dict[str, Any]]  # {"target", "reason", "exhaustive"}


# ---- input domains and split geometry ------------------------------------------------------


def input_domain(model: FxModel, inp: int) -> tuple[int, int]:
    """Range of values student input ``inp`` can take (exact bounds; inflation values are sparse;
    a derived input: its value over its current source's range and any stored previous value)."""
    return _domain(model.spec, model.constants, inp)


@functools.lru_cache(maxsize=1024)  # the search, the proofs and coverage ask for the same domains hundreds of times
def _domain(spec: ObservationSpec, constants: FxConstants, inp: int) -> tuple[int, int]:
    if inp >= spec.input_width:
        k = inp - spec.input_width
        d = derived_vocab.get(spec.derived[k])
        cur_lo, cur_hi = _domain(spec, constants, spec.derived_sources(k)[0])
        ends = np.array([[cur_lo, INT32_MAX], [cur_hi, INT32_MIN]], dtype=np.int64)
        lo, hi = (int(d.device_value(golden.NUMPY, ends[i, 0], ends[i, 1])) for i in range(2))
        return lo, hi
    ago, f = spec.locate_input(inp)
    if ago > 0:
        return INT32_MIN, INT32_MAX  # raw context words
    return vocab.get(spec.features[f].name).device_range(constants)


def _upper(s: Split) -> int:
    """First value of the upper of the two regions the split cuts its input into."""
    return s.threshold + 1 if s.op == ">" else s.threshold


def _bit(s: Split, x: np.ndarray) -> np.ndarray:
    return (x > s.threshold) if s.op == ">" else (x < s.threshold)


def _flip_threshold(s: Split, v: int) -> int:
    """The threshold nearest to ``s.threshold`` whose comparison differs from ``s`` at ``v``."""
    if s.op == ">":
        return v - 1 if v <= s.threshold else v
    return v if v < s.threshold else v + 1


def _path_box(model: FxModel, t: int, leaf: int) -> dict[int, tuple[int, int]]:
    """Per input, the closed interval the path to ``leaf`` of tree ``t`` requires (within domain)."""
    box: dict[int, tuple[int, int]] = {}
    for k, s in enumerate(model.trees[t].splits):
        lo, hi = box.get(s.input, input_domain(model, s.input))
        taken = (leaf >> k) & 1
        if (s.op == ">") == bool(taken):
            lo = max(lo, _upper(s))
        else:
            hi = min(hi, _upper(s) - 1)
        box[s.input] = (lo, hi)
    return box


def reachable_leaves(model: FxModel) -> tuple[set[tuple[int, int]], dict[tuple[int, int], str]]:
    """Leaves some feasible input reaches (exact interval reasoning per input), and why the others do not."""
    solver = _Rtt(model)
    reach: set[tuple[int, int]] = set()
    why: dict[tuple[int, int], str] = {}
    names = model.spec.student_input_names()
    for t, tree in enumerate(model.trees):
        for i in range(len(tree.leaves)):
            box = _path_box(model, t, i)
            bad = [f"{names[inp]} in [{lo}, {hi}]" + (" (empty)" if lo > hi else "")
                   for inp, (lo, hi) in box.items() if not solver.interval_feasible(inp, lo, hi)]
            bad = bad or _derived_conflicts(model, box)
            if bad:
                why[(t, i)] = "unreachable: its path needs " + " and ".join(bad) + ", which no feasible input has"
            else:
                reach.add((t, i))
    return reach, why


def _derived_conflicts(model: FxModel, box: dict[int, tuple[int, int]]) -> list[str]:
    """Derived inputs whose required interval no value of their sources in ``box`` gives: a
    derived value is monotone in each source (``DerivedDef.monotone``), so its range over the
    sources' box is spanned by two corners."""
    spec, names, out = model.spec, model.spec.student_input_names(), []
    for k, name in enumerate(spec.derived):
        inp = spec.input_width + k
        d = derived_vocab.get(name)
        cur, prev = spec.derived_sources(k)
        (c_lo, c_hi), (p_lo, p_hi) = (box.get(j, input_domain(model, j)) for j in (cur, prev))
        if inp not in box or c_lo > c_hi or p_lo > p_hi:
            continue
        sc, sp = d.monotone
        ends = np.array([[c_lo if sc > 0 else c_hi, p_hi if sp < 0 else p_lo],
                         [c_hi if sc > 0 else c_lo, p_lo if sp < 0 else p_hi]], dtype=np.int64)
        lo, hi = (int(d.device_value(golden.NUMPY, ends[e, 0], ends[e, 1])) for e in range(2))
        want_lo, want_hi = box[inp]
        if max(lo, want_lo) > min(hi, want_hi):
            out.append(f"{names[inp]} in [{want_lo}, {want_hi}] while {names[cur]} in [{c_lo}, {c_hi}] and "
                       f"{names[prev]} in [{p_lo}, {p_hi}] give [{lo}, {hi}]")
    return out


# ---- current-step RTT features ---------------------------------------------------------------


def _rtt_events(rtt: np.ndarray, req: np.ndarray) -> np.ndarray:
    ev = np.zeros((len(rtt), fmt.EVENT_WORDS), dtype=np.int64)
    ev[:, fmt.EV_ATTR] = fmt.EVENT_RTT
    ev[:, fmt.EV_TIMESTAMP] = (np.asarray(req, dtype=np.int64) + rtt) & U32_MAX
    ev[:, fmt.EV_RTT_REQ_SEND_TS] = np.asarray(req, dtype=np.int64) & U32_MAX
    return ev.astype(np.uint32)


def _rtt_monotone(name: str) -> bool:
    """An RTT-driven feature that rises with the RTT alone: its inverse is exact at any rate."""
    feat = vocab.get(name)
    return feat.rtt_driven and not feat.rate_dependent and feat.rtt_direction == 1


class _Rtt:
    """Current-step RTT features: inverted analytically, then confirmed by ``golden.step``."""

    def __init__(self, model: FxModel) -> None:
        self.model = model
        spec, c = model.spec, model.constants
        self.col = {f.name: spec.input_index(0, j) for j, f in enumerate(spec.features)}
        self.name_of = {inp: spec.features[spec.locate_input(inp)[1]].name for inp in range(spec.input_width)}
        self.current = {inp for inp in range(spec.input_width) if spec.locate_input(inp)[0] == 0}
        realistic = np.geomspace(0.7 * fmt.RATE_MAX, max(c.rate_min * 64, 64), 24)  # rate' stays unclamped
        small = np.geomspace(max(c.rate_min * 64, 64), 1, 12)
        huge = np.geomspace(fmt.RATE_MAX + 1, U32_MAX, 6)
        order = np.round(np.concatenate([realistic, small, huge])).astype(np.int64)
        self.rates = np.array(list(dict.fromkeys(order.tolist())), dtype=np.int64)  # preference order

    def features(self, rtt: np.ndarray, rate: np.ndarray) -> np.ndarray:
        """Policy inputs (N, width) of RTT events with these RTTs and rates, history invalid."""
        rtt = np.asarray(rtt, dtype=np.int64)
        ctx = np.zeros((len(rtt), fmt.CTX_WORDS), dtype=np.int64)
        ctx[:, fmt.CTX_RATE] = rate
        ctx[:, fmt.CTX_PREV_FACTOR] = fmt.FACTOR_ONE
        g = golden.step(self.model, ctx.astype(np.uint32), _rtt_events(rtt, np.zeros(len(rtt), dtype=np.int64)))
        return g.features

    def feature(self, name: str, rtt: np.ndarray, rate: np.ndarray) -> np.ndarray:
        return self.features(rtt, np.broadcast_to(rate, np.shape(rtt)))[:, self.col[name]]

    def rtt_for(self, name: str, value: np.ndarray, rate: np.ndarray | int = 0) -> np.ndarray:
        """The registry's inverse of RTT-driven feature ``name``: the RTT reaching ``value`` at ``rate``."""
        value = np.asarray(value, dtype=np.int64)
        return vocab.get(name).rtt_inverse(self.model.constants, value, np.broadcast_to(rate, value.shape))

    def solve(self, name: str, values: np.ndarray, rates: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rtt, rate, ok): for each value of current-step feature ``name``, the first rate (in
        preference order) at which some RTT hits it exactly."""
        values = np.asarray(values, dtype=np.int64)
        rates = self.rates if rates is None else np.asarray(rates, dtype=np.int64)
        if not vocab.get(name).rate_dependent:
            rates = rates[:1]
        vv, rr = np.meshgrid(values, rates, indexing="ij")
        rtt = self.rtt_for(name, vv, rr)
        fits = (rtt >= 0) & (rtt <= U32_MAX)
        rtt = np.where(fits, rtt, 0)
        got = self.feature(name, rtt.ravel(), rr.ravel()).reshape(rtt.shape) if rtt.size else rtt
        hit = fits & (got == vv)
        first = np.argmax(hit, axis=1)
        rows = np.arange(len(values))
        return rtt[rows, first], rr[rows, first], hit[rows, first]

    def interval_feasible(self, inp: int, lo: int, hi: int) -> bool:
        """Whether input ``inp`` can take a value in [lo, hi] (exact except for current-step
        rate-dependent RTT features such as delta)."""
        dlo, dhi = input_domain(self.model, inp)
        lo, hi = max(lo, dlo), min(hi, dhi)
        if lo > hi:
            return False
        name = self.name_of.get(inp)
        if name is not None and inp in self.current and _rtt_monotone(name):
            rtt = int(self.rtt_for(name, np.array([lo]))[0])
            if rtt > U32_MAX:
                return False
            return int(self.feature(name, np.array([rtt]), np.array([1]))[0]) <= hi
        return True


# ---- slots: inputs realized together, one option per interval --------------------------------


@dataclasses.dataclass
class _Slot:
    """Policy inputs realized together; each option is a tuple of their values."""

    inputs: tuple[int, ...]
    names: tuple[str, ...]
    rtt_slot: bool = False  # current-step RTT features: realized by an (RTT, rate) pair
    exact: bool = True  # base options cover every feasible combination of intervals
    values: list[tuple[int, ...]] = dataclasses.field(default_factory=list)
    real: list[tuple[int, int]] = dataclasses.field(default_factory=list)  # (rtt, rate) of RTT slots
    n_base: int = 0
    # A coupled slot: the RTT slot ``rtt_part`` crossed with the stored previous values that
    # derived inputs read; options are rtt_part's values, then (previous, derived) per derived input.
    rtt_part: "_Slot | None" = None
    derived: tuple[tuple[int, int, int], ...] = ()  # (derived input, current input, previous input)
    _matrix: np.ndarray | None = dataclasses.field(default=None, repr=False)

    def matrix(self) -> np.ndarray:
        """``values`` as an (n, len(inputs)) int64 array; options are only ever appended, so the
        array is extended, not rebuilt (the search evaluates thousands of assignments per target)."""
        have = 0 if self._matrix is None else len(self._matrix)
        if have != len(self.values):
            new = np.array(self.values[have:], dtype=np.int64).reshape(-1, len(self.inputs))
            self._matrix = new if self._matrix is None else np.concatenate([self._matrix, new])
        return self._matrix


class _Search:
    """Model geometry, slots with their options, and the assignment search."""

    def __init__(self, model: FxModel, seed: int) -> None:
        self.model = model
        self.rng = np.random.default_rng(seed)
        self._terms: dict[int, np.ndarray] = {}  # ramp index -> its term per option (``_option_terms``)
        self._previous: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}  # ``_previous_for``
        self.witnesses = ramp_witnesses(model)
        self.solver = _Rtt(model)
        spec = model.spec
        self.cuts = {inp: self._cuts(inp) for inp in range(spec.student_width)}
        depth = max((t.depth for t in model.trees), default=0)
        self.leaves = np.zeros((len(model.trees), 1 << depth), dtype=np.int64)
        for t, tree in enumerate(model.trees):
            self.leaves[t, : len(tree.leaves)] = tree.leaves
        self._leaf_offset = np.arange(len(model.trees), dtype=np.int64) * self.leaves.shape[1]
        self.slots = self._make_slots()
        self.slot_of = {inp: j for j, s in enumerate(self.slots) for inp in s.inputs}
        self.contrib = [self._contrib(s, s.values) for s in self.slots]

    def _cuts(self, inp: int) -> np.ndarray:
        lo, hi = input_domain(self.model, inp)
        b = {_upper(s) for t in self.model.trees for s in t.splits if s.input == inp}
        for w in self.witnesses.values():  # a ramp mutant's witness value gets an interval of its own
            if w is not None and w[0] == inp:
                b |= {w[1], w[1] + 1}
        for r in self.model.ramps:  # ramp pieces: <= lo (constant), (lo, center], (center, hi), >= hi (constant)
            if r.input == inp:
                b |= {r.lo + 1, r.center + 1, r.hi}
        return np.array(sorted(x for x in b if lo < x <= hi), dtype=np.int64)

    def intervals(self, inp: int) -> list[tuple[int, int]]:
        lo, hi = input_domain(self.model, inp)
        cuts = self.cuts[inp].tolist()
        return list(zip([lo] + cuts, [c - 1 for c in cuts] + [hi]))

    def interval_of(self, inp: int, v: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.cuts[inp], v, side="right")

    # -- slots
    def _make_slots(self) -> list[_Slot]:
        spec, solver = self.model.spec, self.solver
        cur = {solver.name_of[i]: i for i in solver.current}
        rtt_names = [n for n in vocab.known() if n in cur and vocab.get(n).rtt_driven]
        rate_too = "rate" in cur and any(vocab.get(n).rate_dependent for n in rtt_names)
        names = rtt_names + (["rate"] if rate_too else [])
        slots = []
        grouped = {cur[n] for n in names}
        if names:
            slot = _Slot(tuple(cur[n] for n in names), tuple(names), rtt_slot=True)
            self._rtt_options(slot)
            if spec.derived:
                slot = self._couple(slot)
                grouped |= set(slot.inputs)
            slots.append(slot)
        for inp in range(spec.input_width):
            if inp not in grouped:
                name = solver.name_of[inp]
                slot = _Slot((inp,), (name,))
                for lo, hi in self.intervals(inp):
                    slot.values.append((int(np.clip(vocab.get(name).typical, lo, hi)),))
                    slot.real.append((0, 0))
                slot.n_base = len(slot.values)
                slots.append(slot)
        return slots

    def _couple(self, rtt: _Slot) -> _Slot:
        """The RTT slot crossed with one stored previous value per interval of each derived
        input's previous source (derived inputs read a current RTT feature and its stored
        previous step: the three are realized together, so their splits stay exact per option)."""
        spec = self.model.spec
        derived = []
        for k in range(len(spec.derived)):
            c, p = spec.derived_sources(k)
            if c not in rtt.inputs:
                raise BadInputError(f"derived input {spec.derived[k]!r} must read a current-step RTT feature")
            derived.append((spec.input_width + k, c, p))
        prevs = sorted({p for _, _, p in derived})
        inputs = rtt.inputs + tuple(prevs) + tuple(d for d, _, _ in derived)
        names = rtt.names + tuple(f"prev:{p}" for p in prevs) + tuple(spec.derived)
        slot = _Slot(inputs, names, rtt_slot=True, exact=False, rtt_part=rtt, derived=tuple(derived))
        reps = {p: [int(np.clip(0, lo, hi)) if lo <= 0 <= hi else lo for lo, hi in self.intervals(p)] for p in prevs}
        self._cross(slot, list(range(rtt.n_base)), reps)
        slot.n_base = len(slot.values)
        return slot

    def _cross(self, slot: _Slot, rtt_opts: list[int], reps: dict[int, list[int]]) -> list[int]:
        """Append coupled options: each RTT option with each assignment of previous values (the
        derived inputs' values computed for all of them in one array call)."""
        rtt = slot.rtt_part
        prevs = sorted(reps)
        start = len(slot.values)
        grids = np.array(np.meshgrid(*[reps[p] for p in prevs], indexing="ij")).reshape(len(prevs), -1).T
        keys = rtt.inputs + tuple(prevs)
        rows: list[tuple[int, ...]] = []
        sources: list[list[int]] = []  # per row: (current, previous) of each derived input
        for o in rtt_opts:
            vals = dict(zip(rtt.inputs, rtt.values[o]))
            for row in grids:
                vals.update(zip(prevs, (int(v) for v in row)))
                rows.append(tuple(vals[i] for i in keys))
                sources.append([vals[i] for _, c, p in slot.derived for i in (c, p)])
                slot.real.append(rtt.real[o])
        if not rows:
            return []
        src = np.array(sources, dtype=np.int64).reshape(len(rows), 2 * len(slot.derived))
        spec = self.model.spec
        derived = np.stack([derived_vocab.get(spec.derived[d - spec.input_width]).device_value(
            golden.NUMPY, src[:, 2 * e], src[:, 2 * e + 1]) for e, (d, _, _) in enumerate(slot.derived)], axis=1)
        slot.values.extend(row + tuple(extra) for row, extra in zip(rows, derived.tolist()))
        return list(range(start, len(slot.values)))

    def _coupled_options_at(self, slot: _Slot, inp: int, v: int) -> tuple[list[int], bool]:
        rtt = slot.rtt_part
        prevs = sorted({p for _, _, p in slot.derived})
        base_reps = {p: [slot.values[o][slot.inputs.index(p)] for o in range(slot.n_base)] for p in prevs}
        base_reps = {p: sorted(set(r)) for p, r in base_reps.items()}
        if inp in rtt.inputs:
            opts, exact = self._options_in(rtt, inp, v)
            return self._cross(slot, opts, base_reps), False
        if inp in prevs:
            return self._cross(slot, list(range(rtt.n_base)), {**base_reps, inp: [v]}), False
        (_, _, p), = [t for t in slot.derived if t[0] == inp]  # a derived input: solve its previous value
        lo, hit = self._previous_for(slot, inp, v)
        added = []
        for o in np.flatnonzero(hit).tolist():
            added += self._cross(slot, [o], {**base_reps, p: [int(lo[o])]})
        return added, False

    def _previous_for(self, slot: _Slot, inp: int, v: int) -> tuple[np.ndarray, np.ndarray]:
        """Per base RTT option: the smallest previous value at which derived input ``inp`` is at
        most ``v``, and whether it is exactly ``v``. Solved on first use for ``v`` and every split
        value on ``inp`` (threshold -1, 0, +1) together: one bisection per (value, option), run side by side."""
        if (inp, v) not in self._previous:
            rtt = slot.rtt_part
            (_, c, _), = [t for t in slot.derived if t[0] == inp]
            d = derived_vocab.get(self.model.spec.derived[inp - self.model.spec.input_width])
            want = np.array(sorted({v} | {s.threshold + e for t in self.model.trees for s in t.splits
                                          if s.input == inp for e in (-1, 0, 1)}), dtype=np.int64)[:, None]
            cur = np.broadcast_to(rtt.matrix()[: rtt.n_base, rtt.inputs.index(c)], (len(want), rtt.n_base))
            lo = np.full(cur.shape, INT32_MIN, dtype=np.int64)
            hi = np.full(cur.shape, INT32_MAX, dtype=np.int64)
            while (lo < hi).any():  # device_value falls as the previous value rises
                mid = (lo + hi) // 2
                above = d.device_value(golden.NUMPY, cur, mid) > want
                open_ = lo < hi
                lo, hi = np.where(open_ & above, mid + 1, lo), np.where(open_ & ~above, mid, hi)
            hit = d.device_value(golden.NUMPY, cur, lo) == want
            for row, w in enumerate(want[:, 0].tolist()):
                self._previous[(inp, w)] = (lo[row], hit[row])
        return self._previous[(inp, v)]

    def _rtt_options(self, slot: _Slot) -> None:
        """Base options of the current-step RTT slot: one realized point per reachable interval combination."""
        solver = self.solver
        only = slot.names[0] if len(slot.names) == 1 else None
        if only is not None and _rtt_monotone(only):
            inp = slot.inputs[0]
            for lo, hi in self.intervals(inp):
                for want in (int(np.clip(vocab.get(only).typical, lo, hi)), lo):
                    rtt = int(solver.rtt_for(only, np.array([want]))[0])
                    if rtt <= U32_MAX:
                        got = int(solver.feature(only, np.array([rtt]), np.array([1]))[0])
                        if lo <= got <= hi:
                            slot.values.append((got,))
                            slot.real.append((rtt, 0))
                            break
        elif only is not None:  # one rate-dependent RTT feature (delta): search the rates
            for lo, hi in self.intervals(slot.inputs[0]):
                want = np.array([np.clip(vocab.get(only).typical, lo, hi), hi, lo, (lo + hi) // 2], dtype=np.int64)
                rtt, rate, ok = solver.solve(only, want)
                if ok.any():
                    j = int(np.argmax(ok))
                    slot.values.append((int(want[j]),))
                    slot.real.append((int(rtt[j]), int(rate[j])))
                else:
                    slot.exact = False
        else:
            slot.exact = False
            self._add_rtt_candidates(slot, *self._rtt_grid(slot, {}))
        slot.n_base = len(slot.values)

    def _rtt_grid(self, slot: _Slot, fixed: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        """Candidate (rtt, rate) pairs for a joint RTT slot, with ``fixed`` member values hit exactly."""
        solver = self.solver
        reps = {n: [fixed[n]] if n in fixed else sorted({v for lo, hi in self.intervals(i)
                                                         for v in (int(np.clip(vocab.get(n).typical, lo, hi)), lo, hi)})
                for n, i in zip(slot.names, slot.inputs)}
        rates = np.array(reps["rate"], dtype=np.int64) if "rate" in reps else solver.rates
        rtts, rr = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        rtt_fixed = any(_rtt_monotone(n) for n in fixed)  # a fixed monotone feature pins the RTT
        for n in slot.names:
            if n == "rate":
                continue
            if _rtt_monotone(n):
                g_rate, g_rtt = np.meshgrid(rates, solver.rtt_for(n, np.array(reps[n])), indexing="ij")
                rtts.append(g_rtt.ravel())
                rr.append(g_rate.ravel())
            elif not rtt_fixed:
                d_rate, d_val = np.meshgrid(rates, np.array(reps[n], dtype=np.int64), indexing="ij")
                rtts.append(solver.rtt_for(n, d_val.ravel(), d_rate.ravel()))
                rr.append(d_rate.ravel())
        rtt, rate = np.concatenate(rtts), np.concatenate(rr)
        keep = (rtt >= 0) & (rtt <= U32_MAX)
        return rtt[keep], rate[keep]

    def _add_rtt_candidates(self, slot: _Slot, rtt: np.ndarray, rate: np.ndarray,
                            fixed: dict[str, int] | None = None) -> list[int]:
        """Append candidates with distinct interval combinations (and the fixed values); their indices."""
        if len(rtt) == 0:
            return []
        x = self.solver.features(rtt, rate)
        vals = np.stack([x[:, i] for i in slot.inputs], axis=1)
        ok = np.ones(len(rtt), dtype=bool)
        for n, v in (fixed or {}).items():
            ok &= vals[:, slot.names.index(n)] == v
        keys = np.stack([self.interval_of(i, vals[:, j]) for j, i in enumerate(slot.inputs)], axis=1)
        seen: set[tuple[int, ...]] = set()
        added = []
        for r in np.flatnonzero(ok):
            key = tuple(keys[r].tolist())
            if key in seen:
                continue
            seen.add(key)
            slot.values.append(tuple(int(v) for v in vals[r]))
            slot.real.append((int(rtt[r]), int(rate[r])))
            added.append(len(slot.values) - 1)
        return added

    def _contrib(self, slot: _Slot, values: list[tuple[int, ...]]) -> np.ndarray:
        """Leaf-index bits each option sets, per tree (OR over slots gives the leaf index)."""
        out = np.zeros((len(values), len(self.model.trees)), dtype=np.int64)
        if not values:
            return out
        v = np.array(values, dtype=np.int64).reshape(len(values), len(slot.inputs))
        for t, tree in enumerate(self.model.trees):
            for k, s in enumerate(tree.splits):
                if s.input in slot.inputs:
                    out[:, t] |= _bit(s, v[:, slot.inputs.index(s.input)]).astype(np.int64) << k
        return out

    def options_at(self, inp: int, v: int) -> tuple[list[int], bool]:
        """Options of ``inp``'s slot with ``inp == v`` exactly, and whether they cover every such input."""
        j = self.slot_of[inp]
        slot = self.slots[j]
        start = len(slot.values)
        if slot.rtt_part is not None:
            opts, exact = self._coupled_options_at(slot, inp, v)
        else:
            opts, exact = self._options_in(slot, inp, v)
        self.contrib[j] = np.concatenate([self.contrib[j], self._contrib(slot, slot.values[start:])])
        return opts, exact

    def _options_in(self, slot: _Slot, inp: int, v: int) -> tuple[list[int], bool]:
        """Append options of ``slot`` with ``inp == v``: their indices, and whether they cover every such input."""
        start = len(slot.values)
        name = self.solver.name_of[inp]
        exact = True
        if not slot.rtt_slot:
            slot.values.append((v,))
            slot.real.append((0, 0))
        elif len(slot.inputs) == 1:
            rtt, rate, ok = self.solver.solve(name, np.array([v]))
            if ok[0]:
                slot.values.append((v,))
                slot.real.append((int(rtt[0]), int(rate[0])))
            exact = _rtt_monotone(name)  # monotone in the RTT alone: no hit is a proof
        elif _rtt_monotone(name) and not self.solver.solve(name, np.array([v]))[2][0]:
            exact = True  # no RTT gives this value, whatever the rate
        else:
            self._add_rtt_candidates(slot, *self._rtt_grid(slot, {name: v}), fixed={name: v})
            exact = False
        return list(range(start, len(slot.values))), exact

    def base(self, j: int) -> np.ndarray:
        return np.arange(self.slots[j].n_base)

    @property
    def boxes(self) -> _Boxes:
        if not hasattr(self, "_boxes"):
            self._boxes = _Boxes(self)
        return self._boxes

    def _ends(self, j: int, opts: np.ndarray) -> np.ndarray:
        """Options at both ends of the intervals of ``opts`` of single-input slot ``j`` (a ramp's
        term is extreme there); the same tree bits, so they stand in for ``opts`` alike."""
        slot = self.slots[j]
        inp = slot.inputs[0]
        cache = slot.__dict__.setdefault("ends", {})
        iv = self.intervals(inp)
        start, out = len(slot.values), []
        for o in opts.tolist():
            lo, hi = iv[int(self.interval_of(inp, np.array([slot.values[o][0]]))[0])]
            for v in (lo, hi):
                if v not in cache:
                    cache[v] = len(slot.values)
                    slot.values.append((v,))
                    slot.real.append((0, 0))
                out.append(cache[v])
        self.contrib[j] = np.concatenate([self.contrib[j], self._contrib(slot, slot.values[start:])])
        return np.unique(np.concatenate([opts, np.array(out, dtype=np.int64)]))

    def search_ends(self, allowed: list[np.ndarray], score: Callable[[np.ndarray, np.ndarray], np.ndarray]
                    ) -> np.ndarray | None:
        """A qualifying assignment with the ramp inputs of non-RTT slots also at their intervals'
        ends (a witness the one-value-per-interval search can miss); None if the model has no
        such ramp input or none qualifies."""
        ramp_inputs = {r.input for r in self.model.ramps}
        wide = [self._ends(j, a) if not s.rtt_slot and s.inputs[0] in ramp_inputs and len(a) else a
                for j, (s, a) in enumerate(zip(self.slots, allowed))]
        if all(len(w) == len(a) for w, a in zip(wide, allowed)):
            return None
        return self.search(wide, score)[0]

    # -- evaluation and search
    def evaluate(self, combos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ensemble sums (N,) and leaf indices (N, n_trees) of option assignments (N, n_slots)."""
        idx = np.zeros((len(combos), len(self.model.trees)), dtype=np.int64)
        for j in range(len(self.slots)):
            idx |= np.take(self.contrib[j], combos[:, j], axis=0)
        # leaf values gathered from the flat table (tree t's leaves start at t * width): one take, no 2-D fancy index
        total = self.model.bias + np.take(self.leaves.ravel(), idx + self._leaf_offset).sum(axis=1)
        for i, r in enumerate(self.model.ramps):
            total = total + np.take(self._option_terms(i), combos[:, self.slot_of[r.input]])
        return total, idx

    def _option_terms(self, i: int) -> np.ndarray:
        """Ramp ``i``'s term at every option of its input's slot, extended as options are appended
        (each option's term is computed once, not once per assignment evaluated)."""
        r = self.model.ramps[i]
        slot = self.slots[self.slot_of[r.input]]
        have = self._terms.get(i, np.zeros(0, dtype=np.int64))
        if len(have) < len(slot.values):
            new = slot.matrix()[len(have):, slot.inputs.index(r.input)]
            have = self._terms[i] = np.concatenate([have, golden.ramp_value(golden.NUMPY, r, new)])
        return have

    def search(self, allowed: list[np.ndarray], score: Callable[[np.ndarray, np.ndarray], np.ndarray]
               ) -> tuple[np.ndarray | None, bool]:
        """Best qualifying assignment (or None) and whether every assignment was examined."""
        sizes = [len(a) for a in allowed]
        if min(sizes, default=1) == 0:
            return None, True
        if math.prod(sizes) <= LIMIT:
            grid = np.indices(sizes).reshape(len(sizes), -1).T
            combos = np.stack([allowed[j][grid[:, j]] for j in range(len(sizes))], axis=1).reshape(-1, len(sizes))
            sc = score(*self.evaluate(combos))
            best = int(np.argmax(sc))
            return (combos[best] if sc[best] > -_PENALTY / 2 else None), True
        combos = np.stack([a[self.rng.integers(0, len(a), SAMPLE)] for a in allowed], axis=1)
        sc = score(*self.evaluate(combos))
        best_row, best_sc = None, -np.inf
        for start in np.argsort(-sc, kind="stable")[:3]:
            row, cur = self._greedy(combos[start].copy(), float(sc[start]), allowed, score)
            if cur > best_sc:
                best_row, best_sc = row, cur
        return (best_row if best_sc > -_PENALTY / 2 else None), False

    def _greedy(self, row: np.ndarray, cur: float, allowed: list[np.ndarray], score: Callable) -> tuple[np.ndarray, float]:
        for _ in range(8):
            improved = False
            for j, opts in enumerate(allowed):
                cand = np.repeat(row[None, :], len(opts), axis=0)
                cand[:, j] = opts
                sc = score(*self.evaluate(cand))
                k = int(np.argmax(sc))
                if sc[k] > cur:
                    row, cur, improved = cand[k], float(sc[k]), True
            if not improved:
                break
        return row, cur

    # -- realization
    def realize(self, combos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Contexts, RTT events and attrs whose policy inputs are the options' values."""
        c, n = self.model.constants, len(combos)
        rng = self.rng
        ctx = np.zeros((n, fmt.CTX_WORDS), dtype=np.int64)
        ctx[:, fmt.CTX_RATE] = np.round(np.exp(rng.uniform(np.log(max(c.rate_min * 64, 64)), np.log(fmt.RATE_MAX), n)))
        ctx[:, fmt.CTX_PREV_FACTOR] = rng.integers(c.clamp_min_q16, c.clamp_max_q16 + 1, n)
        ctx[:, fmt.CTX_COUNTS] = rng.integers(0, 4, n) | (rng.integers(0, 3, n) << 16)
        ctx[:, fmt.CTX_FLAGS] = fmt.CTX_FLAG_HISTORY_VALID
        ctx[:, fmt.CTX_PROBE_TS] = rng.integers(0, 1 << 32, n)
        base = self.model.spec.reward.base_rtt_ns
        rtt = np.round(base * rng.uniform(1.0, 3.0, n)).astype(np.int64)
        for j, slot in enumerate(self.slots):
            vals = np.array([slot.values[o] for o in combos[:, j]], dtype=np.int64).reshape(n, len(slot.inputs))
            if slot.rtt_slot:
                real = np.array([slot.real[o] for o in combos[:, j]], dtype=np.int64).reshape(n, 2)
                rtt = real[:, 0]
                ctx[:, fmt.CTX_RATE] = np.where(real[:, 1] > 0, real[:, 1], ctx[:, fmt.CTX_RATE])
            for col, inp in enumerate(slot.inputs):
                self._place(ctx, inp, vals[:, col])
        golden.store_derived_states(self.model, ctx)
        ev = _rtt_events(rtt, rng.integers(0, 1 << 32, n))
        return (ctx & U32_MAX).astype(np.uint32), ev, rng.integers(0, 32, n).astype(np.uint32)

    def _place(self, ctx: np.ndarray, inp: int, v: np.ndarray) -> None:
        spec = self.model.spec
        if inp >= spec.input_width:  # derived: the firmware computes it from the placed sources
            return
        ago, f = spec.locate_input(inp)
        fld = vocab.get(spec.features[f].name).context_field
        if ago > 0:
            ctx[:, fmt.CTX_HISTORY + (ago - 1) * spec.n_features + f] = v & U32_MAX
        elif fld is not None:  # RTT-driven features are realized by the RTT instead
            ctx[:, fld.word] = fld.store(ctx[:, fld.word], v)


# ---- interval proofs for models with ramps ------------------------------------------------------


class _Boxes:
    """Sound exhaustive claims when the model has ramps.

    The search's options are realized points, one per interval; a ramp's term varies inside an
    interval, so "no option observes it" proves nothing. Here every input ranges over its whole
    feasible domain, as the search's intervals (cut at every split threshold and at each ramp's
    ``lo + 1``, ``center + 1`` and ``hi``, so every interval lies in one piece on which the ramp's term
    is constant or monotone: its extremes are at the interval's ends). A box (a set of intervals
    per input) bounds the ensemble sum by the leaves its tree paths allow plus each ramp's range;
    boxes that could be observable are split (branch and bound) until every part is ruled out, a
    single-interval box could be observable (no proof), or the node budget runs out (no proof).
    Combinations of intervals no feasible input has are kept (derived inputs are only narrowed by
    their sources' ranges), so the bound over-approximates: a proof holds for every input,
    whatever slot (RTT, coupled) realizes it."""

    NODES = 4000

    def __init__(self, srch: "_Search") -> None:
        model = srch.model
        self.model = model
        self.width = model.spec.student_width
        self.domain: list[tuple[np.ndarray, np.ndarray]] = []
        for inp in range(self.width):
            iv = [(lo, hi) for lo, hi in srch.intervals(inp) if srch.solver.interval_feasible(inp, lo, hi)]
            self.domain.append((np.array([a for a, _ in iv], dtype=np.int64), np.array([b for _, b in iv], dtype=np.int64)))
        self.leaves = [np.asarray(t.leaves, dtype=np.int64) for t in model.trees]
        self.derived = [(model.spec.input_width + k, *model.spec.derived_sources(k)) for k in range(len(model.spec.derived))]
        used = {s.input for t in model.trees for s in t.splits} | {r.input for r in model.ramps}
        self.used = used | {i for d in self.derived for i in d}

    # -- boxes
    def box(self, restrict: dict[int, tuple[int, int]] | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """Every feasible interval, those of input ``i`` cut to ``restrict[i]`` (closed)."""
        out = []
        for inp, (lo, hi) in enumerate(self.domain):
            if restrict and inp in restrict:
                a, b = restrict[inp]
                lo, hi = np.maximum(lo, a), np.minimum(hi, b)
                keep = lo <= hi
                lo, hi = lo[keep], hi[keep]
            out.append((lo, hi))
        return out

    def _tighten(self, box: list) -> list | None:
        """Drop a derived input's intervals its sources' ranges cannot give (monotone corners); None: empty."""
        if any(len(lo) == 0 for lo, _ in box):
            return None
        for inp, cur, prev in self.derived:
            d = derived_vocab.get(self.model.spec.derived[inp - self.model.spec.input_width])
            (c_lo, c_hi), (p_lo, p_hi) = ((int(box[i][0].min()), int(box[i][1].max())) for i in (cur, prev))
            sc, sp = d.monotone
            ends = np.array([[c_lo if sc > 0 else c_hi, p_hi if sp < 0 else p_lo],
                             [c_hi if sc > 0 else c_lo, p_lo if sp < 0 else p_hi]], dtype=np.int64)
            lo, hi = (int(d.device_value(golden.NUMPY, ends[e, 0], ends[e, 1])) for e in range(2))
            keep = (box[inp][1] >= lo) & (box[inp][0] <= hi)
            if not keep.all():
                box = list(box)
                box[inp] = (box[inp][0][keep], box[inp][1][keep])
                if not keep.any():
                    return None
        return box

    def _bound(self, box: list, pinned: int | None) -> tuple[int, int, np.ndarray] | None:
        """(low, high) of the sum without tree ``pinned``'s leaf, and that tree's possible leaves;
        None when some tree has no leaf the box allows."""
        low = high = self.model.bias
        pinned_leaves = np.zeros(0, dtype=np.int64)
        for t, tree in enumerate(self.model.trees):
            n = len(tree.leaves)
            idx = np.arange(n)
            ok = np.ones(n, dtype=bool)
            for k, s in enumerate(tree.splits):
                bits = _bit(s, box[s.input][0])  # constant on each interval (cut at the threshold)
                can0, can1 = bool((~bits).any()), bool(bits.any())
                b = (idx >> k) & 1
                ok &= np.where(b == 1, can1, can0)
            if not ok.any():
                return None
            if t == pinned:
                pinned_leaves = idx[ok]
            else:
                low += int(self.leaves[t][ok].min())
                high += int(self.leaves[t][ok].max())
        for r in self.model.ramps:
            lo, hi = box[r.input]
            ends = golden.ramp_value(golden.NUMPY, r, np.concatenate([lo, hi]))
            low += int(ends.min())
            high += int(ends.max())
        return low, high, pinned_leaves

    def _pick(self, box: list) -> int | None:
        """The input to split: the used one with the most intervals (None: every one is a single interval)."""
        sizes = [len(box[i][0]) if i in self.used else 0 for i in range(self.width)]
        j = int(np.argmax(sizes))
        return j if sizes[j] > 1 else None

    def prove(self, box: list, pinned: int | None,
              could: Callable[[int, int, np.ndarray], bool]) -> bool:
        """Whether no input in ``box`` can be observable: ``could(low, high, leaves)`` says whether
        some sum in [low, high] (plus one of the pinned tree's ``leaves``) may be."""
        stack, nodes = [box], 0
        while stack:
            nodes += 1
            if nodes > self.NODES:
                return False
            b = self._tighten(stack.pop())
            if b is None:
                continue
            bound = self._bound(b, pinned)
            if bound is None or not could(*bound):
                continue
            j = self._pick(b)
            if j is None:
                return False
            lo, hi = b[j]
            half = len(lo) // 2
            for part in ((lo[half:], hi[half:]), (lo[:half], hi[:half])):
                nb = list(b)
                nb[j] = part
                stack.append(nb)
        return True

    # -- targets
    def sum_in(self, a: float, b: float, pinned: int | None = None, leaf: int | None = None,
               restrict: dict[int, tuple[int, int]] | None = None) -> bool:
        """Proof that no input (in ``restrict``) has an ensemble sum in [a, b]."""
        def could(low: int, high: int, leaves: np.ndarray) -> bool:
            if pinned is not None:
                extra = self.leaves[pinned][leaves]
                if len(extra) == 0:
                    return False
                low, high = low + int(extra.min()), high + int(extra.max())
            return max(low, a) <= min(high, b)
        return self.prove(self.box(restrict), pinned, could)

    def split_flip(self, t: int, k: int, v: int) -> bool:
        """Proof that no input with split ``k`` of tree ``t``'s input at ``v`` has different clamped
        factors for the two outcomes of that comparison."""
        c = self.model.constants
        lo_c, hi_c = c.clamp_min_q16, c.clamp_max_q16
        leaves = self.leaves[t]
        s = self.model.trees[t].splits[k]

        def could(low: int, high: int, idx: np.ndarray) -> bool:
            for i in idx.tolist():
                a, b = sorted((int(leaves[i]), int(leaves[i ^ (1 << k)])))
                if a != b and max(low, lo_c - b + 1) <= min(high, hi_c - a - 1):
                    return True  # clip(r + a) != clip(r + b) iff r + b > lo_c and r + a < hi_c
            return False
        return self.prove(self.box({s.input: (v, v)}), t, could)


# ---- mutants ---------------------------------------------------------------------------------


def _mutant(model: FxModel, **change: Any) -> FxModel | None:
    """``model`` with one datum changed (None if the change makes the model invalid)."""
    try:
        if "split" in change:
            t, k, thr = change["split"]
            tree = model.trees[t]
            splits = tree.splits[:k] + (dataclasses.replace(tree.splits[k], threshold=thr),) + tree.splits[k + 1 :]
            return _with_tree(model, t, Tree(splits, tree.leaves))
        if "leaf" in change:
            t, i, d = change["leaf"]
            tree = model.trees[t]
            return _with_tree(model, t, Tree(tree.splits, tree.leaves[:i] + (tree.leaves[i] + d,) + tree.leaves[i + 1 :]))
        if "bias" in change:
            return dataclasses.replace(model, bias=model.bias + change["bias"])
        if "ramp" in change:
            i, name, d = change["ramp"]
            ramp = dataclasses.replace(model.ramps[i], **{name: getattr(model.ramps[i], name) + d})
            return dataclasses.replace(model, ramps=model.ramps[:i] + (ramp,) + model.ramps[i + 1:])
        return dataclasses.replace(model, constants=dataclasses.replace(model.constants, **change))
    except BadInputError:
        return None


def _with_tree(model: FxModel, t: int, tree: Tree) -> FxModel:
    return dataclasses.replace(model, trees=model.trees[:t] + (tree,) + model.trees[t + 1 :])


def _differs(v: Vectors, rows: np.ndarray, g: golden.GoldenResult) -> np.ndarray:
    """Rows of ``v`` whose expected outputs differ from ``g`` (golden outputs on those rows)."""
    return (v.rate[rows] != g.rate) | (v.rtt_req[rows] != g.rtt_req) | np.any(v.ctx_out[rows] != g.ctx, axis=1)


# ---- targets ---------------------------------------------------------------------------------


@dataclasses.dataclass
class _Plan:
    """Targets with a chosen assignment (and the mutants it must expose), and the unobservable ones."""

    search: _Search
    jobs: list[tuple[str, np.ndarray, list[FxModel | None]]] = dataclasses.field(default_factory=list)
    unobservable: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def miss(self, target: str, reason: str, exhaustive: bool) -> None:
        self.unobservable.append({"target": target, "reason": reason, "exhaustive": bool(exhaustive)})

    def exact_except(self, skip: set[int]) -> bool:
        return all(s.exact for j, s in enumerate(self.search.slots) if j not in skip)


_UNPROVEN = (" among the realized options, but not proven: the ramps' terms vary inside the search's "
             "intervals and interval bounds do not rule it out")


def _clamp_bounds(c: FxConstants) -> tuple[float, float]:
    return float(c.clamp_min_q16), float(c.clamp_max_q16)


def _inside(total: np.ndarray, c: FxConstants) -> np.ndarray:
    lo, hi = _clamp_bounds(c)
    return np.minimum(total - lo, hi - total).astype(np.float64)


def _plan_splits(plan: _Plan) -> None:
    srch = plan.search
    model, c = srch.model, srch.model.constants
    names = model.spec.student_input_names()
    for t, tree in enumerate(model.trees):
        for k, s in enumerate(tree.splits):
            lo, hi = input_domain(model, s.input)
            j = srch.slot_of[s.input]
            for d, tag in ((-1, "T-1"), (0, "T"), (1, "T+1")):
                tid, v = f"split:t{t}:l{k}:{tag}", s.threshold + d
                if not lo <= v <= hi:
                    plan.miss(tid, f"{names[s.input]} never equals {v} (its range is [{lo}, {hi}])", True)
                    continue
                thr = _flip_threshold(s, v)
                if not INT32_MIN <= thr <= INT32_MAX:
                    plan.miss(tid, f"no int32 threshold flips the comparison at {v}", True)
                    continue
                opts, exact = srch.options_at(s.input, v)
                if not opts:
                    plan.miss(tid, f"no RTT event gives {names[s.input]} = {v} exactly", exact)
                    continue
                allowed = [np.array(opts) if i == j else srch.base(i) for i in range(len(srch.slots))]
                score = _split_score(srch, t, k, c)
                combo, full = srch.search(allowed, score)
                if combo is None and model.ramps:
                    combo = srch.search_ends(allowed, score)
                if combo is None:
                    why = ("flipping this comparison never changes the clamped factor "
                           "(equal leaves, or the clamp saturates both outcomes)")
                    if model.ramps:  # the options' ramp terms are samples: only interval bounds prove it
                        proven = srch.boxes.split_flip(t, k, v)
                        plan.miss(tid, why if proven else why + _UNPROVEN, proven)
                    else:
                        plan.miss(tid, why, full and exact and plan.exact_except({j}))
                    continue
                plan.jobs.append((tid, combo, [_mutant(model, split=(t, k, thr))]))


def _split_score(srch: _Search, t: int, k: int, c: FxConstants) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    leaves = srch.leaves[t]

    def score(total: np.ndarray, idx: np.ndarray) -> np.ndarray:
        alt = total - leaves[idx[:, t]] + leaves[idx[:, t] ^ (1 << k)]
        margin = np.minimum(_inside(total, c), _inside(alt, c))
        ok = np.clip(total, c.clamp_min_q16, c.clamp_max_q16) != np.clip(alt, c.clamp_min_q16, c.clamp_max_q16)
        return np.where(ok, margin, margin - _PENALTY)

    return score


def _unclamped_score(c: FxConstants) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def score(total: np.ndarray, idx: np.ndarray) -> np.ndarray:
        margin = _inside(total, c)
        return np.where(margin >= 1, margin, margin - _PENALTY)

    return score


def _plan_leaves(plan: _Plan) -> None:
    srch = plan.search
    model, c = srch.model, srch.model.constants
    reach, why = reachable_leaves(model)
    for t, tree in enumerate(model.trees):
        for i in range(len(tree.leaves)):
            tid = f"leaf:t{t}:{i}"
            if (t, i) not in reach:
                plan.miss(tid, why[(t, i)], True)
                continue
            allowed = []
            for j, slot in enumerate(srch.slots):
                mask = sum(1 << k for k, s in enumerate(tree.splits) if s.input in slot.inputs)
                opts = srch.base(j)
                allowed.append(opts[(srch.contrib[j][opts, t] & mask) == (i & mask)])
            combo, full = srch.search(allowed, _unclamped_score(c))
            if combo is None and model.ramps and min(len(a) for a in allowed) > 0:
                combo = srch.search_ends(allowed, _unclamped_score(c))
            if combo is not None:
                plan.jobs.append((tid, combo, [_mutant(model, leaf=(t, i, 1)), _mutant(model, leaf=(t, i, -1))]))
            elif min(len(a) for a in allowed) == 0:
                plan.miss(tid, "no realized input reaches it", plan.exact_except(set()))
            else:
                _plan_leaf_edits(plan, t, i, allowed, full)


def _plan_leaf_edits(plan: _Plan, t: int, i: int, allowed: list[np.ndarray], full: bool) -> None:
    """A leaf no sum strictly inside the clamp reaches: each edit on its own (``leaf:t{t}:{i}:+1|-1``),
    since ``clip(s + 1) != clip(s)`` for ``clamp_min <= s < clamp_max`` and ``clip(s - 1) != clip(s)``
    for ``clamp_min < s <= clamp_max``: a sum exactly at ``clamp_min`` still shows leaf + 1, one at
    ``clamp_max`` leaf - 1."""
    srch = plan.search
    model, c = srch.model, srch.model.constants
    lo, hi = c.clamp_min_q16, c.clamp_max_q16
    tid, box = f"leaf:t{t}:{i}", _path_box(model, t, i)
    inside = "no input reaching it has a sum strictly inside the factor clamp"
    if model.ramps:
        proven = srch.boxes.sum_in(lo + 1, hi - 1, pinned=t, restrict=box)
        plan.miss(tid, inside if proven else inside + _UNPROVEN, proven)
    else:
        plan.miss(tid, inside, full and plan.exact_except(set()))
    for d, visible, bound in ((1, (lo, hi - 1), "clamp_min"), (-1, (lo + 1, hi), "clamp_max")):
        combo, full_d = srch.search(allowed, _visible_score(c, d))
        if combo is None and model.ramps:
            combo = srch.search_ends(allowed, _visible_score(c, d))
        if combo is not None:
            plan.jobs.append((f"{tid}:{d:+d}", combo, [_mutant(model, leaf=(t, i, d))]))
            continue
        why = f"every input reaching it saturates the factor clamp (no sum inside it or at {bound})"
        if model.ramps:
            proven = srch.boxes.sum_in(*visible, pinned=t, restrict=box)
            plan.miss(f"{tid}:{d:+d}", why if proven else why + _UNPROVEN, proven)
        else:
            plan.miss(f"{tid}:{d:+d}", why, full_d and plan.exact_except(set()))


def _visible_score(c: FxConstants, d: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Qualifies a sum ``s`` where adding ``d`` (+-1) changes the clamped factor."""
    lo, hi = c.clamp_min_q16, c.clamp_max_q16

    def score(total: np.ndarray, idx: np.ndarray) -> np.ndarray:
        margin = np.minimum(total - lo + int(d > 0), hi - total + int(d < 0)).astype(np.float64)
        return np.where(margin >= 1, margin, margin - _PENALTY)

    return score


def _plan_other(plan: _Plan) -> None:
    """Bias and the clamp bounds: sums unclamped, and nearest to each bound below / at / above it."""
    srch = plan.search
    model, c = srch.model, srch.model.constants
    lo, hi = c.clamp_min_q16, c.clamp_max_q16
    every = [srch.base(j) for j in range(len(srch.slots))]

    def near(goal: int, ok: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        def score(total: np.ndarray, idx: np.ndarray) -> np.ndarray:
            dist = -np.abs(total - goal).astype(np.float64)
            return np.where(ok(total), dist, dist - _PENALTY)
        return score

    def inside(s: np.ndarray) -> np.ndarray:
        return (s > lo) & (s < hi)

    inf = float("inf")
    # the sums whose absence a miss claims (wide enough that every mutant of the target stays invisible)
    sums = {"bias": (lo, hi), "clamp_min:-1": (-inf, lo), "clamp_min:0": (lo, lo), "clamp_min:+1": (lo + 1, hi - 1),
            "clamp_max:+1": (hi, inf), "clamp_max:0": (hi, hi), "clamp_max:-1": (lo + 1, hi - 1)}
    targets = [
        ("bias", _unclamped_score(c), [_mutant(model, bias=1), _mutant(model, bias=-1)]),
        ("clamp_min:-1", near(lo - 1, lambda s: s < lo),
         [_mutant(model, clamp_min_q16=lo + 1), _mutant(model, clamp_min_q16=lo - 1)]),
        ("clamp_min:0", near(lo, lambda s: s == lo), [_mutant(model, clamp_min_q16=lo + 1)]),
        ("clamp_min:+1", near(lo + 1, inside), None),
        ("clamp_max:+1", near(hi + 1, lambda s: s > hi),
         [_mutant(model, clamp_max_q16=hi - 1), _mutant(model, clamp_max_q16=hi + 1)]),
        ("clamp_max:0", near(hi, lambda s: s == hi), [_mutant(model, clamp_max_q16=hi - 1)]),
        ("clamp_max:-1", near(hi - 1, inside), None),
    ]
    for tid, score, mutants in targets:
        combo, full = srch.search(every, score)
        if combo is None and model.ramps:
            combo = srch.search_ends(every, score)
        if combo is None:
            why = "no reachable ensemble sum satisfies it"
            if model.ramps:
                proven = srch.boxes.sum_in(*sums[tid])
                plan.miss(tid, why if proven else why + _UNPROVEN, proven)
            else:
                plan.miss(tid, why, full and plan.exact_except(set()))
            continue
        if mutants is None:  # the bound moved just past the nearest unclamped sum
            total = int(srch.evaluate(combo[None, :])[0][0])
            mutants = [_mutant(model, clamp_min_q16=total + 1) if tid.startswith("clamp_min")
                       else _mutant(model, clamp_max_q16=total - 1)]
        plan.jobs.append((tid, combo, mutants))


RAMP_FIELDS = ("lo", "center", "hi", "k_below", "k_above", "shift")


def ramp_mutants(model: FxModel) -> list[tuple[str, FxModel | None]]:
    """(id, mutated model) of every one-off edit of a ramp constant (None: the edit makes the
    model invalid, e.g. its product could overflow)."""
    return [(f"ramp:{i}:{name}:{d:+d}", _mutant(model, ramp=(i, name, d)))
            for i in range(len(model.ramps)) for name in RAMP_FIELDS for d in (-1, 1)]


def ramp_witnesses(model: FxModel) -> dict[str, tuple[int, int] | None]:
    """Per ramp mutant id: (input, value) of the input value nearest the ramp's center at which the
    mutant's term differs from the model's, or None when it differs at none, by enumeration of
    ``[lo - 3, hi + 3]`` of the original and mutated ramp (every value beyond is clamped alike by
    both, so the enumeration is exhaustive; a term the same everywhere is a harmless edit)."""
    out: dict[str, tuple[int, int] | None] = {}
    for tid, mutant in ramp_mutants(model):
        i = int(tid.split(":")[1])
        r = model.ramps[i]
        if mutant is None:
            continue
        m = mutant.ramps[i]
        x = np.arange(min(r.lo, m.lo) - 3, max(r.hi, m.hi) + 4, dtype=np.int64)
        differs = golden.ramp_value(golden.NUMPY, r, x) != golden.ramp_value(golden.NUMPY, m, x)
        if not differs.any():
            out[tid] = None
            continue
        hits = x[differs]
        out[tid] = (r.input, int(hits[np.argmin(np.abs(hits - r.center))]))
    return out


def _plan_ramps(plan: _Plan) -> None:
    """Each ramp mutant: an unclamped sum with the ramp's input at the mutant's witness value."""
    srch = plan.search
    model, c = srch.model, srch.model.constants
    mutated = dict(ramp_mutants(model))
    for tid, witness in srch.witnesses.items():
        if witness is None:
            plan.miss(tid, "the ramp's term is the same for every input value", True)
            continue
        inp, value = witness
        j = srch.slot_of[inp]
        allowed = [srch.base(k) for k in range(len(srch.slots))]
        col = srch.slots[j].inputs.index(inp)
        values = srch.slots[j].matrix()[:, col]
        allowed[j] = np.flatnonzero(values == value)
        combo, full = srch.search(allowed, _unclamped_score(c))
        if combo is None:
            plan.miss(tid, f"no realized input puts {inp} at {value} with an unclamped sum", False)
        else:
            plan.jobs.append((tid, combo, [mutated[tid]]))


def _check(v: Vectors, rows: np.ndarray, mutants: list[FxModel | None]) -> bool:
    """Whether every mutant's golden output differs from the expected one on some of ``rows``."""
    if not mutants or any(m is None for m in mutants):
        return False
    ctx, ev, attr = v.ctx_in[rows], v.event[rows], v.attr[rows]
    return all(bool(_differs(v, rows, golden.step(m, ctx, ev, attr)).any()) for m in mutants)


def _rate_round(model: FxModel, v: Vectors) -> int | None:
    """Index of an RTT vector whose rate update carries a fraction >= 1/2 (rounding instead would
    change the rate), unclamped."""
    c = model.constants
    rtt = (v.event[:, fmt.EV_ATTR] & 0xFF) == fmt.EVENT_RTT
    carry = v.ctx_in[:, fmt.CTX_FLAGS].astype(np.int64) >> fmt.CTX_RATE_CARRY_SHIFT
    prod = v.ctx_in[:, fmt.CTX_RATE].astype(np.int64) * v.ctx_out[:, fmt.CTX_PREV_FACTOR].astype(np.int32) + carry
    new = prod >> fmt.FACTOR_FRAC_BITS
    ok = rtt & ((prod & 0xFFFF) >= 0x8000) & (new > c.rate_min) & (new < fmt.RATE_MAX) & (v.rate == new)
    ok &= v.ctx_in[:, fmt.CTX_RATE] != 0
    hits = np.flatnonzero(ok)
    return int(hits[0]) if len(hits) else None


def _probe_vectors(model: FxModel, rng: np.random.Generator) -> tuple[Vectors, list[str], list[list[FxModel | None]]]:
    """TX events at elapsed = timeout - 1 / timeout / timeout + 1 on running flows."""
    c = model.constants
    t = c.probe_timeout_ns
    elapsed = [(tag, t + d) for d, tag in ((-1, "T-1"), (0, "T"), (1, "T+1")) if 0 <= t + d <= U32_MAX]
    n = len(elapsed)
    ctx = np.zeros((n, fmt.CTX_WORDS), dtype=np.int64)
    ctx[:, fmt.CTX_RATE] = c.rate_initial
    ctx[:, fmt.CTX_PREV_FACTOR] = fmt.FACTOR_ONE
    ctx[:, fmt.CTX_FLAGS] = fmt.CTX_FLAG_HISTORY_VALID
    ctx[:, fmt.CTX_PROBE_TS] = rng.integers(0, 1 << 32, n)
    ev = np.zeros((n, fmt.EVENT_WORDS), dtype=np.int64)
    ev[:, fmt.EV_ATTR] = fmt.EVENT_TX
    ev[:, fmt.EV_TIMESTAMP] = (ctx[:, fmt.CTX_PROBE_TS] + np.array([e for _, e in elapsed], dtype=np.int64)) & U32_MAX
    vec = expected(model, ctx.astype(np.uint32), ev.astype(np.uint32), rng.integers(0, 32, n).astype(np.uint32))
    mutants = [[_mutant(model, probe_timeout_ns=e if e < t else e + 1)] for _, e in elapsed]
    return vec, [f"probe_timeout:{tag}" for tag, _ in elapsed], mutants


def observable_vectors(model: FxModel, seed: int = 0) -> ObservableSet:
    """One golden-confirmed vector per observable target; the rest listed with the reason."""
    plan = _Plan(_Search(model, seed))
    _plan_splits(plan)
    _plan_leaves(plan)
    _plan_other(plan)
    _plan_ramps(plan)
    srch = plan.search
    combos = np.array([combo for _, combo, _ in plan.jobs], dtype=np.int64).reshape(-1, len(srch.slots))
    found = expected(model, *srch.realize(combos))
    keep, targets = [], []
    for r, (tid, _, mutants) in enumerate(plan.jobs):
        if _check(found, np.array([r]), mutants):
            keep.append(r)
            targets.append(tid)
        else:
            plan.miss(tid, "the constructed vector failed the golden mutant check", False)
    parts = [_take(found, np.array(keep, dtype=np.int64))]
    r = _rate_round(model, parts[0])
    if r is None:
        plan.miss("rate_round", "no constructed vector carries a fraction >= 1/2 with an unclamped rate", False)
    else:
        parts.append(_take(parts[0], np.array([r])))
        targets.append("rate_round")
    probe, tids, mutants = _probe_vectors(model, srch.rng)
    ok = [i for i in range(len(probe)) if _check(probe, np.array([i]), mutants[i])]
    for i in range(len(probe)):
        if i not in ok:
            plan.miss(tids[i], "moving the timeout by one never changes whether this TX event re-requests a probe", True)
    parts.append(_take(probe, np.array(ok, dtype=np.int64)))
    targets += [tids[i] for i in ok]
    vec = dataclasses.replace(concat(*parts), targets=np.array(targets, dtype=object))
    return ObservableSet(vec, targets, plan.unobservable)


def _take(v: Vectors, rows: np.ndarray) -> Vectors:
    return Vectors(*(getattr(v, f.name)[rows] for f in dataclasses.fields(Vectors)))


# ---- coverage: which one-datum mutants a vector set exposes ------------------------------------


def killed_by(model: FxModel, mutant: str) -> tuple[str, ...]:
    """The observable targets whose vectors expose ``mutant`` (a :func:`coverage` id): it is
    unobservable iff every one of them is. A leaf or bias edit of +1 is visible at a sum exactly at
    ``clamp_min`` too, -1 at ``clamp_max``; moving ``clamp_min`` up by one is visible at a sum at
    it as well as below it, moving ``clamp_max`` down by one likewise."""
    kind, *rest = mutant.split(":")
    if kind == "split":
        t, k, d = int(rest[0][1:]), int(rest[1][1:]), rest[2]
        op = model.trees[t].splits[k].op
        tag = {(">", "thr-1"): "T", (">", "thr+1"): "T+1", ("<", "thr-1"): "T-1", ("<", "thr+1"): "T"}[(op, d)]
        return (f"split:t{t}:l{k}:{tag}",)
    if kind == "leaf":
        return (f"leaf:{rest[0]}:{rest[1]}", f"leaf:{rest[0]}:{rest[1]}:{rest[2]}")
    if kind == "probe_timeout":
        return ("probe_timeout:T-1" if rest[0] == "thr-1" else "probe_timeout:T",)
    if kind == "ramp":
        return (mutant,)
    return {"bias:+1": ("bias", "clamp_min:0"), "bias:-1": ("bias", "clamp_max:0"),
            "clamp_min:thr-1": ("clamp_min:-1",), "clamp_min:thr+1": ("clamp_min:-1", "clamp_min:0"),
            "clamp_max:thr+1": ("clamp_max:+1",), "clamp_max:thr-1": ("clamp_max:+1", "clamp_max:0")}[mutant]


def _tree_sums(model: FxModel, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unclamped ensemble sums and leaf indices of integer policy inputs (the model's own data)."""
    idx = np.zeros((len(x), len(model.trees)), dtype=np.int64)
    total = np.full(len(x), model.bias, dtype=np.int64)
    for t, tree in enumerate(model.trees):
        for k, s in enumerate(tree.splits):
            idx[:, t] |= _bit(s, x[:, s.input]).astype(np.int64) << k
        total += np.asarray(tree.leaves, dtype=np.int64)[idx[:, t]]
    for r in model.ramps:
        total += _ramp_term(r, x)
    return total, idx


def _ramp_term(r: Ramp, x: np.ndarray) -> np.ndarray:
    """Ramp ``r``'s int64 term in the ensemble sum of policy inputs ``x``."""
    return np.asarray(golden.ramp_value(golden.NUMPY, r, x[:, r.input].astype(np.int64)), dtype=np.int64)


COVERAGE_CHUNK = 16_384  # vectors of coverage's first chunk; each later one is 4x larger


def coverage(model: FxModel, vectors: Vectors) -> dict[str, Any]:
    """Which one-datum mutants (threshold +-1, reachable leaf +-1, bias +-1, clamp bounds +-1,
    probe timeout +-1) change some vector's golden output.

    Golden runs once on the model; a tree, bias or clamp mutant changes only the factor (which the
    context stores), so it is exposed iff its clamped sum differs on some RTT event's inputs.
    The vectors are taken in chunks (the verification set starts with the model's own, built to
    expose every mutant): a mutant seen in one chunk is seen by the set, so later chunks check the
    unseen mutants only, and once every mutant is seen the rest is not looked at. The result is
    the whole set's either way.
    """
    n, begin, size = len(vectors), 0, COVERAGE_CHUNK
    status: dict[str, tuple[str, bool]] = {}
    while True:
        end = min(n, begin + size)
        pending = None if begin == 0 else {m for m, (_, seen) in status.items() if not seen}
        chunk = _observed(model, vectors.ctx_in[begin:end], vectors.event[begin:end], vectors.attr[begin:end], pending)
        for m, (group, seen) in chunk.items():
            status[m] = (group, seen or (m in status and status[m][1]))
        if end >= n or all(seen for _, seen in status.values()):
            break
        begin, size = end, 4 * size
    groups: dict[str, dict[str, Any]] = {k: {"targets": 0, "observable": 0} for k in ("splits", "leaves", "other")}
    for group, seen in status.values():
        groups[group]["targets"] += 1
        groups[group]["observable"] += int(seen)
    return {**groups, "missed": [m for m, (_, seen) in status.items() if not seen]}


def _observed(model: FxModel, ctx_in: np.ndarray, event: np.ndarray, attr: np.ndarray,
              only: set[str] | None = None) -> dict[str, tuple[str, bool]]:
    """{mutant: (group, seen on these vectors)} for every one-datum mutant (``only``: those alone)."""
    c = model.constants
    lo, hi = c.clamp_min_q16, c.clamp_max_q16
    g = golden.step(model, ctx_in, event, attr)
    etype = event[:, fmt.EV_ATTR] & 0xFF
    rtt = etype == fmt.EVENT_RTT
    total, idx = _tree_sums(model, g.features[rtt])
    base = np.clip(total, lo, hi)
    if not np.array_equal(base, g.ctx[rtt, fmt.CTX_PREV_FACTOR].astype(np.int32)):
        raise RuntimeError("coverage: the golden factor disagrees with the model's tree evaluation")
    out: dict[str, tuple[str, bool]] = {}

    def wanted(mutant: str) -> bool:
        return only is None or mutant in only

    def note(group: str, mutant: str, seen: bool) -> None:
        out[mutant] = (group, seen)

    x = g.features[rtt]
    for t, tree in enumerate(model.trees):
        leaves = np.asarray(tree.leaves, dtype=np.int64)
        for k, s in enumerate(tree.splits):
            old = _bit(s, x[:, s.input])
            for d in (-1, 1):
                if INT32_MIN <= s.threshold + d <= INT32_MAX and wanted(f"split:t{t}:l{k}:thr{d:+d}"):
                    rows = old != _bit(dataclasses.replace(s, threshold=s.threshold + d), x[:, s.input])
                    alt = total[rows] - leaves[idx[rows, t]] + leaves[idx[rows, t] ^ (1 << k)]
                    note("splits", f"split:t{t}:l{k}:thr{d:+d}", bool(np.any(np.clip(alt, lo, hi) != base[rows])))
    reach, _ = reachable_leaves(model)
    for t, tree in enumerate(model.trees):
        n = len(tree.leaves)
        up = np.bincount(idx[:, t], weights=(total >= lo) & (total < hi), minlength=n) > 0
        down = np.bincount(idx[:, t], weights=(total > lo) & (total <= hi), minlength=n) > 0
        for i in range(n):
            if (t, i) in reach:
                note("leaves", f"leaf:t{t}:{i}:+1", bool(up[i]))
                note("leaves", f"leaf:t{t}:{i}:-1", bool(down[i]))
    note("other", "bias:+1", bool(np.any((total >= lo) & (total < hi))))
    note("other", "bias:-1", bool(np.any((total > lo) & (total <= hi))))
    for name, d in (("clamp_min", -1), ("clamp_min", 1), ("clamp_max", -1), ("clamp_max", 1)):
        if wanted(f"{name}:thr{d:+d}") and _mutant(model, **{f"{name}_q16": getattr(c, f"{name}_q16") + d}) is not None:
            lo2, hi2 = (lo + d, hi) if name == "clamp_min" else (lo, hi + d)
            note("other", f"{name}:thr{d:+d}", bool(np.any(np.clip(total, lo2, hi2) != base)))
    witnesses = ramp_witnesses(model)
    terms = [_ramp_term(r, x) for r in model.ramps] if any(wanted(mid) for mid, _ in ramp_mutants(model)) else []
    for mid, mutant in ramp_mutants(model):
        if mutant is not None and witnesses.get(mid) is not None and wanted(mid):  # None: harmless, like an unreachable leaf
            i = int(mid.split(":")[1])  # the mutant differs in this ramp alone: swap its term in the sum
            other = total - terms[i] + _ramp_term(mutant.ramps[i], x)
            note("other", mid, bool(np.any(np.clip(other, lo, hi) != base)))
    tx = (etype == fmt.EVENT_TX) & (ctx_in[:, fmt.CTX_RATE] != 0)
    elapsed = (event[tx, fmt.EV_TIMESTAMP].astype(np.int64) - ctx_in[tx, fmt.CTX_PROBE_TS]) & U32_MAX
    for d in (-1, 1):
        if 1 <= c.probe_timeout_ns + d <= fmt.PROBE_TIMEOUT_NS_MAX:
            flip = (elapsed >= c.probe_timeout_ns) != (elapsed >= c.probe_timeout_ns + d)
            note("other", f"probe_timeout:thr{d:+d}", bool(flip.any()))
    return {m: v for m, v in out.items() if wanted(m)}
