"""Congestion controllers: the interface, spec-driven policies, and Swift/DCQCN references."""

from rlcc.simulator.controllers.base import Controller, Decision, DecisionBatch, TickController, TickInfo
from rlcc.simulator.controllers.constant import ConstantRate
from rlcc.simulator.controllers.dcqcn import Dcqcn, DcqcnParams
from rlcc.simulator.controllers.factor import FactorController, PolicyController, callable_controller
from rlcc.simulator.controllers.swift import Swift, SwiftParams

__all__ = [
    "ConstantRate", "Controller", "Decision", "DecisionBatch", "TickController", "TickInfo",
    "Dcqcn", "DcqcnParams", "FactorController", "PolicyController", "callable_controller",
    "Swift", "SwiftParams",
]
