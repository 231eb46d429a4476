"""rlcc.simulator."""
