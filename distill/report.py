"""``report.json`` (sorted keys, deterministic) and ``report.md`` (readable) for rlcc-compile."""

from __future__ import annotations

import json
from typing import Any

REPORT_VERSION = 1


def to_json(report: dict[str, Any]) -> str:
    return json.dumps({"rlcc_report": REPORT_VERSION, **report}, sort_keys=True, indent=1, allow_nan=True) + "\n"


def _f(v: Any, digits: int = 4) -> str:
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def to_markdown(report: dict[str, Any]) -> str:
    t, fit, q, fid, sz = report["teacher"], report["fit"], report["quantization"], report["fidelity"], report["sizes"]
    ds = report["dataset"]
    out = [
        f"# rlcc-compile report: {t['path']}",
        "",
        f"Inputs: {', '.join(t['input_names'])}. Teacher output outside the factor clamp on "
        f"{_f(100 * t['clamped_fraction'], 2)}% of visited states (clamped before distillation).",
        "",
        "## Model",
        "",
        f"- {fit['trees']} oblivious trees of depth {fit['depth']} (requested {fit['trees_requested']}, "
        f"budget {fit['budget_ops']} operations allows {fit['trees_budget']})"
        + (" - constant teacher: tree-less model, bias only" if fit["constant_teacher"] else ""),
        f"- operations (comparisons + additions): {sz['operations']} (paper: {sz['paper_operations']})",
        f"- per-flow state: {sz['state_bytes']} of {sz['context_bytes']} context bytes "
        f"({'fits' if sz['state_fits_context'] else 'DOES NOT FIT'}); model constants: {sz['model_constant_bytes']} bytes",
        f"- leaf rounding: worst leaf {_f(q['max_leaf_error_lsb'], 3)} LSB, accumulated worst case "
        f"{_f(q['max_accumulated_error_lsb'], 3)} LSB of Q16.16; always-true/false splits "
        f"{q['always_true_splits']}/{q['always_false_splits']}",
        "",
        f"Training set: {ds['train']} samples ({', '.join(f'{k} {v}' for k, v in sorted(ds['train_by_origin'].items()))}); "
        f"held out: {ds['held_out']} closed-loop samples (whole flows).",
        "",
        "## Fidelity (held-out simulator states)",
        "",
        "| measure | value |",
        "|---|---|",
        f"| float trees vs teacher: RMSE / max abs | {_f(fid['float_vs_teacher_rmse'], 5)} / {_f(fid['float_vs_teacher_max_abs'], 5)} |",
        f"| fixed point vs teacher: RMSE / max abs | {_f(fid['fixed_vs_teacher_rmse'], 5)} / {_f(fid['fixed_vs_teacher_max_abs'], 5)} |",
        f"| fixed vs float trees, same device integers: max LSB | {_f(fid['fixed_vs_float_max_lsb'], 3)} |",
        f"| decision paths changed by threshold quantization | {_f(100 * fid['path_changed_fraction'], 4)}% |",
        f"| fixed (device features) vs float (spec features): max / mean LSB | "
        f"{_f(fid['fixed_vs_float_end_to_end_max_lsb'], 1)} / {_f(fid['fixed_vs_float_end_to_end_mean_lsb'], 3)} |",
        f"| decision paths changed by device feature rounding | {_f(100 * fid['path_changed_fraction_end_to_end'], 4)}% |",
        "",
        f"## Closed loop (many-to-one, {_f(report['closed_loop']['duration_ms'], 0)} ms)",
        "",
        "| scenario | controller | goodput | mean latency (us) | queue (us) | drops | goodput diff | latency diff |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in report["closed_loop"]["scenarios"].items():
        for key in ("teacher", "float_trees", "fixed_point"):
            m = row[key]
            diffs = (f"{m['goodput_diff']:+.4f} | {100 * m['latency_rel_diff']:+.1f}%") if key != "teacher" else "- | -"
            out.append(
                f"| {name} | {key} | {_f(m['goodput'])} | {_f(m['mean_latency_us'], 2)} | "
                f"{_f(m['queue_delay_mean_us'], 2)} | {_f(m['drop_fraction'])} | {diffs} |"
            )
    out += [
        "",
        "Paper's bar (Table III): tree within 0.01 goodput and about 2% latency of the MLP.",
        "",
        "## Explainability probe (previous x current state -> factor)",
        "",
        "| previous | current | teacher | float trees | fixed point |",
        "|---|---|---|---|---|",
    ]
    for p in report["explainability"]:
        out.append(f"| {p['previous']} | {p['current']} | {_f(p['teacher'])} | {_f(p['float_trees'])} | {_f(p['fixed_point'])} |")
    dagger = report["dagger"]
    if len(dagger["rounds"]) > 1:
        out += ["", "## DAgger", "", "| round | held-out RMSE | on-policy RMSE (before refit) | closed-loop goodput diff | latency diff |", "|---|---|---|---|---|"]
        for r in dagger["rounds"]:
            (name, row), = r["closed_loop"]["scenarios"].items()
            fp = row["fixed_point"]
            on = r.get("on_policy_before_refit")
            on_rmse = _f(on["fixed_vs_teacher_rmse"], 5) if on else "-"
            out.append(f"| {r['round']} | {_f(r['held_out']['float_vs_teacher_rmse'], 5)} | {on_rmse} | "
                       f"{fp['goodput_diff']:+.4f} | {100 * fp['latency_rel_diff']:+.1f}% |")
        h = dagger["helped"]
        out += ["", f"DAgger {'improved' if h['closed_loop_improved'] else 'did not improve'} the closed-loop gap on "
                f"{h['scenario']}: {_f(h['closed_loop_gap_round0'])} -> {_f(h['closed_loop_gap_final'])}."]
    return "\n".join(out) + "\n"
