"""rlcc.codegen: fixed-point tree ensemble -> C firmware for the PCC-style SDK, plus manifest; SDK
flavours (``sdk_flavours.py``).

Entry point: :func:`generate` (writes ``<name>.c``, ``<name>.h``, ``<name>.rlcc.json``);
:func:`render_sources` renders without writing. Templates live in ``rlcc.templates``.
"""

from rlcc.codegen.context import TREE_STYLES
from rlcc.codegen.generate import generate, render_sources

__all__ = ["TREE_STYLES", "generate", "render_sources"]
