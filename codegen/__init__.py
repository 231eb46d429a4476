"""rlcc.codegen."""
