"""rlcc.pipeline: compile and verify end to end through one model-kind interface; the CLI maps flags
to a request and prints the outcome.
"""
