"""rlcc.firmware_sdk_stub: a PCC-style NIC congestion-control firmware SDK stub (headers, runtime,
harness), the DOCA PCC contract headers and harness adapter (``--sdk doca``) and the switch SDK
stub for switch-agent firmware.

C side (package data in this folder): ``pcc_sdk.h`` (API, includes ``pcc_fxp.h``),
``rlcc_runtime.h`` (the model-independent runtime of rlcc-generated firmware),
``pcc_runtime.c`` (parameter/counter storage, service stubs), the table-driven harness
(``pcc_harness.h`` layout, ``harness_core.c`` loop, ``harness.c`` + ``crt0.S`` + ``link.ld``
for bare-metal RISC-V, ``harness_host.c`` for a hosted build) and ``examples/rtt_template.c``.
The switch SDK stub for switch-agent firmware: ``switch_sdk.h``, ``switch_runtime.c`` and its
harness ``switch_harness.h``/``.c`` (Python layout: :mod:`~rlcc.firmware_sdk_stub.switch_layout`).
Python side: :mod:`rlcc.firmware_sdk_stub.harness_layout` packs/unpacks the harness tables.

This module only locates files; compiling is rlcc.verify.toolchain's job.
"""

from __future__ import annotations

from pathlib import Path

from rlcc.errors import BadInputError
from rlcc.targets import TARGET_NAMES

SDK_DIR: Path = Path(__file__).resolve().parent
INCLUDE_DIR: Path = SDK_DIR
EXAMPLES_DIR: Path = SDK_DIR / "examples"

BARE_METAL_TARGETS: tuple[str, ...] = TARGET_NAMES
HOST_TARGET = "host"
TARGETS: tuple[str, ...] = BARE_METAL_TARGETS + (HOST_TARGET,)

_COMMON_SOURCES = ("harness_core.c", "pcc_runtime.c")
_BARE_METAL_SOURCES = ("crt0.S", "harness.c") + _COMMON_SOURCES
_HOST_SOURCES = ("harness_host.c",) + _COMMON_SOURCES
_SWITCH_SOURCES = ("crt0.S", "switch_harness.c", "switch_runtime.c")


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise BadInputError(f"unknown SDK target {target!r}; expected one of {', '.join(TARGETS)}")


def header_path() -> Path:
    """The SDK header user algorithms include (``#include "pcc_sdk.h"``)."""
    return SDK_DIR / "pcc_sdk.h"


def runtime_header() -> Path:
    """The runtime of rlcc-generated firmware (``#include "rlcc_runtime.h"``; RLCC_RUNTIME_VERSION)."""
    return SDK_DIR / "rlcc_runtime.h"


def include_dirs() -> list[Path]:
    """Include directories for compiling against the SDK (``-I`` each)."""
    return [INCLUDE_DIR]


def runtime_sources(target: str) -> list[Path]:
    """Runtime + harness sources to compile together with a user algorithm for ``target``.

    ``rv32imc`` / ``rv64imac``: crt0.S, harness.c, harness_core.c, pcc_runtime.c (bare metal,
    link with :func:`linker_script`). ``host``: harness_host.c, harness_core.c, pcc_runtime.c.
    """
    _check_target(target)
    names = _HOST_SOURCES if target == HOST_TARGET else _BARE_METAL_SOURCES
    return [SDK_DIR / n for n in names]


def switch_header_path() -> Path:
    """The switch SDK stub's header (``#include "switch_sdk.h"``): switch-agent firmware's interface."""
    return SDK_DIR / "switch_sdk.h"


def switch_runtime_sources(target: str) -> list[Path]:
    """Bare-metal sources to link with switch-agent firmware: crt0.S, the switch harness and the
    switch SDK stub's services and dispatcher (link with :func:`linker_script`)."""
    _check_target(target)
    if target == HOST_TARGET:
        raise BadInputError("the switch SDK stub has a bare-metal harness only")
    return [SDK_DIR / n for n in _SWITCH_SOURCES]


def linker_script(target: str) -> Path:
    """Linker script of a bare-metal target (one script serves rv32 and rv64)."""
    _check_target(target)
    if target == HOST_TARGET:
        raise BadInputError("the hosted build uses the system linker: no linker script")
    return SDK_DIR / "link.ld"


def example_source(name: str = "rtt_template") -> Path:
    """Path of an example algorithm (``examples/<name>.c``)."""
    path = EXAMPLES_DIR / f"{name}.c"
    if not path.is_file():
        raise BadInputError(f"no SDK example named {name!r} in {EXAMPLES_DIR}")
    return path


__all__ = [
    "SDK_DIR",
    "INCLUDE_DIR",
    "EXAMPLES_DIR",
    "BARE_METAL_TARGETS",
    "HOST_TARGET",
    "TARGETS",
    "header_path",
    "runtime_header",
    "include_dirs",
    "runtime_sources",
    "switch_header_path",
    "switch_runtime_sources",
    "linker_script",
    "example_source",
]
