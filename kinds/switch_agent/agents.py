"""The switch agent in the simulator: its compiled firmware as an agent (:class:`ClassifierAgent`,
the golden classifier), and ``rlcc-sim --ecn-agent``'s choice of agent: the teacher (a Q-network
ONNX), the firmware (a manifest) or one fixed ECN template of its table."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlcc.class_trees import ClassEnsemble
from rlcc.errors import BadInputError
from rlcc.fxp import switch_agent as fx
from rlcc.kinds.switch_agent.codegen import load_switch_manifest
from rlcc.simulator.switch_agent import QNetAgent, StaticEcn, WindowAgent
from rlcc.switch_policy import QNetPolicy
from rlcc.switch_spec import SwitchAgentSpec


class ClassifierAgent(WindowAgent):
    """The compiled trees: the golden model's integer classifier on the integer window."""

    name = "firmware"

    def __init__(self, spec: SwitchAgentSpec, model: ClassEnsemble) -> None:
        super().__init__(spec)
        self.model = model

    def choose(self, window: np.ndarray) -> np.ndarray:
        return fx.decide(self.model, window)


def ecn_agent(path: str | None, static: int | None) -> WindowAgent | None:
    """The switch agent of --ecn-agent / --ecn-static (None without --ecn-agent)."""
    if path is None:
        if static is not None:
            raise BadInputError("--ecn-static needs --ecn-agent (whose action table it indexes)")
        return None
    p = Path(path)
    if p.is_dir():
        found = sorted(p.glob("*.rlcc.json"))
        if not found:
            raise BadInputError(f"--ecn-agent {path}: no *.rlcc.json firmware manifest in the directory")
        p = found[0]
    if p.suffix == ".json":
        _, spec, model = load_switch_manifest(p)
        agent = ClassifierAgent(spec, model)
    else:
        agent = QNetAgent(QNetPolicy(p))
    if static is None:
        return agent
    if not 0 <= static < agent.spec.n_actions:
        raise BadInputError(f"--ecn-static must be in 0..{agent.spec.n_actions - 1}, got {static}")
    return StaticEcn(agent.spec, static)
