"""rlcc.kinds: the model kinds, one folder each (``trees/``, ``int8/``, ``switch_agent/``): what a
kind adds to the generic stages below it (vectors, fitting, distillation, codegen context, report;
the switch agent's check, proof and mutants).
"""
