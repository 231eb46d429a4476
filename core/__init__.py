"""rlcc: what every stage shares (the root package, folder ``core/``): version, exit codes, formats
(the one source of Q-scales and layouts), feature registry, targets, spec, ONNX policy (window and
recurrent), float tree IR; the switch-agent spec, Q-network loader and integer classifier IR.

rlcc compiles a trained RL congestion-control policy into verified NIC firmware. Pipeline (data
flows one way): policy -> samples -> trees -> fixed-point model -> C -> verification.
"""

__version__ = "0.1.0"
