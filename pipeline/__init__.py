"""Compile and verify end to end: a request in, an outcome out, through the model kind's one
interface (``rlcc.kinds.base.ModelKind``); the CLI maps flags to requests and prints outcomes."""
