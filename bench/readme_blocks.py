"""The README's measured figures, rendered from the files that hold them.

Each function returns the text of one generated README block from a results file
(``bench/results/*.json``) or from the example's committed outputs (``examples/training/eval.json``,
``examples/firmware/report.md`` and ``verify.json``), so a figure in the README is never typed by
hand. The layout block (folders, import names, layer chain) comes from setup.cfg, each package's
docstring and tests/layers.py the same way. ``BLOCKS`` maps a block name to (function, is_block):
a block is paragraphs or a table between marker lines, an inline block sits inside a sentence.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import hashlib
import importlib.util
import json
import re
import statistics
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
EXAMPLE = ROOT / "examples"
BUDGET_NS = 2000  # the paper's decision bound, rlcc-verify's default budget


class SourceError(Exception):
    """A results file is missing or lacks a figure the README needs."""


def load(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SourceError(f"{path.relative_to(ROOT)}: {exc}") from None


def para(text: str) -> str:
    """A paragraph wrapped like the hand-written README text (tables stay one row per line)."""
    return textwrap.fill(text, width=100, break_long_words=False, break_on_hyphens=False)


def table(header: list[str], align: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def cores(doc: dict) -> int:
    """Core count of the machine a results file was measured on (a dict, or the simulator's string)."""
    m = doc["machine"] if "machine" in doc else doc["meta"]["machine"]
    if isinstance(m, dict):
        return int(m["cores"])
    return int(re.search(r"(\d+) cores", m).group(1))


# --- bench/results ---------------------------------------------------------------------------
def emulator() -> str:
    doc = load(RESULTS / "emulator.json")
    prev = {r["isa"]: r for r in (doc.get("previous") or {}).get("results", [])}

    def was(isa: str) -> str:
        p = prev.get(isa)
        return f"{p['rlcc_vs_unicorn_nohook']:.2f}× ({p['rlcc_mips']:.0f} M instr/s)" if p else "–"

    rows = [[r["isa"], f"{r['rlcc_mips']:.0f} M instr/s", f"{r['unicorn_nohook_mips']:.0f} M instr/s",
             f"{r['rlcc_vs_unicorn_nohook']:.2f}×", was(r["isa"]),
             f"{r['unicorn_hook_mips']:.2f} M instr/s (rlcc {r['rlcc_vs_unicorn_hook']:.0f}×)"] for r in doc["results"]]
    return table(["ISA", "rlcc (cycle accounting on)", "unicorn, no hook", "rlcc / unicorn", "previous run: rlcc / unicorn",
                  "unicorn + per-instruction hook"], ["---", "---:", "---:", "---:", "---:", "---:"], rows)


def simulator() -> str:
    doc = load(RESULTS / "simulator.json")
    runs = doc["runs"]
    long = max((r for r in runs if r["controller"] == "policy"), key=lambda r: r["duration_ms"])
    short = [r for r in runs if r["dt_ns"] == 1000.0 and r["duration_ms"] == 20.0]
    by = {(r["flows"], r["controller"]): r for r in short}
    rows = []
    for n in sorted({r["flows"] for r in short}):
        p, s = by[(n, "policy")], by[(n, "swift")]
        rows.append([str(n), f"{p['wall_s']:.2f} ({p['sim_s_per_wall_s']:.3f})", f"{s['wall_s']:.2f}",
                     f"{s['queue_delay_mean_us']:.1f} / {s['queue_delay_p99_us']:.1f}"])
    big = by[(max(n for n, _ in by), "policy")]
    kernel = [r for r in short if "c_speedup" in r and r["controller"] == "policy"]
    speedups = (f" On one switch port a block runs in a C kernel, bit-identical to the Python block loop and "
                f"{' / '.join(format(r['c_speedup'], 'g') for r in kernel)}x faster at "
                f"{' / '.join(str(r['flows']) for r in kernel)} flows (`--compare`).") if kernel else ""
    swift = by[(max(n for n, _ in by), "swift")]
    swift_c = (f", {swift['c_speedup']:g}x faster than the Python step loop (`--compare`)"
               if "c_speedup" in swift else "")
    swift_note = (f" Swift (per-step decisions with NACK counts and a pacing tick every 2 µs over all flows) runs the "
                  f"step loop in C on one switch port, bit-identical to the Python loop{swift_c}: at {swift['flows']} "
                  f"flows 2 simulated seconds project to {swift['projected_wall_s_for_2s']:.0f} s (goal ≤ 120 s).")
    return "\n".join([
        para(f"{long['duration_ms'] / 1000:g} simulated seconds at **{long['flows']} flows with the MLP policy take "
             f"{long['wall_s']:.0f} s wall** on {cores(doc)} cores (goal ≤ 45 s, issue 36; the RL-CC authors' optimized C "
             "simulator needed 20 minutes, their Python one two days). Per 20 simulated ms:"),
        "",
        table(["flows", "MLP policy: wall s (sim s / wall s)", "Swift: wall s", "Swift mean / p99 queue (µs)"],
              ["---:", "---:", "---:", "---:"], rows),
        "",
        para("Policy decisions are batched over a base RTT of steps (exactly equivalent to step-by-step: an RTT "
             "probe's measurement is fixed before it returns and a flow decides at most once per RTT); their cost "
             f"is ~{1e6 / big['decisions_per_wall_s']:.2f} µs per decision at {big['flows']} flows rather than per step."
             + speedups + swift_note),
    ])


def firmware() -> str:
    doc = load(RESULTS / "firmware.json")
    t64, t32 = doc["targets"]["rv64imac"], doc["targets"].get("rv32imc")

    def mmm(d: dict) -> str:
        return f"{d['min']} / {d['mean']:.0f} / {d['max']}"

    d, tr, f32, lb = t64["rlcc_decision"], t64["rlcc_trees"], t64["tl2cgen"]["float32"], t64["lower_bound"]
    sz, r = t64["rlcc_size"], t64["ratios_rlcc_over_tl2cgen_f32"]
    rows = [
        ["rlcc, whole RTT decision (`user_algo`)", mmm(d), f"{sz['code']} + {sz['rodata']}"],
        ["rlcc, tree ensemble only", mmm(tr), f"{tr['code_bytes']} + {tr['leaf_table_bytes']}"],
        ["TL2cgen float32 `predict` (soft-float on an FPU-less core)", mmm(f32),
         f"{f32['size']['code']} + {f32['size']['rodata']} (+{f32['size']['softfloat_runtime']} soft-float)"],
    ]
    old = doc.get("old_scheme", {}).get(t64["target"])
    if old:
        osz = old["rlcc_size"]
        style = doc.get("schemes", {})
        old_name = next((k for k in style if k != "bitmask"), "oblivious")
        rows += [[f"previous default (`--tree-style {old_name}`), whole RTT decision", mmm(old["rlcc_decision"]),
                  f"{osz['code']} + {osz['rodata']}"],
                 ["previous default, tree ensemble only", mmm(old["rlcc_trees"]),
                  f"{old['rlcc_trees']['code_bytes']} + {old['rlcc_trees']['leaf_table_bytes']}"]]
    prev = doc.get("previous", {}).get("targets", {}).get(t64["target"])
    if prev and "rlcc_decision" in prev:
        psz = prev.get("rlcc_size", {})
        rows.append(["previous run of the benchmark (its own runtime header), whole RTT decision", mmm(prev["rlcc_decision"]),
                     f"{psz.get('code', '?')} + {psz.get('rodata', '?')}"])
    rows.append([f"lower bound, compare per split: T(3d+2) + n_in = {lb['instructions']} instructions", str(lb["cycles"]), "—"])
    lbb, lbr = t64.get("lower_bound_bitmask"), t64.get("lower_bound_bitmask_branching")
    if lbb:
        rows.append([f"lower bound, bit-parallel, branch-free searches: {lbb['instructions']} instructions",
                     str(lbb["cycles"]), "—"])
    if lbr:
        rows.append([f"lower bound, bit-parallel, branching searches (the default): {lbr['instructions']} instructions",
                     str(lbr["cycles"]), "—"])
    head = f"{t64['target']} / {t64['profile']} ({t64['clock_hz'] / 1e9:g} GHz)"
    out = [table([head, "cycles min / mean / max", "code + read-only data (B)"], ["---", "---:", "---:"], rows), ""]
    const = " and are constant time" if tr["min"] == tr["max"] else ""
    prose = (f"rlcc's trees take {r['trees_cycles_mean']:.3f}× TL2cgen's cycles ({1 / r['trees_cycles_mean']:.0f}× "
             f"faster){const}; the whole decision (features, square root, trees, rate update, probe bookkeeping) "
             f"is {r['decision_cycles_mean']:.3f}× TL2cgen's trees alone, in {r['size_firmware_vs_tl2cgen_object']:.2f}× "
             "its size.")
    targets = [t64]
    if t32:
        r32 = t32["ratios_rlcc_over_tl2cgen_f32"]
        prose += (f" On {t32['target']} / {t32['profile']} ({t32['clock_hz'] / 1e9:g} GHz): whole decision "
                  f"{mmm(t32['rlcc_decision'])} cycles, trees {r32['trees_cycles_mean']:.3f}× TL2cgen.")
        targets.append(t32)
    uses = []
    for t in targets:
        worst, budget = t["rlcc_decision"]["max"], round(BUDGET_NS * 1e-9 * t["clock_hz"])
        uses.append(f"{worst} of {budget} cycles on {t['target']}/{t['profile']} ({worst / t['clock_hz'] * 1e9:.0f} ns, "
                    f"{100 * (1 - worst / budget):.0f}% headroom)")
    prose += f" The example's worst-case event uses {' and '.join(uses)} of the default {BUDGET_NS / 1000:g} µs budget."
    tx = t64.get("rlcc_tx_event")
    if tx:
        prose += (f" A TX event (the RTT-probe timeout check) takes {tx['min']}–{tx['max']} cycles on "
                  f"{t64['target']}/{t64['profile']}.")
    v = doc.get("verify_1m")
    if v:
        cpu = f", {v['cpu_seconds']:.1f} s CPU" if v.get("cpu_seconds") is not None else ""
        one = (f"; {v['one_cpu_seconds']:.1f} s pinned to one CPU" if "one_cpu_seconds" in v else "")
        pv = doc.get("previous", {}).get("verify_1m")
        before = f"; previous run {pv['seconds']:.1f} s" if pv else ""
        prose += (f" `rlcc-verify` checks {v['vectors']:,} vectors end to end in {v['seconds']:.1f} s wall{cpu} "
                  f"({v['vectors_per_s'] / 1000:.0f} k vectors/s{one}{before}).")
    return "\n".join([*out, para(prose)])


def worst_rv64() -> str:
    """The worst case as ``rlcc-verify`` reports it for the committed example (its verify.json)."""
    v = load(EXAMPLE / "firmware" / "verify.json")
    return f"{v['worst_case']['cycles']} cycles on {v['target']}/{v['profile']} (`rlcc-verify`, over all events)"


def mutants() -> str:
    doc = load(RESULTS / "mutants.json")
    rows = []
    for r in doc["runs"]:
        name = f"`{r['firmware']}`" + (f" (seed {r['seed']})" if r.get("seed") is not None and "--seed" not in r["firmware"] else "")
        if _stale(r):
            name += " (an earlier build)"
        rows.append([name, f"{r['target']} / {r['profile']}", f"{r['vectors']:,}", str(r["mutants"]), str(r["killed"]),
                     str(r["equivalent"]), str(r["survived"]), f"{r['wall_s']:.0f}", f"{r['cpu_s']:.0f}"])
    return "\n".join([
        table(["firmware", "target / profile", "vectors", "mutants", "killed", "equivalent", "survived", "wall s", "CPU s"],
              ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"], rows),
        "",
        para(f"`--jobs {doc['jobs']}` on {cores(doc)} cores ({doc['machine']['cpu']}); wall time depends on other "
             "load, CPU time (rlcc-verify plus the compilers) much less."),
    ])


def _stale(run: dict) -> bool:
    """A run measured on a firmware.c that the checkout has since replaced."""
    path = ROOT / run["firmware"]
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() != run.get("firmware_c_sha256")


def compile_wall() -> str:
    doc = load(RESULTS / "compile.json")
    prev = doc.get("previous") or {}
    was = f", {prev['wall_s']:.0f} s the run before" if "wall_s" in prev else ""
    return f"the compile took {doc['wall_s']:.0f} s on {cores(doc)} cores when last measured{was}"


def test_tiers() -> str:
    """The fast test tier's measured time (bench/bench_tests.py)."""
    doc = load(RESULTS / "tests.json")
    fast = doc["fast"]
    text = (f"the fast tier ran {fast['passed']:,} tests in {fast['wall_s']:.0f} s on {cores(doc)} cores "
            f"({fast['deselected']:,} slow ones deselected")
    if "full" in doc:
        text += f"; the whole suite took {doc['full']['wall_s'] / 60:.0f} min"
    return text + ", `bench/bench_tests.py`)"


# Short names of .ci/run's stages (its log says more).
_CI_STAGES = (("building", "wheel"), ("installing", "install"), ("the README", "tests"), ("compiling the bundled", "example compile"),
              ("verifying", "verify + prove"), ("compiling, verifying", "ACC example"))


def ci_time() -> str:
    """``.ci/run``'s measured time and stages (bench/bench_ci.py), with the previous run's total."""
    doc = load(RESULTS / "ci.json")

    def short(name: str) -> str:
        return next((label for prefix, label in _CI_STAGES if name.startswith(prefix)), name)

    parts = ", ".join(f"{short(s['stage'])} {s['wall_s']:.0f} s" for s in doc["stages"])
    text = (f"`.ci/run` on a clean clone took {doc['wall_s'] / 60:.1f} min on {cores(doc)} cores at commit "
            f"{doc['commit'][:7]} ({parts}; `bench/bench_ci.py`")
    prev = doc.get("previous")
    if prev:
        text += f"; previous run {prev['wall_s'] / 60:.1f} min at {prev['commit'][:7]}"
    return text + ")"


def compile_stages() -> str:
    doc = load(RESULTS / "compile.json")
    parts: dict[str, float] = {}
    for s in doc["stages"]:
        key = "on-policy rounds" if s["stage"].startswith("round") else s["stage"]
        parts[key] = parts.get(key, 0.0) + s["wall_s"]
    stages = "".join(f"{k} {v:.0f} s, " for k, v in parts.items() if v >= 0.5)
    return (f"{doc['wall_s']:.0f} s wall and {doc['cpu_s']:.0f} s CPU on {cores(doc)} cores "
            f"(1-min load {doc['load_1min_before_after'][0]:g} at start; {stages}`bench/bench_compile.py`)")


def prove() -> str:
    doc = load(RESULTS / "prove.json")
    rows = [[p["part"], p["status"], f"{p['seconds']:.1f}", p["detail"]] for p in doc["proof"]["parts"]]
    return "\n".join([
        para(f"Measured on the bundled example (`bench/bench_prove.py`: {doc['target']}/{doc['profile']}, "
             f"`--prove-timeout {doc['prove_timeout_s']:g}`, {doc['wall_s']:.0f} s wall for vectors and proof on "
             f"{cores(doc)} cores shared with other work):"),
        "",
        table(["part", "status", "s", "detail"], ["---", "---", "---:", "---"], rows),
        "",
        para(f"The assurance line therefore reads `{doc['assurance']}`."),
    ])


def prove_targets() -> str:
    """Seconds of the whole proof per target (bench/bench_prove.py, one run each)."""
    parts = []
    for name in ("prove.json", "prove_rv32imc.json"):
        doc = load(RESULTS / name)
        proof_s = sum(p["seconds"] for p in doc["proof"]["parts"])
        parts.append(f"{proof_s:.0f} s on {doc['target']} ({doc['wall_s']:.0f} s wall with the vectors, "
                     f"{doc['proof']['status']})")
    return "the bundled example's proof took " + " and ".join(parts)


def cycle_targets(doc: dict) -> list[str]:
    """The targets of the fidelity rows' decision cycles, in their order."""
    return next((list(r["rtt_cycles_max"]) for e in doc["policies"].values() for r in e["runs"] if "rtt_cycles_max" in r), [])


def fidelity_seeds(file: str = "fidelity_seeds.json", options: str = "default options") -> str:
    doc = load(RESULTS / file)
    rows = []
    for name, entry in doc["policies"].items():
        for r in entry["runs"]:
            rows.append([f"`{name}`", str(r["seed"]), f"{r['steady_goodput']:+.4f}", f"{r['steady_rtt']:+.1f}% / {r['steady_queue']:+.1f}%",
                         f"{r['transient_goodput']:+.4f}", f"{r['transient_rtt']:+.1f}% / {r['transient_queue']:+.1f}%",
                         f"{r['transient_drops']:+.3f}", "passed" if r["gate_passed"] else f"failed ({len(r['gate_failures'])})",
                         " / ".join(map(str, r["rtt_cycles_max"].values())) if "rtt_cycles_max" in r else "-",
                         f"{r['cpu_s']:.0f} s"])
    n = sum(len(e["runs"]) for e in doc["policies"].values())
    n_cores = sorted({cores(e) for e in doc["policies"].values()})
    passed = sum(r["gate_passed"] for e in doc["policies"].values() for r in e["runs"])
    targets = cycle_targets(doc)
    cycles_head = "worst RTT decision, cycles" + (f" ({' / '.join(targets)})" if targets else "")
    return "\n".join([
        para(f"Worst firmware-vs-teacher difference over the evaluation sizes, per compile seed "
             f"(`bench/bench_fidelity_seeds.py`, {options}; {'/'.join(map(str, n_cores))} cores): the gate passed {passed} of {n} compiles."),
        "",
        table(["policy", "seed", "steady goodput", "steady RTT / queue", "transient goodput", "transient RTT / queue",
               "transient drops", "gate", cycles_head, "compile CPU"],
              ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---", "---:", "---:"], rows),
        "",
    ])


def zoo() -> str:
    """The default compile over the policy zoo (bench/bench_zoo.py)."""
    doc = load(RESULTS / "zoo.json")
    catalogue = {e["name"]: e for e in json.loads((ROOT / "examples" / "zoo" / "zoo.json").read_text())["policies"]}
    by_policy: dict[str, list] = {}
    for r in doc["compiles"]:
        by_policy.setdefault(r["policy"], []).append(r)
    rows = []
    for name, runs in by_policy.items():
        teacher = doc["teachers"].get(name, [])
        swing = max((t["largest_swing"] for t in teacher), default=float("nan"))
        settles = all(t["settled"] for t in teacher)

        def cell(r):
            if "verdict" not in r:
                return f"exit {r['exit']}: {r.get('error', '')}"
            what = {"passed": "passed", "failed": f"missed {r['misses']}", "unsettled": "not judged (exit 11)"}[r["verdict"]]
            return what + (f", attempt {r['kept_attempt']} of {r['attempts']}" if r["attempts"] > 1 else "")
        worst = max(runs, key=lambda r: (r.get("verdict") != "passed", r.get("misses", 99)))
        cycles = [r["rtt_cycles_max"] for r in runs if r.get("rtt_cycles_max")]
        rows.append([f"`{name}`", catalogue.get(name, {}).get("made_by", "?"),
                     f"{'yes' if settles else '**no**'} ({swing:.2f})",
                     "; ".join(f"{r['seed']}: {cell(r)}" for r in sorted(runs, key=lambda r: r["seed"])),
                     worst.get("worst", "-"), f"{min(cycles)}-{max(cycles)}" if cycles else "-",
                     f"{min(r['seconds'] for r in runs):.0f}-{max(r['seconds'] for r in runs):.0f} s"])
    s = doc["summary"]
    commits = sorted({r["code"] for r in doc["compiles"] if "code" in r})
    loads = [r["load_before"] for r in doc["compiles"] if "load_before" in r]
    measured = (f" Rows measured at commit{'s' if len(commits) > 1 else ''} {', '.join(commits)} (RTT cycles, min-max over a "
                f"policy's rows, are those of the tree style and build flags then the default); the 1-minute load before each compile had a median of "
                f"{statistics.median(loads):.1f} on {doc['machine']['cores']} cores (other work ran beside the "
                "benchmark, so the times are upper bounds)." if commits and loads else "")
    return "\n".join([
        para(f"The default compile on {s['policies']} policies rlcc did not shape (`examples/zoo`, "
             f"`bench/bench_zoo.py`, compile seeds {', '.join(map(str, sorted({r['seed'] for r in doc['compiles']})))}; "
             f"{doc['machine']['cores']} cores): {s['settling_teachers_passing_every_seed']} of "
             f"{s['settling_teachers_compiled']} settling teachers compiled so far pass the gate on every seed run "
             f"({s['settling_teachers']} settle); {s['unsettled_teachers_exit_11_every_seed']} of "
             f"{s['unsettled_teachers_compiled']} teachers that do not settle compiled so far got exit 11 on every seed. "
             f"Compile time median {s['median_compile_s']:.0f} s, worst {s['worst_compile_s']:.0f} s "
             "(escalations included). Teacher: its largest per-flow rate swing (std / mean) in the gate's "
             f"steady-state scenarios; it settles at <= {doc['settle_limit']:g} (exit 11: every miss where the "
             "teacher itself cycles)." + measured),
        "",
        table(["policy", "made by", "teacher settles (swing)", "gate per seed", "worst check (worst seed)",
               "RTT cycles (rv64)", "compile time"], ["---", "---", "---", "---", "---", "---:", "---:"], rows),
    ])


def steady_sensitivity() -> str:
    doc = load(RESULTS / "steady_sensitivity.json")
    rows = []
    for name, entry in doc["policies"].items():
        for n in sorted({r["flows"] for r in entry["rows"]}):
            cells = {r["bias"]: r for r in entry["rows"] if r["flows"] == n}
            rows.append([f"`{name}`", str(n)] + [f"{cells[b]['rtt_pct']:+.1f}% / {cells[b]['queue_pct']:+.1f}%" for b in sorted(cells)])
    biases = sorted({r["bias"] for e in doc["policies"].values() for r in e["rows"]})
    return "\n".join([
        para("What the 3% steady-state bar asks of a student (`bench/bench_steady_sensitivity.py`): the teacher with "
             "every factor scaled by 1 + ε, mean RTT / queue delay vs the unbiased teacher in the same steady-state "
             f"incast ({doc['duration_ms']:g} ms, flows from 1/N):"),
        "",
        table(["policy", "flows"] + [f"ε = {100 * b:+.1f}%" for b in biases], ["---", "---:"] + ["---:"] * len(biases), rows),
        "",
    ])


def distill_methods() -> str:
    doc = load(RESULTS / "distill_methods.json")
    rows = []
    for name, entry in doc["policies"].items():
        seeds = entry["seeds"]
        for method in next(iter(seeds.values())):
            worst = {k: max((seeds[s][method][k] for s in seeds), key=abs)
                     for k in ("steady_rtt", "steady_queue", "startup_rtt", "startup_queue", "startup_drops")}
            rows.append([f"`{name}`", method, f"{worst['steady_rtt']:+.1f}% / {worst['steady_queue']:+.1f}%",
                         f"{worst['startup_rtt']:+.1f}% / {worst['startup_queue']:+.1f}%", f"{worst['startup_drops']:+.3f}"])
    n = len(next(iter(doc["policies"].values()))["seeds"])
    return "\n".join([
        para(f"Distillation methods side by side (`bench/bench_distill_methods.py`: float trees vs teacher, 10 trees of "
             f"depth 4, same training set per seed; worst over seeds 0..{n - 1} and the sizes 64/512/2048):"),
        "",
        table(["policy", "method", "steady RTT / queue", "transient RTT / queue", "transient drops"],
              ["---", "---", "---:", "---:", "---:"], rows),
        "",
    ])


# --- the example's committed outputs -----------------------------------------------------------
def _eval(training: str = "training") -> dict:
    return load(EXAMPLE / training / "eval.json")


def eval_table(training: str = "training") -> str:
    rows = [[s["scenario"], f"{s['goodput']:.3f}", f"{s['drops_per_flow']:.3g}", f"{s['jain']:.3f}",
             f"{s['mean_rtt_inflation']:.3f} ({s['expected_rtt_inflation']:.3f})"] for s in _eval(training)["scenarios"]]
    return table(["scenario", "goodput", "drops/flow (packets)", "Jain", "RTT inflation (expected β + target·√N)"],
                 ["---"] * 5, rows)


def eval_time() -> str:
    return f"{sum(s['wall_s'] for s in _eval()['scenarios']):.0f} s of simulation"


def table_vi() -> str:
    from rlcc.train.probe import CONDITIONS

    tab = _eval()["explain_table"]
    conds = [c for c in CONDITIONS if c in tab] + sorted(set(tab) - set(CONDITIONS))
    return table(["previous \\ current", *conds], ["---"] * (len(conds) + 1),
                 [[p, *(f"{tab[p][c]:.3f}" for c in conds)] for p in conds])


REPORT = EXAMPLE / "firmware" / "report.md"


def _report() -> str:
    try:
        return REPORT.read_text()
    except OSError as exc:
        raise SourceError(f"{REPORT.relative_to(ROOT)}: {exc}") from None


def report_tables() -> dict[str, tuple[str, dict]]:
    """Closed-loop sections of report.md: {"steady"|"startup": (heading, {(scenario, controller): row})}."""
    text, path = _report(), REPORT
    out = {}
    for key, title in (("steady", "Closed loop, steady state"), ("startup", "Closed loop, startup transient")):
        m = re.search(rf"^## {re.escape(title)}(?P<head>.*)\n(?P<body>(?:.*\n)*?)(?:## |\Z)", text, re.MULTILINE)
        if not m:
            raise SourceError(f"{path.relative_to(ROOT)}: no '{title}' section")
        lines = [ln for ln in m["body"].splitlines() if ln.startswith("|")]
        cols = [c.strip() for c in lines[0].strip("|").split("|")]
        rows = {}
        for ln in lines[2:]:
            row = dict(zip(cols, (c.strip() for c in ln.strip("|").split("|"))))
            rows[(row["scenario"], row["controller"])] = row
        out[key] = (m["head"], rows)
    return out


def paths() -> str:
    m = re.search(r"^\| decision paths changed by threshold quantization \| ([0-9.]+)% \|$", _report(), re.MULTILINE)
    if not m:
        raise SourceError(f"{REPORT.relative_to(ROOT)}: no threshold-quantization path-change row")
    share = float(m.group(1))
    what = "no decision path" if share == 0 else f"{m.group(1)}% of decision paths"
    return f"the fixed-point firmware changes {what} relative to the float trees on the same device inputs"


def _flows(rows: dict) -> list[str]:
    return sorted({s for s, _ in rows}, key=lambda s: int(s.split(":")[1]))


def closed_loop() -> str:
    _, rows = report_tables()["steady"]
    body = []
    for s in _flows(rows):
        t, fx = rows[(s, "teacher")], rows[(s, "fixed_point")]
        body.append([s.split(":")[1], f"{float(t['goodput']):.3f} / {t['mean latency (us)']}",
                     f"{float(fx['goodput']):.3f} / {fx['mean latency (us)']}", fx["latency diff"]])
    return table(["flows", "teacher goodput / mean RTT (µs)", "compiled firmware goodput / mean RTT (µs)", "latency diff"],
                 ["---:"] * 4, body)


def example_gate() -> str:
    md = (EXAMPLE / "firmware" / "report.md").read_text()
    m = re.search(r"^## Fidelity gate: (PASSED|FAILED)(?: \((\d+) of (\d+) checks outside the bar\))?$", md, re.M)
    if not m:
        raise SourceError("examples/firmware/report.md: no 'Fidelity gate' section")
    if m.group(1) == "PASSED":
        return "the bundled example passes the fidelity gate"
    rows = re.findall(r"^\| (startup|steady) (many-to-one:\d+) \| ([^|]+) \|", md.split("## Fidelity gate")[1].split("##")[0], re.M)
    what = ", ".join(f"{mode} {sc.split(':')[1]} flows {measure.strip()}" for mode, sc, measure in rows)
    return (f"the bundled example misses the fidelity gate on {m.group(2)} of {m.group(3)} checks ({what}; "
            "`examples/firmware/report.md`): add `--accept-fidelity` to the compile")


def transient() -> str:
    head, rows = report_tables()["startup"]
    ms = re.search(r"([0-9.]+) ms", head).group(1)
    flows = _flows(rows)
    gap = max(abs(float(rows[(s, "fixed_point")]["goodput diff"])) for s in flows)
    lat = " / ".join(rows[(s, "fixed_point")]["latency diff"] for s in flows)
    return para(f"In the line-rate startup transient ({ms} ms from line rate into the 32 MB buffer; at large N even "
            f"the teacher is still draining it at the end) the firmware's goodput is within {gap:.4f} of the "
            f"teacher's and its mean RTT differs by {lat} at {' / '.join(s.split(':')[1] for s in flows)} flows.")


def coverage() -> str:
    cov = load(EXAMPLE / "firmware" / "verify.json")["coverage"]
    missed = cov.get("missed", [])
    pairs = sorted({m.rsplit(":", 1)[0] for m in missed})
    both = [p for p in pairs if f"{p}:+1" in missed and f"{p}:-1" in missed]
    listed = [f"{p}:±1" for p in both] + [m for m in missed if m.rsplit(":", 1)[0] not in both]
    text = (f"splits {cov['splits']['observable']}/{cov['splits']['targets']}, leaves {cov['leaves']['observable']}/"
            f"{cov['leaves']['targets']}, bias/clamp/probe {cov['other']['observable']}/{cov['other']['targets']}")
    return text + (f"; missed: {', '.join(f'`{m}`' for m in listed)}" if listed else "")


def _suite_summary() -> Any:
    from rlcc.simulator.suite_report import Summary, normalize

    return Summary(normalize(load(RESULTS / "suite" / "suite.json")))


def suite_tables() -> str:
    """The paper's Table IV and Table V for the example, from bench/bench_suite.py's suite.json."""
    from rlcc.simulator.suite_report import (
        TABLE_IV_INTRO, SuccessCriteria, Summary, paper_table_v, table_iv, table_iv_notes, table_v,
    )

    summary = _suite_summary()
    meta = load(RESULTS / "suite_meta.json")
    settings = summary.results.get("settings", {})
    modes = f" Steady families start at {settings['start']}; loss recovery: {settings['loss_recovery']}." \
        if "start" in settings else ""
    out = [para("Table IV, packets lost per flow. " + TABLE_IV_INTRO + modes), ""]
    out += table_iv(summary)
    why = table_iv_notes(summary)
    if why:
        out += ["", "Why different from the paper:", ""] + why
    both = len(summary.loss_modes) > 1
    for mode in summary.loss_modes:
        part = summary if mode == summary.loss_mode else Summary(summary.results, mode)
        grid, notes = table_v(part)
        label = {"lossy": " (lossy buffers)", "lossless": " (lossless, PFC)"}[mode] if both else ""
        out += ["", f"Table V{label}, success per task (✓: the criterion below held at every scale; (paper ✓/✗): the "
                "paper's Table V differs):", ""] + grid
        if notes:
            out += [""] + notes
    out += ["", "The paper's Table V:", ""] + paper_table_v()
    crit = SuccessCriteria.from_dict(summary.results.get("criteria")).describe()
    out += ["", para("Criteria: " + "; ".join(f"{k}: {v.rstrip('.')}" for k, v in crit.items()) + "."), "",
            para(f"{meta['runs']} simulations in {meta['wall_s']:.0f} s on {cores(meta)} cores ({meta['backend']}); "
                 "all tables and plots: `bench/results/suite/suite.md`.")]
    return "\n".join(out)


def fabric() -> str:
    """Fabric simulator scaling (bench/bench_fabric.py)."""
    doc = load(RESULTS / "fabric.json")
    fab = [r for r in doc["flows_curve"] if r["topology"] == "fat-tree"]
    def before(r: dict) -> str:
        p = r.get("previous")
        return f"{p['projected_2s_min']:.1f} min ({p['load_before']:g} / {r['load_before']:g})" if p else "-"

    rows = [[str(r["flows"]), f"{r['wall_per_sim_ms']:.3f} s", f"{r['us_per_decision']:.2f} µs",
             f"{r['projected_2s_min']:.1f} min", before(r), f"{r['vs_single_switch']:.1f}×"] for r in fab]
    out = [table(["flows (64-host fat-tree, all-to-all)", "wall per simulated ms", "per decision", "2 s projected",
                  "previous results: 2 s projected (load then / now)", "vs single switch"],
                 ["---:", "---:", "---:", "---:", "---:", "---:"], rows), ""]
    hrows = [[str(r["hosts"]), f"{r['leaves']}×{r['hosts_per_leaf']}", str(r["flows"]), f"{r['wall_per_sim_ms']:.3f} s",
              f"{r['us_per_decision']:.2f} µs"] for r in doc["hosts_curve"]]
    out += [table(["hosts", "leaves × hosts", "flows (all-to-all)", "wall per simulated ms", "per decision"],
                  ["---:", "---:", "---:", "---:", "---:"], hrows), ""]
    t = doc.get("target_run")
    if t:
        met = "meets" if t["wall_s"] <= t["goal_s"] else "misses"
        before = (f"; the previous run: {t['previous']['wall_s'] / 60:.1f} min at load {t['previous']['load_before']:g}, "
                  f"this one at load {t['load_before']:g}") if "previous" in t else ""
        out.append(para(f"Target run, measured: {t['flows']} flows, {t['duration_ms'] / 1e3:g} simulated s: "
                        f"**{t['wall_s'] / 60:.1f} min** on {cores(doc)} cores ({met} the {t['goal_s'] / 60:g}-minute goal"
                        f"{before})."))
    c = doc.get("compare")
    if c:
        out.append(para(f"The C blocks on a topology (the kernel's `prep`, the policy call, `path_post`: "
                        "rate-change sums, fabric steps, settles, probes) "
                        f"are bit-identical to the Python block loop and {c['speedup']:g}x faster on the "
                        f"{c['flows']}-flow fat-tree ({c['duration_ms']:g} ms: {c['c_wall_s']} s vs {c['python_wall_s']} s, "
                        "`--compare`)."))
    else:
        big = fab[-1]
        out.append(para(f"The target (8064 flows, 2 simulated s) projects to **{big['projected_2s_min']:.1f} min** from "
                        f"{doc['duration_ms']:g} simulated ms on {cores(doc)} cores (goal: {(t or {}).get('goal_s', 180) / 60:g} min)."))
    return "\n".join(out)


def table1() -> str:
    """The papers' Table I on rlcc's core model (bench/bench_table1.py)."""
    doc = load(RESULTS / "table1.json")
    names = {"lstm_int8": "LSTM, int8", "mlp_int8": "MLP, int8", "lstm_trees": "trees of the LSTM",
             "mlp_trees": "trees of the MLP"}
    rows = []
    for r in doc["rows"]:
        d, g = r["profiles"]["dpa"], r["profiles"]["generic5"]
        ops = f"{r['macs']} MACs + {r.get('lut_lookups', 0)} LUT" if "macs" in r else f"{r['operations']} cmp/add"
        flops = f" ({r['paper_flops']} FLOPs)" if r["paper_flops"] else ""
        rows.append([names.get(r["row"], r["row"]), f"{d['rtt_cycles_max']}", f"{d['ns_max'] / 1e3:.2f} µs",
                     f"{g['rtt_cycles_max']}", f"{g['ns_max'] / 1e3:.2f} µs", ops, f"{r['rodata_bytes']} B",
                     f"{r['context_bytes']} B", f"{r['paper_us']:g} µs{flops}"])
    out = [table(["policy, backend", "cycles (dpa)", "per decision (dpa, 1.8 GHz)", "cycles (generic5)",
                  "per decision (generic5, 1 GHz)", "operations", "constants", "per-flow context", "paper (ConnectX-6Dx)"],
                 ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"], rows)]
    by = {r["row"]: r["profiles"]["dpa"]["ns_max"] for r in doc["rows"]}
    if {"mlp_int8", "mlp_trees", "lstm_int8"} <= set(by):
        out += ["", para(f"On the same core the int8 LSTM takes {by['lstm_int8'] / by['mlp_trees']:.1f}× and the int8 MLP "
                         f"{by['mlp_int8'] / by['mlp_trees']:.1f}× the trees' time (the paper: 500× and 19×). Worst-case RTT "
                         f"decision over the verification vectors; compiled firmware in `bench/results/table1/`.")]
    return "\n".join(out)


def lstm_trees() -> str:
    """The recurrent example's window trees, from bench_table1's compile of it."""
    fw = RESULTS / "table1" / "lstm_trees"
    rep, ver = load(fw / "report.json"), load(fw / "verify.json")
    w = rep["window"]
    rmse = " / ".join(f"{c['held_out_rmse']:.4f}" for c in w["candidates"])
    checks = rep["gate"]["checks"]
    worst = max(checks, key=lambda c: abs(c["difference"]) / c["tolerance"] if c["tolerance"] else 0.0)
    unit = worst["unit"] or ""
    return para(f"Measured on the shipped ADPG-trained LSTM (`bench/results/table1/lstm_trees/`, seed 0, default options): "
                f"k = {w['k']} chosen (held-out RMSE {rmse} for k = 1..{w['max_k']}), {rep['sizes']['trees']} trees, "
                f"{ver['rtt_decision_cycles']['max']} cycles ({ver['budget']['worst_case_ns']:.0f} ns) per decision on "
                f"{ver['profile']}, {'bit-exact' if ver['bit_exact'] else 'NOT bit-exact'}, and the fidelity gate "
                f"{'passes' if rep['gate']['passed'] else 'FAILS'} (worst check: {worst['scenario']} {worst['metric']} "
                f"{worst['difference']:+.3g}{unit} vs the teacher, bar {worst['tolerance']:.3g}{unit}).")


def table2() -> str:
    """The papers' Table II in the simulator (bench/bench_table2.py)."""
    doc = load(RESULTS / "table2.json")
    flows = doc["settings"]["flows"]
    out = []
    for topology, title in (("single-switch", "single switch"), ("fat-tree", "64-host fat-tree, inter-rack senders")):
        rows = []
        for r in doc["rows"]:
            cells = {c["flows"]: c for c in doc["cells"] if c["controller"] == r["name"] and c["topology"] == topology}
            rows.append([r["name"]] + [f"{cells[n]['goodput']:.2f} / {cells[n]['drops_per_flow']:.0f} / {cells[n]['queue_us']:.0f}"
                                       for n in flows])
        out += [f"Many-to-one, {title} (goodput / drops per flow / mean queue µs):", "",
                table(["policy @ decision time"] + [f"{n} flows" for n in flows], ["---"] + ["---:"] * len(flows), rows), ""]
    st = doc["settings"]
    out.append(para(f"Flows start at line rate into a {st['buffer_bytes'] / 1e6:g} MB buffer, {st['duration_ms']:g} ms, "
                    f"serial decisions; {len(doc['cells'])} simulations in {doc['wall_s']:.0f} s on {cores(doc)} cores."))
    return "\n".join(out)


def table2_capacity() -> str:
    """Table II as a capacity question: flows per NIC on a shared decision processor (bench/bench_table2.py --part capacity)."""
    doc = load(RESULTS / "table2_capacity.json")
    st = doc["settings"]
    flows = st["flows_per_nic"]
    rows = []
    for r in doc["rows"]:
        cells = {c["flows_per_nic"]: c for c in doc["cells"] if c["controller"] == r["name"]}
        sat = r["saturated_from"]
        rows.append([r["name"], f"{r['capacity_flows']:g}", "—" if sat is None else str(sat)]
                    + [f"{cells[n]['goodput']:.2f} / {cells[n]['drops_per_flow']:.0f} / {cells[n]['nic_wait_mean_us']:.0f}"
                       for n in flows])
    return "\n".join([
        "![goodput, drops and decision wait against flows per NIC](results/table2_capacity.png)", "",
        f"Goodput / drops per flow / mean decision queueing delay (µs), by flows per NIC "
        f"({st['nic_cores']} core × {st['nic_threads']} thread per NIC):", "",
        table(["policy @ decision time", "capacity (threads × RTT / decision)", "threads saturated from"]
              + [f"{n}" for n in flows], ["---", "---:", "---:"] + ["---:"] * len(flows), rows), "",
        para(f"Many-to-one on the single switch from {st['hosts']} sending NICs at line rate into a "
             f"{st['buffer_bytes'] / 1e6:g} MB buffer, {st['duration_ms']:g} ms; each NIC's RTT events queue FIFO "
             f"for its decision threads (`Scenario.nic`), saturated: thread utilisation ≥ {st['saturated_utilization']:g}. "
             f"{len(doc['cells'])} simulations in {doc['wall_s']:.0f} s on {cores(doc)} cores (`{doc['command']}`)."),
    ])


# --- the bad-input catalogue (tests/bad_inputs/*.json) -----------------------------------------------
BAD_INPUTS = ROOT / "tests" / "bad_inputs"
# Area file -> heading row of its group; areas listed here come first, in this order, any other after by name.
BAD_INPUT_AREAS = {
    "compile": "`rlcc-compile`: model, spec and options",
    "doca": "`rlcc-compile --sdk doca`",
    "verify": "`rlcc-verify`",
    "provenance": "`rlcc-verify`: trust (`--policy`, `--expect-sha256`, `--require proven`)",
    "simulator": "`rlcc-sim`",
    "train": "`rlcc-train`",
    "cli": "every command: output paths, input files, shared options, signals",
}
BAD_INPUT_KEYS = ("class", "example", "exit", "test")


def bad_input_catalogue() -> dict[str, list[dict[str, Any]]]:
    """{area: entries} of every ``tests/bad_inputs/AREA.json``, in the table's order (each entry
    ``{"class", "example", "exit", "test"}``; tests/test_bad_inputs_catalogue.py checks them)."""
    areas = sorted((p.stem for p in BAD_INPUTS.glob("*.json")),
                   key=lambda a: (list(BAD_INPUT_AREAS).index(a) if a in BAD_INPUT_AREAS else len(BAD_INPUT_AREAS), a))
    catalogue = {}
    for area in areas:
        entries = load(BAD_INPUTS / f"{area}.json")
        if not isinstance(entries, list) or any(not isinstance(e, dict) or set(e) != set(BAD_INPUT_KEYS) for e in entries):
            raise SourceError(f"tests/bad_inputs/{area}.json: a list of {{{', '.join(BAD_INPUT_KEYS)}}} objects expected")
        catalogue[area] = entries
    return catalogue


def _cell(text: Any) -> str:
    """A Markdown table cell: a ``|`` that is not escaped yet would end the cell."""
    return re.sub(r"(?<!\\)\|", r"\\|", str(text))


def input_limits() -> str:
    """The bounded reader's limits (rlcc.textio), inline in the exit-code paragraph."""
    from rlcc import textio

    return (f"{textio.MAX_JSON_BYTES // textio.MIB} MiB for JSON, {textio.MAX_TEXT_BYTES // textio.MIB} MiB for text, "
            f"{textio.MAX_ONNX_BYTES // textio.MIB} MiB for ONNX; JSON without NaN, at most {textio.MAX_JSON_DEPTH} levels deep")


def bad_inputs() -> str:
    """The README's bad-input table: every catalogued class, grouped by area, with its exit code."""
    catalogue = bad_input_catalogue()
    rows = []
    for area, entries in catalogue.items():
        rows.append([f"**{BAD_INPUT_AREAS.get(area, area)}**", "", ""])
        rows += [[_cell(e["class"]), _cell(e["example"]), _cell(e["exit"])] for e in entries]
    n = sum(len(entries) for entries in catalogue.values())
    out = [table(["input class", "example", "exit"], ["---", "---", "---"], rows), ""]
    out.append(para(f"{n} input classes, each exercised by the test named beside it in `tests/bad_inputs/*.json` "
                    "(the table is generated from those files; tests/test_bad_inputs_catalogue.py checks that every "
                    "test exists and every exit code is documented)."))
    return "\n".join(out)


def verify_speed() -> str:
    """The default rlcc-verify run's wall time, cache off and on, and the base it started from
    (bench/bench_verify_speed.py)."""
    doc = load(RESULTS / "verify_speed.json")
    off, on, cold = doc["cache_off"], doc["cache_on"], doc["cache_cold"]

    def row(name: str, m: dict) -> list[str]:
        loads = m["load_1min_before_after"]
        return [name, f"{m['wall_median_s']:.1f} s ({m['wall_min_s']:.1f}–{max(m['wall_s']):.1f})",
                f"{m['cpu_median_s']:.1f} s", str(m["runs"]), f"{loads[0]:g} → {loads[1]:g}"]

    rows = []
    if "base" in doc:
        rows.append(row("before (issue 36's base: search one value at a time, every command imported)", doc["base"]))
    rows += [row("cache off (`RLCC_CACHE_DIR=`): the observable search runs", off),
             row("first run, cache empty (fills it)", cold),
             row("cache filled (as after `rlcc-compile` on this machine)", on)]
    same = "identical in every run" + (" and to the base's" if doc.get("base", {}).get("verdict_identical") else "")
    return "\n".join([
        table(["`rlcc-verify firmware.c` (default, " + f"{doc['vectors']:,} vectors)", "wall median (min–max)",
               "CPU median", "runs", "1-min load"], ["---", "---:", "---:", "---:", "---:"], rows),
        "",
        para(f"On {cores(doc)} cores ({doc['machine']['cpu']}), goal ≤ {doc['goal_wall_s']:g} s wall; the `--json` "
             f"verdict (vectors, mismatches, cycles, coverage) is {same} (`bench/bench_verify_speed.py`)."),
    ])


BLOCKS: dict[str, tuple[Callable[[], str], bool]] = {
    "verify-speed": (verify_speed, True),
    "table1": (table1, True),
    "table2": (table2, True),
    "table2-capacity": (table2_capacity, True),
    "lstm-trees": (lstm_trees, True),
    "suite": (suite_tables, True),
    "fabric": (fabric, True),
    "compile-wall": (compile_wall, False),
    "test-tiers": (test_tiers, False),
    "ci-time": (ci_time, False),
    "eval": (eval_table, True),
    "eval-k3": (lambda: eval_table("training_k3"), True),
    "eval-lstm": (lambda: eval_table("training_lstm"), True),
    "eval-time": (eval_time, False),
    "table-vi": (table_vi, True),
    "compile-stages": (compile_stages, False),
    "paths": (paths, False),
    "closed-loop": (closed_loop, True),
    "transient": (transient, True),
    "coverage": (coverage, False),
    "prove": (prove, True),
    "prove-targets": (prove_targets, False),
    "worst-rv64": (worst_rv64, False),
    "emulator": (emulator, True),
    "simulator": (simulator, True),
    "firmware": (firmware, True),
    "mutants": (mutants, True),
    "fidelity-seeds": (fidelity_seeds, True),
    "fidelity-seeds-trees": (lambda: fidelity_seeds("fidelity_seeds_trees.json", "`--equilibrium none`"), True),
    "example-gate": (example_gate, False),
    "distill-methods": (distill_methods, True),
    "steady-sensitivity": (steady_sensitivity, True),
    "zoo": (zoo, True),
    "bad-inputs": (bad_inputs, True),
    "input-limits": (input_limits, False),
}


def cycle_model() -> str:
    """Per-core cycle-model error against Verilator RTL (bench/bench_cycle_model.py)."""
    doc = load(RESULTS / "cycle_model.json")
    rows = []
    for c in doc["cores"]:
        pe, mb = c["per_event"], c["microbench"]
        body = {k: v for k, v in mb.items() if k != "empty"}
        worst_mb = max(body.items(), key=lambda kv: abs(kv[1]["body_error_pct"]))
        exact = sum(v["body_error_pct"] == 0 for v in body.values())
        under = [k for k, v in body.items() if v["body_error_pct"] < 0]
        rows.append([f"{c['core']} (`{c['commit'][:12]}`)", str(pe["events"]),
                     f"{pe['max_abs_pct']:.2f} / {pe['mean_abs_pct']:.2f} / {pe['p99_abs_pct']:.2f}",
                     f"{pe['exact_events']} / {pe['under_estimated_events']}",
                     f"{exact} of {len(body)}" + (f"; worst {worst_mb[0]} {worst_mb[1]['body_error_pct']:+.1f}%"
                                                 if worst_mb[1]["body_error_pct"] else "")
                     + (f"; under: {', '.join(under)}" if under else ""),
                     f"{c['worst_case_ns']['rtl']:.0f} / {c['worst_case_ns']['emulator']:.0f} ns @ {c['clock_hz'] / 1e6:.0f} MHz",
                     f"{c['verilator_build_s']:.0f} s / {c['rtl_sim']['wall_s']:.1f} s"])
    out = [table(["core (profile)", "events", "per-event error % max / mean / p99", "exact / under-estimated events",
                  "class microbenchmarks exact (body)", "worst case RTL / model", "Verilator build / run"],
                 ["---", "---:", "---:", "---:", "---", "---:", "---:"], rows), ""]
    out.append(para(f"Same rv32imc harness ELF on both sides ({doc['verilator']}); the firmware's own `cycle` CSR reads "
                    "around `user_algo` give the RTL numbers, and every output (rate, RTT request, context, instret) "
                    "is checked identical before cycles are compared."))
    return "\n".join(out)


BLOCKS["cycle-model"] = (cycle_model, True)


# --- switch agents (ACC) ---------------------------------------------------------------------------
ACC_FIRMWARE = EXAMPLE / "acc_firmware"


def acc_firmware() -> str:
    """The shipped ACC example's compile: student size, agreement, cycles (examples/acc_firmware/)."""
    rep, ver = load(ACC_FIRMWARE / "report.json"), load(ACC_FIRMWARE / "verify.json")
    s, a, iv, b = rep["student"], rep["agreement"], ver["interval"], ver["budget"]
    held = (f"{a['held_out']:.3f} on {a['held_out_scenarios']} held-out scenarios' windows" if a["held_out_scenarios"]
            else f"{a['held_out']:.3f} on its training windows")
    rows = [
        ["student", f"{s['trees']} trees of depth ≤ {s['max_depth']}, {s['operations']} operations, leaves Q{s['leaf_frac_bits']}"],
        ["agreement with the teacher's argmax", f"{a['float_training']:.3f} (training), {held}; leaf quantization {a['quantization']:.4f}"],
        ["bit-exact vs golden model", f"{ver['vectors']} vectors + {iv['intervals']} dispatcher intervals: "
                                      + ("yes" if ver["bit_exact"] else f"NO ({ver['mismatches']} mismatches)")],
        ["cycles per decision (max)", f"{ver['decision_cycles']['max']:.0f} ({ver['decision_us']['max']:.2f} µs) on {ver['target']}, "
                                      f"{ver['profile']} @ {ver['clock_hz'] / 1e9:.1f} GHz"],
        [f"one interval, {iv['ports']} ports (max)", f"{iv['cycles']['max']:.0f} cycles = {iv['us']['max']:.1f} µs of the "
                                                     f"{b['us']:g} µs interval ({100 * b['headroom']:.0f} % headroom)"],
        ["fidelity gate", "passed" if rep["gate"]["passed"] else "FAILED (shipped with --accept-fidelity)"],
    ]
    return table(["`examples/acc_firmware/`", ""], ["---", "---"], rows)


ACC_METRICS = (("mice_slowdown_mean", "mice FCT slowdown", "{:.2f}"), ("mice_slowdown_p99", "mice p99", "{:.2f}"),
               ("elephant_slowdown_mean", "elephant FCT slowdown", "{:.2f}"), ("queue_kb_mean", "mean queue KB", "{:.1f}"),
               ("queue_kb_p99", "p99 queue KB", "{:.0f}"), ("bottleneck_util", "bottleneck util.", "{:.3f}"),
               ("unfinished", "unfinished flows", "{:.1f}"))


def acc_closed_loop() -> str:
    """bench/bench_acc.py: static ECN vs ACC teacher vs compiled firmware."""
    doc = load(RESULTS / "acc.json")
    rows = [[name] + [f.format(doc["summary"][name][k]) for k, _, f in ACC_METRICS] for name in doc["agents"]]
    d = doc["firmware_vs_teacher"]
    out = [table(["agent (DCQCN hosts)"] + [t for _, t, _ in ACC_METRICS], ["---"] + ["---:"] * len(ACC_METRICS), rows), ""]
    out.append(para(
        f"Means over {len(doc['scenarios'])} scenarios ({', '.join(doc['scenarios'])}) x {doc['seeds']} seeds; "
        f"firmware vs teacher: mice FCT {100 * d['mice_slowdown_mean']:+.1f} %, elephant FCT "
        f"{100 * d['elephant_slowdown_mean']:+.1f} %, mean queue {100 * d['queue_kb_mean']:+.1f} %. "
        f"{len(doc['runs'])} simulations in {doc['wall_s']:.0f} s on {cores(doc)} cores (`bench/bench_acc.py`, "
        "plot `bench/results/acc.png`)."))
    return "\n".join(out)


BLOCKS["acc-firmware"] = (acc_firmware, True)
BLOCKS["acc-closed-loop"] = (acc_closed_loop, True)


def sim_limits() -> str:
    """bench/bench_limits.py: peak memory and time of the simulator at each documented limit."""
    doc = load(RESULTS / "limits.json")
    cases = {c["name"]: c for c in doc["cases"]}
    base = cases.pop("baseline", None)
    rows = []
    for c in cases.values():
        at = "at the limit" if c["fraction"] >= 0.999 else f"{100 * c['fraction']:.2g} % of it; {c['extends']}"
        mem = f"{c['rss_at_limit_mb']:,.0f} MB"
        if c["rss_at_limit_mb"] != c["rss_mb"]:
            mem += f" ({c['rss_mb']:,.0f} MB measured)"
        wall = f"{c['wall_s']:.1f} s" if c["fraction"] >= 0.999 else f"{c['wall_s']:.1f} s ({c['wall_at_limit_s']:,.0f} s at the limit)"
        rows.append([c["limit"], c["value"], c["run"], at, mem, wall])
    out = [table(["limit", "value", "run", "measured", "peak memory", "wall"],
                 ["---", "---:", "---", "---", "---:", "---:"], rows), ""]
    out.append(para(
        f"Peak resident memory of a child process (ru_maxrss), the interpreter and imports included "
        f"({base['rss_mb']:.0f} MB alone); wall includes the imports. {len(cases)} limits measured in "
        f"{doc['total_s']:.0f} s on {cores(doc)} cores (`python bench/bench_limits.py`)." if base else
        f"{len(cases)} limits measured in {doc['total_s']:.0f} s on {cores(doc)} cores."))
    return "\n".join(out)


BLOCKS["sim-limits"] = (sim_limits, True)


def policy_check() -> str:
    """bench/bench_policy_check.py: rlcc-verify with and without --policy, side by side."""
    doc = load(RESULTS / "policy_check.json")
    runs = doc["runs"]
    rows = [[name, f"{r['wall_s']:.0f}", f"{r['cpu_s']:.0f}", f"{r['wall_ratio']:.2f}"] for name, r in runs.items()]
    load_note = ", ".join(f"{x:g}" for x in doc["load_1min_before_after"])
    return "\n".join([
        table(["`rlcc-verify` on the bundled example, `--random 0`", "wall s", "CPU s", "wall vs unanchored"],
              ["---", "---:", "---:", "---:"], rows), "",
        para(f"Measured on {cores(doc)} cores (1-min load before/after: {load_note}) by `python bench/bench_policy_check.py`.")])


BLOCKS["policy-check"] = (policy_check, True)


# --- the layout (README "Layout"): folders, import names, layer chain --------------------------------
# Folders that hold no installed package; a package describes itself (its __init__ docstring).
OTHER_FOLDERS = {
    "tests": "the test suite (`-m \"not slow\"`: the fast tier); `tests/layers.py` holds the layer chain above",
    "bench": "benchmarks; results in `bench/results/`, rendered into the docs by `bench/readme_tables.py`",
    "docs": "the user documentation (the pages under Documentation)",
    "examples": "the bundled example: trained policies, their compiled firmware, verification and reports",
}


def layer_chain() -> Any:
    """tests/layers.py, the one statement of the layer chain (tests/test_layering.py enforces it)."""
    spec = importlib.util.spec_from_file_location("layers", ROOT / "tests" / "layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def package_dirs() -> dict[str, str]:
    """Folder -> import name, from setup.cfg's package_dir."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    pairs = (line.partition("=") for line in cfg["options"]["package_dir"].strip().splitlines())
    return {folder.strip(): name.strip() for name, _, folder in pairs}


def package_summary(folder: str) -> str:
    """The first paragraph of a package's docstring, without its ``rlcc.x:`` prefix, as Markdown."""
    init = ROOT / folder / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    first = re.sub(r"^rlcc(\.\w+)*: ", "", first)
    if not first or first.endswith(".") and " " not in first:
        raise SourceError(f"{folder}/__init__.py: its docstring's first paragraph should say what the package holds")
    return _cell(re.sub(r"(?::\w+:)?``?([^`]+)``?", r"`\1`", first).removesuffix("."))


def top_folders() -> list[str]:
    """The repository's top-level folders, without hidden and .gitignore'd ones (build output)."""
    ignored = [line.strip().strip("/") for line in (ROOT / ".gitignore").read_text().splitlines()
               if line.strip().endswith("/") and not line.startswith("#")]
    return sorted(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")
                  and not any(fnmatch.fnmatch(p.name, pat) for pat in ignored))


def layout() -> str:
    """The layer chain in words and one row per top-level folder: import name, what it holds."""
    lay, packages = layer_chain(), package_dirs()
    order = [*lay.CHAIN, *lay.BESIDE, *lay.LEAVES, *sorted(set(packages) - set(lay.CHAIN) - set(lay.BESIDE) - set(lay.LEAVES)),
             *OTHER_FOLDERS]
    unplaced = sorted(set(top_folders()) - set(order))
    if unplaced:
        raise SourceError(f"top-level folder(s) {unplaced} without a row: map each in setup.cfg's package_dir (with a "
                          "package docstring) or describe it in bench/readme_blocks.py's OTHER_FOLDERS")
    rows = [[f"`{f}/`", f"`{packages[f]}`" if f in packages else "—",
             package_summary(f) if f in packages else OTHER_FOLDERS[f]] for f in order]
    code = lambda names: ", ".join(f"`{n}`" for n in names)  # noqa: E731
    beside = "; ".join(f"`{b}` sits beside `{at}` (it imports what `{at}` may; `{user}` and above import it)"
                       for b, (at, user) in lay.BESIDE.items())
    leaves = [f"`{n}`" + (f" (imports {code(sorted(deps))})" if deps else "") for n, deps in lay.LEAVES.items()]
    chain = para(
        "Data flows one way and imports follow it: " + " ← ".join(f"`{n}`" for n in lay.CHAIN) + f"; {beside}; "
        f"the leaf libraries {', '.join(leaves[:-1])} and {leaves[-1]} are used from `{lay.LEAVES_FROM}` up. "
        "`tests/test_layering.py` fails on an "
        "import that points up or sideways and on an import cycle among the modules of one folder (imports inside "
        "functions included). setup.cfg maps each folder to its import name (`package_dir`); "
        "`tests/test_packaging.py` keeps its `packages` list equal to the folders.")
    return "\n".join([chain, "", table(["folder", "import", "what it holds"], ["---", "---", "---"], rows)])


BLOCKS["layout"] = (layout, True)


def compile_path() -> str:
    """bench/compile_path.py: the compile path's modules and climbs before and after the pipeline layer."""
    before, after = load(RESULTS / "compile_path_before.json"), load(RESULTS / "compile_path.json")
    rows = [[label, f"`{doc['measured_on']}`", str(doc["modules"]), str(doc["climbs"]), str(doc["cli_climbs"])]
            for label, doc in (("before", before), ("after", after))]
    return table(["", "measured on", "modules run", "climbs (down-calls)", "from the CLI"],
                 ["---", "---", "---:", "---:", "---:"], rows)


BLOCKS["compile-path"] = (compile_path, True)


# --- packet-level peer (HPCC's ns-3) ---------------------------------------------------------------
def _num(v: Any, fmt: str) -> str:
    return "–" if v is None else format(v, fmt)


def _build_time(info: dict) -> str:
    """A peer build's wall time: the fresh build's, and the driver rebuild's when the last build was one."""
    if info.get("fresh_build"):
        return f"{info['build_seconds']} s fresh build"
    fresh = info.get("fresh_build_seconds")
    return (f"{fresh} s fresh build, " if fresh else "") + f"{info['build_seconds']} s driver rebuild"


def ns3_peer() -> str:
    """rlcc-sim against the ns-3 RDMA models, per scenario x controller (bench/peer_ns3/compare.py)."""
    doc = load(RESULTS / "ns3_peer.json")
    mark = {True: "✓", False: "✗", None: "–"}
    rows = []
    baseline = [r for r in doc["rows"] if r["controller"] != "rl"]
    for r in baseline:
        a, b, ok = r["rlcc"], r["peer"] or dict.fromkeys(r["rlcc"]), r["pass"]
        tree = {None: "–"}.get(r.get("peer_tree"), "H" if "High-Precision" in str(r.get("peer_tree")) else "A")
        rows.append([r["scenario"], r["controller"], tree, f"{_num(a['goodput'], '.3f')} / {_num(b['goodput'], '.3f')}",
                     f"{_num(a['jain'], '.3f')} / {_num(b['jain'], '.3f')}",
                     f"{_num(a['queue_mean_us'], '.1f')} / {_num(b['queue_mean_us'], '.1f')}",
                     f"{_num(a['queue_p99_us'], '.1f')} / {_num(b['queue_p99_us'], '.1f')}",
                     f"{_num(a['converge_us'], '.0f')} / {_num(b['converge_us'], '.0f')}",
                     f"{_num(a['drop_packets'], '.0f')} / {_num(b['drop_packets'], '.0f')}",
                     f"{_num(a['pfc_pauses'], '.0f')} / {_num(b['pfc_pauses'], '.0f')}",
                     f"{mark[ok['goodput']]} {mark[ok['queue_mean']]} {mark[ok['converge']]}"])
    g = doc["goals"]
    passed = sum(all(r["pass"].values()) for r in baseline)
    valued = sum(all(v is not False for v in r["pass"].values()) and any(r["pass"].values()) for r in baseline) - passed
    build = doc.get("build") or {}
    fb = doc.get("fallback_build")
    fb_text = (f" Where it crashes (below), the row comes from the same driver in the HPCC repository's own tree "
               f"(peer H: {fb['source']} at {str(fb['source_commit'])[:10]}, ns-3.17, waf, {_build_time(fb)}); "
               f"peer A: ns-3-alibabacloud." if fb else "")
    head = para(f"Each cell is rlcc-sim / peer. Peer: {doc['peer']} at commit "
                f"{str(build.get('source_commit', '?'))[:10]} ({build.get('build_type', '')} build of "
                f"{build.get('modules', '?')} on {cores(doc)} cores, -j{build.get('jobs', '?')}: {_build_time(build)})."
                f"{fb_text} "
                f"Goals: goodput within {g['goodput_abs']:g}, mean queue within {g['queue_rel']:.0%} or "
                f"{g['queue_abs_us']:g} µs, convergence within {g['converge_rel']:.0%} (✓ G Q C; – no value on a "
                f"side). {passed} of {len(baseline)} rows meet all three; {valued} more meet every goal with a value on both "
                f"sides.")
    tab = table(["scenario", "CC", "peer", "goodput", "Jain", "mean queue µs", "p99 queue µs", "converge µs",
                 "drops", "PFC pauses", "G Q C"],
                ["---", "---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"],
                rows)
    lacks = "; ".join(f"{k}: {v}" for k, v in doc.get("rlcc_differs", doc.get("rlcc_lacks", {})).items())
    errors: dict[str, list[str]] = {}
    for r in doc["rows"]:
        if r.get("peer_error"):
            filled = " (peer H)" if r.get("peer_tree") else ""
            errors.setdefault(r["peer_error"], []).append(f"{r['scenario']} {r['controller']}{filled}")
    out = [head, "", tab, "", para(f"Peer mechanisms rlcc-sim does not copy packet by packet, and what it does instead: {lacks}.")]
    rl = [r for r in doc["rows"] if r["controller"] == "rl"]
    if rl:
        out += ["", _ns3_peer_rl(rl, mark)]
    for err, where in errors.items():
        out += ["", para(f"ns-3-alibabacloud failed ({', '.join(where)}): {err}.")]
    return "\n".join(out)


def _ns3_peer_rl(rows: list[dict], mark: dict) -> str:
    """The RL policy's rows: teacher in rlcc-sim / its firmware in rlcc-sim / its firmware in the peer."""
    cells = []
    for r in rows:
        t, f, p = r["rlcc"], r["rlcc_firmware"], r["peer"] or dict.fromkeys(r["rlcc"])
        tree = "H" if "High-Precision" in str(r.get("peer_tree")) else "A"

        def three(k: str, fmt: str) -> str:
            return " / ".join(_num(x[k], fmt) for x in (t, f, p))
        ok = r["pass"]
        cells.append([r["scenario"], tree, three("goodput", ".3f"), three("queue_mean_us", ".1f"),
                      three("queue_p99_us", ".1f"), three("converge_us", ".0f"),
                      three("drop_packets", ".0f"), three("pfc_pauses", ".0f"),
                      f"{mark[ok['goodput']]} {mark[ok['queue_mean']]} {mark[ok['converge']]}"])
    first = rows[0]
    head = para(f"The bundled RL policy end to end: each cell is the teacher ({first['model']}) in rlcc-sim / its "
                f"firmware's golden model in rlcc-sim / the firmware itself ({first['firmware']}, the generated C "
                f"loaded into the peer) at the RTT events of a hop-by-hop probe in the packet-level peer; links set "
                f"so the base RTT is the policy's ({first['base_rtt_us']:g} µs). G Q C compares the peer's firmware "
                f"with the teacher. {sum(all(r['pass'].values()) for r in rows)} of {len(rows)} rows meet all three.")
    return "\n".join([head, "", table(["scenario", "peer", "goodput", "mean queue µs", "p99 queue µs", "converge µs",
                                        "drops", "PFC pauses", "G Q C"],
                                       ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---"], cells)])


BLOCKS["ns3-peer"] = (ns3_peer, True)
