"""rlcc.kinds: the model kinds, one folder each (``trees/``, ``int8/``, ``switch_agent/``), each a
``rlcc.kinds.base.ModelKind`` (load, fit, lower, generate, verify, closed-loop check, report,
recompile) registered in ``rlcc.kinds.registry``; ``pcc.py`` is what the PCC-firmware kinds share.
"""
