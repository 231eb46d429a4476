"""Template context of the int8 backend: the tree context's event, parameter and window parts
(``rlcc.codegen.context.build_context``, which reads an ``Int8Net`` like a model without trees)
plus the network's tables, each value with a short provenance comment."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from rlcc import formats as fmt
from rlcc.codegen.context import build_context
from rlcc.codegen.generate import Lowering
from rlcc.codegen.sdk_flavours import DEFAULT_FLAVOUR, SdkChoice
from rlcc.fxp import int8_net as q8
from rlcc.kinds.int8.vectors import saturation_vectors
from rlcc.kinds.pcc import generate_firmware
from rlcc.verify.check import ModelSupport

ROW_WIDTH = 8  # table values per line


def _rows(values: Sequence[int], width: int = ROW_WIDTH) -> list[str]:
    """Initializer lines of a flat table, ``width`` values per line."""
    cells = [v if isinstance(v, str) else str(int(v)) for v in values]
    return [", ".join(cells[i:i + width]) + "," for i in range(0, len(cells), width)]


def _matrix(rows: Sequence[Sequence[int]]) -> list[str]:
    """Initializer lines of a 2-D table: one braced row per output (wrapped if long)."""
    out = []
    for r in rows:
        lines = _rows(r)
        if len(lines) == 1:
            out.append("{" + lines[0][:-1] + "},")
        else:
            out.append("{")
            out += ["    " + line for line in lines]
            out.append("},")
    return out


def _c64(v: int) -> str:
    return f"INT64_C({v})"


def build_int8_context(model: q8.Int8Net, name: str, source_info: dict[str, Any], sdk: SdkChoice | None = None) -> dict[str, Any]:
    ctx = build_context(model, name, "oblivious", source_info, sdk)
    names = model.spec.input_names()
    act_type = "int8_t" if model.act_max == q8.ACT8_MAX else "int16_t"
    inputs = [{"name": names[i], "mult": m.mult, "add": _c64(m.add), "shift": m.shift, "limit": m.limit,
               "step": f"{m.scale:.6g}"} for i, m in enumerate(model.inputs)]
    layers = []
    n_in, in_type = len(model.inputs), "int32_t"
    for k, d in enumerate(model.layers):
        layers.append({"index": k, "n_in": d.n_in, "n_out": d.n_out, "in_type": in_type, "relu": d.relu,
                       "acc_type": "int64_t" if k == 0 else "int32_t",
                       "weights": _matrix(d.weights), "bias": _rows(d.bias), "mult": _rows(d.mult), "shift": d.shift,
                       "step": f"{d.scale_out:.6g}", "lo": 0 if d.relu else -model.act_max})
        n_in, in_type = d.n_out, act_type
    lstm = None
    if model.lstm is not None:
        m = model.lstm
        lstm = {"hidden": m.hidden, "n_in": m.n_in, "in_type": in_type, "accx_type": "int32_t" if model.layers else "int64_t", "wx": _matrix(m.wx), "wh": _matrix(m.wh),
                "bias": _rows([_c64(b) for b in m.bias], 4), "mult_x": _rows(m.mult_x), "mult_h": _rows(m.mult_h),
                "shift": m.shift, "c_frac": m.c_frac,
                "reset_h": _rows(m.reset_h), "reset_c": _rows(m.reset_c),
                "sigmoid": _rows(m.sigmoid_lut), "tanh": _rows(m.tanh_lut), "h_words": m.h_words, "c_words": m.c_words,
                "word0": model.state_word0, "state_bytes": 4 * model.state_words}
        n_in, in_type = m.hidden, "int32_t"
    h = model.head
    head = {"n_in": n_in, "in_type": in_type, "weights": _rows(h.weights), "bias": h.bias, "mult": h.mult, "add": _c64(h.add),
            "shift": h.shift, "lut": _rows(h.lut, 8), "z_lo": f"{h.z_lo:g}", "z_hi": f"{h.z_hi:g}", "activation": h.activation}
    counts = model.counts()
    ctx.update({
        "backend": q8.BACKEND,
        "fold_target": "input scaling constants",
        "param_note": "Changing a parameter changes the inputs the network sees, which it was calibrated with at the defaults.",
        "net": {"inputs": inputs, "layers": layers, "lstm": lstm, "head": head, "act_type": act_type,
                "act_bits": 8 if model.act_max == q8.ACT8_MAX else 16, "act_max": model.act_max,
                "in_max": q8.IN_MAX, "x_min": q8.X_MIN, "x_max": q8.X_MAX,
                "gate": {"size": q8.GATE_LUT_SIZE, "half": q8.GATE_HALF, "h_one": q8.H_ONE, "z_frac_bits": q8.GATE_Z_FRAC_BITS,
                         "interp_bits": q8.GATE_INTERP_BITS, "z_limit": q8.GATE_Z_LIMIT,
                         "out_frac_bits": q8.GATE_OUT_FRAC_BITS, "c_max": q8.C_MAX},
                "head_segments": q8.HEAD_SEGMENTS, "head_frac_bits": q8.HEAD_FRAC_BITS,
                "counts": counts, "constant_bytes": model.constant_bytes(), "provenance": model.provenance,
                "factor_frac_bits": fmt.FACTOR_FRAC_BITS},
    })
    return ctx


def _context(model: q8.Int8Net, name: str, _tree_style: str, source_info: dict[str, Any], sdk: SdkChoice) -> dict[str, Any]:
    return build_int8_context(model, name, source_info, sdk)


# The int8 network as C: the tree template with the decision replaced by the network, stub SDK only.
LOWERING = Lowering(_context, c_template="firmware_int8.c.j2", flavours=(DEFAULT_FLAVOUR,), backend=q8.BACKEND)


def generate(model: q8.Int8Net, out_dir: str | Path, **kwargs: Any) -> dict[str, Path]:
    """The firmware files of an int8 network (the int8 lowering, the pinned vectors)."""
    return generate_firmware(model, Path(out_dir), lowering=LOWERING, **kwargs)


# What rlcc-verify's PCC check needs from this kind (the golden vectors; no proof or coverage yet).
SUPPORT = ModelSupport(model_vectors=saturation_vectors, unprovable="the int8 backend (its verification is sampled: the vectors)",
                       coverage_note="int8 backend: no observable-target coverage (saturation vectors instead)")
