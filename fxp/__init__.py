"""rlcc.fxp: the fixed-point tree model and int8 network, quantizer, golden model and test vectors
(observable targets); the switch agent's statistics collector and classifier semantics.
"""
