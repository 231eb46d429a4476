"""The RL-CC paper's evaluation for any set of controllers, as one sweep of simulations.

``run_suite(controllers, suite)`` runs every (family, scale, seed, controller) case of the chosen
suite through ``sweep.run_jobs`` (serially or on Ray) and returns the results in the schema of
``suite_report`` (which writes Table IV, Table V, the per-family tables and the plots).

Suites (``SUITES``):

* ``full``: the paper's section V on the 64-host two-level fat-tree (2:1): many-to-one at 32 /
  128 / 2048 / 4096 flows, all-to-all at about 64 / 512 / 1024 / 2048 flows, OSU all-to-all
  (16 ranks, 32 B ... 1 MB), long-short on the single switch (one long flow, 50 / 100 short
  flows of 64 KB, the paper's 7-host test), and trace-driven web-search traffic at 30 % and 60 %
  load (FCT slowdown by size, the HPCC line of work).
* ``reduced``: what ``rlcc-compile`` runs as its closed-loop check: many-to-one at 64 flows on both
  the single switch and the fat-tree, all-to-all on 16 fat-tree hosts; seconds, not minutes.

Loss modes (``LOSS_MODES``): ``lossy`` runs the scenarios as defined (a lossy shared buffer);
``lossless`` runs the same ones with PFC (``PfcParams()``: the ns-3 peer's dynamic thresholds), and
adds each run's PFC pause counters to its metrics; both give Table V twice.

Steady families (many-to-one, all-to-all) report the second half of the run (the equilibrium);
drops per flow count the whole run, split into bring-up (before the measurement window) and
steady (in it). Their flows start at line rate (``start="line-rate"``, as the paper ran them: its
Table IV losses are mostly bring-up) or at their fair share (``"fair-share"``: the equilibrium
alone). Long-short, OSU and trace flows start at the controller's own rate (their transient is the
test). ``loss_recovery`` sets every scenario's ``Network.loss_recovery`` (go-back-N: RoCE NICs').
Defaults per suite (``SUITE_DEFAULTS``): the full suite reproduces the paper (line rate,
go-back-N); the reduced one is ``rlcc-compile``'s fidelity check against the teacher at
equilibrium (fair share, no go-back-N), kept as it was so compiled examples do not change.

A controller is ``name=path`` or a built-in name: ``swift``, ``dcqcn``, ``hpcc``; a path ending in
``.onnx`` is a policy (the teacher), a firmware directory or ``*.rlcc.json`` is compiled firmware
run through the bit-exact golden model with the decision latency ``rlcc-verify`` measured
(``verify.json`` beside it: the worst-case event time at the profile clock), else the default.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from rlcc import textio
from rlcc.errors import BadInputError
from rlcc.simulator.params import GO_BACK_N, LOSS_RECOVERY, PfcParams
from rlcc.simulator.scenarios import (
    DEFAULT_DECISION_LATENCY_US, AllToAll, LongShort, ManyToOne, OsuAllToAll, PoissonTrace, Scenario, TopologyConfig,
)

BUILTIN = ("swift", "dcqcn", "hpcc")
LINE_RATE, FAIR_SHARE = "line-rate", "fair-share"
STARTS = (LINE_RATE, FAIR_SHARE)  # how the steady families' flows start
REDUCED_MS = 4.0  # every reduced-suite run: steady state measured over its second half
FAT_TREE, SINGLE = "fat-tree", "single-switch"
LOSS_MODES = ("lossy", "lossless")


@dataclasses.dataclass(frozen=True)
class ControllerSpec:
    """A controller to build inside a worker: ``kind`` swift | dcqcn | hpcc | policy | firmware."""

    name: str
    kind: str
    path: str | None = None
    latency_us: float | None = None  # decision time to simulate instead of the controller's own

    @staticmethod
    def parse(text: str) -> ControllerSpec:
        name, sep, path = text.partition("=")
        name = name.strip()
        if not name:
            raise BadInputError(f"invalid controller {text!r}: expected NAME or NAME=PATH")
        if not sep:
            if name not in BUILTIN:
                raise BadInputError(f"unknown controller {name!r} (built in: {', '.join(BUILTIN)}; "
                                    f"a policy or firmware needs NAME=PATH)")
            return ControllerSpec(name, name)
        p = Path(path)
        if path.endswith(".onnx"):
            kind = "policy"
        elif p.is_dir() or path.endswith(".rlcc.json"):
            kind = "firmware"
        else:
            raise BadInputError(f"controller {name}: {path} is neither an .onnx policy nor a firmware directory "
                                f"or .rlcc.json model")
        if not p.exists():
            raise BadInputError(f"controller {name}: {path} does not exist")
        return ControllerSpec(name, kind, str(p))

    def build(self) -> Any:
        from rlcc.simulator.registry import make_controller

        ctl = load_firmware(self.path, self.name) if self.kind == "firmware" else make_controller(self.kind, self.path)
        ctl.name = self.name
        if self.latency_us is not None:
            ctl.decision_latency_us = self.latency_us
        return ctl


def load_firmware(path: str, name: str = "firmware") -> Any:
    """Compiled firmware (either backend) as a simulator controller: its golden model (``firmware.rlcc.json``)
    with the decision latency of ``verify.json`` beside it (``budget.worst_case_ns``)."""
    from rlcc.fxp.int8_net import load_model_dict
    from rlcc.simulator.controllers.compiled import CONTROLLERS

    p = Path(path)
    model_file = p / "firmware.rlcc.json" if p.is_dir() else p
    try:
        data = textio.load_json(model_file, "firmware model")
    except textio.InputFileError as exc:
        raise BadInputError(f"firmware {path}: cannot read {model_file.name} ({exc.reason})") from None
    # A firmware manifest (rlcc-compile's <stem>.rlcc.json) carries its model under "model".
    model = load_model_dict(data.get("model", data) if isinstance(data, dict) else data)
    ctl = CONTROLLERS[model.backend](model, name=name)
    ctl.decision_latency_us = firmware_latency_us(model_file.parent / "verify.json")
    return ctl


def firmware_latency_us(verify_json: Path) -> float:
    """The worst-case decision time ``rlcc-verify`` measured (us), or the default without a report."""
    if not verify_json.is_file():
        return DEFAULT_DECISION_LATENCY_US
    try:
        ns = textio.load_json(verify_json, "rlcc-verify report")["budget"]["worst_case_ns"]
    except textio.InputFileError as exc:
        raise BadInputError(f"{verify_json}: {exc.reason}") from None
    except (KeyError, TypeError):
        raise BadInputError(f"{verify_json}: not an rlcc-verify report with budget.worst_case_ns") from None
    return float(ns) / 1e3


@dataclasses.dataclass(frozen=True)
class Point:
    """One scale of one family: the scenario all controllers run."""

    family: str
    topology: str
    scale: str
    scale_value: float
    scenario: Scenario
    steady: bool  # a steady family: starts per the suite's start mode


def _fat(**kw: Any) -> TopologyConfig:
    return TopologyConfig(**kw)


def full_suite(seed: int) -> list[Point]:
    fat = _fat()
    pts = []
    for n in (32, 128, 2048, 4096):
        pts.append(Point("many-to-one", FAT_TREE, f"{n} flows", n, ManyToOne(flows=n, duration_ms=10, seed=seed, topology=fat), True))
    for hosts, k in ((8, 1), (16, 2), (32, 1), (32, 2)):
        n = hosts * (hosts - 1) * k
        pts.append(Point("all-to-all", FAT_TREE, f"{n} flows", n,
                         AllToAll(hosts=hosts, flows_per_pair=k, duration_ms=6, seed=seed, topology=fat), True))
    for size in (32, 1024, 32 * 1024, 1 << 20):
        pts.append(Point("osu", FAT_TREE, _bytes(size), size,
                         OsuAllToAll(hosts=16, message_bytes=size, iterations=3, duration_ms=40, seed=seed, topology=fat), False))
    for m in (50, 100):
        pts.append(Point("long-short", SINGLE, f"{m} short", m,
                         LongShort(short_flows=m, short_bytes=64_000, duration_ms=3, burst_start_frac=0.4, seed=seed), False))
    for load in (0.3, 0.6):
        pts.append(Point("fct", FAT_TREE, f"{load:.0%} load", load,
                         PoissonTrace(hosts=64, cdf="websearch", load=load, duration_ms=4, seed=seed, topology=fat), False))
    return pts


def reduced_suite(seed: int) -> list[Point]:
    fat = _fat()
    return [
        Point("many-to-one", SINGLE, "64 flows", 64, ManyToOne(flows=64, duration_ms=REDUCED_MS, seed=seed), True),
        Point("many-to-one", FAT_TREE, "64 flows", 64, ManyToOne(flows=64, duration_ms=REDUCED_MS, seed=seed, topology=fat), True),
        Point("all-to-all", FAT_TREE, "240 flows", 240,
              AllToAll(hosts=16, duration_ms=REDUCED_MS, seed=seed, topology=fat), True),
    ]


SUITES: dict[str, Callable[[int], list[Point]]] = {"full": full_suite, "reduced": reduced_suite}
SUITE_DEFAULTS = {"full": (LINE_RATE, GO_BACK_N), "reduced": (FAIR_SHARE, "none")}  # (start, loss_recovery)


def _bytes(n: int) -> str:
    for unit, size in (("MB", 1 << 20), ("KB", 1024)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


@dataclasses.dataclass(frozen=True)
class Job:
    point: Point
    controller: ControllerSpec
    loss_mode: str = "lossy"
    start: str = FAIR_SHARE
    loss_recovery: str = "none"


def run_job(job: Job) -> dict[str, Any]:
    """One simulation: the suite-report run record (module level: picklable for Ray)."""
    from rlcc.simulator.engine import simulate
    from rlcc.simulator.flowsize import fct_slowdown_buckets

    pt, sc = job.point, job.point.scenario
    if job.loss_recovery != sc.network.loss_recovery:
        sc = dataclasses.replace(sc, network=dataclasses.replace(sc.network, loss_recovery=job.loss_recovery))
    if pt.steady:
        sc = dataclasses.replace(sc, initial_rate=1.0 if job.start == LINE_RATE else sc.fair_rate())
    if job.loss_mode == "lossless":
        sc = dataclasses.replace(sc, network=dataclasses.replace(sc.network, pfc=PfcParams()))
    ctl = job.controller.build()
    res = simulate(sc, ctl)
    window, full = res.metrics, res.metrics_full
    m: dict[str, Any] = {k: window[k] for k in ("goodput", "queue_delay_mean_us", "queue_delay_p99_us",
                                                 "mean_rtt_inflation", "jain") if k in window}
    m["mean_rtt_us"] = window["mean_rtt_inflation"] * sc.network.base_rtt_us
    m["drops_per_flow"] = full["drops_per_flow"]
    m["drop_fraction"] = full["drop_fraction"]
    if pt.steady:  # the whole run's drops = bring-up (before the window) + steady (the window)
        m["drops_steady_per_flow"] = window["drops_per_flow"]
        m["drops_bringup_per_flow"] = max(full["drops_per_flow"] - window["drops_per_flow"], 0.0)
    if "resent_per_flow" in full:
        m["resent_per_flow"] = full["resent_per_flow"]
    m["decision_latency_us"] = float(getattr(ctl, "decision_latency_us", None) or DEFAULT_DECISION_LATENCY_US)
    if res.pfc is not None:
        m["pfc_pauses"], m["pfc_paused_frac"] = full["pfc_pauses"], full["pfc_paused_frac"]
    m.update({k: v for k, v in full.items() if k.startswith("nic_")})  # the decision processor's (scenario.nic)
    if pt.family == "long-short":
        for k in ("long_flow_bw", "short_fct_slowdown_mean", "short_fct_slowdown_p99", "short_completed"):
            m[k] = full[k]
        m["long_flow_bw"] = _after_burst_bw(res)
        m["recovery_us"] = _recovery_us(res)
    elif pt.family == "osu":
        m["iteration_us"] = full.get("iteration_us", float("nan"))
        m["message_bytes"] = float(sc.message_bytes)
    elif pt.family == "fct":
        sizes = sc.flow_table().size_bytes
        ideal = sizes / sc.network.bytes_per_ns + res.flows["base_rtt_ns"]
        m["buckets"] = fct_slowdown_buckets(sizes, res.flows["fct_ns"], ideal)
        m["load"] = sc.load
    out = {"family": pt.family, "topology": pt.topology, "scale": pt.scale, "scale_value": pt.scale_value,
           "seed": sc.seed, "controller": job.controller.name, "metrics": m}
    if job.loss_mode != "lossy":
        out["loss_mode"] = job.loss_mode
    return out


def _after_burst_bw(res: Any) -> float:
    """The long flow's mean rate (fraction of line rate) from the burst to the end of the run."""
    s = res.series
    t0 = res.scenario.burst_start_frac * res.scenario.duration_ms * 1e3
    after = s["t_us"] >= t0
    col = int(np.flatnonzero(s["flow_ids"] == 0)[0])
    return float(s["rates"][after, col].mean()) if after.any() else float("nan")


def _recovery_us(res: Any, level: float = 0.9) -> float:
    """From the last short flow's completion until the long flow is back at ``level`` of line rate."""
    fct, start = res.flows["fct_ns"][1:], res.scenario.flow_table().start_ns[1:]
    if not np.isfinite(fct).all():
        return float("nan")
    done_us = float((start + fct).max()) / 1e3
    s = res.series
    col = int(np.flatnonzero(s["flow_ids"] == 0)[0])
    back = np.flatnonzero((s["t_us"] >= done_us) & (s["rates"][:, col] >= level))
    return float(s["t_us"][back[0]] - done_us) if len(back) else float("nan")


def run_suite(controllers: Sequence[ControllerSpec], suite: str = "full", seeds: Sequence[int] = (0,),
              backend: str = "serial", address: str | None = None, num_cpus: int | None = None,
              progress: bool | None = None, loss_modes: Sequence[str] = ("lossy",), start: str | None = None,
              loss_recovery: str | None = None) -> dict[str, Any]:
    """Every case of ``suite`` for every controller, seed and loss mode; results in ``suite_report``'s schema.

    ``start`` (``STARTS``) and ``loss_recovery`` (``params.LOSS_RECOVERY``): None takes the suite's
    ``SUITE_DEFAULTS``."""
    from rlcc.simulator.sweep import run_jobs

    if suite not in SUITES:
        raise BadInputError(f"unknown suite {suite!r} (known: {', '.join(SUITES)})")
    start = SUITE_DEFAULTS[suite][0] if start is None else start
    loss_recovery = SUITE_DEFAULTS[suite][1] if loss_recovery is None else loss_recovery
    if start not in STARTS:
        raise BadInputError(f"unknown start {start!r} (known: {', '.join(STARTS)})")
    if loss_recovery not in LOSS_RECOVERY:
        raise BadInputError(f"unknown loss recovery {loss_recovery!r} (known: {', '.join(LOSS_RECOVERY)})")
    names = [c.name for c in controllers]
    if len(set(names)) != len(names) or not names:
        raise BadInputError("controller names must be unique and at least one controller is needed")
    if not loss_modes or any(m not in LOSS_MODES for m in loss_modes) or len(set(loss_modes)) != len(loss_modes):
        raise BadInputError(f"loss modes must be distinct among {', '.join(LOSS_MODES)}, got {list(loss_modes)}")
    jobs = [Job(pt, c, loss_mode=mode, start=start, loss_recovery=loss_recovery)
            for mode in loss_modes for seed in seeds for pt in SUITES[suite](seed) for c in controllers]
    runs = run_jobs(run_job, jobs, backend=backend, address=address, num_cpus=num_cpus, progress=progress, desc=f"suite {suite}")
    settings = {"suite": suite, "seeds": list(seeds), "start": start, "loss_recovery": loss_recovery,
                "controllers": {c.name: c.kind + (f" ({Path(c.path).name})" if c.path else "") for c in controllers}}
    if list(loss_modes) != ["lossy"]:
        settings["loss_modes"] = list(loss_modes)
    return {"controllers": names, "settings": settings, "runs": runs}
