"""rlcc.simulator: a vectorized fluid datacenter simulator for RL congestion-control policies:
scenarios, single switch and multi-switch fabrics, controllers (DCQCN, Swift, HPCC, the policy,
compiled models in closed loop) and switch agents (per-queue ECN every interval).

    from rlcc.simulator import ManyToOne, PolicyController, simulate, TraceConfig
    result = simulate(ManyToOne(flows=1024, duration_ms=5), PolicyController("policy.onnx"),
                      trace=TraceConfig(capacity=100_000, stride=10))
    result.metrics["goodput"], result.trace.obs

See simulator/README.md for the model and its assumptions.
"""

from rlcc.simulator.controllers import (
    ConstantRate,
    Controller,
    Dcqcn,
    DcqcnParams,
    Decision,
    DecisionBatch,
    FactorController,
    HopTelemetry,
    Hpcc,
    HpccParams,
    PolicyController,
    Swift,
    SwiftParams,
    TickController,
    TickInfo,
    callable_controller,
)
from rlcc.simulator.engine import SimResult, simulate
from rlcc.simulator.metrics import jain
from rlcc.simulator.params import PfcParams
from rlcc.simulator.registry import make_controller
from rlcc.simulator.scenarios import (
    SCENARIOS, AllToAll, FlowTable, Incast, LongShort, ManyToOne, Network, OsuAllToAll, PoissonTrace, Scenario, TopologyConfig,
)
from rlcc.simulator.trace import Trace, TraceConfig, TraceRecorder

__all__ = [
    "AllToAll", "ConstantRate", "Controller", "Dcqcn", "DcqcnParams", "Decision", "DecisionBatch", "FactorController",
    "FlowTable", "HopTelemetry", "Hpcc", "HpccParams", "Incast", "LongShort", "ManyToOne", "Network", "OsuAllToAll", "PfcParams", "PoissonTrace", "TopologyConfig", "PolicyController",
    "SCENARIOS", "Scenario", "SimResult", "Swift", "SwiftParams", "TickController", "TickInfo", "Trace", "TraceConfig",
    "TraceRecorder", "callable_controller", "jain", "make_controller", "simulate",
]
