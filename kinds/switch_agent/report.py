"""report.md / report.json of a switch-agent compile: the student's size, agreement with the
teacher, and the closed-loop comparison of static ECN, teacher and firmware."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from typing import Any

from rlcc.kinds.switch_agent.distill import SwitchCompileResult
from rlcc.switch_spec import SwitchAgentSpec

REPORT_VERSION = 1
METRICS = (  # (key, column title, format)
    ("mice_slowdown_mean", "mice FCT slowdown", "{:.2f}"),
    ("mice_slowdown_p99", "mice p99", "{:.2f}"),
    ("elephant_slowdown_mean", "elephant FCT slowdown", "{:.2f}"),
    ("queue_kb_mean", "mean queue (KB)", "{:.1f}"),
    ("queue_kb_p99", "p99 queue (KB)", "{:.1f}"),
    ("bottleneck_util", "bottleneck utilization", "{:.3f}"),
    ("unfinished", "unfinished flows", "{:.0f}"),
)


def to_dict(spec: SwitchAgentSpec, result: SwitchCompileResult, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    m = result.model
    return {
        "rlcc_switch_report": REPORT_VERSION,
        "spec": spec.to_dict(),
        "student": {"trees": len(m.trees), "max_depth": m.max_depth, "operations": m.n_operations,
                    "leaf_frac_bits": m.leaf_frac_bits, "classes_seen": list(result.fit.present)},
        "agreement": {"float_training": result.fit.float_agreement, "quantization": result.fit.quantization_agreement,
                      "held_out": result.holdout_agreement, "held_out_scenarios": result.holdout_scenarios},
        "samples": {"queue_intervals": result.samples, "unique_rows": result.unique_rows},
        "actions": result.action_counts,
        "closed_loop": result.closed_loop,
        "gate": {"passed": result.gate_passed, "checks": [dataclasses.asdict(c) for c in result.checks],
                 **({"verdict": "preview", "headline": result.gate_headline} if result.preview else {})},
        **(extra or {}),
    }


# Significant digits of report.json's floats. The closed-loop metrics come out of numpy reductions
# whose last bits follow the CPU's SIMD width (AVX2 vs AVX-512: another summation order), so the
# committed example differed in a p99's 16th digit between two machines; 12 keep every figure
# the report quotes and drop that noise.
JSON_DIGITS = 12


def _stable(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.{JSON_DIGITS}g}") if math.isfinite(value) else value
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_stable(v) for v in value]
    return value


def to_json(data: dict[str, Any]) -> str:
    """report.json: sorted keys, floats to JSON_DIGITS significant digits (the same bytes on any CPU)."""
    return json.dumps(_stable(data), indent=1, sort_keys=True) + "\n"


def _fmt(v: Any, f: str) -> str:
    return "n/a" if v is None or v != v else f.format(v)


def to_markdown(data: dict[str, Any], glance: Sequence[str] = ()) -> str:
    """``glance``: the firmware engineer's section (``rlcc.verify.glance``), first after the title."""
    s, a, spec = data["student"], data["agreement"], data["spec"]
    lines = [
        "# rlcc-compile report: switch agent (ACC)",
        *glance,
        "",
        f"ECN tuner over {len(spec['actions'])} templates, every {spec['interval_us']:g} us, features "
        f"{', '.join(spec['features'])} over the last {spec['history']} intervals.",
        "",
        f"Student: {s['trees']} trees of depth <= {s['max_depth']}, {s['operations']} operations, leaves Q{s['leaf_frac_bits']}; "
        f"the teacher chose {len(s['classes_seen'])} of the templates.",
        "",
        "| agreement with the teacher's argmax | value |",
        "|---|---:|",
        f"| float trees, training windows | {a['float_training']:.4f} |",
        f"| integer vs float trees (leaf quantization) | {a['quantization']:.4f} |",
        f"| integer trees, {'windows of ' + str(a['held_out_scenarios']) + ' held-out scenarios' if a['held_out_scenarios'] else 'training windows (no scenario held out)'} | {a['held_out']:.4f} |",
        "",
        f"Samples: {data['samples']['queue_intervals']} queue-intervals ({data['samples']['unique_rows']} distinct).",
        "",
        "## Closed loop (DCQCN hosts): static ECN vs teacher vs firmware",
        "",
        "| scenario | agent | " + " | ".join(t for _, t, _ in METRICS) + " |",
        "|---|---|" + "---:|" * len(METRICS),
    ]
    for row in data["closed_loop"]:
        lines.append(f"| {row['scenario']} | {row['agent']} | " + " | ".join(_fmt(row.get(k), f) for k, _, f in METRICS) + " |")
    g = data["gate"]
    lines += ["", f"## Fidelity gate: {g.get('headline') or ('passed' if g['passed'] else 'FAILED')}", "",
              "| scenario | metric | teacher | firmware | tolerance | |", "|---|---|---:|---:|---:|---|"]
    for c in g["checks"]:
        lines.append(f"| {c['scenario']} | {c['metric']} | {c['teacher']:.3f} | {c['firmware']:.3f} | "
                     f"{c['tolerance']:.3f} | {'ok' if c['passed'] else 'FAIL'} |")
    for key in ("verify",):
        if key in data:
            v = data[key]
            lines += ["", "## Verification", "", v if isinstance(v, str) else "```\n" + json.dumps(v, indent=1) + "\n```"]
    return "\n".join(lines) + "\n"
