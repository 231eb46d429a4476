"""rlcc.verify: cross-compilation, the one build-and-run service (``firmware_run.py``), the test
vectors (generated from the model: observable targets, boundaries, random, sequences), bit-exact
verification against the golden model, cycle budgets, mutants, the symbolic proof and provenance.
"""
