"""The layer chain as data: tests/test_layering.py enforces it, bench/readme_blocks.py renders it
into the README's Layout section (one source for both)."""

from __future__ import annotations

# Each stage imports only stages to its left.
CHAIN = ("core", "fxp", "simulator", "distill", "codegen", "verify", "kinds", "pipeline", "cli")
# Beside the chain: stage -> (the stage whose imports it may make, the first stage that may import it).
BESIDE = {"train": ("distill", "kinds")}
# Leaf libraries -> the stages they may import; the chain imports them from LEAVES_FROM up.
LEAVES = {"emulator": {"core"}, "templates": set(), "firmware_sdk_stub": {"core"}}
LEAVES_FROM = "codegen"
