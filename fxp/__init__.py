"""rlcc.fxp."""
