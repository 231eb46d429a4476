"""rlcc.pipeline: compile and verify end to end: a request in, an outcome out, through the model
kind's one interface; output directories written atomically. The CLI maps flags to requests and
prints outcomes.
"""
