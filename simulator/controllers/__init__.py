"""Congestion controllers: the interface, spec-driven policies, and Swift/DCQCN/HPCC references."""

from rlcc.simulator.controllers.base import (
    Controller,
    Decision,
    DecisionBatch,
    HopTelemetry,
    TickController,
    TickInfo,
)
from rlcc.simulator.controllers.constant import ConstantRate
from rlcc.simulator.controllers.dcqcn import Dcqcn, DcqcnParams
from rlcc.simulator.controllers.factor import FactorController, PolicyController, callable_controller
from rlcc.simulator.controllers.hpcc import Hpcc, HpccParams
from rlcc.simulator.controllers.swift import Swift, SwiftParams

__all__ = [
    "ConstantRate", "Controller", "Decision", "DecisionBatch", "HopTelemetry", "TickController", "TickInfo",
    "Dcqcn", "DcqcnParams", "FactorController", "Hpcc", "HpccParams", "PolicyController", "callable_controller",
    "Swift", "SwiftParams",
]
