"""The template context: every number and comment the C templates print, derived in Python.

Templates hold layout and wording only; values (formats, constants, thresholds, leaves) and
their provenance strings come from here so nothing is restated by hand in C.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from rlcc import __version__
from rlcc import derived as derived_vocab
from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.codegen import bitmask
from rlcc.codegen.sdk_flavours import SdkChoice, choose, template_context
from rlcc.errors import BadInputError
from rlcc.fxp import golden
from rlcc.fxp.model import INT32_MAX, INT32_MIN, PARAM_RULE, U32_MAX, FxModel, Ramp, Split, model_params

TREE_STYLES = ("bitmask", "bitmask-per-tree", "bitmask-branchfree", "oblivious", "ifelse")  # the first is the default
# bitmask styles -> (branch-free searches, leaf-group index bits: 0 = one lookup per tree, ramps folded into the searches)
BITMASK_STYLES = {"bitmask": (False, bitmask.GROUP_INDEX_BITS, True), "bitmask-per-tree": (False, 0, False),
                  "bitmask-branchfree": (True, 0, False)}
GROUP_ENTRIES_PER_ROW = 8  # leaf-group initializer: entries per line
SUM_ARG_REGISTERS = 8  # a0-a7, the integer argument registers of the RISC-V calling convention
SQRT_INDEX_BITS = 10  # isqrt knots: top 10 bits of the normalized rate pick one of 768 intervals
SQRT_FRAC_BITS = 11  # ... and the next 11 interpolate in it (knots 2^21 apart at most: a 32-bit product)

# Out-of-line functions of the generated C, one per golden primitive (``fxp.golden.IntOps``).
# ``rlcc-verify --prove`` abstracts each in the handler proof and checks it on its own.
# They live in the runtime header ``firmware_sdk_stub/rlcc_runtime.h`` (tests/sdk checks the names).
SQRT_FUNCTION = "rlcc_sqrt_rate"
SLOG_FUNCTION = derived_vocab.get("delta_log_ratio").c_function  # slog, out of line: abstracted and checked alone
TREE_SUM_SUFFIX = "tree_sum"  # <name>_tree_sum: with ramps, the bias plus the leaves, out of line
RAMP_SUM_SUFFIX = "ramp_sum"  # <name>_ramp_sum: the ramps' terms (each rlcc_ramp inline), out of line
RUNTIME_HEADER = "rlcc_runtime.h"
LEAVES_PER_ROW = 4


def c_int32(v: int) -> str:
    """An int32 C literal (INT32_MIN spelled so that it is not a negated out-of-range constant)."""
    if not INT32_MIN <= v <= INT32_MAX:
        raise BadInputError(f"value {v} does not fit int32")
    return "(-INT32_C(2147483647) - 1)" if v == INT32_MIN else f"INT32_C({v})"


def c_uint32(v: int) -> str:
    if not 0 <= v <= U32_MAX:
        raise BadInputError(f"value {v} does not fit uint32")
    return f"UINT32_C({v})"


FIRMWARE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")  # ASCII C identifier without the implementation's leading _
FIRMWARE_NAME_MAX = 64  # NAME prefixes every C symbol and names files: readable, far below NAME_MAX (255)
# NAME.h = rlcc_runtime.h would shadow the runtime header; NAME "rlcc" would take the runtime's rlcc_ prefix.
RESERVED_NAMES = frozenset({"rlcc", RUNTIME_HEADER.removesuffix(".h")})


def check_firmware_name(name: str, option: str = "name") -> str:
    """``name`` if it can name the firmware: NAME.c/.h/.rlcc.json and the prefix of its C symbols.

    Anything else (a path, ``../x``, ``my-fw``, an empty or very long name) is a BadInputError:
    a path would write the files outside OUT, and a mangled identifier would not match the file.
    """
    if not isinstance(name, str) or not FIRMWARE_NAME.fullmatch(name):
        raise BadInputError(f"{option} must be a C identifier (a letter, then letters, digits or _), got {name!r}")
    if len(name) > FIRMWARE_NAME_MAX:
        raise BadInputError(f"{option} must be at most {FIRMWARE_NAME_MAX} characters, got {len(name)}")
    if name in RESERVED_NAMES:
        raise BadInputError(f"{option} {name!r} is reserved by the runtime header {RUNTIME_HEADER}")
    return name


def c_ident(name: str) -> str:
    """The C identifier of a firmware name: the name itself, checked (``check_firmware_name``)."""
    return check_firmware_name(name)


def model_sha256(model: FxModel) -> str:
    return hashlib.sha256(model.to_json().encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Param:
    """One host-settable algorithm parameter (a uint32 in the slot's parameter array)."""

    id: int
    key: str  # C enum suffix, e.g. TARGET_Q16
    default: int
    provenance: str
    rule: str  # human-readable validity rule (the template holds the C check)


@dataclasses.dataclass(frozen=True)
class CSplit:
    level: int
    label: str  # e.g. "delta[t-1] > -806"
    macro: str  # threshold constant name
    value: str  # C literal
    cond: str  # C expression evaluating to 0/1 (int)
    comment: str


@dataclasses.dataclass(frozen=True)
class CTree:
    index: int
    depth: int
    splits: tuple[CSplit, ...]
    leaves_name: str
    leaves: tuple[int, ...]
    leaf_rows: tuple[str, ...]  # leaves formatted 8 per line


def _feature_uses(model: FxModel) -> dict[str, Any]:
    """What the model's features need from the runtime (``rlcc.features``): the shared RTT
    inflation, host parameters and counted event types."""
    defs = [vocab.get(n) for n in model.spec.feature_names]
    return {
        "inflation": any(d.needs_inflation for d in defs),
        "params": {p for d in defs for p in d.params},
        "events": sorted({e for d in defs for e in d.events}),
    }


def _input_type(model: FxModel) -> str:
    """int32_t, or int64_t when a current-step feature can exceed int32 (the unsigned rate)."""
    wide = any(vocab.get(n).device_range(model.constants)[1] > INT32_MAX for n in model.spec.feature_names)
    return "int64_t" if wide else "int32_t"


def input_bits(model: FxModel) -> int:
    """Width of the C ``input_t`` (the words of the policy input array)."""
    return 64 if _input_type(model) == "int64_t" else 32


def _bound_text(b: int | str) -> str:
    return b if isinstance(b, str) else {INT32_MAX: "INT32_MAX", U32_MAX: "UINT32_MAX", fmt.RATE_MAX: "2^20"}.get(b, str(b))


def _bound_c(b: int | str, macro_prefix: str) -> str:
    if isinstance(b, str):
        return f"p[{macro_prefix}P_{b}]"
    return {INT32_MAX: "(uint32_t)INT32_MAX", fmt.RATE_MAX: "RLCC_RATE_MAX"}.get(b, f"{b}u")


def _param_checks(keys: list[str], macro_prefix: str) -> list[str]:
    """C conditions of ``PARAM_RULES`` for the model's parameters (a bound relating two
    parameters once), for ``params_valid``."""
    pairs: list[tuple[str, str]] = []  # (smaller, larger) C operands
    for key in keys:
        r, me = PARAM_RULE[key], f"p[{macro_prefix}P_{key}]"
        if not (isinstance(r.lo, int) and r.lo <= 0):
            pairs.append((_bound_c(r.lo, macro_prefix), me))
        if not (isinstance(r.hi, int) and r.hi >= U32_MAX):
            pairs.append((me, _bound_c(r.hi, macro_prefix)))
    return [f"{a} <= {b}" if not a.endswith("u") else f"{b} >= {a}" for a, b in dict.fromkeys(pairs)]


def _params(model: FxModel) -> list[Param]:
    spec, c = model.spec, model.constants
    q = fmt.FACTOR_FRAC_BITS
    sh = 16 + fmt.INV_BASE_RTT_SHIFT
    r = spec.rate
    provenance = {
        "TARGET_Q16": lambda: f"target = {spec.reward.target!r} -> round({spec.reward.target!r} * 2^{q})",
        "BETA_Q16": lambda: f"beta = {spec.reward.beta!r} -> round({spec.reward.beta!r} * 2^{q})",
        "INV_BASE_RTT": lambda: f"base RTT = {spec.reward.base_rtt_ns} ns -> round(2^{sh} / {spec.reward.base_rtt_ns})",
        "CLAMP_MIN_Q16": lambda: _clamp_provenance(model, "min"),
        "CLAMP_MAX_Q16": lambda: _clamp_provenance(model, "max"),
        "RATE_INITIAL": lambda: f"initial rate = {r.initial!r} of line rate -> round({r.initial!r} * 2^{fmt.RATE_FRAC_BITS})",
        "RATE_MIN": lambda: f"minimum rate = {r.min!r} of line rate -> round({r.min!r} * 2^{fmt.RATE_FRAC_BITS})",
        "PROBE_TIMEOUT_NS": lambda: (
            f"RTT-probe timeout of TX events = {c.probe_timeout_ns} ns ("
            + ("rlcc.formats.PROBE_TIMEOUT_NS_DEFAULT)" if c.probe_timeout_ns == fmt.PROBE_TIMEOUT_NS_DEFAULT
               else "rlcc-compile --probe-timeout-us)")),
    }
    note = {"INV_BASE_RTT": f"; = round(2^{sh} / base_rtt_ns)"}
    params = []
    for i, key in enumerate(model_params(spec)):
        rule = PARAM_RULE[key]
        params.append(Param(i, key, getattr(c, rule.field), provenance[key](),
                            f"{_bound_text(rule.lo)} .. {_bound_text(rule.hi)}" + note.get(key, "")))
    return params


def _clamp_provenance(model: FxModel, side: str) -> str:
    """Where a factor clamp bound comes from: the spec, or the teacher's achievable factors
    (``rlcc.distill.factor_range``) where they are narrower."""
    spec_value = getattr(model.spec.action, f"clamp_{side}")
    value = getattr(model.constants, f"clamp_{side}_q16")
    q = fmt.FACTOR_FRAC_BITS
    fr = model.provenance.get("factor_range")
    if value == round(spec_value * fmt.FACTOR_ONE) or not fr:
        return f"clamp_{side} = {spec_value!r} -> round({spec_value!r} * 2^{q})"
    word = "lowest" if side == "min" else "highest"
    return (f"teacher's {word} factor {fr[side]!r} ({fr['source']}: {fr['detail']}), inside clamp_{side} = "
            f"{spec_value!r} -> round({fr[side]!r} * 2^{q})")


def _decimal(value: int, frac_bits: int, digits: int = 6) -> str:
    """A fixed-point value as a short readable real number (``digits`` significant digits)."""
    return f"{value / 2**frac_bits:.{digits}g}"


def _split(model: FxModel, t: int, k: int, s: Split, input_macros: list[str], prefix: str) -> CSplit:
    names = model.spec.student_input_names()
    bits = model.input_frac_bits[s.input]
    macro = f"{prefix}THR_{t}_{k}"
    # one readable real value (the raw feature value of the integer threshold); the full provenance
    # (scaled border, affine map, rounding) is in the manifest
    comment = f"{names[s.input]} {s.op} {_decimal(s.threshold, bits)}"
    cond = f"(x[{input_macros[s.input]}] {s.op} {macro})"
    return CSplit(k, f"{names[s.input]} {s.op} {s.threshold}", macro, c_int32(s.threshold), cond, comment)


def _ramp(model: FxModel, i: int, r: Ramp, input_macros: list[str], prefix: str, folded: bool = False) -> dict[str, Any]:
    """A ramp's named constants (value and a readable comment each) and its rlcc_ramp arguments
    after the input. ``folded`` (into its input's search, whose cuts hold LO and HI): the terms at
    LO and HI instead of LO and HI."""
    names = model.spec.student_input_names()
    bits = model.input_frac_bits[r.input]
    per_unit = lambda k: _decimal(k, r.shift + fmt.LEAF_FRAC_BITS - bits) if k else "0"  # noqa: E731
    at = lambda x: int(golden.ramp_value(golden.NUMPY, r, np.int64(x)))  # noqa: E731
    ends = [("AT_LO", c_int32(at(r.lo)), f"the term for {names[r.input]} <= {_decimal(r.lo, bits)} (its value at LO)"),
            ("AT_HI", c_int32(at(r.hi)), f"the term for {names[r.input]} >= {_decimal(r.hi, bits)} (its value at HI)")]
    consts = [
        ("LO", c_int32(r.lo), f"{names[r.input]} = {_decimal(r.lo, bits)}: the term is constant below"),
        ("CENTER", c_int32(r.center), f"{names[r.input]} = {_decimal(r.center, bits)}: the teacher's equilibrium"),
        ("HI", c_int32(r.hi), f"{names[r.input]} = {_decimal(r.hi, bits)}: the term is constant above"),
        ("K_BELOW", c_int32(r.k_below), f"slope below the center: {per_unit(r.k_below)} factor per 1.0 of the input"),
        ("K_ABOVE", c_int32(r.k_above), f"slope above the center: {per_unit(r.k_above)} factor per 1.0 of the input"),
        ("SHIFT", f"{r.shift}u", "fractional bits of the slopes"),
    ]
    if folded:
        consts = [c for c in consts if c[0] not in ("LO", "HI")] + ends
    macro = f"{prefix}RAMP_{i}_"
    return {"index": i, "input": names[r.input], "consts": [{"macro": macro + c, "value": v, "comment": m} for c, v, m in consts],
            "args": [macro + c for c, _, _ in consts],
            "input_macro": input_macros[r.input]}


def tree_sum_function(prefix: str) -> str:
    """The out-of-line bias-plus-leaves sum of a model with ramps (the proof abstracts it in the
    handler by this name)."""
    return f"{prefix}{TREE_SUM_SUFFIX}"


def ramp_sum_function(prefix: str) -> str:
    """The out-of-line sum of the ramps' terms (abstracted in the handler by this name)."""
    return f"{prefix}{RAMP_SUM_SUFFIX}"


def _register_inputs(model: FxModel, plan: bitmask.BitmaskPlan) -> tuple[int, ...] | None:
    """The inputs the out-of-line sum of ``plan`` takes as arguments (a0, a1, ...), in order: those
    its searches read; None: it takes a pointer to the caller's input array. Arguments for the
    folded bitmask sum (one function, no ramps' sum beside it) of int32 inputs that fit the argument
    registers: the caller then keeps no array in memory and the sum loads nothing. An input no
    search reads is not passed (the compiler would drop the argument of a static function anyway)."""
    used = tuple(b.input for b in plan.inputs)
    if not plan.folded or input_bits(model) != 32 or len(used) > SUM_ARG_REGISTERS:
        return None
    return used


def sum_register_inputs(model: FxModel) -> tuple[int, ...] | None:
    """``_register_inputs`` of the default tree style, the one whose sum the handler proof abstracts
    (one function returning both sums)."""
    if not model.trees:
        return None
    return _register_inputs(model, bitmask.plan(model, *BITMASK_STYLES[TREE_STYLES[0]]))


def _input_macros(model: FxModel, prefix: str) -> list[str]:
    names = model.spec.student_input_names()
    return [prefix + "IN_" + re.sub(r"\W+", "_", n).strip("_").upper() for n in names]


def _inputs(model: FxModel, macros: list[str]) -> list[dict[str, Any]]:
    """Every policy input: its index macro, step, feature and where its value comes from."""
    spec = model.spec
    out = []
    for i, name in enumerate(spec.input_names()):
        ago, f = model.spec.locate_input(i)
        out.append({"index": i, "macro": macros[i], "name": name, "ago": ago, "feature": f,
                    "ctx_word": (ago - 1) * spec.n_features + f if ago else None, "derived": None})
    for k, name in enumerate(spec.derived):  # after the window: computed from two of its inputs
        cur, prev = spec.derived_sources(k)
        i = spec.input_width + k
        out.append({"index": i, "macro": macros[i], "name": f"{name}[t]", "ago": None, "feature": None, "ctx_word": None,
                    "derived": {"function": derived_vocab.get(name).c_function, "cur": macros[cur], "prev": macros[prev],
                                "k": k}})
    return sorted(out, key=lambda d: d["index"])


def _window_order(inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The order the input window is loaded in: each derived input right after its two sources, all
    first, so that its out-of-line call comes before the other inputs are loaded (fewer values live
    across the call: fewer callee-saved registers to save); then the rest in index order."""
    by_macro = {i["macro"]: i for i in inputs}
    first: list[dict[str, Any]] = []
    for d in (i for i in inputs if i["derived"]):
        first += [by_macro[m] for m in (d["derived"]["prev"], d["derived"]["cur"]) if by_macro[m] not in first] + [d]
    return first + [i for i in inputs if i not in first]


def _leaf_rows(values: tuple[int, ...], per_row: int = LEAVES_PER_ROW) -> tuple[str, ...]:
    """Leaf initializer rows, each with its values' decimals in a trailing comment, laid out as
    clang-format's column layout of a braced list does (column width: the widest cell + 1)."""
    cells = [f"{v}," for v in values]
    rows = [cells[i : i + per_row] for i in range(0, len(cells), per_row)]
    widths = [max(len(r[j]) for r in rows if j < len(r)) for j in range(len(rows[0]))] if rows else []
    out = []
    for i, row in enumerate(rows):
        text = " ".join(cell.ljust(widths[j]) if j < len(row) - 1 else cell for j, cell in enumerate(row))
        dec = " ".join(_decimal(v, fmt.LEAF_FRAC_BITS, 4) for v in values[i * per_row : (i + 1) * per_row])
        out.append(f"{text} /* {dec} */")
    return tuple(out)


def _c_uint64(v: int) -> str:
    return f"UINT64_C(0x{v:016x})"


def _branch_search(macros: list[str], value: Callable[[int], str | None], lo: int, hi: int, depth: int = 1,
                   before: Callable[[int], str | None] = lambda b: None) -> list[str]:
    """Statements returning ``value(b)`` for x's bucket b in lo .. hi (bucket b: x above exactly b
    cuts; None: a plain return) by nested comparisons with the cuts' constants, halving the buckets
    at each one; ``before(b)``: a statement to run first in bucket b's outcome."""
    pad = "    " * depth
    if lo == hi:
        first, v = before(lo), value(lo)
        return ([f"{pad}{first}"] if first else []) + [f"{pad}return{'' if v is None else ' ' + v};"]
    mid = (lo + hi + 1) // 2  # x > cut mid - 1: bucket mid or above
    return ([f"{pad}if (x > {macros[mid - 1]}) {{"] + _branch_search(macros, value, mid, hi, depth + 1, before) + [f"{pad}}}"]
            + _branch_search(macros, value, lo, mid - 1, depth, before))


def _group_rows(g: bitmask.LeafGroup) -> list[str]:
    """A leaf group's initializer rows (clang-format's column layout), each row's entries sharing
    every leaf but the first tree's, which the comment names."""
    per_row = min(GROUP_ENTRIES_PER_ROW, 1 << g.widths[0])  # a row: one run of the first tree's leaves
    cells = [f"{v}," for v in g.entries]
    widths = [max(len(cells[r + j]) for r in range(0, len(cells), per_row)) for j in range(per_row)]
    out = []
    for r in range(0, len(cells), per_row):
        row = cells[r : r + per_row]
        text = " ".join(c.ljust(widths[j]) if j < len(row) - 1 else c for j, c in enumerate(row))
        first = f"tree {g.trees[0]} leaves {g.leaf(r, 0)}-{g.leaf(r + per_row - 1, 0)}"
        rest = "".join(f", tree {t} leaf {g.leaf(r, k)}" for k, t in enumerate(g.trees) if k)
        out.append(f"{text} /* {first}{rest} */")
    return out


def _piece_statement(b: bitmask.InputBuckets, k: int, macro_prefix: str) -> str:
    """The statement adding a folded ramp's piece in bucket ``k`` of its input's search."""
    piece, macro = b.pieces[k], f"{macro_prefix}RAMP_{b.ramp}_"
    if piece.kind in ("lo", "hi"):
        return f"*ramp += {macro}AT_{piece.kind.upper()};"
    side = "BELOW" if piece.kind == "below" else "ABOVE"
    return f"*ramp += rlcc_ramp_{piece.kind}(x, {macro}CENTER, {macro}K_{side}, {macro}SHIFT);"


def _sum_args(prefix: str, macros: list[str], names: list[str]) -> dict[str, str]:
    """The folded sum's head and its call, one passed input per line with its argument register."""
    notes = [f"a{k}" for k in range(len(names))]
    return {"head": definition_one_per_line(f"static __attribute__((noinline)) {prefix}sums_t", tree_sum_function(prefix),
                                            [f"{prefix}input_t {a}" for a in names], notes),
            "call": assignment_one_per_line(f"const {prefix}sums_t sums", tree_sum_function(prefix),
                                            [f"x[{m}]" for m in macros], notes, 4)}


def _bitmask(model: FxModel, input_macros: list[str], prefix: str, macro_prefix: str, branch_free: bool,
             group_bits: int, fold_ramps: bool) -> dict[str, Any]:
    """The ``bitmask`` tree styles' tables and statements (``rlcc.codegen.bitmask``)."""
    plan = bitmask.plan(model, branch_free, group_bits, fold_ramps)
    names = model.spec.student_input_names()
    arg_names = [m[len(macro_prefix) + len("IN_"):].lower() for m in input_macros]
    passed = _register_inputs(model, plan)
    word_var = (lambda w: "bits") if plan.n_words == 1 else (lambda w: f"bits_{w}")  # noqa: E731
    inputs = []
    for b in plan.inputs:
        bits = model.input_frac_bits[b.input]
        roles: dict[int, list[str]] = {}  # a folded ramp's cuts: x > LO - 1, x > CENTER - 1, x > HI
        if b.ramp is not None:
            r = model.ramps[b.ramp]
            for role, v in (("lo", r.lo - 1), ("center", r.center - 1), ("hi", r.hi)):
                roles.setdefault(v, []).append(f"ramp {b.ramp} {role}")
        cuts = []
        for j, c in enumerate(b.cuts):
            where = ", ".join([f"tree {t} split {k}" for t, k in c.uses] + roles.get(c.value, [])) or "no split"
            cuts.append({"macro": f"{macro_prefix}CUT_{b.input}_{j}", "value": c_int32(c.value),
                         "comment": f"{names[b.input]} > {_decimal(c.value, bits)}: {where}"})
        x = arg_names[b.input] if passed is not None else f"x[{input_macros[b.input]}]"
        tables = f"{prefix}tables"
        table = f"{tables}.cuts_{b.input}"
        own_word = f"{tables}.bits_{b.input}" + ("" if plan.n_words == 1 else f"_{b.words()[0]}")
        returns_word = b.search == "branch" and len(b.words()) == 1  # each search leaf loads its word itself
        ramp_only = b.ramp is not None and not b.words()  # no split uses the input: the search adds the piece only
        if b.search == "branch":
            value = ((lambda k, w=own_word: f"{w}[{k}]") if returns_word else (lambda k: None) if ramp_only  # noqa: E731
                     else (lambda k: f"{k}u"))
            before = (lambda k, b=b: _piece_statement(b, k, macro_prefix)) if b.ramp is not None else (lambda k: None)
            lines = _branch_search([c["macro"] for c in cuts], value, 0, len(cuts), 1, before)
            if ramp_only:
                lines = lines[:-1]  # the last outcome's plain return ends the function anyway
            search = {"kind": "branch", "lines": lines,
                      "what": f"{len(cuts)} cut(s), binary search by nested comparisons (at most {b.search_steps})"
                              + (", each outcome its word of split bits" if returns_word else "")
                              + (", no split uses this input" if ramp_only else "")}
        elif b.search == "table":
            pads = [c["macro"] for c in cuts] + ["INT32_MAX"] * (len(b.padded_cuts) - len(cuts))
            steps = []
            for s in range(b.search_steps - 1, -1, -1):
                half = 1 << s
                first = s == b.search_steps - 1
                ref = cuts[half - 1]["macro"] if first else f"{table}[b + {half - 1}u]" if half > 1 else f"{table}[b]"
                shift = f" << {s}" if s else ""
                steps.append(f"b {'=' if first else '+='} (uint32_t)(x > {ref}){shift};")
            search = {"kind": "binary", "table": table, "member": f"cuts_{b.input}", "entries": pads, "steps": steps,
                      "what": f"{len(cuts)} cut(s), branch-free binary search over {len(pads)} (padded with INT32_MAX)"}
        else:
            search = {"kind": "linear", "terms": [f"(uint32_t)(x > {c['macro']})" for c in cuts],
                      "what": f"{len(cuts)} cut(s), compare-sum"}
        n_buckets = len(b.masks[0])
        labels = [("x <= " + _decimal(b.cuts[0].value, bits)) if k == 0 else
                  (f"x > {_decimal(b.cuts[min(k, len(b.cuts)) - 1].value, bits)}" + (
                      f", <= {_decimal(b.cuts[k].value, bits)}" if k < len(b.cuts) else "")) for k in range(n_buckets)]
        words = [{"word": w, "member": f"bits_{b.input}" + ("" if plan.n_words == 1 else f"_{w}"),
                  "rows": [f"{_c_uint64(m)}, /* {labels[k]}{' (padding)' if k > len(b.cuts) else ''} */"
                           for k, m in enumerate(b.masks[w])]} for w in b.words()]
        for w in words:
            w["table"] = f"{tables}.{w['member']}"
        kind = "bits" if returns_word else "ramp" if ramp_only else "bucket"
        inputs.append({"index": b.input, "name": names[b.input], "macro": input_macros[b.input], "x": x, "cuts": cuts,
                       "search": search, "bucket_fn": f"{prefix}{kind}_{b.input}", "ramp": b.ramp, "ramp_only": ramp_only,
                       "returns_word": returns_word, "words": words})
    fields = []
    for t, f in enumerate(plan.fields):
        var = word_var(f.word)
        mask = (1 << f.width) - 1
        shifted = f"({var} >> {f.offset})" if f.offset else var
        fields.append({"tree": t, "index": f"(uint32_t){shifted} & {mask}u" if f.width else "0u"})
    def word_term(i: dict[str, Any], w: int) -> str:
        call = f"{i['bucket_fn']}({i['x']}{', &ramps' if i['ramp'] is not None else ''})"
        return call if i["returns_word"] else f"{i['words'][[x['word'] for x in i['words']].index(w)]['table']}[{call}]"

    word_terms = {w: [word_term(i, w) for i in inputs if any(x["word"] == w for x in i["words"])]
                  for w in range(plan.n_words)}
    words = [{"var": word_var(w), "terms": word_terms[w] or ["UINT64_C(0)"]} for w in range(plan.n_words)]
    rows = []
    for t, tree in enumerate(model.trees):
        padded = tuple(tree.leaves) + (0,) * (plan.leaf_stride - len(tree.leaves))
        rows.append({"tree": t, "rows": _leaf_rows(padded)})
    groups = []
    for j, g in enumerate(plan.groups if plan.grouped else ()):
        var = word_var(g.word)
        shifted = f"({var} >> {g.offset})" if g.offset else var
        index = f"(uint32_t){shifted} & {(1 << g.width) - 1}u" if g.width else "0u"
        parts = " + ".join(f"tree {t} leaf (bits {sum(g.widths[:k])}-{sum(g.widths[:k + 1]) - 1})" for k, t in enumerate(g.trees))
        groups.append({"member": f"leaf_sums_{j}", "trees": g.trees, "size": len(g.entries), "index": index,
                       "what": f"trees {', '.join(map(str, g.trees))}" if len(g.trees) > 1 else f"tree {g.trees[0]}",
                       "layout": parts, "rows": _group_rows(g)})
    ramp_calls = [f"{i['bucket_fn']}({i['x']}, &ramps);" for i in inputs if i["ramp_only"]]
    args = None if passed is None else _sum_args(prefix, [input_macros[i] for i in passed], [arg_names[i] for i in passed])
    return {"inputs": inputs, "args": args, "fields": fields, "words": words, "ramp_calls": ramp_calls, "tables": f"{prefix}tables", "leaves_name": f"{prefix}tables.leaves",
            "leaf_stride": plan.leaf_stride, "leaf_rows": rows, "n_cuts": plan.n_cuts, "n_words": plan.n_words,
            "field_bits": sum(f.width for f in plan.fields), "groups": groups, "folded": plan.folded,
            "table_bytes": sum(4 * len(g.entries) for g in plan.groups) if groups else 4 * plan.leaf_stride * len(model.trees)}


def build_context(model: FxModel, name: str, tree_style: str, source_info: dict[str, Any],
                  sdk: SdkChoice | None = None) -> dict[str, Any]:
    """Everything the templates need, in deterministic order (``sdk``: the flavour, default the stub)."""
    if tree_style not in TREE_STYLES:
        raise BadInputError(f"tree_style must be one of {', '.join(TREE_STYLES)}, got {tree_style!r}")
    spec = model.spec
    ident = c_ident(name)
    prefix, macro_prefix = ident + "_", ident.upper() + "_"
    uses = _feature_uses(model)
    macros = _input_macros(model, macro_prefix)
    inputs = _inputs(model, macros)
    trees = []
    for t, tree in enumerate(model.trees):
        splits = tuple(_split(model, t, k, s, macros, macro_prefix) for k, s in enumerate(tree.splits))
        trees.append(CTree(t, tree.depth, splits, f"{prefix}leaves_{t}", tree.leaves, _leaf_rows(tree.leaves)))
    params = _params(model)
    enabled = [fmt.EVENT_TX, fmt.EVENT_RTT] + uses["events"]
    disabled = [e for e in sorted(fmt.EVENT_NAMES) if e not in enabled]
    param_reads = {name: f"p[{macro_prefix}P_{name}]" for name in uses["params"]}
    features = [
        {"index": i, "name": f.name, "macro": macro_prefix + "F_" + f.name.upper(), "scale": repr(f.scale), "offset": repr(f.offset),
         "frac_bits": vocab.get(f.name).frac_bits,
         "c_code": vocab.get(f.name).c_code(prefix + "input_t", param_reads)}
        for i, f in enumerate(spec.features)
    ]
    # a tree-less model (a constant teacher) has no tables: the bias alone, as in the other forms
    bm = (_bitmask(model, macros, prefix, macro_prefix, *BITMASK_STYLES[tree_style])
          if tree_style in BITMASK_STYLES and model.trees else None)
    sdk_context = template_context(sdk or choose(), ident, params, runtime_version(), model_sha256(model))
    return {
        **sdk_context,
        "name": name,
        "ident": ident,
        "IDENT": ident.upper(),
        "p": prefix,  # prefix of the model's file-scope identifiers
        "P": macro_prefix,  # ... and of its macros and enumerators
        "runtime_version": runtime_version(),
        "runtime_text": None,  # the runtime header's text when it is inlined (render_sources)
        "wrap_call": wrap_call,
        "rlcc_version": __version__,
        "tree_style": tree_style,
        "param_note": "Changing a parameter changes the inputs the trees see, which were trained with the defaults.",
        "fold_target": "thresholds",
        "model_sha256": model_sha256(model),
        "source_info": sorted((str(k), str(v)) for k, v in source_info.items()),
        "spec": spec,
        "features": features,
        "n_features": spec.n_features,
        "history": spec.history,
        "inputs": inputs,
        "window_order": _window_order(inputs),
        "n_inputs": spec.student_width,
        "history_words": model.history_words,
        "n_derived": len(spec.derived),
        "uses": uses,
        "trees": trees,
        "bitmask": bm,
        "max_depth": max((t.depth for t in model.trees), default=0),
        "n_comparisons": sum(t.depth for t in model.trees),
        "n_operations": model.n_operations,
        "leaf_bytes": 4 * sum(len(t.leaves) for t in model.trees),
        "ramps": [_ramp(model, i, r, macros, macro_prefix, bool(bm and bm["folded"])) for i, r in enumerate(model.ramps)],
        "bias": c_int32(model.bias),
        "bias_value": model.bias,
        "bias_decimal": _decimal(model.bias, fmt.LEAF_FRAC_BITS),
        "params": params,
        "param": {p.key: p for p in params},
        "param_checks": _param_checks([p.key for p in params], macro_prefix),
        "event_names": fmt.EVENT_NAMES,
        "enabled_events": [fmt.EVENT_NAMES[e] for e in enabled],
        "disabled_events": [fmt.EVENT_NAMES[e] for e in disabled],
        "disable_mask": c_uint32(sum(1 << e for e in disabled)),
        "sqrt": _sqrt_plan(),
        "fn": {"sqrt": SQRT_FUNCTION, "tree_sum": tree_sum_function(prefix), "ramp_sum": ramp_sum_function(prefix)},
        "input_type": _input_type(model),
        "fmt": _formats(),
        "num": {k: getattr(fmt, k) for k in ("FACTOR_FRAC_BITS", "RATE_FRAC_BITS")},
        "leaf_frac_bits": fmt.LEAF_FRAC_BITS,
        "cnp_shift": fmt.CNP_SHIFT,
        "nack_shift": fmt.NACK_SHIFT,
    }


def wrap_call(head: str, args: list[str], tail: str, indent: int = 0, limit: int = 120) -> str:
    """``head(arg, arg...)tail`` as clang-format lays it out: one line if it fits, else the
    arguments bin-packed and aligned after the opening parenthesis."""
    pad = " " * indent
    one = f"{pad}{head}({', '.join(args)}){tail}"
    if len(one) <= limit:
        return one
    col = len(pad) + len(head) + 1
    lines, cur = [], pad + head + "("
    for i, arg in enumerate(args):
        piece = arg + ("," if i < len(args) - 1 else ")" + tail)
        if cur.endswith("(") or len(cur) + 1 + len(piece) <= limit:
            cur = cur + piece if cur.endswith("(") else f"{cur} {piece}"
        else:
            lines.append(cur)
            cur = " " * col + piece
    lines.append(cur)
    return "\n".join(lines)


def _one_per_line(head: str, items: list[str], notes: list[str], tail: str, indent: int) -> str:
    """``head(item, item...)tail``, one item per line aligned after the parenthesis, each with its
    trailing comment (which keeps clang-format from packing them)."""
    col = " " * (indent + len(head) + 1)
    return "\n".join((" " * indent + head + "(" if k == 0 else col) + item + (")" + tail if k == len(items) - 1 else ",")
                     + f" /* {note} */" for k, (item, note) in enumerate(zip(items, notes)))


def _fits(text: str, limit: int = 120) -> bool:
    return all(len(line) <= limit for line in text.split("\n"))


def definition_one_per_line(return_type: str, name: str, params: list[str], notes: list[str]) -> str:
    """A function definition's head with one parameter per line, as clang-format lays it out: the
    return type on its own line when the aligned form would pass the column limit."""
    one = _one_per_line(f"{return_type} {name}", params, notes, "", 0)
    return one if _fits(one) else f"{return_type}\n" + _one_per_line(name, params, notes, "", 0)


def assignment_one_per_line(lhs: str, fn: str, args: list[str], notes: list[str], indent: int) -> str:
    """``lhs = fn(args...);`` with one argument per line, as clang-format lays it out: broken after
    the ``=`` when the aligned form would pass the column limit."""
    one = _one_per_line(f"{lhs} = {fn}", args, notes, ";", indent)
    return one if _fits(one) else " " * indent + f"{lhs} =\n" + _one_per_line(fn, args, notes, ";", indent + 4)


def runtime_header_text() -> str:
    """The runtime header every generated firmware uses (``rlcc.firmware_sdk_stub``)."""
    from rlcc.firmware_sdk_stub import runtime_header

    return runtime_header().read_text(encoding="utf-8")


def runtime_version() -> int:
    """``RLCC_RUNTIME_VERSION`` of the runtime header."""
    m = re.search(r"^#define RLCC_RUNTIME_VERSION (\d+)u$", runtime_header_text(), re.M)
    if m is None:
        raise BadInputError("rlcc_runtime.h has no RLCC_RUNTIME_VERSION")
    return int(m.group(1))


def _sqrt_plan() -> dict:
    """Table-driven isqrt of ``min(rate, RATE_MAX) << RATE_FRAC_BITS``: the interpolation knots.

    Knot ``j`` is floor(2^30 sqrt(1 + j / base)), j = 0 .. 3 base (T = t / 2^30 in [1, 4], t: the
    rate shifted left by an even count into [2^30, 2^32)); between two knots the root is their
    chord, which lies below the concave root, so the estimate is never high by more than its
    rounding (the exhaustive test and ``rlcc-verify --prove`` check every rate).
    """
    base = 1 << (SQRT_INDEX_BITS - 2)  # T >= 1: the top two bits of t are not both zero
    knots = [math.isqrt((base + j) << (60 - (SQRT_INDEX_BITS - 2))) for j in range(3 * base + 1)]
    assert max(b - a for a, b in zip(knots, knots[1:])) << SQRT_FRAC_BITS < 1 << 32  # the product fits 32 bits
    return {"arg_bits": fmt.RATE_MAX.bit_length() + fmt.RATE_FRAC_BITS, "index_bits": SQRT_INDEX_BITS,
            "frac_bits": SQRT_FRAC_BITS, "table_base": base, "knots": knots}


def _formats() -> dict[str, str]:
    """rlcc.formats values the C uses, as C literals keyed by their formats-module name."""
    unsigned = ["RATE_FRAC_BITS", "RATE_MAX", "FACTOR_FRAC_BITS", "FACTOR_ONE", "CTX_BYTES", "CTX_WORDS",
                "CTX_RATE", "CTX_PREV_FACTOR", "CTX_COUNTS", "CTX_FLAGS", "CTX_FLAG_HISTORY_VALID", "CTX_RATE_CARRY_SHIFT", "RATE_CARRY_MASK", "CTX_PROBE_TS", "CTX_HISTORY",
                "CTX_HISTORY_WORDS", "INV_BASE_RTT_SHIFT", "SQRT_RATE_FRAC_BITS", "COUNT_MAX", "LEAF_FRAC_BITS",
                "EVENT_NULL", "EVENT_FW", "EVENT_CNP", "EVENT_TX", "EVENT_ACK", "EVENT_NACK", "EVENT_RTT"]
    out = {k: c_uint32(getattr(fmt, k)) for k in unsigned}
    out["FEATURE_MIN"] = c_int32(fmt.FEATURE_MIN)
    out["FEATURE_MAX"] = c_int32(fmt.FEATURE_MAX)
    return out
