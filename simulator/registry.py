"""Controllers by name, for the CLI and JSON-driven runs."""

from __future__ import annotations

from rlcc.errors import BadInputError
from rlcc.recurrent import RecurrentPolicy, load_policy
from rlcc.simulator.controllers import Dcqcn, Hpcc, PolicyController, Swift
from rlcc.simulator.controllers.recurrent import RecurrentController
from rlcc.spec import ObservationSpec

CONTROLLERS = ("swift", "dcqcn", "hpcc", "policy")


def make_controller(name: str, policy: str | None = None, spec: ObservationSpec | None = None):
    """``swift``, ``dcqcn``, ``hpcc`` (needs per-hop telemetry from the engine), or ``policy`` (needs
    ``policy``: an ONNX file)."""
    if name == "swift":
        return Swift()
    if name == "dcqcn":
        return Dcqcn()
    if name == "hpcc":
        return Hpcc()
    if name == "policy":
        if not policy:
            raise BadInputError("controller 'policy' needs a policy file (--policy FILE.onnx)")
        loaded = load_policy(policy, spec)
        if isinstance(loaded, RecurrentPolicy):
            return RecurrentController(loaded, name=f"policy:{loaded.path.name}")
        return PolicyController(loaded)
    raise BadInputError(f"unknown controller {name!r} (known: {', '.join(CONTROLLERS)})")
