"""rlcc: compile a trained RL congestion-control policy into verified NIC firmware.

Pipeline (data flows one way): policy -> samples -> trees -> fixed-point model -> C -> verification.
"""

__version__ = "0.1.0"
