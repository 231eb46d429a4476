"""report.json / report.md of an int8 compile (``rlcc.kinds.int8.distill.Int8Report``)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from rlcc.kinds.int8.distill import KEYS, Int8Report
from rlcc.distill.report import _closed_loop_table, _gate_section

REPORT_FORMAT = "rlcc.int8-report/1"


def to_dict(report: Int8Report) -> dict[str, Any]:
    d = dataclasses.asdict(report)
    d["gate"] = report.gate.to_dict()
    return {"schema": REPORT_FORMAT, "backend": "int8", **d}


def to_json(report: Int8Report) -> str:
    return json.dumps(to_dict(report), sort_keys=True, indent=1, allow_nan=True) + "\n"


def _table_i(report: Int8Report) -> list[str]:
    s, dev = report.sizes, report.device or {}
    rows = [("multiply-accumulates per decision", s["macs"]), ("table lookups per decision", s["lut_lookups"]),
            ("requantizations per decision", s["requantizations"]), ("operations per decision (sum)", s["operations"]),
            ("constant bytes (weights, biases, multipliers, tables)", s["constant_bytes"]),
            ("per-flow state bytes (of the 48-byte context)", s["state_bytes"]),
            ("  of which recurrent state (h, c)", s["recurrent_state_bytes"]),
            ("hidden activation bits", s["activation_bits"])]
    for prof in dev.get("profiles", []):
        rows.append((f"RTT decision cycles on {prof['profile']} ({prof['target']}, max / mean)",
                     f"{prof['rtt_cycles_max']} / {prof['rtt_cycles_mean']}"))
        rows.append((f"worst-case decision time on {prof['profile']} (ns)", prof["worst_case_ns"]))
    return ["", "## Device cost (Table I)", "", "| measure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]


def to_markdown(report: Int8Report, glance: Sequence[str] = ()) -> str:
    """``glance``: the firmware engineer's section (``rlcc.verify.glance``), first after the title."""
    q, f = report.quantization, report.fidelity
    out = [
        f"# rlcc compile report: {report.teacher['path']} (backend int8)",
        *glance,
        "",
        f"Network: {report.network}{' (recurrent)' if report.teacher['recurrent'] else ''}. "
        f"int8 weights, 24-bit inputs, int{q['activation_bits']} hidden activations, int64/int32 accumulators, "
        "lookup tables for the nonlinearities and the action map (rlcc.fxp.int8_net).",
        "",
        "## Quantization",
        "",
        f"Calibrated on {q['calibration_decisions']} closed-loop teacher decisions. Input clip ranges (scaled units): "
        + ", ".join(f"{k} {v:g}" for k, v in q["input_clip"].items()) + ". "
        + (f"Activation clip ranges per layer: {', '.join(f'{v:g}' for v in q['activation_clip'])}. " if q["activation_clip"] else "")
        + "Calibration factor RMSE by setting (hidden activation width, bias correction): "
        + ", ".join(f"{k} {v:g}" for k, v in q["calibration_rmse_by_setting"].items())
        + f"; chosen: int{q['activation_bits']}{' bias-corrected' if q['bias_correction'] else ''}.",
        "",
        "## Fidelity (open loop, held-out decisions)",
        "",
        f"Factor of the int8 network vs the teacher on {f['held_out_decisions']} held-out closed-loop decisions"
        + (" (each LSTM step from the teacher's own state, quantized)" if f["per_step_teacher_state"] else "")
        + f": RMSE {f['rmse_vs_teacher']:g}, mean |error| {f['mean_abs_vs_teacher']:g}, max |error| {f['max_abs_vs_teacher']:g}.",
    ]
    out += _table_i(report)
    out += _gate_section(report.gate)
    out += _closed_loop_table(report.closed_loop_steady, "Closed loop, steady state", "flows start at their fair share",
                              keys=KEYS)
    out += _closed_loop_table(report.closed_loop, "Closed loop, startup", "flows start at line rate", keys=KEYS)
    if report.closed_loop_suite is not None:
        out += _closed_loop_table(report.closed_loop_suite, "Closed loop, reduced suite",
                                  f"the int8 network decides in {report.suite_latency_us:g} us, the measured worst case",
                                  kind="both topologies", keys=KEYS)
    return "\n".join(out) + "\n"
