"""Verifier tests share their test model through ``verify_models`` (importable from here)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
