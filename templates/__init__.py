"""rlcc.templates."""
