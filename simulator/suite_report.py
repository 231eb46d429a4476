"""Tables and plots of an evaluation suite's results: the RL-CC paper's section V (Table IV, packets
lost per flow; Table V, success per task; Figs. 6-7 goodput and latency per scale; Fig. 9 OSU
all-to-all latency relative to the best per message size; Fig. 10 long-short) plus FCT slowdown
per flow-size bucket (the HPCC paper's Fig. 11 style), for any set of controllers.

``write_report(results, out_dir)`` writes ``suite.md``, ``suite.json`` (the normalized results,
sorted keys, no timestamps: byte-identical for equal input) and one PNG per family and topology.

Results schema (what ``suite.json`` holds; ``load_results`` reads it back)::

    {"controllers": ["teacher", "firmware", "dcqcn", "swift", "hpcc"],  # display order, unique
     "criteria": {"goodput_min": 0.9, ...},   # optional: SuccessCriteria fields overriding defaults
     "settings": {...},                       # optional: free-form run settings, listed in the report
     "runs": [{"family": "many-to-one" | "all-to-all" | "osu" | "long-short" | "fct",
               "topology": "fat-tree" | "single-switch",
               "scale": "128 flows",          # label of the point (osu: the message size, fct: the load)
               "scale_value": 128,            # its x value (osu: message bytes); one per label
               "seed": 0, "controller": "swift",
               "loss_mode": "lossless",       # optional: lossless (PFC) runs; absent: lossy
               "metrics": {name: number or null, ..., "buckets": [...] (fct)}}, ...]}

Metrics used: ``goodput``, ``queue_delay_mean_us``, ``queue_delay_p99_us``,
``mean_rtt_inflation``, ``mean_rtt_us`` (optional), ``drops_per_flow`` (packets), ``jain``,
``drop_fraction``, optional ``drops_bringup_per_flow`` / ``drops_steady_per_flow`` (steady families: the
whole run's drops before / in the measurement window; Table IV shows them as "total (bring-up +
steady)") and ``resent_per_flow`` (go-back-N); long-short ``long_flow_bw``, ``short_fct_slowdown_mean`` / ``_p99``,
``short_completed`` (fraction), ``recovery_us``; osu ``iteration_us`` (mean iteration completion
time); fct ``buckets`` (``flowsize.fct_slowdown_buckets``: ``label, lo, hi, count, unfinished,
median, p99``) and ``load``. The metrics a family's success criterion needs are required (a run
without them is bad input); the others show as "–" when absent. null is NaN (``hi`` of the last
FCT bucket: infinity); NaN and infinity are written as null.

Runs of several seeds of one (family, topology, scale, controller) are reported as the mean over
those seeds of every metric (a NaN in any seed gives NaN; FCT buckets: per bucket label, the mean
of count, unfinished, median and p99). A (family, topology) pair is one "case"; it is named by
its family, with the topology added when the family ran on both topologies.

Loss modes: the tables and figures show the lossy runs (the lossless ones when there are only
those); Table V is repeated for the lossless runs (PFC, ``Network.pfc``) with their PFC pause
table. The paper's Table V is shown beside: dcqcn and swift are its DCQCN and Swift rows, policy
and firmware controllers its RL-CC row; a cell that differs from the paper says so.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rlcc import textio
from rlcc.errors import BadInputError
from rlcc.simulator import paper
from rlcc.simulator.plot import save_figure
from rlcc.simulator.suite import LOSS_MODES  # a run's optional "loss_mode"; absent: lossy

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FAMILIES = ("many-to-one", "all-to-all", "osu", "long-short", "fct")
TOPOLOGIES = ("fat-tree", "single-switch")
STEADY = ("many-to-one", "all-to-all")  # steady-state families: Figs. 6-7
TABLE_IV_FAMILIES = ("many-to-one", "all-to-all", "long-short")  # the paper's Table IV columns
TOP_KEYS = {"controllers", "criteria", "settings", "runs"}
RUN_KEYS = {"family", "topology", "scale", "scale_value", "seed", "controller", "metrics"}
BUCKET_KEYS = ("label", "lo", "hi", "count", "unfinished", "median", "p99")
REQUIRED_METRICS = {
    "many-to-one": ("goodput", "drops_per_flow", "queue_delay_p99_us"),
    "all-to-all": ("goodput", "drops_per_flow", "queue_delay_p99_us"),
    "long-short": ("long_flow_bw", "short_completed", "drops_per_flow"),
    "osu": ("iteration_us", "drops_per_flow"),
    "fct": ("buckets",),
}
MISSING = "–"
TABLE_IV_INTRO = (f"Average packets dropped per flow over the whole run (packets, lower is better); many-to-one and "
                  f"all-to-all as total (bring-up + steady): bring-up is before the measurement window (the second "
                  f"half of the run), steady is in it. Bold: the best per column (all controllers that tie at one "
                  f"decimal). Paper rows: {paper.TABLE_IV_SOURCE} (its all-to-all columns are 64, 512, 1024 and "
                  f"2048 flows).")


@dataclasses.dataclass(frozen=True)
class SuccessCriteria:
    """Table V: a controller succeeds in a family when it meets that family's thresholds at every
    scale the family ran at (a scale it did not run at, or a NaN metric, is a failure).

    The RL-CC paper (section V, Table V) gives no numbers ("successfully controlled and prevented
    congestion"); these defaults are our reading of its Figs. 6-10 and Table IV: near line-rate
    goodput, about one packet lost per flow at most, a bounded queue, the long flow recovering,
    every short flow finishing, and no more than 1.5x the best OSU latency.
    """

    goodput_min: float = 0.9  # many-to-one, all-to-all: fraction of line rate
    queue_delay_p99_us_max: float = 100.0  # many-to-one, all-to-all
    drops_per_flow_max: float = 1.0  # packets; every family but fct
    long_flow_bw_min: float = 0.8  # long-short: fraction of line rate
    short_completed_min: float = 1.0  # long-short: fraction of short flows finished
    osu_vs_best_max: float = 1.5  # osu: iteration time / the best controller's
    fct_small_p99_vs_best_max: float = 10.0  # fct: smallest bucket's p99 slowdown / the best's

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> SuccessCriteria:
        if d is None:
            return cls()
        if not isinstance(d, Mapping):
            raise BadInputError(f"suite results: criteria must be an object, got {type(d).__name__}")
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(d) - set(names))
        if unknown:
            raise BadInputError(f"suite results: unknown criteria {', '.join(unknown)} (known: {', '.join(names)})")
        for k, v in d.items():
            if not _is_number(v) or not math.isfinite(v):
                raise BadInputError(f"suite results: criteria.{k} must be a finite number, got {v!r}")
        return cls(**{k: float(v) for k, v in d.items()})

    def describe(self) -> dict[str, str]:
        """Each family's criterion in words."""
        steady = (f"goodput >= {self.goodput_min:g} of line rate, packets dropped per flow <= {self.drops_per_flow_max:g} "
                  f"and p99 queue delay <= {self.queue_delay_p99_us_max:g} us, at every scale")
        return {
            "many-to-one": steady,
            "all-to-all": steady,
            "osu": (f"mean iteration time <= {self.osu_vs_best_max:g} x the best controller's at every message "
                    f"size, and packets dropped per flow <= {self.drops_per_flow_max:g}"),
            "long-short": (f"long-flow bandwidth >= {self.long_flow_bw_min:g} of line rate, completed fraction of "
                           f"short flows >= {self.short_completed_min:g} and packets dropped per flow <= "
                           f"{self.drops_per_flow_max:g}, at every scale"),
            "fct": (f"p99 slowdown of the smallest flow-size bucket with finished flows <= "
                    f"{self.fct_small_p99_vs_best_max:g} x the best controller's, at every load"),
        }


# ----------------------------------------------------------------------------------------------
# validation and seed means


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _num(v: Any, where: str, inf_if_null: bool = False) -> float:
    if v is None:
        return math.inf if inf_if_null else math.nan
    if not _is_number(v):
        raise BadInputError(f"suite results: {where} must be a number or null, got {v!r}")
    return float(v)


def _check_buckets(buckets: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(buckets, list) or not buckets:
        raise BadInputError(f"suite results: {where}.buckets must be a non-empty list")
    out = []
    for i, b in enumerate(buckets):
        w = f"{where}.buckets[{i}]"
        if not isinstance(b, Mapping):
            raise BadInputError(f"suite results: {w} must be an object")
        missing = [k for k in BUCKET_KEYS if k not in b]
        if missing:
            raise BadInputError(f"suite results: {w} lacks {', '.join(missing)}")
        if not isinstance(b["label"], str):
            raise BadInputError(f"suite results: {w}.label must be a string")
        out.append({"label": b["label"], **{k: _num(b[k], f"{w}.{k}", k == "hi") for k in BUCKET_KEYS[1:]}})
    return out


def _check_run(i: int, run: Any, controllers: Sequence[str]) -> dict[str, Any]:
    where = f"runs[{i}]"
    if not isinstance(run, Mapping):
        raise BadInputError(f"suite results: {where} must be an object")
    missing = sorted(RUN_KEYS - set(run))
    if missing:
        raise BadInputError(f"suite results: {where} lacks {', '.join(missing)}")
    extra = sorted(set(run) - RUN_KEYS - {"loss_mode"})
    if extra:
        raise BadInputError(f"suite results: {where} has unknown keys {', '.join(extra)}")
    fam, topo, ctrl = run["family"], run["topology"], run["controller"]
    if fam not in FAMILIES:
        raise BadInputError(f"suite results: {where}: unknown family {fam!r} (use one of: {', '.join(FAMILIES)})")
    if topo not in TOPOLOGIES:
        raise BadInputError(f"suite results: {where}: unknown topology {topo!r} (use one of: {', '.join(TOPOLOGIES)})")
    if ctrl not in controllers:
        raise BadInputError(f"suite results: {where}: controller {ctrl!r} is not in controllers")
    mode = run.get("loss_mode", "lossy")
    if mode not in LOSS_MODES:
        raise BadInputError(f"suite results: {where}: unknown loss_mode {mode!r} (use one of: {', '.join(LOSS_MODES)})")
    if not isinstance(run["scale"], str) or not run["scale"]:
        raise BadInputError(f"suite results: {where}.scale must be a non-empty string")
    value = _num(run["scale_value"], f"{where}.scale_value")
    if not math.isfinite(value):
        raise BadInputError(f"suite results: {where}.scale_value must be finite")
    if not isinstance(run["seed"], (int, np.integer)) or isinstance(run["seed"], bool):
        raise BadInputError(f"suite results: {where}.seed must be an integer, got {run['seed']!r}")
    m = run["metrics"]
    if not isinstance(m, Mapping):
        raise BadInputError(f"suite results: {where}.metrics must be an object")
    need = [k for k in REQUIRED_METRICS[fam] if k not in m]
    if need:
        raise BadInputError(f"suite results: {where} ({fam}) lacks metrics {', '.join(need)}")
    metrics: dict[str, Any] = {}
    for k, v in m.items():
        metrics[k] = _check_buckets(v, where) if k == "buckets" else _num(v, f"{where}.metrics.{k}")
    scale_value = int(value) if float(value).is_integer() and isinstance(run["scale_value"], (int, np.integer)) else value
    out = {"family": fam, "topology": topo, "scale": run["scale"], "scale_value": scale_value,
           "seed": int(run["seed"]), "controller": ctrl, "metrics": metrics}
    if mode != "lossy":
        out["loss_mode"] = mode
    return out


def normalize(results: Mapping[str, Any]) -> dict[str, Any]:
    """The validated results with plain Python types and every criterion filled in (what
    ``suite.json`` holds); bad input raises ``BadInputError`` naming the offending entry."""
    if not isinstance(results, Mapping):
        raise BadInputError("suite results must be an object")
    missing = sorted({"controllers", "runs"} - set(results))
    if missing:
        raise BadInputError(f"suite results lack {', '.join(missing)}")
    extra = sorted(set(results) - TOP_KEYS)
    if extra:
        raise BadInputError(f"suite results have unknown keys {', '.join(extra)} (known: {', '.join(sorted(TOP_KEYS))})")
    controllers = results["controllers"]
    if (not isinstance(controllers, list) or not controllers or not all(isinstance(c, str) and c for c in controllers)
            or len(set(controllers)) != len(controllers)):
        raise BadInputError(f"suite results: controllers must be a non-empty list of unique names, got {controllers!r}")
    if not isinstance(results["runs"], list):
        raise BadInputError("suite results: runs must be a list")
    runs = [_check_run(i, r, controllers) for i, r in enumerate(results["runs"])]
    labels: dict[tuple, dict[str, float]] = {}
    seen: set[tuple] = set()
    for i, r in enumerate(runs):
        key = (r["family"], r["topology"], r["scale"], r["controller"], r["seed"], r.get("loss_mode", "lossy"))
        if key in seen:
            raise BadInputError(f"suite results: runs[{i}] repeats {key} (one run per seed)")
        seen.add(key)
        case = labels.setdefault((r["family"], r["topology"]), {})
        if case.setdefault(r["scale"], r["scale_value"]) != r["scale_value"]:
            raise BadInputError(f"suite results: runs[{i}]: scale {r['scale']!r} has two scale_values "
                                f"({case[r['scale']]} and {r['scale_value']})")
    for (fam, topo), scales in labels.items():
        if len(set(scales.values())) != len(scales):
            raise BadInputError(f"suite results: {fam} on {topo}: two scales share one scale_value ({scales})")
    settings = results.get("settings", {})
    if not isinstance(settings, Mapping):
        raise BadInputError("suite results: settings must be an object")
    out = {"controllers": list(controllers),
           "criteria": dataclasses.asdict(SuccessCriteria.from_dict(results.get("criteria"))),
           "runs": runs}
    if settings:
        out["settings"] = _plain(settings)
    return out


def _plain(x: Any) -> Any:
    """JSON-ready: numpy scalars to Python, NaN / infinity to None, tuples to lists."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    return x


def load_results(path: str | Path) -> dict[str, Any]:
    """A ``suite.json`` (or any results file of the schema above), validated."""
    return normalize(textio.load_json(path, "suite results"))


@dataclasses.dataclass(frozen=True)
class Case:
    """One family on one topology."""

    family: str
    topology: str


class Summary:
    """Seed means per (case, scale, controller) of one loss mode's runs (default: lossy if any
    ran, else lossless), the cases in family order and each case's scales in increasing
    ``scale_value``. ``results`` keeps every run."""

    def __init__(self, results: Mapping[str, Any], loss_mode: str | None = None) -> None:
        norm = normalize(results)
        self.results = norm
        self.controllers: list[str] = norm["controllers"]
        self.criteria = SuccessCriteria(**norm["criteria"])
        present = {r.get("loss_mode", "lossy") for r in norm["runs"]}
        self.loss_modes = [m for m in LOSS_MODES if m in present] or ["lossy"]
        self.loss_mode = loss_mode or self.loss_modes[0]
        groups: dict[tuple[Case, str, str], list[dict[str, Any]]] = {}
        values: dict[Case, dict[str, float]] = {}
        self.seeds: dict[tuple[Case, str, str], list[int]] = {}
        for r in norm["runs"]:
            if r.get("loss_mode", "lossy") != self.loss_mode:
                continue
            case = Case(r["family"], r["topology"])
            key = (case, r["scale"], r["controller"])
            groups.setdefault(key, []).append(r["metrics"])
            self.seeds.setdefault(key, []).append(r["seed"])
            values.setdefault(case, {})[r["scale"]] = r["scale_value"]
        self.cases = sorted(values, key=lambda c: (FAMILIES.index(c.family), TOPOLOGIES.index(c.topology)))
        self.scales = {c: sorted(values[c], key=lambda s: values[c][s]) for c in self.cases}
        self.scale_value = {c: values[c] for c in self.cases}
        self.means = {k: _mean_metrics(v) for k, v in groups.items()}
        topologies: dict[str, set[str]] = {}
        for c in self.cases:
            topologies.setdefault(c.family, set()).add(c.topology)
        self._both = {f for f, t in topologies.items() if len(t) > 1}

    def title(self, case: Case) -> str:
        """The case's name with its topology said once."""
        return self.label(case) if case.family in self._both else f"{case.family} on {case.topology}"

    def label(self, case: Case) -> str:
        return f"{case.family} ({case.topology})" if case.family in self._both else case.family

    def get(self, case: Case, scale: str, controller: str, metric: str) -> float | None:
        """The seed mean of ``metric``; None when that controller did not run there or the runs
        lack the metric."""
        m = self.means.get((case, scale, controller))
        return None if m is None else m.get(metric)

    def ran(self, case: Case, controller: str) -> bool:
        return any((case, s, controller) in self.means for s in self.scales[case])

    def best(self, case: Case, scale: str, metric: str, lowest: bool = True) -> float | None:
        vals = [v for c in self.controllers if (v := self.get(case, scale, c, metric)) is not None and math.isfinite(v)]
        return (min(vals) if lowest else max(vals)) if vals else None


def _mean_metrics(seeds: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    keys = sorted({k for m in seeds for k in m})
    for k in keys:
        vals = [m[k] for m in seeds if k in m]
        out[k] = _mean_buckets(vals) if k == "buckets" else float(np.mean(vals))
    return out


def _mean_buckets(per_seed: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    by_label: dict[str, list[dict[str, Any]]] = {}
    for buckets in per_seed:
        for b in buckets:
            by_label.setdefault(b["label"], []).append(b)
    out = []
    for label, bs in by_label.items():
        row = {"label": label, "lo": bs[0]["lo"], "hi": bs[0]["hi"]}
        row.update({k: float(np.mean([b[k] for b in bs])) for k in ("count", "unfinished", "median", "p99")})
        out.append(row)
    return sorted(out, key=lambda b: (b["lo"], b["hi"]))


# ----------------------------------------------------------------------------------------------
# Table V


def failures(summary: Summary, case: Case, controller: str) -> list[str] | None:
    """Why ``controller`` fails ``case``'s criterion ([] = success), None if it never ran there."""
    if not summary.ran(case, controller):
        return None
    c = summary.criteria
    out: list[str] = []
    for scale in summary.scales[case]:
        if (case, scale, controller) not in summary.means:
            out.append(f"{scale}: not run")
            continue
        get = summary.means[(case, scale, controller)].get
        checks: list[tuple[str, float | None, float, bool, str]] = []  # (name, value, limit, at_least, unit)
        if case.family in STEADY:
            checks = [("goodput", get("goodput"), c.goodput_min, True, ""),
                      ("drops per flow", get("drops_per_flow"), c.drops_per_flow_max, False, ""),
                      ("p99 queue delay", get("queue_delay_p99_us"), c.queue_delay_p99_us_max, False, " us")]
        elif case.family == "long-short":
            checks = [("long-flow bandwidth", get("long_flow_bw"), c.long_flow_bw_min, True, ""),
                      ("short flows completed", get("short_completed"), c.short_completed_min, True, ""),
                      ("drops per flow", get("drops_per_flow"), c.drops_per_flow_max, False, "")]
        elif case.family == "osu":
            best = summary.best(case, scale, "iteration_us")
            t = get("iteration_us")
            rel = t / best if t is not None and best else None  # a NaN t stays NaN: "missing"
            checks = [("iteration time / best", rel, c.osu_vs_best_max, False, "x"),
                      ("drops per flow", get("drops_per_flow"), c.drops_per_flow_max, False, "")]
        elif case.family == "fct":
            label, rel = _fct_small_vs_best(summary, case, scale, controller)
            checks = [(f"p99 slowdown of bucket {label} / best", rel, c.fct_small_p99_vs_best_max, False, "x")]
        bad = []
        for name, value, limit, at_least, unit in checks:
            if value is None or not math.isfinite(value):
                bad.append(f"{name} missing")
            elif (value < limit) if at_least else (value > limit):
                bad.append(f"{name} {_fmt_g(value)}{unit} {'<' if at_least else '>'} {limit:g}{unit}")
        if bad:
            out.append(f"{scale}: {', '.join(bad)}")
    return out


def _fct_small_vs_best(summary: Summary, case: Case, scale: str, controller: str) -> tuple[str, float | None]:
    """The smallest bucket with a finite p99 for some controller, and ``controller``'s p99 there
    over the best one's."""
    rows = {c: {b["label"]: b for b in (summary.get(case, scale, c, "buckets") or [])} for c in summary.controllers}
    buckets = sorted({(b["lo"], b["hi"], b["label"]) for r in rows.values() for b in r.values()})
    for _lo, _hi, label in buckets:
        p99 = [r[label]["p99"] for r in rows.values() if label in r and math.isfinite(r[label]["p99"])]
        if p99:
            mine, best = rows[controller].get(label, {}).get("p99"), min(p99)
            if mine is None or not math.isfinite(mine):
                return label, None
            return label, (mine / best if best > 0 else 1.0 if mine == 0 else math.inf)
    return "(none)", None


# ----------------------------------------------------------------------------------------------
# Markdown


def _fmt(v: float | None, digits: int) -> str:
    if v is None:
        return MISSING
    if not math.isfinite(v):
        return "nan"
    return f"{v:.{digits}f}"


def _fmt_g(v: float) -> str:
    """Three significant digits, without exponents (1234, not 1.23e+03)."""
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _esc(s: str) -> str:
    return s.replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]], right_from: int = 1, center: bool = False) -> list[str]:
    align = ["---" if i < right_from else ":---:" if center else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(_esc(h) for h in header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def table_iv(summary: Summary) -> list[str]:
    """Drops per flow, controllers x (case: scale) of many-to-one, all-to-all and long-short; steady
    cells with the run's split as "total (bring-up + steady)"; then the paper's rows
    (``paper.TABLE_IV``) where the column is one of the paper's."""
    cols = [(case, s) for case in summary.cases if case.family in TABLE_IV_FAMILIES for s in summary.scales[case]]
    if not cols:
        return []
    cells: dict[str, list[str]] = {c: [] for c in summary.controllers}
    for case, scale in cols:
        shown = {c: _fmt(summary.get(case, scale, c, "drops_per_flow"), 1) for c in summary.controllers}
        finite = [float(v) for v in shown.values() if v not in (MISSING, "nan")]
        best = _fmt(min(finite), 1) if finite else None
        for c in summary.controllers:
            cell = f"**{shown[c]}**" if shown[c] == best else shown[c]
            split = [summary.get(case, scale, c, k) for k in ("drops_bringup_per_flow", "drops_steady_per_flow")]
            if all(v is not None and math.isfinite(v) for v in split):
                cell += f" ({_fmt(split[0], 1)} + {_fmt(split[1], 1)})"
            cells[c].append(cell)
    header = ["controller"] + [f"{summary.label(case)}: {s}" for case, s in cols]
    rows = [[_esc(c)] + cells[c] for c in summary.controllers]
    published = [paper.TABLE_IV.get((case.family, case.topology, s)) for case, s in cols]
    if any(published):
        for name in paper.PAPER_ROWS:
            rows.append([f"paper {name}"] + [_fmt(p[1][name], 1) if p else MISSING for p in published])
    return _table(header, rows)


def table_iv_notes(summary: Summary) -> list[str]:
    """One line per Table IV cell whose controller has a paper row and differs from it
    (``paper.differs``): the two values, the run's bring-up / steady split, and the model
    difference that can account for it."""
    kinds = _controller_kinds(summary)
    notes = []
    for case in summary.cases:
        for scale in summary.scales.get(case, []) if case.family in TABLE_IV_FAMILIES else []:
            published = paper.TABLE_IV.get((case.family, case.topology, scale))
            if published is None:
                continue
            column, values = published
            for c in summary.controllers:
                row, ours = paper.paper_row(c, kinds.get(c)), summary.get(case, scale, c, "drops_per_flow")
                if row is None or ours is None or not math.isfinite(ours) or not paper.differs(ours, values[row]):
                    continue
                why = _why_different(summary, case, scale, c, ours, values[row])
                notes.append(f"- {_esc(c)} ({row}), {case.family} {column}: {_fmt(ours, 1)} vs the paper's "
                             f"{_fmt(values[row], 1)}; {why}.")
    return notes


def _controller_kinds(summary: Summary) -> dict[str, str]:
    """Controller name -> its kind as the results' settings describe it (e.g. "policy (x.onnx)")."""
    kinds = summary.results.get("settings", {}).get("controllers", {})
    return dict(kinds) if isinstance(kinds, Mapping) else {}


def _why_different(summary: Summary, case: Case, scale: str, controller: str, ours: float, theirs: float) -> str:
    """The likely cause of one Table IV difference: where rlcc's losses fell and the model's part in it."""
    if ours < theirs:
        share = ("NICs split line rate over their flows, so a line-rate start offers a receiver about one line "
                 "rate; " if case.family == "all-to-all" else "")
        return f"rlcc loses fewer ({share}fluid fabric: drops only at a full buffer, no packet bursts; runs of ms)"
    if case.family not in STEADY:
        return "the short flows start together at the controller's own rate in one time step"
    bring = summary.get(case, scale, controller, "drops_bringup_per_flow")
    steady_ = summary.get(case, scale, controller, "drops_steady_per_flow")
    if bring is None or steady_ is None:
        return "the run has no bring-up / steady split to say where its losses fell"
    q = summary.get(case, scale, controller, "queue_delay_p99_us")
    queue = f", p99 queue {_fmt_g(q)} us" if q is not None and math.isfinite(q) else ""
    hops = ("; on the fat-tree upstream drops do not thin downstream arrivals (fluid), so an overloaded "
            "transient counts losses at several hops" if case.topology == "fat-tree" else "")
    return (f"{_fmt(bring, 1)} at bring-up + {_fmt(steady_, 1)} in the window{queue}: all flows start at line "
            f"rate within one base RTT and feedback lags by the queue's delay"
            + ("; still overloaded in the window" if steady_ > 0.5 else "") + hops)


def table_v(summary: Summary) -> tuple[list[str], list[str]]:
    """The success matrix and its footnotes (one per failed cell, and one per cell that differs
    from the paper's Table V, saying why)."""
    header = ["controller"] + [summary.label(case) for case in summary.cases]
    rows, notes = [], []
    kinds = _controller_kinds(summary)
    for c in summary.controllers:
        row = [_esc(c)]
        published = paper.TABLE_V.get(paper.paper_row(c, kinds.get(c)) or "", {})
        for case in summary.cases:
            why = failures(summary, case, c)
            theirs = published.get(case.family)
            differs = why is not None and theirs is not None and theirs != (not why)
            if why is None:
                row.append(MISSING)
                continue
            if why:
                text = "; ".join(why)
                if differs:
                    text = f"the paper reports a success; here {text}"
                notes.append(f"{len(notes) + 1}. {c}, {summary.label(case)}: {text}.")
                cell = "✗"
            else:
                if differs:
                    notes.append(f"{len(notes) + 1}. {c}, {summary.label(case)}: the paper reports a failure; here every "
                                 f"criterion holds at every scale (the criteria are our reading of the paper's figures).")
                cell = "✓"
            mark = f"<sup>{len(notes)}</sup>" if why or differs else ""
            row.append(f"{cell} (paper {'✓' if theirs else '✗'}){mark}" if differs else f"{cell}{mark}")
        rows.append(row)
    return _table(header, rows, center=True), notes


def paper_table_v() -> list[str]:
    """The paper's Table V as printed."""
    fams = ["many-to-one", "all-to-all", "osu", "long-short"]
    rows = [[name] + ["✓" if ok[f] else "✗" for f in fams] for name, ok in paper.TABLE_V.items()]
    return _table(["paper"] + fams, rows, center=True)


def pfc_table(summary: Summary) -> list[str]:
    """Lossless runs: mean fraction of the run each ingress port was paused, controllers x (case: scale)."""
    cols = [(case, s) for case in summary.cases for s in summary.scales[case]]
    if not any(summary.get(case, s, c, "pfc_paused_frac") is not None for case, s in cols for c in summary.controllers):
        return []
    rows = [[_esc(c)] + [_fmt(summary.get(case, s, c, "pfc_paused_frac"), 3) for case, s in cols]
            for c in summary.controllers]
    return _table(["controller"] + [f"{summary.label(case)}: {s}" for case, s in cols], rows)


def _seed_note(summary: Summary) -> str:
    sets = {tuple(sorted(s)) for s in summary.seeds.values()}
    if len(sets) == 1:
        seeds = next(iter(sets))
        return (f"Every value is the mean over seeds {', '.join(map(str, seeds))} of one (family, topology, scale, "
                f"controller)." if len(seeds) > 1 else f"One seed ({seeds[0]}) per point.")
    counts = sorted({len(s) for s in sets})
    return (f"Every value is the mean over the seeds of one (family, topology, scale, controller) "
            f"({counts[0]}-{counts[-1]} seeds per point; suite.json lists them).")


def _measured(summary: Summary, case: Case):
    """(scale, controller, metric getter) of every run of ``case``, in display order."""
    for s in summary.scales[case]:
        for c in summary.controllers:
            if (case, s, c) in summary.means:
                yield s, c, summary.means[(case, s, c)].get


def _steady_section(summary: Summary, case: Case) -> list[str]:
    has_rtt_us = any(summary.get(case, s, c, "mean_rtt_us") is not None
                     for s in summary.scales[case] for c in summary.controllers)
    base = _nominal_base_rtt_us(summary, case)
    header = ["scale", "controller", "goodput"] + (["mean RTT (us)"] if has_rtt_us else []) + [
        f"RTT / nominal base RTT{f' ({base:g} us)' if base is not None else ''}", "mean queue (us)", "p99 queue (us)",
        "drops/flow", "Jain"]
    rows = []
    for s, c, g in _measured(summary, case):
        rows.append([_esc(s), _esc(c), _fmt(g("goodput"), 3)] + ([_fmt(g("mean_rtt_us"), 1)] if has_rtt_us else [])
                    + [_fmt(g("mean_rtt_inflation"), 2), _fmt(g("queue_delay_mean_us"), 1),
                       _fmt(g("queue_delay_p99_us"), 1), _fmt(g("drops_per_flow"), 1), _fmt(g("jain"), 3)])
    below = (": a path within one leaf has a shorter base RTT, so values below 1 occur" if case.topology == "fat-tree"
             else "")
    cap = (f"{summary.title(case)}: goodput (fraction of line rate), mean RTT over the decisions (us, and over the "
           f"network's nominal base RTT, not each path's own{below}), queueing delay at the egress ports (us, mean and p99), packets dropped "
           f"per flow, Jain fairness of the long-lived flows' goodput; per scale and controller.")
    return [cap, ""] + _table(header, rows, right_from=2)


def _nominal_base_rtt_us(summary: Summary, case: Case) -> float | None:
    """The base RTT the inflation column divides by (mean RTT / inflation), if the runs agree on one."""
    bases = {round(rtt / infl, 3) for _s, _c, g in _measured(summary, case)
             if (rtt := g("mean_rtt_us")) is not None and (infl := g("mean_rtt_inflation")) is not None
             and math.isfinite(rtt) and math.isfinite(infl) and infl > 0}
    return bases.pop() if len(bases) == 1 else None


def _long_short_section(summary: Summary, case: Case) -> list[str]:
    header = ["scale", "controller", "long-flow BW", "short slowdown mean", "short slowdown p99",
              "short completed", "recovery (us)", "drops/flow"]
    rows = []
    for s, c, g in _measured(summary, case):
        rows.append([_esc(s), _esc(c), _fmt(g("long_flow_bw"), 3), _fmt(g("short_fct_slowdown_mean"), 2),
                     _fmt(g("short_fct_slowdown_p99"), 2), _fmt(g("short_completed"), 3),
                     _fmt(g("recovery_us"), 1), _fmt(g("drops_per_flow"), 1)])
    cap = (f"{summary.title(case)} (paper Fig. 10): long-flow bandwidth (fraction of line rate, "
           f"higher is better), short-flow slowdown (FCT / ideal FCT, lower is better), fraction of short flows "
           f"completed, long-flow recovery time (us), packets dropped per flow.")
    return [cap, ""] + _table(header, rows, right_from=2)


def _osu_section(summary: Summary, case: Case) -> list[str]:
    scales = summary.scales[case]
    header = ["controller"] + list(scales)
    abs_rows, rel_rows = [], []
    for c in summary.controllers:
        if not summary.ran(case, c):
            continue
        a, r = [_esc(c)], [_esc(c)]
        for s in scales:
            t, best = summary.get(case, s, c, "iteration_us"), summary.best(case, s, "iteration_us")
            a.append(_fmt(t, 1))
            if t is None or best is None or not math.isfinite(t):
                r.append(_fmt(t, 2))
            else:
                rel = _fmt(t / best, 2)
                r.append(f"**{rel}**" if rel == "1.00" else rel)
        abs_rows.append(a)
        rel_rows.append(r)
    lbl = summary.title(case)
    return ([f"{lbl}: mean iteration completion time per message size (us, lower is better).", ""]
            + _table(header, abs_rows) + ["",
            f"{lbl} (paper Fig. 9): iteration time relative to the best controller per message "
            f"size (x; best = 1.00 in bold).", ""] + _table(header, rel_rows))


def _fct_section(summary: Summary, case: Case) -> list[str]:
    lines: list[str] = []
    for s in summary.scales[case]:
        per = {c: summary.get(case, s, c, "buckets") for c in summary.controllers}
        labels = [lab for _lo, _hi, lab in sorted({(b["lo"], b["hi"], b["label"]) for bs in per.values() if bs for b in bs})]
        header = ["controller"] + labels + ["unfinished flows"]
        rows = []
        for c, bs in per.items():
            if bs is None:
                continue
            by = {b["label"]: b for b in bs}
            cells = [f"{_fmt(by[lab]['median'], 2)} / {_fmt(by[lab]['p99'], 2)}" if lab in by else MISSING for lab in labels]
            rows.append([_esc(c)] + cells + [_fmt(sum(b["unfinished"] for b in bs), 1)])
        load = next((v for c in summary.controllers if (v := summary.get(case, s, c, "load")) is not None), None)
        load_txt = f", offered load {load:g}" if load is not None and f"{load:g}" not in s else ""
        lines += [f"{summary.title(case)}, {s}{load_txt}: FCT slowdown (FCT / ideal FCT of the "
                  f"flow alone) per flow-size bucket, median / p99 over finished flows (lower is better).", ""]
        lines += _table(header, rows) + [""]
    return lines[:-1]


def markdown(summary: Summary, figures: Mapping[Case, str]) -> str:
    """The report's Markdown; ``figures`` maps a case to its PNG file name."""
    out = ["# Evaluation suite", "",
           f"Controllers: {', '.join(summary.controllers)}. {_seed_note(summary)}", ""]
    settings = summary.results.get("settings")
    if settings:
        out += ["Settings:", ""] + [f"- {k}: {json.dumps(v, sort_keys=True)}" for k, v in sorted(settings.items())] + [""]
    iv = table_iv(summary)
    if iv:
        out += ["## Table IV: packets lost per flow", "", TABLE_IV_INTRO, ""] + iv + [""]
        why = table_iv_notes(summary)
        if why:
            out += ["Why different from the paper:", ""] + why + [""]
    words = summary.criteria.describe()
    both = len(summary.loss_modes) > 1
    for mode in summary.loss_modes:
        part = summary if mode == summary.loss_mode else Summary(summary.results, mode)
        v, notes = table_v(part)
        title = {"lossy": "lossy buffer", "lossless": "lossless, PFC"}[mode] if both or mode != "lossy" else ""
        out += [f"## Table V: success per task{f' ({title})' if title else ''}", "",
                "✓: the controller met the task's criterion at every scale; ✗: it did not (footnotes say where); "
                f"{MISSING}: not run; (paper ✓/✗): the paper's Table V differs.", ""] + v + [""]
        if notes:
            out += notes + [""]
        pfc = pfc_table(part) if mode == "lossless" else []
        if pfc:
            out += ["Fraction of the run each switch ingress port was paused by PFC (mean over ports):", ""] + pfc + [""]
    out += ["The paper's Table V (section V):", ""] + paper_table_v() + [""]
    out += ["Criteria:", ""] + [f"- {f}: {words[f]}." for f in FAMILIES if any(c.family == f for c in summary.cases)]
    out += [""]
    for case in summary.cases:
        out += [f"## {summary.title(case)}", ""]
        if case.family in STEADY:
            out += _steady_section(summary, case)
        elif case.family == "long-short":
            out += _long_short_section(summary, case)
        elif case.family == "osu":
            out += _osu_section(summary, case)
        else:
            out += _fct_section(summary, case)
        if case in figures:
            out += ["", f"![{summary.label(case)}]({figures[case]})"]
        out += [""]
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# figures


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _log_y(ax: Axes) -> None:
    """Log y with plain numbers (6, not 6x10^0) on the labelled ticks."""
    from matplotlib.ticker import LogFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(LogFormatter())
    ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


MARKERS = "osD^vP<X>p"  # one per controller (with its colour), drawn hollow: a tie stays visible


def _colors(summary: Summary) -> dict[str, str]:
    return {c: f"C{i % 10}" for i, c in enumerate(summary.controllers)}


def _markers(summary: Summary) -> dict[str, str]:
    return {c: MARKERS[i % len(MARKERS)] for i, c in enumerate(summary.controllers)}


def seed_label(summary: Summary, case: Case) -> str:
    """What each value of ``case`` is: "seed 0", "mean over 3 seeds" or "mean over 1-3 seeds"."""
    runs = [seeds for (c, _s, _ctl), seeds in summary.seeds.items() if c == case]
    counts = sorted({len(seeds) for seeds in runs})
    if counts == [1]:
        only = sorted({seeds[0] for seeds in runs})
        return f"seed {only[0]}" if len(only) == 1 else "one seed per point"
    return f"mean over {counts[0]} seeds" if len(counts) == 1 else f"mean over {counts[0]}-{counts[-1]} seeds"


def _x_label(scales: Sequence[str]) -> str:
    """The unit the scale labels share ("128 flows", "2048 flows" -> "flows"), else "scale"."""
    units = {" ".join(s.split()[1:]) for s in scales}
    return units.pop() if len(units) == 1 and "" not in units else "scale"


def _legend(fig: Figure, summary: Summary, colors: Mapping[str, str], markers: Mapping[str, str] | None = None) -> None:
    """The controllers, outside the axes (right): colour patches, or hollow markers on lines."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if markers is None:
        handles = [Patch(color=colors[c], label=c) for c in summary.controllers]
    else:
        handles = [Line2D([], [], color=colors[c], marker=markers[c], markerfacecolor="none", label=c)
                   for c in summary.controllers]
    fig.legend(handles=handles, loc="outside right upper", fontsize=8)


def _grouped_bars(ax: Axes, groups: Sequence[str], series: Mapping[str, Sequence[float | None]],
                  colors: Mapping[str, str], labels: bool | None = None) -> None:
    """One bar per (group, series); ``labels``: write each bar's value on it [default: one group]."""
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    for k, (c, ys) in enumerate(series.items()):
        xs = [x[i] + (k - (len(series) - 1) / 2) * width for i, y in enumerate(ys) if y is not None and math.isfinite(y)]
        hs = [y for y in ys if y is not None and math.isfinite(y)]
        bars = ax.bar(xs, hs, width=width, color=colors[c], label=c)
        if labels if labels is not None else len(groups) == 1:
            ax.bar_label(bars, labels=[_fmt_g(h) for h in hs], fontsize=7, padding=2)
    ax.set_xticks(x, groups, fontsize=8, rotation=30 if sum(len(g) for g in groups) > 40 else 0)
    ax.margins(y=0.12)  # room for the value labels


def _steady_figure(summary: Summary, case: Case, colors: Mapping[str, str]) -> Figure:
    """Goodput and queue delay per scale: lines over the scales (one hollow marker shape per
    controller, each nudged sideways so ties stay visible), or labelled bars for a single scale."""
    plt = _pyplot()
    scales = summary.scales[case]
    unit = _x_label(scales)
    ticks = [s.split()[0] if unit != "scale" else s for s in scales]
    markers = _markers(summary)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), layout="constrained")
    panels = [("goodput", "goodput (fraction of line rate)"), ("queue_delay_mean_us", "mean queue delay (us)"),
              ("queue_delay_p99_us", "p99 queue delay (us)")]
    n = len(summary.controllers)
    for ax, (key, ylabel) in zip(axes, panels):
        if len(scales) == 1:
            _grouped_bars(ax, ticks, {c: [summary.get(case, scales[0], c, key)] for c in summary.controllers}, colors)
        else:
            for k, c in enumerate(summary.controllers):
                nudge = (k - (n - 1) / 2) * min(0.08, 0.4 / n)
                pts = [(i + nudge, v) for i, s in enumerate(scales)
                       if (v := summary.get(case, s, c, key)) is not None and math.isfinite(v)]
                if pts:
                    ax.plot(*zip(*pts), marker=markers[c], markerfacecolor="none", markersize=7, color=colors[c], label=c)
            ax.set_xticks(range(len(scales)), ticks, fontsize=8)
            ax.set_xlim(-0.5, len(scales) - 0.5)
        ax.set_ylim(bottom=0)
        ax.set_xlabel(unit)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylim(0, 1.1)
    _legend(fig, summary, colors, None if len(scales) == 1 else markers)
    fig.suptitle(f"{summary.title(case)} ({seed_label(summary, case)})")
    return fig


def _bars_figure(summary: Summary, case: Case, colors: Mapping[str, str],
                 panels: Sequence[tuple[str, str, bool]], title: str) -> Figure:
    """One grouped-bar panel per (metric, y label, log y); groups = scales."""
    plt = _pyplot()
    scales = summary.scales[case]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 3.6), layout="constrained")
    for ax, (key, ylabel, logy) in zip(np.atleast_1d(axes), panels):
        series = {c: [summary.get(case, s, c, key) for s in scales] for c in summary.controllers}
        _grouped_bars(ax, scales, series, colors)
        if logy:
            _log_y(ax)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
    _legend(fig, summary, colors)
    fig.suptitle(title)
    return fig


def _osu_figure(summary: Summary, case: Case, colors: Mapping[str, str]) -> Figure:
    plt = _pyplot()
    scales = summary.scales[case]
    fig, (ax_rel, ax_abs) = plt.subplots(1, 2, figsize=(11, 3.6), layout="constrained")
    rel: dict[str, list[float | None]] = {}
    for c in summary.controllers:
        rel[c] = []
        for s in scales:
            t, best = summary.get(case, s, c, "iteration_us"), summary.best(case, s, "iteration_us")
            rel[c].append(t / best if t is not None and best else None)
    _grouped_bars(ax_rel, scales, rel, colors)
    ax_rel.axhline(1.0, color="k", lw=0.8)
    ax_rel.set_ylabel("iteration time / best")
    ax_rel.set_xlabel("message size")
    _grouped_bars(ax_abs, scales, {c: [summary.get(case, s, c, "iteration_us") for s in scales]
                                   for c in summary.controllers}, colors)
    _log_y(ax_abs)
    ax_abs.set_ylabel("mean iteration time (us)")
    ax_abs.set_xlabel("message size")
    for ax in (ax_rel, ax_abs):
        ax.grid(axis="y", alpha=0.3)
    _legend(fig, summary, colors)
    fig.suptitle(f"{summary.title(case)}: MPI all-to-all ({seed_label(summary, case)})")
    return fig


def _fct_figure(summary: Summary, case: Case, colors: Mapping[str, str]) -> Figure:
    plt = _pyplot()
    scales = summary.scales[case]
    fig, axes = plt.subplots(len(scales), 2, figsize=(11, 3.2 * len(scales)), layout="constrained", squeeze=False)
    for row, s in zip(axes, scales):
        per = {c: {b["label"]: b for b in (summary.get(case, s, c, "buckets") or [])} for c in summary.controllers}
        labels = [lab for _lo, _hi, lab in sorted({(b["lo"], b["hi"], b["label"]) for r in per.values() for b in r.values()})]
        for ax, stat in zip(row, ("median", "p99")):
            series = {c: [per[c][lab][stat] if lab in per[c] else None for lab in labels] for c in summary.controllers}
            _grouped_bars(ax, labels, series, colors)
            _log_y(ax)
            ax.set_ylabel(f"{stat} FCT slowdown")
            ax.set_title(s, fontsize=9)
            ax.grid(axis="y", alpha=0.3)
        for ax in row:
            ax.set_xlabel("flow size")
    _legend(fig, summary, colors)
    fig.suptitle(f"{summary.title(case)}: FCT slowdown per flow size ({seed_label(summary, case)})")
    return fig


def report_figures(results: Mapping[str, Any] | Summary) -> dict[str, Figure]:
    """Every figure of the report by file name (``suite_<family>_<topology>.png``); close them
    when done."""
    summary = results if isinstance(results, Summary) else Summary(results)
    colors = _colors(summary)
    out: dict[str, Figure] = {}
    for case in summary.cases:
        name = f"suite_{case.family}_{case.topology}.png"
        lbl = summary.title(case)
        if case.family in STEADY:
            out[name] = _steady_figure(summary, case, colors)
        elif case.family == "long-short":
            out[name] = _bars_figure(summary, case, colors, [
                ("long_flow_bw", "long-flow bandwidth (fraction of line rate)", False),
                ("short_fct_slowdown_mean", "short-flow slowdown, mean", False),
                ("short_fct_slowdown_p99", "short-flow slowdown, p99", False)], f"{lbl} ({seed_label(summary, case)})")
        elif case.family == "osu":
            out[name] = _osu_figure(summary, case, colors)
        else:
            out[name] = _fct_figure(summary, case, colors)
    return out


def write_report(results: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    """Write ``suite.md``, ``suite.json`` and the figures to ``out_dir`` (created); returns the
    paths written, in that order."""
    summary = Summary(results)
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BadInputError(f"cannot create report directory {out_dir}: {e}") from None
    figures = report_figures(summary)
    names = {case: f"suite_{case.family}_{case.topology}.png" for case in summary.cases}
    md, js = out_dir / "suite.md", out_dir / "suite.json"
    md.write_text(markdown(summary, {c: n for c, n in names.items() if n in figures}), encoding="utf-8")
    js.write_text(json.dumps(_plain(summary.results), sort_keys=True, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    written = [md, js]
    plt = _pyplot()
    for name, fig in figures.items():
        save_figure(fig, out_dir / name)
        plt.close(fig)
        written.append(out_dir / name)
    return written
