"""Compile a switch agent's Q-network into an integer tree classifier, with closed-loop fidelity.

1. **Sampling** in closed loop: DCQCN hosts, the teacher tuning every egress queue, on a mix of
   incast and trace-driven scenarios (single switch and a leaf-spine fabric); every queue's
   integer window is labelled with the teacher's greedy action. DAgger rounds then let the
   student drive while the teacher labels, so the student also learns the states it causes.
   Identical (window, label) rows are merged into weights (idle queues are one row).
2. **Fit** (``rlcc.kinds.switch_agent.fit``) under the device budget; held-out agreement reported.
3. **Fidelity**: static ECN (the spec's initial template), the teacher and the compiled
   classifier (the golden model: the firmware's exact integer decisions) run the evaluation
   scenarios; the gate compares firmware with teacher on mice/elephant FCT slowdown and queue.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from rlcc.class_trees import ClassEnsemble
from rlcc.kinds.switch_agent import scenarios as switch_scenarios
from rlcc.distill.gate import preview_headline
from rlcc.kinds.switch_agent.fit import ClassifierBudget, FitResult, fit_classifier
from rlcc.errors import BadInputError
from rlcc.fxp import switch_agent as fx
from rlcc.simulator.controllers.dcqcn import Dcqcn
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import Scenario
from rlcc.kinds.switch_agent.agents import ClassifierAgent
from rlcc.simulator.switch_agent import QNetAgent, StaticEcn, WindowAgent
from rlcc.simulator.switch_metrics import switch_metrics
from rlcc.switch_policy import QNetPolicy
from rlcc.switch_spec import SwitchAgentSpec

HOLDOUT_EVERY = 5  # every 5th sampling scenario's rows are held out for the agreement figure


@dataclasses.dataclass(frozen=True)
class SwitchFidelityBar:
    """Firmware vs teacher tolerances, % of the teacher's value; being better always passes."""

    fct_pct: float = 10.0  # mean FCT slowdown, mice and elephants
    queue_pct: float = 25.0  # mean queue of the busy queues
    queue_floor_kb: float = 5.0  # the queue tolerance never below this (a few packets)
    unfinished_pct: float = 2.0  # flows left unfinished at the end, % of all flows (at least 1 flow)

    def validate(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not 0 <= v < float("inf"):
                raise BadInputError(f"switch fidelity bar: {f.name} must be a finite number >= 0, got {v}")


@dataclasses.dataclass(frozen=True)
class SwitchCompileOptions:
    sampling: tuple[Scenario, ...]
    evaluation: tuple[Scenario, ...]
    budget: ClassifierBudget = ClassifierBudget()
    dagger_rounds: int = 1
    seed: int = 0
    bar: SwitchFidelityBar = SwitchFidelityBar()
    preview: bool = False  # --quick: the gate's checks are reported, not judged (rlcc.distill.gate.PREVIEW)

    def validate(self, spec: SwitchAgentSpec) -> None:
        if not self.sampling or not self.evaluation:
            raise BadInputError("switch compile: need sampling and evaluation scenarios")
        if not 0 <= self.dagger_rounds <= 8:
            raise BadInputError("--dagger-rounds must be in 0..8")
        self.bar.validate()
        for sc in self.sampling + self.evaluation:
            spec.check_sim_step(sc.network.dt_ns)


def switch_recipe(trees: int, depth: int, dagger_rounds: int, seed: int, quick: bool) -> dict[str, object]:
    """The options a switch-agent compile records in its manifest (``compile``), from which
    :func:`switch_options` (and ``rlcc-verify --policy``) rebuild the same options."""
    return {"backend": "switch_agent", "trees": trees, "depth": depth, "dagger_rounds": dagger_rounds, "seed": seed,
            "quick": quick}


def switch_options(recipe: dict[str, object]) -> SwitchCompileOptions:
    """The compile options of a :func:`switch_recipe` (BadInputError on a malformed one)."""
    ints = ("trees", "depth", "dagger_rounds", "seed")
    if (set(recipe) != set(switch_recipe(0, 0, 0, 0, False)) or any(type(recipe[k]) is not int for k in ints)
            or type(recipe["quick"]) is not bool):
        raise BadInputError(f"switch compile recipe: expected integer {', '.join(ints)} and a boolean quick")
    quick, seed = bool(recipe["quick"]), int(recipe["seed"])
    return SwitchCompileOptions(switch_scenarios.sampling(quick, seed), switch_scenarios.evaluation(quick),
                                ClassifierBudget(max_trees=int(recipe["trees"]), depth=int(recipe["depth"])),
                                int(recipe["dagger_rounds"]), seed, SwitchFidelityBar(), preview=quick)


@dataclasses.dataclass(frozen=True)
class GateCheck:
    scenario: str
    metric: str
    teacher: float
    firmware: float
    tolerance: float  # absolute, in the metric's unit
    passed: bool


@dataclasses.dataclass
class SwitchCompileResult:
    model: ClassEnsemble
    fit: FitResult
    samples: int  # labelled queue-intervals
    unique_rows: int
    holdout_agreement: float  # on held-out scenarios' windows (training windows when none is held out)
    holdout_scenarios: int
    action_counts: dict[str, list[int]]  # teacher labels / student actions over the samples
    closed_loop: list[dict]  # per scenario and agent: the metrics
    checks: list[GateCheck]
    preview: bool = False  # a --quick compile: the checks are measured, not judged

    @property
    def gate_passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def gate_headline(self) -> str:
        """The gate's verdict in words (report.md, report.json, console)."""
        if self.preview:
            return preview_headline(sum(not c.passed for c in self.checks), len(self.checks))
        return "passed" if self.gate_passed else "FAILED"

    @property
    def worst(self) -> GateCheck | None:
        def excess(c: GateCheck) -> float:
            if c.tolerance > 0:
                return (c.firmware - c.teacher) / c.tolerance
            return float("inf") if c.firmware > c.teacher else float("-inf")
        return max(self.checks, key=excess, default=None)


class LabellingAgent(WindowAgent):
    """Records every queue's window with the teacher's action; ``driver`` (None: the teacher)
    chooses what is applied."""

    name = "labelling"

    def __init__(self, teacher: QNetPolicy, driver: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        super().__init__(teacher.spec)
        self.teacher, self.driver = teacher, driver
        self.windows: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []

    def choose(self, window: np.ndarray) -> np.ndarray:
        label = self.teacher.act(self.spec.normalize(window))
        self.windows.append(window.copy())
        self.labels.append(label)
        return label if self.driver is None else self.driver(window)


def _sample(teacher: QNetPolicy, scenarios: tuple[Scenario, ...], driver) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for sc in scenarios:
        agent = LabellingAgent(teacher, driver)
        simulate(sc, Dcqcn(), switch_agent=agent)
        out.append((np.concatenate(agent.windows), np.concatenate(agent.labels)))
    return out


def _merge(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique (window, label) rows, sorted (deterministic), with their counts as weights."""
    rows = np.concatenate([np.column_stack([w, l]) for w, l in parts])
    uniq, counts = np.unique(rows, axis=0, return_counts=True)
    return uniq[:, :-1], uniq[:, -1], counts.astype(np.float64)


def compile_switch_agent(teacher: QNetPolicy, options: SwitchCompileOptions,
                         log: Callable[[str], None] = lambda _: None) -> SwitchCompileResult:
    spec = teacher.spec
    options.validate(spec)
    n = len(options.sampling)
    held_out = [i for i in range(n) if n >= HOLDOUT_EVERY and i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1]
    fitting = tuple(sc for i, sc in enumerate(options.sampling) if i not in held_out)
    log(f"sampling the teacher on {n} scenarios (DCQCN hosts), {len(held_out)} held out")
    parts = _sample(teacher, options.sampling, None)
    held = [parts[i] for i in held_out]
    train = [p for i, p in enumerate(parts) if i not in held_out]
    fit = None
    for r in range(options.dagger_rounds + 1):
        w, y, weight = _merge(train)
        fit = fit_classifier(spec, w, y, options.budget, seed=options.seed, weights=weight)
        log(f"fit round {r}: {len(w)} unique windows, {len(fit.model.trees)} trees, float agreement "
            f"{fit.float_agreement:.4f}, quantization agreement {fit.quantization_agreement:.4f}")
        if r < options.dagger_rounds:  # DAgger: the student drives, the teacher labels
            train += _sample(teacher, fitting, lambda win, m=fit.model: fx.decide(m, win))
    hw, hy = (np.concatenate([p[k] for p in (held or train)]) for k in (0, 1))
    holdout = float(np.mean(fx.decide(fit.model, hw) == hy))
    parts = train + held
    all_w = np.concatenate([p[0] for p in parts])
    all_y = np.concatenate([p[1] for p in parts])
    counts = {"teacher": np.bincount(all_y, minlength=spec.n_actions).tolist(),
              "student": np.bincount(fx.decide(fit.model, all_w), minlength=spec.n_actions).tolist()}
    log(f"{'held-out' if held else 'training'} agreement {holdout:.4f}; closed loop on {len(options.evaluation)} scenarios")
    closed, checks = closed_loop(teacher, fit.model, options.evaluation, options.bar)
    return SwitchCompileResult(fit.model, fit, int(len(all_y)), int(len(_merge(parts)[0])), holdout, len(held), counts,
                               closed, checks, options.preview)


def closed_loop(teacher: QNetPolicy, model: ClassEnsemble, scenarios: tuple[Scenario, ...], bar: SwitchFidelityBar,
                statics: tuple[int, ...] | None = None) -> tuple[list[dict], list[GateCheck]]:
    """Static ECN (templates ``statics``, default the initial one) vs teacher vs firmware on each
    scenario, and the gate's checks (firmware vs teacher)."""
    spec = teacher.spec
    statics = (spec.initial_action,) if statics is None else statics
    rows, checks = [], []
    for sc in scenarios:
        name = scenario_label(sc)
        per = {}
        agents = [(f"static {spec.actions[i].label()}", StaticEcn(spec, i)) for i in statics]
        for label, agent in agents + [("teacher", QNetAgent(teacher)), ("firmware", ClassifierAgent(spec, model))]:
            m = switch_metrics(simulate(sc, Dcqcn(), switch_agent=agent))
            per[label] = m
            rows.append({"scenario": name, "agent": label, **m})
        t, f = per["teacher"], per["firmware"]
        flows = t.get("flows", 0.0)
        for metric, pct, floor in (("mice_slowdown_mean", bar.fct_pct, 0.0), ("elephant_slowdown_mean", bar.fct_pct, 0.0),
                                   ("queue_kb_mean", bar.queue_pct, bar.queue_floor_kb),
                                   ("unfinished", 0.0, max(1.0, bar.unfinished_pct / 100.0 * flows))):
            tv, fv = t.get(metric), f.get(metric)
            if tv is None or fv is None or not np.isfinite(tv) or not np.isfinite(fv):
                continue
            tol = max(abs(tv) * pct / 100.0, floor)
            checks.append(GateCheck(name, metric, float(tv), float(fv), tol, bool(fv - tv <= tol)))
    return rows, checks


def scenario_label(sc: Scenario) -> str:
    where = "" if sc.topology is None else f"{sc.topology.kind}/"
    detail = getattr(sc, "cdf", None)
    load = getattr(sc, "load", None)
    if detail is not None:
        return f"{where}{sc.kind}:{detail}@{load:g}"
    return f"{where}{sc.kind}:{getattr(sc, 'senders', getattr(sc, 'flows', ''))}"
