"""rlcc.distill."""
