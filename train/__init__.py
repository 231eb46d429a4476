"""rlcc.train: the RL-CC policy trainer (``rlcc-train``; analytic deterministic policy gradient,
numpy only; MLP and LSTM) and ACC's Double DQN switch agent (``--algo acc``).

Modules: ``mlp`` (network, manual backprop), ``adam`` (optimizer), ``config`` (run config),
``adpg`` (rollouts in the simulator and the ADPG gradient), ``trainer`` (the loop and its log),
``export`` (ONNX), ``lstm`` (recurrent policy: LSTM, BPTT), ``probe`` (explainability table),
``evaluate`` (acceptance metrics on unseen scenarios).
"""
