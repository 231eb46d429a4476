"""``report.json`` (sorted keys, deterministic) and ``report.md`` (readable) of a
:class:`~rlcc.distill.report_data.CompileReport`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rlcc import formats as fmt
from rlcc.distill.closed_loop import ClosedLoop
from rlcc.distill.gate import FidelityVerdict
from rlcc.recurrent import WINDOW_BURN_IN
from rlcc.distill import coverage
from rlcc.distill.report_data import CompileReport, Escalation, Selection

REPORT_VERSION = 5  # 2: candidate selection and the fidelity gate; 3: the reduced suite on both topologies; 4: window of a recurrent teacher; 5: teacher settling, escalation, coverage


def to_json(report: CompileReport) -> str:
    return json.dumps({"rlcc_report": REPORT_VERSION, **report.to_dict()}, sort_keys=True, indent=1, allow_nan=True) + "\n"


def _f(v: Any, digits: int = 4) -> str:
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _closed_loop_table(cl: ClosedLoop, title: str, what: str, kind: str = "many-to-one",
                      keys: tuple[str, ...] = ("teacher", "float_trees", "fixed_point")) -> list[str]:
    out = [
        "",
        f"## {title} ({kind}, {_f(cl.duration_ms, 0)} ms, measured from {_f(100 * cl.window_from, 0)}% of the run)",
        "",
        f"{what[0].upper()}{what[1:]}.",
        "",
        "| scenario | controller | goodput | mean latency (us) | queue (us) | drop fraction | goodput diff | latency diff | queue diff (us) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, row in cl.scenarios.items():
        for key in keys:
            m = row[key]
            diffs = (f"{m.goodput_diff:+.4f} | {100 * m.latency_rel_diff:+.1f}% | {m.queue_diff_us:+.1f}"
                     if key != "teacher" else "- | - | -")
            out.append(
                f"| {name} | {key} | {_f(m.goodput)} | {_f(m.mean_latency_us, 2)} | "
                f"{_f(m.queue_delay_mean_us, 2)} | {_f(m.drop_fraction)} | {diffs} |"
            )
    return out


def _gate_section(gate: FidelityVerdict) -> list[str]:
    bar = gate.bar
    out = ["", f"## Fidelity gate: {gate.headline}", "",
           (f"Firmware (fixed point) vs teacher on the closed-loop tables below: goodput within {bar.goodput:g}; mean RTT "
            f"and queue delay within {bar.steady_pct:g}% (steady state) and {bar.transient_pct:g}% (startup transient) "
            f"of the teacher's, queue never tighter than {bar.queue_floor_us:g} us; dropped fraction of offered bytes "
            f"within the same percentage of the teacher's, never tighter than {bar.drop_margin:g}. Options --max-goodput-diff, --max-steady-pct, --max-transient-pct, --max-drop-diff; "
            "--accept-fidelity writes the firmware and exits 0 anyway."), ""]
    if gate.settling is not None and gate.settling.swings:
        s = gate.settling
        out += [(f"Teacher: {s.line()}. The teacher settles in a scenario when each flow's rate varies by at most "
                 f"{s.limit:g} (std / mean over the measured window); where it limit-cycles there is no equilibrium for "
                 "firmware to match, so a check missed there is reported, not judged (all misses there: exit 11)."), ""]
    if gate.preview:
        out += [("This compile is a preview (--quick: fewer samples, shorter runs): the checks are measured as in a "
                 "full compile but too roughly to ship on, so they are not judged and rlcc-compile exits 0. Compile "
                 "without --quick for the verdict."), ""]
    shown = gate.failures or ((gate.worst,) if gate.worst else ())
    if shown:
        out += ["| scenario | measure | teacher | firmware | difference | tolerance |", "|---|---|---|---|---|---|"]
        out += [f"| {c.scenario} | {c.metric} | {_f(c.teacher)} | {_f(c.firmware)} | {c.difference:+.4g}{c.unit} | "
                f"{c.tolerance:.4g}{c.unit} |" for c in shown]
        if gate.passed:
            out += ["", "(the check closest to the bar)"]
        elif gate.preview:
            out += ["", "(the checks a full compile would fail at these numbers)"]
    return out


def _escalation_section(esc: Escalation | None) -> list[str]:
    if esc is None:
        return []
    out = ["", "## Escalation", "",
           ("The default compile missed the gate, so rlcc tried harder (rlcc.distill.escalate: stronger compiles in a "
            f"fixed order, within a budget of {esc.budget:g} default compiles' work, --escalation-budget) and kept the "
            f"best attempt. Stopped: {esc.stopped}."), "",
           "| attempt | what was tried | gate | worst check |", "|---|---|---|---|"]
    out += [f"| {a.attempt}{' (kept)' if a.kept else ''} | {a.what} | {a.verdict} | {a.worst} |" for a in esc.attempts]
    return out


def _coverage_section(table: list[dict[str, Any]] | None) -> list[str]:
    if not table:
        return []
    out = ["", "## Coverage: where this compile looked", "",
           "| stage | topology | pattern | flows start at | flow counts |", "|---|---|---|---|---|"]
    out += [f"| {r['stage']} | {r['topology']} | {r['pattern']} | {r['start']} | {', '.join(map(str, r['flows']))} |"
            for r in table]
    out += ["", "Not checked by the gate: " + "; ".join(coverage.gaps(table, coverage.GATE_STAGE)) + "."]
    return out


def _selection_section(sel: Selection | None) -> list[str]:
    if sel is None:
        return []
    out = ["", "## Candidate selection", "",
           ("Candidate students fitted on the final training set, each scored in closed loop by the fidelity gate's "
            "measure (worst difference / tolerance, float trees vs teacher) on validation incasts disjoint from the "
            f"tables below: {'; '.join(sel.suite)}. Kept: **{sel.chosen}**."), "",
           "| candidate | learning rate | leaf time-weight power | boosting time-weight power | score | worst check |",
           "|---|---|---|---|---|---|"]
    for c in sel.candidates:
        st = c.settings
        out.append(f"| {c.name}{' (kept)' if c.name == sel.chosen else ''} | {st['learning_rate']:g} | "
                   f"{st['leaf_power']:g} | {st['boost_power']:g} | {c.score:.3f} | {c.worst} |")
    return out


def _window_section(w) -> list[str]:
    if w is None:
        return []
    out = ["", "## Window (recurrent teacher)", "",
           ("The teacher is recurrent: its state carries the past. The trees see the last k steps, kept in the "
            "per-flow context; labels are the teacher's own actions along its closed-loop trajectories (per-flow "
            "state), other training states are labelled by the teacher run over the window after a burn-in on its "
            f"oldest step. Chosen: **k = {w.k}** ({w.reason})."), "",
           "| k | context bytes | held-out RMSE (plain trees) |", "|---|---|---|"]
    out += [f"| {c.k}{' (chosen)' if c.k == w.k else ''} | {c.context_bytes} | {_f(c.held_out_rmse, 5)} |"
            for c in w.candidates]
    return out


def _clamp_line(fr: dict[str, Any] | None) -> list[str]:
    """The firmware's factor clamp and where it comes from (``rlcc.distill.factor_range``)."""
    if not fr:
        return []
    lo, hi = fr["spec_clamp"]
    line = (f"- factor clamp of the sum: [{_f(fr['min'])}, {_f(fr['max'])}] (Q16.16 {fr['clamp_q16'][0]} .. "
            f"{fr['clamp_q16'][1]}) = the spec clamp [{lo:g}, {hi:g}] narrowed to the teacher's achievable factors "
            f"({fr['source']}: {fr['detail']})")
    return [line]


def _ramp_lines(fit) -> list[str]:
    if not fit.ramps:
        return [f"- no ramps: {fit.ramps_note}"] if fit.ramps_note else []
    items = "; ".join(f"{r['input']} {_f(r['slope_below'], 4)} / {_f(r['slope_above'], 4)} around {_f(r['center'], 5)} "
                      f"(linear on [{_f(r['lo'], 5)}, {_f(r['hi'], 5)}])" for r in fit.ramps)
    return [f"- {len(fit.ramps)} ramps at the teacher's equilibrium, slope below / above on the scaled input: {items}"]


def constant_policy_note(model: Any) -> str:
    """The plain statement that ``model`` (an FxModel) is a constant rate factor, or "" when its
    decision depends on its inputs. A constant teacher compiles (it is a valid, if trivial,
    controller, and the firmware is exact), but nobody should mistake it for a learned policy."""
    if model.trees or model.ramps:
        return ""
    c = model.constants
    factor = min(max(model.bias, c.clamp_min_q16), c.clamp_max_q16) / fmt.FACTOR_ONE
    return (f"constant policy: the firmware has no trees and applies the rate factor {factor:.6g} on every decision, "
            "whatever it observes (the teacher's output did not vary on the sampled states)")


def to_markdown(report: CompileReport, glance: Sequence[str] = ()) -> str:
    """``glance``: the firmware engineer's section (``rlcc.verify.glance``), first after the title."""
    t, fit, q, fid, sz = report.teacher, report.fit, report.quantization, report.fidelity, report.sizes
    ds = report.dataset
    out = [
        f"# rlcc-compile report: {t.path}",
        *glance,
        "",
        (f"Inputs: {', '.join(t.input_names)}. Teacher output outside the factor clamp on "
        f"{_f(100 * t.clamped_fraction, 2)}% of visited states (clamped before distillation)."),
        "",
        "## Model",
        "",
        f"- {fit.trees} oblivious trees of depth {fit.depth} (requested {fit.trees_requested}, "
        f"budget {fit.budget_ops} operations allows {fit.trees_budget})"
        + (" - the cycle budget kept the largest prefix that fits"
           if not fit.constant_teacher and fit.trees < min(fit.trees_requested, fit.trees_budget) else "")
        + (" - constant teacher: tree-less model, bias only" if fit.constant_teacher else ""),
        *_ramp_lines(fit),
        f"- operations (comparisons + additions): {sz.operations} (paper: {sz.paper_operations})",
        *_clamp_line(t.factor_range),
        (f"- per-flow state: {sz.state_bytes} of {sz.context_bytes} context bytes "
        f"({'fits' if sz.state_fits_context else 'DOES NOT FIT'}); model tables if packed: {sz.model_constant_bytes} bytes "
        "(target-independent estimate; rlcc-verify measures the compiled firmware's read-only data)"),
        (f"- leaf rounding: worst leaf {_f(q.max_leaf_error_lsb, 3)} LSB, accumulated worst case "
        f"{_f(q.max_accumulated_error_lsb, 3)} LSB of Q16.16; always-true/false splits "
        f"{q.always_true_splits}/{q.always_false_splits}"),
        "",
        f"Training set: {ds.train} samples ({', '.join(f'{k} {v}' for k, v in sorted(ds.train_by_origin.items()))}); "
        f"held out: {ds.held_out} closed-loop samples (whole flows)."
        + (" Leaves refitted jointly after boosting, each sample weighted by a power of the time its decision governs "
           "(its RTT inflation; the power is the candidate's, below)."),
        "",
        "## Fidelity (held-out simulator states)",
        "",
        "| measure | value |",
        "|---|---|",
        f"| float trees vs teacher: RMSE / max abs | {_f(fid.float_vs_teacher_rmse, 5)} / {_f(fid.float_vs_teacher_max_abs, 5)} |",
        f"| fixed point vs teacher: RMSE / max abs | {_f(fid.fixed_vs_teacher_rmse, 5)} / {_f(fid.fixed_vs_teacher_max_abs, 5)} |",
        f"| fixed vs float trees, same device integers: max LSB | {_f(fid.fixed_vs_float_max_lsb, 3)} |",
        f"| decision paths changed by threshold quantization | {_f(100 * fid.path_changed_fraction, 4)}% |",
        (f"| fixed (device features) vs float (spec features): max / mean LSB | "
        f"{_f(fid.fixed_vs_float_end_to_end_max_lsb, 1)} / {_f(fid.fixed_vs_float_end_to_end_mean_lsb, 3)} |"),
        f"| decision paths changed by device feature rounding | {_f(100 * fid.path_changed_fraction_end_to_end, 4)}% |",
    ]
    out += _window_section(report.window)
    out += _gate_section(report.gate)
    out += _escalation_section(report.escalation)
    out += _selection_section(report.selection)
    out += _coverage_section(report.coverage)
    out += [""]
    out += _closed_loop_table(
        report.closed_loop_steady,
        "Closed loop, steady state",
        "flows start at their fair share 1/N, so this measures the equilibrium each controller settles at",
    )
    out += _closed_loop_table(
        report.closed_loop,
        "Closed loop, startup transient",
        "flows start at line rate into the 32 MB buffer (the paper's setting); at large N even the teacher is "
        "still draining the buffer at the end, so this compares transients",
    )
    if report.closed_loop_suite is not None:
        out += _closed_loop_table(
            report.closed_loop_suite,
            "Closed loop, reduced suite on both topologies",
            (f"the simulator's reduced suite (`rlcc-sim suite --suite reduced`): the single switch and the 64-host "
             f"two-level fat-tree (2:1, ECMP), flows from their fair share; the fixed point decides in "
             f"{report.suite_latency_us:g} us, the worst-case event time rlcc-verify measured at the profile clock "
             f"(teacher and float trees: the simulator's default 1 us)"),
            "many-to-one and all-to-all")
    out += [
        "",
        ("Paper's bar (Table III): tree within 0.01 goodput and about 2% latency of the MLP. Mean latency is the "
        "mean RTT over decisions (decision-weighted, as the paper's); queue is the time-averaged port queue delay; "
        "drop fraction is dropped / offered bytes."),
        "",
        "## Explainability probe (previous x current state -> factor)",
        "",
        ("Probe windows are simulator states (RTT and rate, previous factor 1.0; `rlcc.distill.evaluate.probe_windows`), "
         "with a deeper congested state than the delta = -target of the training probe (`rlcc.train.probe`), so cells "
         "can differ from that table.")
        + (f" The recurrent teacher is driven by each probe window as a short input sequence: reset state, "
           f"{WINDOW_BURN_IN} steps of the window's oldest step, then its {report.window.k} steps." if report.window else ""),
        "",
        "| previous | current | teacher | float trees | fixed point |",
        "|---|---|---|---|---|",
    ]
    for p in report.explainability:
        out.append(f"| {p.previous} | {p.current} | {_f(p.teacher)} | {_f(p.float_trees)} | {_f(p.fixed_point)} |")
    dagger = report.dagger
    if len(dagger.rounds) > 1:
        drivers = {"on-policy": "in an on-policy round the float trees drive short incasts at the evaluation sizes",
                   "dagger": "in a DAgger round (--dagger-rounds) the fixed-point model drives the sampling mix"}
        said = "; ".join(v for k, v in drivers.items() if any(r.kind.startswith(k) for r in dagger.rounds))
        out += ["", "## On-policy (DAgger) rounds", "",
                (f"{said[:1].upper()}{said[1:]}; the teacher labels the states visited and the ensemble is refitted. "
                 "Closed loop: steady state, float trees vs teacher."), "",
                "| round | kind | held-out RMSE | on-policy RMSE (before refit) | closed loop | goodput diff | latency diff |",
                "|---|---|---|---|---|---|---|"]
        for r in dagger.rounds:
            (name, row), = r.closed_loop.scenarios.items()
            fp = row["float_trees"]
            on = r.on_policy_before_refit
            on_rmse = _f(on.fixed_vs_teacher_rmse, 5) if on else "-"
            out.append(f"| {r.round} | {r.kind} | {_f(r.held_out.float_vs_teacher_rmse, 5)} | {on_rmse} | "
                       f"{name} | {fp.goodput_diff:+.4f} | {100 * fp.latency_rel_diff:+.1f}% |")
        h = dagger.helped
        out += ["", (f"The rounds {'improved' if h.closed_loop_improved else 'did not improve'} the steady-state "
                f"closed-loop gap on {h.scenario}: {_f(h.closed_loop_gap_round0)} -> {_f(h.closed_loop_gap_final)}.")]
    return "\n".join(out) + "\n"
