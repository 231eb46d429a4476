"""``rlcc-compile --backend int8``: read the float network, calibrate on the teacher's closed loop,
quantize, measure (fidelity and closed loop with the tree backend's gate). Deterministic for a
seed, like ``rlcc.distill.pipeline``.

Fidelity numbers: the factor RMSE of the int8 network vs the teacher on held-out closed-loop
decisions (an LSTM step from the teacher's own state, quantized: the per-step error), then the
closed loop, teacher vs the int8 network through the golden model, on many-to-one incasts
(``evaluate.closed_loops``) and, once the firmware's latency is measured, on the reduced suite
(``check_on_suite``), judged by ``rlcc.distill.gate``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any, Callable

import numpy as np

from rlcc import formats as fmt
from rlcc.distill import evaluate
from rlcc.distill.gate import FidelityVerdict, judge
from rlcc.kinds.int8.calibrate import calibrate
from rlcc.kinds.int8.graph import describe, read_network
from rlcc.kinds.int8.quantize import Calibration, int8_factors, quantize_net
from rlcc.parallel import Runner
from rlcc.distill.pipeline import CompileOptions, add_suite_check
from rlcc.distill.report_data import ClosedLoop
from rlcc.fxp.int8_net import Int8Net
from rlcc.progress import Progress, silent
from rlcc.simulator.nic import NicConfig

Log = Callable[[str], None]
HOLDOUT = 0.2
KEYS = ("teacher", "fixed_point")  # no float trees in this backend


@dataclasses.dataclass
class Int8Report:
    """What report.json / report.md of an int8 compile hold (``rlcc.kinds.int8.report``)."""

    teacher: dict[str, Any]
    network: str
    quantization: dict[str, Any]
    fidelity: dict[str, Any]
    sizes: dict[str, Any]
    closed_loop: ClosedLoop
    closed_loop_steady: ClosedLoop
    gate: FidelityVerdict
    closed_loop_suite: ClosedLoop | None = None
    suite_latency_us: float | None = None
    device: dict[str, Any] | None = None  # cycles and ns per decision (rlcc-verify)

    def tables(self) -> list[ClosedLoop]:
        return [t for t in (self.closed_loop_steady, self.closed_loop, self.closed_loop_suite) if t is not None]


@dataclasses.dataclass
class Int8Result:
    model: Int8Net
    report: Int8Report


def _split(calib: Calibration, seed: int) -> tuple[Calibration, Calibration]:
    order = np.random.default_rng(seed).permutation(len(calib))
    n_held = max(1, int(round(len(calib) * HOLDOUT)))
    return calib.subset(np.sort(order[n_held:])), calib.subset(np.sort(order[:n_held]))


def _r(v: float) -> float:
    return float(f"{float(v):.6g}")


def sizes(model: Int8Net) -> dict[str, Any]:
    """Table I numbers that do not need the emulator."""
    c = model.counts()
    return {**c, "operations": model.n_operations, "constant_bytes": model.constant_bytes(),
            "state_bytes": 4 * model.context_words, "context_bytes": fmt.CTX_BYTES,
            "recurrent_state_bytes": 4 * model.state_words, "window_bytes": 4 * model.history_words,
            "activation_bits": 8 if model.act_max == 127 else 16}


def compile_int8(policy: Any, options: CompileOptions, log: Log = lambda _m: None, jobs: int = 1,
                 progress: Progress = silent) -> Int8Result:
    """The int8 network of ``policy`` (an ``OnnxPolicy`` or ``RecurrentPolicy``) and its report."""
    options.validate()
    spec = policy.spec
    net = read_network(policy.path, spec, policy)
    log(f"network: {describe(net)}; calibrating on {options.samples} closed-loop teacher decisions")
    runner = Runner(jobs)
    with progress("calibrating on the teacher's closed loop", "sim-ms") as stage:
        calib = calibrate(policy, spec, options.scenarios, options.samples, options.seed, options.duration_scale,
                          net.lstm.h_index if net.lstm is not None else 0, runner, stage)
    train, held = _split(calib, options.seed)
    provenance = {"source": policy.path.name, "source_sha256": hashlib.sha256(policy.model_bytes).hexdigest(),
                  "network": describe(net), "seed": options.seed, "calibration_decisions": len(train)}
    log(f"quantizing ({len(train)} decisions; clip ranges searched on the factor error)")
    model, record = quantize_net(net, spec, train, options.probe_timeout_ns, provenance)
    err = int8_factors(model, held) - held.label
    fidelity = {"held_out_decisions": len(held), "rmse_vs_teacher": _r(np.sqrt(np.mean(err**2))),
                "max_abs_vs_teacher": _r(np.max(np.abs(err))), "mean_abs_vs_teacher": _r(np.mean(np.abs(err))),
                "per_step_teacher_state": net.lstm is not None}
    log(f"closed loop: teacher vs int8 network on many-to-one {list(options.eval_flows)}")
    teacher = policy if getattr(policy, "recurrent", False) else policy.factor
    with progress("closed loop: teacher vs int8 network", "sim-ms") as stage:
        startup, steady = evaluate.closed_loops(teacher, None, model, [
            {"flows": options.eval_flows, "duration_ms": options.eval_duration_ms, "seed": options.seed,
             "controllers": KEYS[1:]},
            {"flows": options.eval_flows, "duration_ms": options.steady_duration_ms, "seed": options.seed,
             "mode": evaluate.STEADY, "controllers": KEYS[1:]},
        ], runner, stage)
    report = Int8Report(
        teacher={"path": policy.path.name, "recurrent": bool(getattr(policy, "recurrent", False)),
                 "inputs": spec.input_names()},
        network=describe(net), quantization=record, fidelity=fidelity, sizes=sizes(model),
        closed_loop=startup, closed_loop_steady=steady,
        gate=judge([steady, startup], options.bar, preview=options.preview))
    return Int8Result(model, report)


def check_on_suite(result: Int8Result, policy: Any, options: CompileOptions, latency_us: float, log: Log = lambda _m: None,
                   jobs: int = 1, progress: Progress = silent, nic: NicConfig | None = None) -> Int8Result:
    """The reduced suite at the measured decision latency (or on ``nic``'s decision processor), added
    to the report and the gate."""
    return add_suite_check(result, policy.factor, None, options, latency_us, log, jobs, progress, KEYS, "int8 network", nic)