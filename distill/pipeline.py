"""The distillation pipeline behind ``rlcc-compile``: sample, fit, quantize, measure.

One call, fully determined by the policy, the options and the seed: the same inputs give
byte-identical artifacts (CatBoost single-threaded and seeded, the simulator seeded, ONNX
Runtime single-threaded, reports free of wall-clock values).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import numpy as np
from rlcc import derived as derived_vocab
from rlcc import formats as fmt
from rlcc.distill import coverage, equilibrium, evaluate, sampling, select, window
from rlcc.distill.factor_range import FactorRange, teacher_factor_range
from rlcc.distill.fit import (
    DEFAULT_BUDGET_OPS,
    DEFAULT_DEPTH,
    DEFAULT_TREES,
    FitConfig,
    FitResult,
    fit_student,
)
from rlcc.distill.gate import FidelityBar, judge
from rlcc.parallel import Runner
from rlcc.distill.report_data import (
    ClosedLoop,
    CompileReport,
    Dagger,
    Dataset,
    Fit,
    Helped,
    Round,
    Selection,
    Teacher,
)
from rlcc.distill.sampling import ORIGIN_DAGGER, Samples
from rlcc.distill.select import CANDIDATE_GRID, CandidateSetting
from rlcc.errors import BadInputError
from rlcc.fxp.model import FxModel
from rlcc.fxp.quantize import QuantizeStats, quantize
from rlcc.policy import OnnxPolicy
from rlcc.progress import Progress, Stage, silent
from rlcc.simulator.controllers.recurrent import teacher_controller
from rlcc.simulator.controllers.compiled import FloatTreesController, GoldenController
from rlcc.simulator.nic import NicConfig
from rlcc.spec import ObservationSpec
from rlcc.tree_ir import FitsBudget, FloatEnsemble, FloatRamp

Log = Callable[[str], None]


DEFAULT_SAMPLES = 30000  # closed-loop decisions sampled (--samples)
QUICK_SAMPLES = 6000  # the same with --quick
EQUILIBRIUM_MODES = ("ramps", "none")  # the first is the default
DEFAULT_CANDIDATES = 4  # candidate students ranked in closed loop (--candidates)
QUICK_CANDIDATES = 2


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    trees: int = DEFAULT_TREES
    depth: int = DEFAULT_DEPTH
    budget_ops: int = DEFAULT_BUDGET_OPS
    samples: int = DEFAULT_SAMPLES
    perturb_fraction: float = 0.25
    holdout_fraction: float = 0.2
    scenarios: str = sampling.DEFAULT_SCENARIOS
    dagger_rounds: int = 0
    seed: int = 0
    eval_flows: tuple[int, ...] = (64, 512, 2048)
    eval_duration_ms: float = 150.0
    duration_scale: float = 1.0
    # Tail anchors (synthetic reachable extreme windows), as a fraction of the closed-loop set.
    anchor_fraction: float = 0.5
    # Cheap on-policy rounds: the student drives short many-to-one incasts at the evaluation
    # sizes (from line rate and from the fair share), the teacher labels, refit. The float trees
    # drive (they take the same decisions as the fixed point on device inputs, at a fraction of
    # the golden model's simulation cost); --dagger-rounds add rounds driven by the fixed point.
    onpolicy_rounds: int = 2
    onpolicy_samples: int = 10000
    onpolicy_duration_ms: float = 60.0
    # Steady-state closed-loop check: flows start at 1/N; measured over the second half.
    steady_duration_ms: float = 10.0
    # Candidate students fitted on the final training set (the first N of select.CANDIDATE_GRID:
    # learning rate, time-weight powers), ranked by the fidelity gate's measure on a validation
    # suite disjoint from the report's closed-loop tables.
    candidates: int = DEFAULT_CANDIDATES
    validation_startup_ms: float = 150.0
    # Steady-state validation incasts (flow counts; other seeds than the report's): the escalation
    # (rlcc.distill.escalate) widens them to the gate's whole range.
    validation_flows: tuple[int, ...] = select.VALIDATION_FLOWS
    # The fidelity gate's bar (rlcc.distill.gate): judged on the report's closed-loop tables.
    bar: FidelityBar = FidelityBar()
    # A preview (--quick): the gate's checks are measured and reported, not judged (gate.PREVIEW).
    preview: bool = False
    # Derived student inputs (rlcc.derived): "auto" = every one the spec's window supports and
    # the context has a word for (each keeps its previous step's state), "none", or a comma list.
    derived: str = "auto"
    # Linear terms around the teacher's equilibrium (rlcc.distill.equilibrium): "ramps" or "none"
    # (trees only: a staircase across the equilibrium, which the closed loop dithers on).
    equilibrium: str = EQUILIBRIUM_MODES[0]

    def student_spec(self, spec: ObservationSpec) -> ObservationSpec:
        """The teacher's spec with the student's derived inputs (BadInputError if unsupported)."""
        if self.derived == "auto":
            free = fmt.CTX_HISTORY_WORDS - (spec.history - 1) * spec.n_features  # context words after the window
            names = tuple(n for n in derived_vocab.known()
                          if derived_vocab.get(n).source in spec.feature_names and spec.history >= 2)[:max(free, 0)]
        elif self.derived == "none":
            names = ()
        else:
            names = tuple(n.strip() for n in self.derived.split(",") if n.strip())
        try:
            return dataclasses.replace(spec, derived=names)
        except BadInputError as exc:
            raise BadInputError(f"--derived: {str(exc).removeprefix('invalid spec: ')}") from None
    # Device setting carried in the model (FxConstants.probe_timeout_ns): TX events re-request
    # an RTT probe this long after the last request. Does not affect sampling or the trees.
    probe_timeout_ns: int = fmt.PROBE_TIMEOUT_NS_DEFAULT

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready options (the manifest's compile recipe: what ``rlcc-verify --policy`` recompiles with)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def from_dict(cls, data: Any) -> "CompileOptions":
        """The options ``to_dict`` wrote (BadInputError on a missing, unknown or mistyped field)."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        if isinstance(data, dict):  # manifests written before these options existed: their defaults
            data = {**{k: getattr(cls(), k) for k in _ADDED_LATER if k not in data}, **data}
        if not isinstance(data, dict) or set(data) != set(fields):
            keys = sorted(set(data) ^ set(fields)) if isinstance(data, dict) else ["(not an object)"]
            raise BadInputError(f"compile options: fields differ from this rlcc's ({', '.join(keys)})")
        values = dict(data)
        try:
            values["bar"] = FidelityBar(**values["bar"])
            values["eval_flows"] = tuple(int(n) for n in values["eval_flows"])
            values["validation_flows"] = tuple(int(n) for n in values["validation_flows"])
        except (TypeError, ValueError) as exc:
            raise BadInputError(f"compile options: {exc}") from None
        for name, value in values.items():
            default = getattr(cls(), name)
            if type(value) is not type(default) and not (isinstance(default, float) and type(value) is int):
                raise BadInputError(f"compile options: {name} must be {type(default).__name__}, got {value!r}")
        return cls(**values)

    @classmethod
    def quick(cls, **overrides: Any) -> "CompileOptions":
        """Small and short: a preview for tests and smoke runs (fidelity numbers are rougher, so
        the gate reports them without judging)."""
        base = dict(preview=True, samples=QUICK_SAMPLES, scenarios="many-to-one:2,many-to-one:64,long-short:8",
                    duration_scale=0.4, eval_flows=(64,), eval_duration_ms=60.0,
                    onpolicy_rounds=1, onpolicy_samples=3000, onpolicy_duration_ms=20.0, steady_duration_ms=6.0,
                    candidates=QUICK_CANDIDATES, validation_startup_ms=40.0)
        base.update(overrides)
        return cls(**base)

    def validate(self) -> None:
        if self.samples < 100:
            raise BadInputError(f"--samples must be >= 100, got {self.samples}")
        if self.dagger_rounds < 0 or self.onpolicy_rounds < 0:
            raise BadInputError("--dagger-rounds must be >= 0")
        if not 0 <= self.anchor_fraction <= 4:
            raise BadInputError("invalid anchor fraction")
        if not 0 <= self.perturb_fraction <= 4 or not 0 < self.holdout_fraction < 1:
            raise BadInputError("invalid perturbation or hold-out fraction")
        if self.equilibrium not in EQUILIBRIUM_MODES:
            raise BadInputError(f"--equilibrium must be one of {', '.join(EQUILIBRIUM_MODES)}, got {self.equilibrium!r}")
        if not self.validation_flows or set(self.validation_flows) & set(self.eval_flows) \
                or any(not 1 <= n <= 65536 for n in self.validation_flows):
            raise BadInputError("validation incasts must be 1..65536 flows and none of the report's flow counts")
        if not 1 <= self.candidates <= len(CANDIDATE_GRID):
            raise BadInputError(f"--candidates must be in 1..{len(CANDIDATE_GRID)}, got {self.candidates}")
        self.bar.validate()
        if not 1 <= self.probe_timeout_ns <= fmt.PROBE_TIMEOUT_NS_MAX:
            raise BadInputError(f"--probe-timeout-us must give 1 .. {fmt.PROBE_TIMEOUT_NS_MAX} ns, got {self.probe_timeout_ns} ns")
        FitConfig(trees=self.trees, depth=self.depth, budget_ops=self.budget_ops).max_trees()


# Options added after manifests with a compile recipe shipped (they load with the defaults).
_ADDED_LATER = ("validation_flows",)


@dataclasses.dataclass
class CompileResult:
    model: FxModel
    ensemble: FloatEnsemble
    fit: FitResult
    stats: QuantizeStats
    report: CompileReport | None  # None: compiled with measure=False


def compile_policy(
    policy: OnnxPolicy,
    options: CompileOptions = CompileOptions(),
    log: Log = lambda _msg: None,
    fits: FitsBudget | None = None,
    jobs: int = 1,
    progress: Progress = silent,
    measure: bool = True,
) -> CompileResult:
    """Distill ``policy`` into a fixed-point tree ensemble and measure it (see module doc).

    ``jobs``: worker processes for the simulations (results do not depend on it);
    ``progress``: how long stages report their progress (default: not at all); ``measure=False``:
    only the model (the simulations that feed the report alone are skipped, ``report`` is None;
    the model is the same bytes: ``rlcc-verify --policy`` recompiles this way)."""
    options.validate()
    runner = Runner(jobs)
    if not getattr(policy, "recurrent", False):
        return _compile(policy, options, log, fits, runner, progress, measure=measure)
    # A recurrent teacher: sample it once through the longest window the context holds,
    # choose the student's window on held-out decisions, distill through that window.
    widest = policy.windowed(window.max_window(policy.step_spec))
    visited = _sample_teacher(widest, options, log, runner, progress)
    train, held = sampling.split_holdout(visited, options.holdout_fraction, options.seed)
    log(f"recurrent teacher: choosing the student's window (1..{widest.spec.history} steps) on held-out decisions")
    choice = window.choose(train, held, widest.spec, options.student_spec, _fit_config(options))
    log(f"window: {choice.k} steps (held-out RMSE "
        + ", ".join(f"k={c.k}: {c.held_out_rmse:.4f}" for c in choice.candidates) + ")")
    result = _compile(policy.windowed(choice.k), options, log, fits, runner, progress,
                      window.sub_window(visited, widest.spec, choice.k), measure)
    return result if result.report is None else dataclasses.replace(result, report=dataclasses.replace(result.report, window=choice))


def check_on_suite(result: CompileResult, policy: OnnxPolicy, options: CompileOptions, latency_us: float,
                   log: Log = lambda _msg: None, jobs: int = 1, progress: Progress = silent,
                   nic: NicConfig | None = None) -> CompileResult:
    """Add the reduced suite on both topologies (``evaluate.suite_check``, the fixed point at its
    measured decision latency, or on ``nic``'s decision processor) to the report and judge the gate
    over every closed-loop table."""
    return add_suite_check(result, policy.factor, result.ensemble, options, latency_us, log, jobs, progress, nic=nic)


def add_suite_check(result, teacher, ensemble: FloatEnsemble | None, options: CompileOptions, latency_us: float,
                    log: Log, jobs: int, progress: Progress, keys=evaluate.SUITE_KEYS, who: str = "firmware",
                    nic: NicConfig | None = None):
    """``result`` (any backend's, with ``model`` and ``report``) with the reduced suite's table and the
    gate judged over it and the report's other closed-loop tables; ``keys``: the controllers run."""
    where = (f"on each NIC's {nic.cores} x {nic.threads} decision threads, {nic.decision_cycles} cycles at "
             f"{nic.clock_hz / 1e9:g} GHz per decision" if nic is not None else f"in {latency_us:g} us")
    log(f"closed loop: reduced suite on the single switch and the fat-tree ({who} decides {where})")
    runner = Runner(jobs)
    with progress("closed loop: reduced suite on both topologies", "sim-ms") as stage:
        table = evaluate.suite_check(teacher, ensemble, result.model, latency_us, options.seed, runner, stage, keys, nic)
    r = result.report
    extra = {}
    if getattr(r, "coverage", None) is not None:  # the int8 report has no coverage section
        gate_rows = coverage.rows([(coverage.GATE_STAGE, [pt.scenario for pt in _suite_points(options.seed)])])
        extra["coverage"] = _merge_gate(r.coverage, gate_rows)
    report = dataclasses.replace(r, closed_loop_suite=table, suite_latency_us=latency_us, **extra,
                                 gate=judge([r.closed_loop_steady, r.closed_loop, table], options.bar,
                                            preview=options.preview))
    return dataclasses.replace(result, report=report)


def _suite_points(seed: int) -> list:
    from rlcc.simulator.suite import reduced_suite

    return [dataclasses.replace(pt, scenario=dataclasses.replace(pt.scenario, initial_rate=pt.scenario.fair_rate()))
            for pt in reduced_suite(seed)]


def compile_coverage(options: CompileOptions) -> list[dict[str, Any]]:
    """Scales and regimes each stage of this compile covered (``rlcc.distill.coverage``), the
    gate's many-to-one tables included (the reduced suite is added with its check)."""
    sampled = [e.scenario for e in sampling.parse_scenarios(options.scenarios, options.seed, options.duration_scale)]
    stages: list[tuple[str, list]] = [("training: teacher samples", sampled)]
    if options.onpolicy_rounds:
        stages.append(("training: on-policy rounds", [e.scenario for e in _onpolicy_scenarios(options)]))
    if options.dagger_rounds:
        stages.append(("training: DAgger rounds", sampled))
    if options.candidates > 1:
        checks = select.validation_checks(options.seed, options.steady_duration_ms, options.validation_startup_ms,
                                          options.validation_flows)
        stages.append(("candidate validation", [evaluate.eval_scenario(n, c["duration_ms"], c["seed"], c["mode"])
                                                for c in checks for n in c["flows"]]))
    stages.append((coverage.GATE_STAGE, [evaluate.eval_scenario(n, d, options.seed, mode) for n in options.eval_flows
                                for d, mode in ((options.eval_duration_ms, evaluate.STARTUP),
                                                (options.steady_duration_ms, evaluate.STEADY))]))
    return coverage.rows(stages)


def _merge_gate(table: list[dict[str, Any]] | None, gate_rows: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """``table`` with the gate's rows for the same (topology, pattern, start) merged."""
    if table is None:
        return None
    out = [dict(r) for r in table]
    for g in gate_rows:
        same = next((r for r in out if r["stage"] == g["stage"] and
                     (r["topology"], r["pattern"], r["start"]) == (g["topology"], g["pattern"], g["start"])), None)
        if same is None:
            out.append(g)
        else:
            same["flows"] = sorted(set(same["flows"]) | set(g["flows"]))
    return out


def _fit_config(options: CompileOptions) -> FitConfig:
    return FitConfig(trees=options.trees, depth=options.depth, budget_ops=options.budget_ops, seed=options.seed)


def _sample_teacher(policy, options: CompileOptions, log: Log, runner: Runner, progress: Progress) -> Samples:
    """The teacher's closed-loop decisions over the sampling mix (recurrent teachers keep per-flow state)."""
    scenarios = sampling.parse_scenarios(options.scenarios, options.seed, options.duration_scale)
    log(f"sampling {options.samples} closed-loop decisions over {len(scenarios)} scenarios")
    with progress("sampling the teacher", "sim-ms") as stage:
        return sampling.closed_loop(functools.partial(teacher_controller, policy.factor, policy.spec, "teacher"),
                                    policy.factor, policy.spec, scenarios, options.samples, options.seed,
                                    runner=runner, stage=stage)


def _compile(policy: OnnxPolicy, options: CompileOptions, log: Log, fits: FitsBudget | None, runner: Runner,
             progress: Progress, visited: Samples | None = None, measure: bool = True) -> CompileResult:
    """``visited``: the teacher's closed-loop samples when already taken (recurrent teachers);
    ``measure``: see :func:`compile_policy`."""
    spec, teacher = policy.spec, policy.factor
    student = options.student_spec(spec)
    scenarios = sampling.parse_scenarios(options.scenarios, options.seed, options.duration_scale)
    config = _fit_config(options)
    if visited is None:
        visited = _sample_teacher(policy, options, log, runner, progress)
    train, held = sampling.split_holdout(visited, options.holdout_fraction, options.seed)
    n_tail = int(round(len(train) * options.perturb_fraction))
    n_anchor = int(round(len(train) * options.anchor_fraction))
    parts = [train]
    if n_tail:
        parts.append(sampling.perturb(train, teacher, spec, n_tail, options.seed + 1))
    if n_anchor:
        parts.append(sampling.anchors(spec, teacher, n_anchor, options.seed + 2))
    train = Samples.concat(parts)
    clamped = _clamp_report(policy, visited)
    factor_range = teacher_factor_range(policy, train.obs)
    eq = equilibrium.find(teacher, spec) if options.equilibrium == "ramps" else None
    ramps_note = "--equilibrium none" if eq is None else eq.reason

    def ramps_of(samples: Samples) -> tuple[FloatRamp, ...]:
        """The ramps fitted on the current training set (refitted as DAgger grows it)."""
        if eq is None:
            return ()
        return eq.ramps(teacher, options.seed + 3, samples.obs, samples.label, sampling.time_weights(spec, samples.raw))

    ramps = ramps_of(train)

    log(f"fitting <= {config.max_trees()} trees of depth {config.depth} on {len(train)} samples")
    summary_flows = (options.eval_flows[len(options.eval_flows) // 2],)
    base = CANDIDATE_GRID[0]
    with progress("fitting the trees", "tree") as stage:
        fit, model, stats = _fit_quantize(train, student, config, base, fits, policy, options, factor_range, ramps, stage, eq)
    rounds, teacher_steady = [], None
    if measure:
        round0 = evaluate.closed_loop(teacher, fit.ensemble, model, summary_flows, options.steady_duration_ms,
                                      options.seed, evaluate.STEADY, None, ("float_trees",), runner)
        teacher_steady = {name: row["teacher"] for name, row in round0.scenarios.items()}  # reused below
        rounds.append(_round_summary(0, "initial fit", fit.ensemble, model, held, None, round0))
    onpolicy = _onpolicy_scenarios(options)
    n_rounds = options.onpolicy_rounds + options.dagger_rounds
    for r in range(1, n_rounds + 1):
        full = r > options.onpolicy_rounds  # the --dagger-rounds: the whole sampling mix
        kind = "dagger (sampling scenarios)" if full else "on-policy (evaluation incasts)"
        driver_name = "the fixed-point model drives" if full else "the float trees drive"
        log(f"round {r}: {kind}: {driver_name}, the teacher labels")
        driver = (functools.partial(GoldenController, model) if full else
                  functools.partial(FloatTreesController, fit.ensemble, student, clamp=evaluate.factor_clamp(model)))
        with progress(f"round {r}/{n_rounds}: {kind.split(' (')[0]} sampling", "sim-ms") as stage:
            visited_by_student = sampling.closed_loop(
                driver, teacher, spec, scenarios if full else onpolicy,
                options.samples // 2 if full else options.onpolicy_samples, options.seed + 100 * r, ORIGIN_DAGGER,
                runner=runner, stage=stage,
            )
        on_policy = evaluate.fidelity(model, fit.ensemble, visited_by_student) if measure else None
        train = Samples.concat([train, visited_by_student])
        ramps = ramps_of(train)
        with progress(f"round {r}/{n_rounds}: refitting the trees", "tree") as stage:
            fit, model, stats = _fit_quantize(train, student, config, base, fits, policy, options, factor_range, ramps, stage, eq)
        if measure:
            summary = evaluate.closed_loop(teacher, fit.ensemble, model, summary_flows, options.steady_duration_ms,
                                           options.seed, evaluate.STEADY, teacher_steady, ("float_trees",), runner)
            rounds.append(_round_summary(r, kind, fit.ensemble, model, held, on_policy, summary))

    selection = None
    if options.candidates > 1:
        log(f"selecting among {options.candidates} candidate students in closed loop (validation incasts "
            f"{sorted(set(options.validation_flows) | set(select.VALIDATION_FLOWS))})")
        (fit, model, stats), selection = _select(train, student, config, fits, policy, options, factor_range,
                                                 ramps, (fit, model, stats), runner, progress, eq)
    if not measure:
        return CompileResult(model, fit.ensemble, fit, stats, None)

    log(f"closed loop: teacher vs float trees vs fixed point on many-to-one {list(options.eval_flows)}")
    with progress("closed loop: teacher vs float trees vs fixed point", "sim-ms") as stage:
        closed_loop, closed_loop_steady = evaluate.closed_loops(teacher, fit.ensemble, model, [
            {"flows": options.eval_flows, "duration_ms": options.eval_duration_ms, "seed": options.seed},
            {"flows": options.eval_flows, "duration_ms": options.steady_duration_ms, "seed": options.seed,
             "mode": evaluate.STEADY, "teacher_rows": teacher_steady},
        ], runner, stage)
    report = CompileReport(
        teacher=Teacher(
            path=policy.path.name,
            input_names=student.student_input_names(),
            clamped_fraction=clamped,
            factor_range={**factor_range.to_dict(), "spec_clamp": [spec.action.clamp_min, spec.action.clamp_max],
                          "clamp_q16": [model.constants.clamp_min_q16, model.constants.clamp_max_q16]},
        ),
        options=options.to_dict(),
        dataset=_dataset_summary(train, held),
        fit=Fit(trees_requested=fit.trees_requested, trees_budget=fit.trees_budget, trees=len(fit.ensemble.trees),
                depth=options.depth, budget_ops=options.budget_ops, constant_teacher=fit.constant_teacher,
                ramps=_ramps_summary(student, fit.ensemble),
                ramps_note=ramps_note),
        quantization=stats,
        fidelity=evaluate.fidelity(model, fit.ensemble, held),
        closed_loop=closed_loop,
        closed_loop_steady=closed_loop_steady,
        explainability=evaluate.explainability(teacher, fit.ensemble, model),
        sizes=evaluate.sizes(model),
        dagger=Dagger(rounds, _dagger_helped(rounds)),
        selection=selection,
        gate=judge([closed_loop_steady, closed_loop], options.bar, preview=options.preview),
        coverage=compile_coverage(options),
    )
    return CompileResult(model, fit.ensemble, fit, stats, report)


def _fit_quantize(train: Samples, spec, config: FitConfig, setting: CandidateSetting, fits: FitsBudget | None,
                  policy: OnnxPolicy, options: CompileOptions, factor_range: FactorRange,
                  ramps: tuple[FloatRamp, ...] = (), stage: Stage | None = None,
                  eq: equilibrium.Equilibrium | None = None):
    """Fit one candidate and quantize it; with ramps (``eq``: the teacher's fixed point) the pair
    is pinned to the teacher's factor there (``equilibrium.pin``)."""
    time = sampling.time_weights(spec, train.raw)
    boost = time ** setting.boost_power if setting.boost_power else None
    fit = fit_student(spec.student_obs(train.obs), train.label, dataclasses.replace(config, learning_rate=setting.learning_rate), fits,
                      weights=boost, leaf_weights=time ** setting.leaf_power, stage=stage, ramps=ramps)
    provenance = {
        "source": policy.path.name,
        "source_sha256": _sha256(policy.model_bytes),
        "trainer": "catboost",
        "trees": len(fit.ensemble.trees),
        "depth": config.depth,
        "seed": config.seed,
        "samples": len(train),
        "factor_range": factor_range.to_dict(),
        "candidate": setting.name,
    }
    model, stats = quantize(fit.ensemble, spec, provenance, options.probe_timeout_ns, (factor_range.min, factor_range.max))
    if ramps and eq is not None and eq.sites:
        fit, model, _ = equilibrium.pin(fit, model, spec, eq, policy.factor)
    return fit, model, stats


def _select(train: Samples, spec, config: FitConfig, fits: FitsBudget | None, policy: OnnxPolicy,
            options: CompileOptions, factor_range: FactorRange, ramps: tuple[FloatRamp, ...], first: tuple, runner: Runner,
            progress: Progress, eq: equilibrium.Equilibrium | None = None) -> tuple[tuple, Selection]:
    """Fit the candidates (the first is ``first``, already fitted), validate each in closed loop,
    keep the best (``rlcc.distill.select``). Fitting and validation are two stages: their work
    is in different units (trees, simulated ms) and the validation is most of the time."""
    settings = CANDIDATE_GRID[:options.candidates]
    fitted = [first]
    with progress(f"candidate students: fitting {len(settings) - 1} more", "tree") as stage:
        for setting in settings[1:]:
            fitted.append(_fit_quantize(train, spec, config, setting, fits, policy, options, factor_range, ramps, stage,
                                        eq))
    checks = select.validation_checks(options.seed, options.steady_duration_ms, options.validation_startup_ms,
                                      options.validation_flows)
    # The first candidate's checks run the teacher; every other candidate reuses those runs.
    batch = list(checks) + [{**c, "teacher_of": i, "ensemble": f.ensemble, "model": m}
                            for f, m, _ in fitted[1:] for i, c in enumerate(checks)]
    with progress(f"candidate students: closed-loop validation of {len(settings)}", "sim-ms") as stage:
        flat = evaluate.closed_loops(policy.factor, first[0].ensemble, first[1], batch, runner, stage)
    tables = [flat[i:i + len(checks)] for i in range(0, len(flat), len(checks))]
    candidates = [select.describe(s, t, options.bar) for s, t in zip(settings, tables)]
    best = select.choose(candidates)
    return fitted[best], Selection(select.suite_names(checks), candidates, candidates[best].name)


def _ramps_summary(spec: ObservationSpec, ensemble: FloatEnsemble) -> list[dict[str, Any]]:
    names = spec.student_input_names()
    return [{"input": names[r.input], "center": evaluate._r(r.center), "lo": evaluate._r(r.lo), "hi": evaluate._r(r.hi),
             "slope_below": evaluate._r(r.slope_below), "slope_above": evaluate._r(r.slope_above)} for r in ensemble.ramps]


def _onpolicy_scenarios(options: CompileOptions) -> list[sampling.ScenarioEntry]:
    """Short many-to-one incasts at the evaluation sizes, from line rate (the startup transient,
    deep congestion) and from the fair share (the equilibrium), under other seeds than the check."""
    out = []
    for n in options.eval_flows:
        for mode, dur in ((evaluate.STARTUP, options.onpolicy_duration_ms), (evaluate.STEADY, options.steady_duration_ms)):
            sc = evaluate.eval_scenario(n, dur, options.seed + 7 + n, mode)
            out.append(sampling.ScenarioEntry(f"onpolicy:{mode}:{n}", sc))
    return out


def _round_summary(r: int, kind: str, ensemble, model, held: Samples, on_policy, closed_loop: ClosedLoop) -> Round:
    """Fidelity on held-out teacher states, on the states the student visited, and one
    steady-state closed loop of the float trees (cheap; the teacher run is shared)."""
    return Round(r, kind, evaluate.fidelity(model, ensemble, held), on_policy, closed_loop)


def _dagger_helped(rounds: list[Round]) -> Helped | None:
    if len(rounds) < 2:
        return None
    first, last = rounds[0], rounds[-1]
    (name, row0), = first.closed_loop.scenarios.items()
    row1 = last.closed_loop.scenarios[name]
    gap0 = abs(row0["float_trees"].latency_rel_diff) + abs(row0["float_trees"].goodput_diff)
    gap1 = abs(row1["float_trees"].latency_rel_diff) + abs(row1["float_trees"].goodput_diff)
    return Helped(scenario=name, closed_loop_gap_round0=evaluate._r(gap0), closed_loop_gap_final=evaluate._r(gap1),
                  held_out_rmse_round0=first.held_out.float_vs_teacher_rmse,
                  held_out_rmse_final=last.held_out.float_vs_teacher_rmse, closed_loop_improved=bool(gap1 < gap0))


def _dataset_summary(train: Samples, held: Samples) -> Dataset:
    origins = sampling.ORIGIN_NAMES
    per_origin = {origins[o]: int(np.sum(train.origin == o)) for o in origins}
    per_scenario = {n: int(np.sum(train.scenario == i)) for i, n in enumerate(train.scenario_names)}
    return Dataset(len(train), len(held), per_origin, per_scenario)


def _clamp_report(policy: OnnxPolicy, samples: Samples) -> float:
    """Fraction of visited states where the teacher's mapped output lies outside the factor
    clamp (the labels are the clamped factors, exactly what the device applies)."""
    a = policy.spec.action
    factor = policy.spec.output_to_unclamped_factor(policy.predict_raw(samples.obs))
    return evaluate._r(np.mean((factor < a.clamp_min) | (factor > a.clamp_max)))


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
