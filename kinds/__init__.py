"""The model kinds: the distilled trees, the int8 network and ACC's switch agent, one folder each,
each a ``rlcc.kinds.base.ModelKind`` registered in ``rlcc.kinds.registry``."""
