"""rlcc.distill: sampling, CatBoost distillation into trees (window choice for recurrent teachers,
equilibrium ramps), closed-loop evaluation, the fidelity gate, the treelite reference and the
compile report.
"""
