"""rlcc.verify."""
