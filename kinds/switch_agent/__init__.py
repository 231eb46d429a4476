"""ACC's switch agent (ECN tuner) as a kind (``rlcc.kinds.switch_agent.kind``)."""
