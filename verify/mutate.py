"""Mutant sources of generated firmware: one-place, off-by-one edits of firmware.c / firmware.h.

rlcc-verify claims to catch off-by-one bugs; this module makes the bugs. Mutants are found in
the generated C text itself, with regexes keyed to the template's named constants and helper
functions, so they work for ``--tree-style oblivious`` and ``ifelse`` alike and for hand-edited
C that keeps those names. Each mutant changes exactly one line of one file:

- ``thr:t3:l2:+1``    a split threshold ``THR_3_2`` plus/minus one (the bitmask form: the cut
  ``CUT_i_j`` that split 2 of tree 3 is listed first at, which moves every split listed there);
- ``leaf:t5:7:-1``    leaf 7 of ``LEAVES_5`` plus/minus one LSB (reachable leaves only: a leaf
  no input can reach is an equivalent mutant by construction);
- ``bias:+1``, ``clamp_min:+1``, ``clamp_max:-1``, ``probe_timeout:+1``: the ensemble bias and
  the firmware.h parameter defaults plus/minus one;
- ``op:t0:l1``        a split's comparison made inclusive (``>`` -> ``>=``, ``<`` -> ``<=``); the
  if-else form repeats a split once per node, each occurrence is its own mutant (``:n2``);
- ``round:nearest`` / ``round:ceil`` (rate update), ``round:inflation:nearest``,
  ``round:penalty:nearest`` (feature arithmetic): a truncating shift that rounds instead;
- ``hist:s1:delta:+1``, ``hist:s1:delta:step+1``, ``hist:drop``: the history shift stores a
  neighbouring context word, the next step's word, or nothing;
- ``probe:gt``        the probe timeout test ``>=`` becomes ``>``;
- ``carry:drop``, ``carry:shift-1``, ``carry:store-drop``: the rate update's error feedback
  ignores the carried fraction, reads it one bit off, or does not store the new one;
- ``ramp:2:k_below:+1`` a ramp constant (``RAMP_2_LO``, ``_CENTER``, ``_HI``, ``_K_BELOW``,
  ``_K_ABOVE``, ``_SHIFT``, and for a ramp folded into its input's search ``_AT_LO``, ``_AT_HI``)
  plus/minus one; ``ramp:2:lo_cut:-1`` (``center_cut:-1``, ``hi_cut:+1``): such a ramp's cut of
  the search moved out by one (moved in, the pieces agree at the boundary: an equivalent edit).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from rlcc import formats as fmt
from rlcc.codegen.context import c_int32
from rlcc.fxp.model import INT32_MAX, INT32_MIN, FxModel
from rlcc.verify.observable import input_domain

U32_MAX = 0xFFFFFFFF
KINDS = ("thr", "leaf", "bias", "clamp", "op", "round", "hist", "probe", "ramp", "carry")

_INT32 = r"(INT32_C\((-?\d+)\)|\(-INT32_C\(2147483647\) - 1\))"
# Model identifiers carry the firmware's name as prefix (``FIRMWARE_THR_3_2``, ``firmware_leaves_5``).
_THR_RE = re.compile(r"^#define \w*?THR_(\d+)_(\d+) " + _INT32)
_BIAS_RE = re.compile(r"^#define \w*?BIAS " + _INT32)
_LEAVES_RE = re.compile(r"^static const int32_t \w*?(?:LEAVES|leaves)_(\d+)\[(\d+)\] = \{")
# The bitmask form: a cut shared by splits, its uses in the comment line above (a cut may serve
# many splits, so the list does not share the define's line: ``/* ...: tree 5 split 3, ... */``
# then ``#define FIRMWARE_CUT_4_2 INT32_C(2613)``)
# and the leaves as rows of the tables object (``/* tree 5 */`` opens tree 5's row inside ``.leaves =``).
_CUT_RE = re.compile(r"^#define \w*?CUT_(\d+)_(\d+) " + _INT32 + r"$")
_CUT_USE_RE = re.compile(r"tree (\d+) split (\d+)")
_LEAF_ROWS_RE = re.compile(r"^\s*\.leaves =$")
_LEAF_ROW_RE = re.compile(r"^\s*/\* tree (\d+) \*/$")
# and a leaf group's table of sums (``/* trees 0, 1: entry = tree 0 leaf (bits 0-3) + tree 1 leaf
# (bits 4-7) -> ... */`` above ``.leaf_sums_0 =``): one leaf's edit is every entry that reads it
_GROUP_RE = re.compile(r"^\s*/\* trees? [\d, ]+: entry = (.*) -> the sum of those leaves \*/$")
_GROUP_PART_RE = re.compile(r"tree (\d+) leaf \(bits (\d+)-(\d+)\)")
_NUM_RE = re.compile(r"-?\d+")
_COMMENT_RE = re.compile(r"/\*.*?\*/")
_COND_RE = re.compile(r"x\[(\w*?IN_\w+)\] (>=|<=|>|<) \w*?THR_(\d+)_(\d+)\b")
_RAMP_RE = re.compile(r"^#define \w*?RAMP_(\d+)_(LO|CENTER|HI|K_BELOW|K_ABOVE|AT_LO|AT_HI) " + _INT32)
# a ramp folded into its input's search: its LO - 1, CENTER - 1 and HI are cuts (``ramp 2 lo`` in the comment above)
_CUT_RAMP_RE = re.compile(r"ramp (\d+) (lo|center|hi)\b")
_RAMP_SHIFT_RE = re.compile(r"^#define \w*?RAMP_(\d+)_SHIFT (\d+)u")
_DEFAULT_RE = re.compile(r"^#define (\w+)_DEF_(CLAMP_MIN_Q16|CLAMP_MAX_Q16|PROBE_TIMEOUT_NS) UINT32_C\((\d+)\)")
_ENUM_ITEM_RE = re.compile(r"^\s*(\w*?(?:IN|F)_\w+) = (\d+),")
_HIST_STORE_RE = re.compile(r"^(\s*c\[)(\w*?HIST_WORD\((\d+)u, (\w*?F_\w+)\))(\] = \(uint32_t\)x\[\w*?IN_\w+\];.*)$")
_SHIFT_CALL_RE = re.compile(r"^(\s*)(\w*shift_history)\(c, x\);")
_PROBE_RE = re.compile(r"^(\s*if \(now - c\[RLCC_CTX_PROBE_TS\]) >= (\w.*)$")
_FLIP = {">": ">=", "<": "<=", ">=": ">", "<=": "<"}


def _comment_at(lines: list[str], n: int) -> tuple[str, int]:
    """Line ``n``, or the comment opening there with its wrapped `` * `` lines joined by spaces (the
    templates wrap long comments); and the index of the line after it."""
    text, n = lines[n], n + 1
    if text.lstrip().startswith("/*"):
        while "*/" not in text and n < len(lines) and lines[n].lstrip().startswith("* "):
            text, n = text + " " + lines[n].lstrip()[2:], n + 1
    return text, n


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One single-line edit of the firmware sources.

    ``file`` is "c", "h" or "rt" (the runtime header); ``line`` is 1-based. ``tree``/``level``/``leaf``/``input``/``threshold``
    locate tree mutants in the model so a runner can pick the vectors that exercise them.
    """

    id: str
    kind: str
    description: str
    file: str
    line: int
    original: str
    mutated: str
    tree: int | None = None
    level: int | None = None
    leaf: int | None = None
    input: int | None = None
    threshold: int | None = None

    def apply(self, sources: dict[str, str]) -> dict[str, str]:
        """``sources`` ({"c": text, "h": text}) with this mutant's line (or lines: ``original`` and
        ``mutated`` hold as many, joined by newlines) replaced."""
        lines = sources[self.file].splitlines(keepends=True)
        originals, mutated = self.original.split("\n"), self.mutated.split("\n")
        span = lines[self.line - 1 : self.line - 1 + len(originals)]
        if [x.rstrip("\r\n") for x in span] != originals or len(mutated) != len(originals):
            raise ValueError(f"mutant {self.id}: line {self.line} of the {self.file} file is not the one it was made from")
        for k, (old, new) in enumerate(zip(span, mutated)):
            lines[self.line - 1 + k] = new + old[len(old.rstrip("\r\n")):]
        return {**sources, self.file: "".join(lines)}


def _int32_value(m: re.Match[str], group: int) -> int:
    return INT32_MIN if m.group(group + 1) is None else int(m.group(group + 1))


def _enum_values(text: str, prefix: str) -> dict[str, int]:
    found = (m for m in map(_ENUM_ITEM_RE.match, text.splitlines()) if m)
    return {m.group(1): int(m.group(2)) for m in found if re.match(rf"(?:\w*_)?{prefix}", m.group(1))}


def _feature_name(macro: str) -> str:
    return macro.split("F_", 1)[1].lower() if "F_" in macro else macro.lower()


# ---- reachability ------------------------------------------------------------------------


def input_domains(model: FxModel) -> list[tuple[int, int]]:
    """Feasible [lo, hi] of every policy input as the firmware computes it.

    History inputs are context words (any int32); current-step values have their registry
    feature's feasible range (``rlcc.features``: delta <= target, inflation >= 0, 16-bit counters,
    rate >= 1 because 0 starts a new flow).
    """
    return [input_domain(model, i) for i in range(model.spec.student_width)]


def _own_reachable_leaves(model: FxModel) -> list[frozenset[int]]:
    domains = input_domains(model)
    out = []
    for tree in model.trees:
        leaves = set()
        for idx in range(1 << tree.depth):
            box = {s.input: domains[s.input] for s in tree.splits}
            for k, s in enumerate(tree.splits):
                lo, hi = box[s.input]
                taken = bool(idx >> k & 1)
                if s.op == ">":
                    lo, hi = (max(lo, s.threshold + 1), hi) if taken else (lo, min(hi, s.threshold))
                else:
                    lo, hi = (lo, min(hi, s.threshold - 1)) if taken else (max(lo, s.threshold), hi)
                box[s.input] = (lo, hi)
            if all(lo <= hi for lo, hi in box.values()):
                leaves.add(idx)
        out.append(frozenset(leaves))
    return out


def reachable_leaves(model: FxModel) -> list[frozenset[int]]:
    """Per tree, the leaf indices some feasible input reaches.

    ``rlcc.verify.observable.reachable_leaves`` when this rlcc has it (it also knows which RTT
    feature values an RTT can produce); else the path intervals against :func:`input_domains`.
    """
    try:
        from rlcc.verify.observable import reachable_leaves as observable_reach
    except ImportError:
        return _own_reachable_leaves(model)
    reach, _why = observable_reach(model)
    return [frozenset(i for t2, i in reach if t2 == t) for t in range(len(model.trees))]


# ---- generation ----------------------------------------------------------------------------


def _replace_span(line: str, start: int, end: int, new: str) -> str:
    return line[:start] + new + line[end:]


def _plus_minus(value: int, lo: int, hi: int) -> Iterable[tuple[str, int]]:
    for sign, d in (("+1", 1), ("-1", -1)):
        if lo <= value + d <= hi:
            yield sign, value + d


def _tree_constants(c_lines: Sequence[str], inputs: dict[str, int], reachable: list[frozenset[int]] | None) -> list[Mutant]:
    out: list[Mutant] = []
    split_input: dict[tuple[int, int], int] = {}
    for line in c_lines:
        for m in _COND_RE.finditer(line):
            split_input.setdefault((int(m.group(3)), int(m.group(4))), inputs.get(m.group(1), -1))
    leaves_of: int | None = None
    leaf_no = 0
    in_rows = False
    for n, line in enumerate(c_lines, 1):
        if (m := _THR_RE.match(line)) is not None:
            t, k, v = int(m.group(1)), int(m.group(2)), _int32_value(m, 3)
            for sign, nv in _plus_minus(v, INT32_MIN, INT32_MAX):
                out.append(Mutant(f"thr:t{t}:l{k}:{sign}", "thr", f"tree {t} split {k}: threshold {v} -> {nv}", "c", n,
                                  line, _replace_span(line, m.start(3), m.end(3), c_int32(nv)), tree=t, level=k,
                                  input=split_input.get((t, k)), threshold=v))
        elif (m := _BIAS_RE.match(line)) is not None:
            v = _int32_value(m, 1)
            for sign, nv in _plus_minus(v, INT32_MIN, INT32_MAX):
                out.append(Mutant(f"bias:{sign}", "bias", f"ensemble bias {v} -> {nv}", "c", n, line,
                                  _replace_span(line, m.start(1), m.end(1), c_int32(nv))))
        elif (m := _CUT_RE.match(line)) is not None:
            # one cut serves every split listed: its mutant moves all of their thresholds (named by the first)
            i, v = int(m.group(1)), _int32_value(m, 3)
            above = c_lines[n - 2] if n >= 2 and c_lines[n - 2].startswith("/*") else ""
            uses = [(int(u.group(1)), int(u.group(2))) for u in _CUT_USE_RE.finditer(above)]
            r = _CUT_RAMP_RE.search(above)  # a cut of folded ramps only, named by the first it serves
            if not uses and r is not None:
                # moved outward only: inward, the piece a value crosses into agrees with the one it
                # leaves at the boundary (LO's constant is the linear term at LO, both sides are 0 at the center)
                d = -1 if r.group(2) in ("lo", "center") else 1
                if INT32_MIN <= v + d <= INT32_MAX:
                    out.append(Mutant(f"ramp:{r.group(1)}:{r.group(2)}_cut:{d:+d}", "ramp",
                                      f"ramp {r.group(1)} {r.group(2)} (cut of input {i}): {v} -> {v + d}", "c", n, line,
                                      _replace_span(line, m.start(3), m.end(3), c_int32(v + d)), input=i))
            if not uses:
                continue
            t, k = uses[0]
            names = ", ".join(f"tree {a} split {b}" for a, b in uses)
            for sign, nv in _plus_minus(v, INT32_MIN, INT32_MAX):
                out.append(Mutant(f"thr:t{t}:l{k}:{sign}", "thr", f"cut of {names} (input {i}): {v} -> {nv}", "c", n,
                                  line, _replace_span(line, m.start(3), m.end(3), c_int32(nv)), tree=t, level=k,
                                  input=i, threshold=v))
        elif (m := _LEAVES_RE.match(line)) is not None:
            leaves_of, leaf_no = int(m.group(1)), 0
        elif _LEAF_ROWS_RE.match(line) is not None:
            in_rows = True
        elif in_rows and (m := _LEAF_ROW_RE.match(line)) is not None:
            leaves_of, leaf_no = int(m.group(1)), 0
        elif leaves_of is not None:
            if line.strip().startswith("}"):
                leaves_of = None
                in_rows = in_rows and not line.strip().startswith("};")
                continue
            code = _COMMENT_RE.sub(lambda c: " " * len(c.group()), line)  # decimal values in comments
            for tok in _NUM_RE.finditer(code):
                t, i, v = leaves_of, leaf_no, int(tok.group())
                leaf_no += 1
                if reachable is not None and (t >= len(reachable) or i not in reachable[t]):
                    continue
                for sign, nv in _plus_minus(v, INT32_MIN + 1, INT32_MAX):
                    out.append(Mutant(f"leaf:t{t}:{i}:{sign}", "leaf", f"tree {t} leaf {i}: {v} -> {nv} (Q16.16)", "c", n,
                                      line, _replace_span(line, tok.start(), tok.end(), str(nv)), tree=t, leaf=i))
    return out


def _group_leaves(c_lines: Sequence[str], reachable: list[frozenset[int]] | None) -> list[Mutant]:
    """Leaf mutants of leaf-group tables: leaf ``i`` of tree ``t`` plus/minus one in every entry
    whose joint index reads it (one mutant over the lines those entries span)."""
    out: list[Mutant] = []
    n = 0
    while n < len(c_lines):
        text, n = _comment_at(c_lines, n)
        head = _GROUP_RE.match(text)
        if head is None:
            continue
        parts = [(int(m.group(1)), int(m.group(2)), int(m.group(3)) - int(m.group(2)) + 1)
                 for m in _GROUP_PART_RE.finditer(head.group(1))]
        cells: list[tuple[int, int, int, int]] = []  # (line index, start, end, value) per entry
        while n < len(c_lines) and not c_lines[n].strip().startswith("}"):
            code = _COMMENT_RE.sub(lambda c: " " * len(c.group()), c_lines[n])
            if not code.strip().startswith("."):
                cells += [(n, tok.start(), tok.end(), int(tok.group())) for tok in _NUM_RE.finditer(code)]
            n += 1
        for t, low, width in parts:
            leaves = sorted({(e >> low) & ((1 << width) - 1) for e in range(len(cells))})
            for i in leaves:
                if reachable is not None and (t >= len(reachable) or i not in reachable[t]):
                    continue
                hit = [cells[e] for e in range(len(cells)) if (e >> low) & ((1 << width) - 1) == i]
                for sign, d in (("+1", 1), ("-1", -1)):
                    if not all(INT32_MIN <= v + d <= INT32_MAX for *_, v in hit):
                        continue
                    first, last = hit[0][0], hit[-1][0]
                    edited = list(c_lines[first : last + 1])
                    for line_no, start, end, v in reversed(hit):  # right to left: spans stay valid
                        k = line_no - first
                        edited[k] = _replace_span(edited[k], start, end, str(v + d))
                    out.append(Mutant(f"leaf:t{t}:{i}:{sign}", "leaf",
                                      f"tree {t} leaf {i}: {d:+d} LSB in the {len(hit)} sums that read it (Q16.16)", "c",
                                      first + 1, "\n".join(c_lines[first : last + 1]), "\n".join(edited), tree=t, leaf=i))
    return out


def _operators(c_lines: Sequence[str], inputs: dict[str, int]) -> list[Mutant]:
    thresholds = {(int(m.group(1)), int(m.group(2))): _int32_value(m, 3) for m in map(_THR_RE.match, c_lines) if m}
    found = [(n, line, m) for n, line in enumerate(c_lines, 1) for m in _COND_RE.finditer(line)]
    per_split: dict[tuple[int, int], int] = {}
    for _, _, m in found:
        key = (int(m.group(3)), int(m.group(4)))
        per_split[key] = per_split.get(key, 0) + 1
    seen: dict[tuple[int, int], int] = {}
    out = []
    for n, line, m in found:
        t, k = int(m.group(3)), int(m.group(4))
        j = seen.get((t, k), 0)
        seen[(t, k)] = j + 1
        op, new = m.group(2), _FLIP[m.group(2)]
        suffix = f":n{j}" if per_split[(t, k)] > 1 else ""
        where = f" (node {j} of its level)" if suffix else ""
        out.append(Mutant(f"op:t{t}:l{k}{suffix}", "op", f"tree {t} split {k}{where}: '{op}' -> '{new}'", "c", n, line,
                          _replace_span(line, m.start(2), m.end(2), new), tree=t, level=k, input=inputs.get(m.group(1)),
                          threshold=thresholds.get((t, k))))
    return out


def _rounding(c_lines: Sequence[str], file: str = "c") -> list[Mutant]:
    """Truncating right shifts that round to nearest / up instead."""
    def half(shift: str) -> str:
        return f"(UINT64_C(1) << ({shift} - 1u))"

    shifts = (
        ("RLCC_FACTOR_FRAC_BITS", "rate update", (("round:nearest", "(RLCC_FACTOR_ONE >> 1)", "round to nearest"),
                                                  ("round:ceil", "(RLCC_FACTOR_ONE - 1u)", "round up"))),
        ("RLCC_INV_BASE_RTT_SHIFT", "RTT inflation",
         (("round:inflation:nearest", half("RLCC_INV_BASE_RTT_SHIFT"), "round to nearest"),)),
        ("RLCC_SQRT_RATE_FRAC_BITS", "delta penalty",
         (("round:penalty:nearest", half("RLCC_SQRT_RATE_FRAC_BITS"), "round to nearest"),)),
    )
    out = []
    for shift, what, variants in shifts:
        # an assignment, or the return of a product function
        pattern = re.compile(r"^(\s*(?:const uint64_t \w+ = |return ))(\(.*\)|\w+) >> " + shift + ";")
        for n, line in enumerate(c_lines, 1):
            if (m := pattern.match(line)) is None:
                continue
            for mid, add, how in variants:
                new = f"{m.group(1)}({m.group(2)} + {add}) >> {shift};{line[m.end():]}"
                out.append(Mutant(mid, "round", f"{what}: truncating >> {shift} rounds ({how})", file, n, line, new))
            break
    return out


def _history(c_lines: Sequence[str], features: dict[str, int]) -> list[Mutant]:
    nf = max(len(features), 1)
    first, end = fmt.CTX_HISTORY, fmt.CTX_HISTORY + fmt.CTX_HISTORY_WORDS
    out = []
    for n, line in enumerate(c_lines, 1):
        if (m := _HIST_STORE_RE.match(line)) is not None:
            steps, feat = int(m.group(3)), m.group(4)
            word = fmt.CTX_HISTORY + (steps - 1) * nf + features.get(feat, 0)
            name = _feature_name(feat)
            moves = [("+1", 1, "the next context word"), ("-1", -1, "the previous context word")]
            if nf > 1:
                moves += [("step+1", nf, "the next step's word"), ("step-1", -nf, "the previous step's word")]
            for tag, d, what in moves:
                if first <= word + d < end:
                    expr = f"{m.group(2)} + {d}u" if d > 0 else f"{m.group(2)} - {-d}u"
                    out.append(Mutant(f"hist:s{steps}:{name}:{tag}", "hist",
                                      f"history shift stores step {steps}'s {name} into {what} (word {word + d}, not {word})",
                                      "c", n, line, m.group(1) + expr + m.group(5)))
        elif (m := _SHIFT_CALL_RE.match(line)) is not None:
            out.append(Mutant("hist:drop", "hist", "history shift dropped (stored window never advances)", "c", n, line,
                              f"{m.group(1)}(void){m.group(2)}; /* mutant: history shift dropped */"))
    return out


def _probe(c_lines: Sequence[str], file: str = "c") -> list[Mutant]:
    for n, line in enumerate(c_lines, 1):
        if (m := _PROBE_RE.match(line)) is not None:
            return [Mutant("probe:gt", "probe", "probe timeout test '>=' -> '>' (re-request one ns late)", file, n, line,
                           f"{m.group(1)} > {m.group(2)}")]
    return []


_CARRY_LOAD_RE = re.compile(r"^(\s*const uint32_t carry = )(\*flags >> RLCC_CTX_RATE_CARRY_SHIFT);")
_CARRY_STORE_RE = re.compile(r"^(\s*\*flags = )(.*\) \| RLCC_CTX_FLAG_HISTORY_VALID);")


def _carry(c_lines: Sequence[str], file: str = "c") -> list[Mutant]:
    """The rate update's error feedback (``rlcc_next_rate``): its carry load and store."""
    out = []
    for n, line in enumerate(c_lines, 1):
        if (m := _CARRY_LOAD_RE.match(line)) is not None:
            out.append(Mutant("carry:drop", "carry", "the rate update ignores the carried fraction", file, n, line,
                              f"{m.group(1)}0u;"))
            out.append(Mutant("carry:shift-1", "carry", "the carry is read one bit off", file, n, line,
                              f"{m.group(1)}*flags >> (RLCC_CTX_RATE_CARRY_SHIFT - 1u);"))
        elif (m := _CARRY_STORE_RE.match(line)) is not None:
            out.append(Mutant("carry:store-drop", "carry", "the new carry is not stored", file, n, line,
                              f"{m.group(1)}RLCC_CTX_FLAG_HISTORY_VALID;"))
    return out


def _ramps(c_lines: Sequence[str]) -> list[Mutant]:
    out = []
    for n, line in enumerate(c_lines, 1):
        if (m := _RAMP_RE.match(line)) is not None:
            i, name, v, at = int(m.group(1)), m.group(2).lower(), _int32_value(m, 3), (m.start(3), m.end(3))
            render = c_int32
        elif (m := _RAMP_SHIFT_RE.match(line)) is not None:
            i, name, v, at = int(m.group(1)), "shift", int(m.group(2)), (m.start(2), m.end(2))
            render = str
        else:
            continue
        for sign, nv in _plus_minus(v, 0 if name == "shift" else INT32_MIN + 1, 31 if name == "shift" else INT32_MAX):
            out.append(Mutant(f"ramp:{i}:{name}:{sign}", "ramp", f"ramp {i} {name} {v} -> {nv}", "c", n, line,
                              _replace_span(line, *at, render(nv))))
    return out


def _defaults(h_lines: Sequence[str]) -> list[Mutant]:
    names = {"CLAMP_MIN_Q16": ("clamp_min", "clamp", 1, INT32_MAX), "CLAMP_MAX_Q16": ("clamp_max", "clamp", 1, INT32_MAX),
             "PROBE_TIMEOUT_NS": ("probe_timeout", "probe", 1, U32_MAX)}
    out = []
    for n, line in enumerate(h_lines, 1):
        if (m := _DEFAULT_RE.match(line)) is None:
            continue
        short, kind, lo, hi = names[m.group(2)]
        v = int(m.group(3))
        for sign, nv in _plus_minus(v, lo, hi):
            out.append(Mutant(f"{short}:{sign}", kind, f"default {m.group(2)} {v} -> {nv}", "h", n, line,
                              _replace_span(line, m.start(3), m.end(3), str(nv))))
    return out


def generate_mutants(c_text: str, h_text: str, model: FxModel | None = None, kinds: Iterable[str] | None = None,
                     reachable: list[frozenset[int]] | None = None, rt_text: str | None = None) -> list[Mutant]:
    """Every mutant of the firmware sources, in source order per kind.

    ``rt_text``: the runtime header ``rlcc_runtime.h`` when the C includes it (not inlined): the
    runtime's rounding and probe mutants are then edits of that file (``file`` "rt"), built as a
    copy beside the mutated firmware.c, which the quoted include finds first.

    With a ``model`` only reachable leaves are mutated (``reachable`` overrides the
    computation); without one, every leaf. ``kinds`` selects a subset of :data:`KINDS`.
    """
    wanted = set(KINDS if kinds is None else kinds)
    unknown = wanted - set(KINDS)
    if unknown:
        raise ValueError(f"unknown mutant kinds: {', '.join(sorted(unknown))}; expected {', '.join(KINDS)}")
    if reachable is None and model is not None:
        reachable = reachable_leaves(model)
    c_lines, h_lines = c_text.splitlines(), h_text.splitlines()
    inputs, features = _enum_values(c_text, "IN_"), _enum_values(c_text, "F_")
    found = _tree_constants(c_lines, inputs, reachable) + _group_leaves(c_lines, reachable) + _operators(c_lines, inputs)
    rt_found = _rounding(c_lines) + _probe(c_lines) + _carry(c_lines)
    if not rt_found and rt_text is not None:
        rt_lines = rt_text.splitlines()
        rt_found = _rounding(rt_lines, "rt") + _probe(rt_lines, "rt") + _carry(rt_lines, "rt")
    found += _ramps(c_lines) + _history(c_lines, features) + _defaults(h_lines) + rt_found
    mutants = [m for m in found if m.kind in wanted]
    ids = [m.id for m in mutants]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"duplicate mutant ids (unexpected firmware layout): {', '.join(dup[:5])}")
    return mutants
