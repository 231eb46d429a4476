"""The switch agent in ``rlcc-sim`` (``--ecn-agent``): its teacher (a Q-network ONNX), its compiled
firmware (the golden classifier of a manifest) or one fixed ECN template of its table."""

from __future__ import annotations

from pathlib import Path

from rlcc.errors import BadInputError
from rlcc.kinds.switch_agent.codegen import load_switch_manifest
from rlcc.simulator.switch_agent import ClassifierAgent, QNetAgent, StaticEcn, WindowAgent
from rlcc.switch_policy import QNetPolicy


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
