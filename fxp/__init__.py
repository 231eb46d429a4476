"""rlcc.fxp: the device models (the fixed-point tree model and the int8 network), quantizer, golden
model and its vector record; the switch agent's statistics collector and classifier semantics.
"""
