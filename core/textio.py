"""Reading the user's files: bounded in size, JSON parsed strictly. Every file rlcc reads on a
user's behalf (specs, policies, manifests, scenarios, topologies, CDFs, configs, profiles)
goes through here, so ``--spec /dev/zero`` or a 10 000-deep ``[[[...`` is a one-line bad
input (exit 3), not a MemoryError or RecursionError (exit 1)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from rlcc.errors import BadInputError

MIB = 1 << 20
# JSON inputs: the largest rlcc writes (a firmware manifest with its test vectors) is well under
# 1 MiB; 64 MiB leaves room for large suites and bounds the memory a wrong file can take.
MAX_JSON_BYTES = 64 * MIB
# Text inputs (flow-size CDFs, C sources): a CDF is a few hundred lines, generated C a few hundred KB.
MAX_TEXT_BYTES = 16 * MIB
# ONNX policies: a NIC policy's weights are kilobytes; protobuf itself refuses 2 GiB.
MAX_ONNX_BYTES = 256 * MIB
# JSON nesting: rlcc's formats nest at most ~6 levels; deeper is not an rlcc file, and Python's
# parser would hit the recursion limit (RecursionError) near 1000.
MAX_JSON_DEPTH = 64


class InputFileError(BadInputError):
    """A user file that cannot be read or parsed. ``reason`` is the message without the file's
    name, for callers that word the error their own way."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def read_bytes(path: str | os.PathLike, what: str, limit: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them. Any kind of file (a pipe from ``<(...)``
    too): the read stops at ``limit + 1`` bytes, so ``/dev/zero`` is refused, not swallowed."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputFileError(f"cannot read {what} {path}: {reason}", reason) from None
    if len(data) > limit:
        reason = f"larger than {limit // MIB} MiB" if limit >= MIB else f"larger than {limit} bytes"
        raise InputFileError(f"cannot read {what} {path}: {reason}", reason)
    return data


def read_text(path: str | os.PathLike, what: str, limit: int = MAX_TEXT_BYTES) -> str:
    """``read_bytes`` decoded as UTF-8."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text (byte {exc.start})"
        raise InputFileError(f"cannot read {what} {path}: {reason}", reason) from None


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is out of range")
    return value


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def parse_json(text: str | bytes, what: str, source: str | os.PathLike) -> Any:
    """Strict JSON: no NaN/Infinity, no number that overflows a float, at most ``MAX_JSON_DEPTH``
    levels. Anything else is an InputFileError ``invalid WHAT in SOURCE: not JSON (...)``."""
    try:
        data = json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError:
        reason = f"nested deeper than {MAX_JSON_DEPTH} levels"
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    else:
        if _depth(data) <= MAX_JSON_DEPTH:
            return data
        reason = f"nested deeper than {MAX_JSON_DEPTH} levels"
    raise InputFileError(f"invalid {what} in {source}: not JSON ({reason})", f"not JSON ({reason})")


def load_json(path: str | os.PathLike, what: str, limit: int = MAX_JSON_BYTES) -> Any:
    """``parse_json`` of the file ``path`` read with ``read_bytes``."""
    return parse_json(read_bytes(path, what, limit), what, Path(path))
