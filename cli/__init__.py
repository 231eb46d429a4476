"""rlcc.cli."""
