"""The switch-agent compile pipeline on a hand-written teacher: sampling, DAgger, fit, gate."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from rlcc.kinds.switch_agent.distill import GateCheck, SwitchCompileOptions, SwitchFidelityBar, closed_loop, compile_switch_agent
from rlcc.kinds.switch_agent import report as switch_report
from rlcc.errors import BadInputError
from rlcc.fxp import switch_agent as fx
from rlcc.simulator.scenarios import Incast, PoissonTrace
from rlcc.switch_policy import QNetPolicy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from switch_teacher import default_spec, rule_qnet  # noqa: E402

SAMPLING = (Incast(senders=8, flows_per_sender=2, bursts=2, burst_interval_us=2000, duration_ms=4, seed=1),
            PoissonTrace(hosts=8, load=0.6, duration_ms=3, seed=2))
EVALUATION = (PoissonTrace(hosts=8, load=0.5, duration_ms=3, arrival_frac=0.5, seed=3),)


@pytest.fixture(scope="module")
def teacher(tmp_path_factory) -> QNetPolicy:
    return QNetPolicy(rule_qnet(tmp_path_factory.mktemp("q") / "q.onnx"))


@pytest.fixture(scope="module")
def compiled(teacher):
    return compile_switch_agent(teacher, SwitchCompileOptions(SAMPLING, EVALUATION, dagger_rounds=1))


@pytest.mark.slow
def test_compile_is_deterministic_and_learns_the_teacher(teacher, compiled):
    again = compile_switch_agent(teacher, SwitchCompileOptions(SAMPLING, EVALUATION, dagger_rounds=1))
    assert again.model == compiled.model and again.closed_loop == compiled.closed_loop
    assert compiled.holdout_agreement > 0.8 and compiled.fit.quantization_agreement == 1.0
    assert len(compiled.model.trees) <= 10 and compiled.model.max_depth <= 4
    assert sum(compiled.action_counts["teacher"]) == compiled.samples


@pytest.mark.slow
def test_report_has_every_agent_and_check(teacher, compiled):
    data = switch_report.to_dict(teacher.spec, compiled)
    md = switch_report.to_markdown(data)
    agents = {r["agent"] for r in data["closed_loop"]}
    assert agents == {"teacher", "firmware", f"static {teacher.spec.actions[0].label()}"}
    assert len(data["gate"]["checks"]) == 4 and ("passed" in md or "FAILED" in md)


@pytest.mark.slow
def test_the_teacher_as_its_own_firmware_passes_the_gate(teacher):
    """A classifier that reproduces the teacher's choices exactly (here: a constant teacher and
    its constant student) has zero differences, so every check passes; a constant student of a
    different template on a queue-sensitive scenario is caught."""
    from rlcc.class_trees import ClassEnsemble

    const = lambda c: ClassEnsemble(teacher.spec.input_width, teacher.spec.n_actions, (),
                                    tuple(0 if i == c else -1000 for i in range(teacher.spec.n_actions)), 0)
    rows, checks = closed_loop(teacher, const(0), EVALUATION, SwitchFidelityBar(), statics=(0,))
    static = [r for r in rows if r["agent"].startswith("static")][0]
    firmware = [r for r in rows if r["agent"] == "firmware"][0]
    assert {k: v for k, v in static.items() if k != "agent"} == {k: v for k, v in firmware.items() if k != "agent"}
    assert all(isinstance(c, GateCheck) for c in checks)
    deep = closed_loop(teacher, const(7), EVALUATION, SwitchFidelityBar(), statics=())[1]
    assert not all(c.passed for c in deep)  # a 640 KB Kmin everywhere queues far more than the teacher


@pytest.mark.slow
def test_bad_options_are_bad_input(teacher):
    fine = default_spec(interval_us=1.0)
    assert fine.check_sim_step(1000.0) == 1
    slow_net = Incast(senders=2, duration_ms=1, network=Incast().network.__class__(dt_ns=200_000.0))
    with pytest.raises(BadInputError, match="below the simulator step"):
        SwitchCompileOptions((slow_net,), EVALUATION).validate(teacher.spec)
    with pytest.raises(BadInputError, match="dagger"):
        SwitchCompileOptions(SAMPLING, EVALUATION, dagger_rounds=9).validate(teacher.spec)


@pytest.mark.slow
def test_student_decisions_are_the_golden_models(teacher, compiled):
    w = fx.initial_window(teacher.spec, 3)
    assert fx.decide(compiled.model, w).shape == (3,)
    assert np.isin(fx.decide(compiled.model, w), np.flatnonzero(np.asarray(compiled.action_counts["student"]) > 0)).all()


def test_report_json_is_the_same_when_a_float_differs_in_its_last_bits():
    """The two p99 figures of the ACC example as two CPUs (AVX2, AVX-512) computed them."""
    one = {"p99": 33.21843854281632, "rows": [{"p99": 22.15786393624642}], "nan": float("nan"), "n": 3}
    other = {"p99": 33.21843854281633, "rows": [{"p99": 22.157863936246425}], "nan": float("nan"), "n": 3}
    text = switch_report.to_json(one)
    assert text == switch_report.to_json(other)
    assert '"p99": 33.2184385428' in text and '"n": 3' in text and "NaN" in text
