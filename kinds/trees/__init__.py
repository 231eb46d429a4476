"""The distilled-trees kind (the default): ``rlcc.kinds.trees.kind``."""
