"""Fixtures of the code generator tests: build generated firmware with the SDK stub and run it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
