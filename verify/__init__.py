"""rlcc.verify: cross-compilation, the one build-and-run service (``firmware_run.py``),
bit-exact verification against the golden model, cycle budgets, mutants and the symbolic proof.
"""
