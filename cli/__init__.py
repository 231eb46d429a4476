"""rlcc.cli: the console scripts (``rlcc-compile``, ``rlcc-verify``, ``rlcc-sim``, ``rlcc-train``,
``rlcc``): flags in; one-line errors, documented exit codes and printed outcomes out.
"""
