"""Fixtures of the code generator tests: generated firmware for the test models, built once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from codegen_build import build_host  # noqa: E402
from codegen_models import MODELS  # noqa: E402

from rlcc.codegen import TREE_STYLES  # noqa: E402
from rlcc.kinds.pcc import generate_firmware  # noqa: E402

@pytest.fixture(scope="session")
def models():
    return MODELS


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    """``generated(model_name, style)`` -> paths of the generated files, the manifest with its pinned vectors
    as a compile writes it (cached per session)."""
    root = tmp_path_factory.mktemp("codegen")
    cache: dict[tuple[str, str], dict[str, Path]] = {}

    def get(name: str, style: str = "oblivious") -> dict[str, Path]:
        if (name, style) not in cache:
            assert style in TREE_STYLES
            ident = f"{name}_{style.replace('-', '_')}"  # a C identifier
            cache[(name, style)] = generate_firmware(MODELS[name], root / ident, name=ident,
                                                     tree_style=style, source_info={"test_model": name})
        return cache[(name, style)]

    return get


@pytest.fixture(scope="session")
def host_exe(generated, tmp_path_factory):
    """``host_exe(model_name, style, sanitize=False, cc="zig")`` -> hosted harness executable (cached)."""
    root = tmp_path_factory.mktemp("codegen_host")
    cache: dict[tuple[str, str, bool, str], Path] = {}

    def get(name: str, style: str = "oblivious", sanitize: bool = False, cc: str = "zig") -> Path:
        key = (name, style, sanitize, cc)
        if key not in cache:
            suffix = f"_{cc}" + ("_san" if sanitize else "")
            cache[key] = build_host(generated(name, style)["c"], root / f"{name}_{style}{suffix}", sanitize, cc)
        return cache[key]

    return get
