"""Switch-agent code generation (rlcc.kinds.switch_agent.codegen): deterministic output, strict
builds for both targets, clang-format fixed point, the manifest, and bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from codegen_build import WARN, ZIG_TARGET

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "verify"))
from switch_models import paper_spec, random_ensemble  # noqa: E402

from rlcc import firmware_sdk_stub as sdk  # noqa: E402
from rlcc.class_trees import ClassEnsemble, ClassTree, IntSplit  # noqa: E402
from rlcc.kinds.switch_agent.codegen import (  # noqa: E402
    KIND, generate_switch_firmware, load_switch_manifest, render_switch_sources)
from rlcc.errors import BadInputError  # noqa: E402
from rlcc.verify.toolchain import find_compiler  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SPEC = paper_spec()
MODEL = random_ensemble(SPEC, seed=7)


def test_deterministic_and_manifest(tmp_path):
    a = generate_switch_firmware(SPEC, MODEL, tmp_path / "a", "rv32imc", source_info={"teacher": "q.onnx"})
    b = generate_switch_firmware(SPEC, MODEL, tmp_path / "b", "rv32imc", source_info={"teacher": "q.onnx"})
    for key in ("c", "h", "manifest"):
        assert a[key].read_bytes() == b[key].read_bytes(), key
    data, spec, model = load_switch_manifest(a["manifest"])
    assert data["kind"] == KIND and data["target"] == "rv32imc" and data["source_info"] == {"teacher": "q.onnx"}
    assert spec == SPEC and model == MODEL
    assert len(data["threshold_provenance"]) == len(MODEL.trees)
    text = a["c"].read_text()
    assert "float" not in text and "double" not in text and "malloc" not in text
    assert "teacher: q.onnx" in text


def test_thresholds_are_named_unsigned_constants():
    spec = paper_spec()
    trees = (ClassTree((IntSplit(0, -1), IntSplit(8, 4_000_000_000), IntSplit(9, 65536)), tuple((0,) * 8 for _ in range(8))),)
    model = ClassEnsemble(spec.input_width, 8, trees, (0,) * 8, 0)
    text = render_switch_sources(spec, model)[0]["c"]
    assert "#define FIRMWARE_THR_0_1 UINT32_C(4000000000) /* qlen[t] > 4000000000 bytes */" in text
    assert "leaf = 1u; /* level 0: always true */" in text
    assert "leaf |= (uint32_t)(x[FIRMWARE_IN_QLEN_T0] > FIRMWARE_THR_0_1) << 1;" in text
    assert "THR_0_2" not in text and "never true" in text  # tx_util > 1.0 cannot happen


@pytest.mark.parametrize("target", sorted(ZIG_TARGET))
@pytest.mark.parametrize("kw", [{}, dict(history=1, features=("qlen",))])
def test_strict_build(tmp_path, target, kw):
    """-Wall -Wextra -Werror -Wconversion -std=c11 for RV64IMAC and RV32IMC (no unused helpers)."""
    spec = paper_spec(**kw)
    paths = generate_switch_firmware(spec, random_ensemble(spec, seed=2), tmp_path, target)
    proc = subprocess.run([*find_compiler(), *ZIG_TARGET[target], "-O2", "-ffreestanding", *WARN,
                           f"-I{sdk.SDK_DIR}", f"-I{tmp_path}", "-c", str(paths["c"]), "-o", str(tmp_path / "fw.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_clang_format_fixed_point():
    exe = Path(sys.executable).with_name("clang-format")
    found = str(exe) if exe.is_file() else shutil.which("clang-format")
    if found is None:
        pytest.skip("clang-format is not installed")
    for key, text in render_switch_sources(SPEC, MODEL)[0].items():
        proc = subprocess.run([found, f"--style=file:{REPO / '.clang-format'}", f"--assume-filename=fw.{key}"],
                              input=text, capture_output=True, text=True, timeout=120)
        assert proc.stdout == text, key


def test_bad_input(tmp_path):
    wrong = random_ensemble(paper_spec(history=2), seed=1)
    with pytest.raises(BadInputError, match="inputs"):
        generate_switch_firmware(SPEC, wrong, tmp_path)
    paths = generate_switch_firmware(SPEC, MODEL, tmp_path)
    data = json.loads(paths["manifest"].read_text())
    data["model"]["trees"][0]["splits"][0][0] = 999
    paths["manifest"].write_text(json.dumps(data))
    with pytest.raises(BadInputError, match="out of range"):
        load_switch_manifest(paths["manifest"])
