"""Generated C and the runtime header are fixed points of the committed clang-format style
(``.clang-format``; the pinned PyPI ``clang-format`` wheel of the ``test`` extra). rlcc-compile
never runs clang-format: the templates emit formatted code, and this test keeps them honest. The
style leaves comments as written (ReflowComments: false), so their width is checked here too."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from codegen_models import MODELS

from rlcc import firmware_sdk_stub as sdk
from rlcc.codegen import TREE_STYLES, render_sources

REPO = Path(__file__).resolve().parents[2]
STYLE = REPO / ".clang-format"
COLUMN_LIMIT = int(re.search(r"^ColumnLimit:\s*(\d+)", STYLE.read_text(), re.M).group(1))


def _clang_format() -> str:
    exe = Path(sys.executable).with_name("clang-format")
    found = str(exe) if exe.is_file() else shutil.which("clang-format")
    if found is None:
        pytest.skip("the clang-format wheel is not installed (pip install -e '.[test]')")
    return found


def _formatted(text: str, name: str) -> str:
    proc = subprocess.run([_clang_format(), f"--style=file:{STYLE}", f"--assume-filename={name}"], input=text,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _too_wide(text: str) -> list[str]:
    return [f"line {n} ({len(line)} columns): {line[:60]}..." for n, line in enumerate(text.splitlines(), 1)
            if len(line) > COLUMN_LIMIT]


def _first_difference(a: str, b: str) -> str:
    for n, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), 1):
        if x != y:
            return f"line {n}:\n  emitted:   {x}\n  formatted: {y}"
    return "line count differs"


def test_runtime_header_is_formatted():
    text = sdk.runtime_header().read_text()
    assert _formatted(text, "rlcc_runtime.h") == text, _first_difference(text, _formatted(text, "rlcc_runtime.h"))


@pytest.mark.slow
@pytest.mark.parametrize("inline", [False, True])
@pytest.mark.parametrize("style", TREE_STYLES)
@pytest.mark.parametrize("fw_name", ["fw", "firmware"])
def test_generated_c_is_formatted(style, inline, fw_name):
    """Every test model; firmware names up to the default's length (a much longer --name can make a
    line clang-format would wrap: still valid C, just not a fixed point)."""
    for name, model in sorted(MODELS.items()):
        texts, _ = render_sources(model, name=fw_name, tree_style=style, inline_runtime=inline)
        for key, text in texts.items():
            got = _formatted(text, f"{name}_fw.{key}")
            assert got == text, f"{name} {style} .{key}: {_first_difference(text, got)}"
            assert not _too_wide(text), f"{name} {style} .{key}: {_too_wide(text)}"


def test_example_firmware_is_formatted():
    for path in sorted((REPO / "examples" / "firmware").glob("firmware.[ch]")):
        text = path.read_text()
        assert _formatted(text, path.name) == text, f"{path.name}: {_first_difference(text, _formatted(text, path.name))}"
        assert not _too_wide(text), f"{path.name}: {_too_wide(text)}"
