"""Generated int8-network C: warning-clean builds (host zig cc with UBSan and -Wconversion, gcc and
clang where installed, both RISC-V targets), bit-exact with the golden model on the host harness
and in the emulator."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rlcc.kinds.int8.codegen import SUPPORT, generate
from rlcc.codegen.sdk_flavours import choose
from rlcc.errors import BadInputError
from rlcc.kinds.int8.vectors import saturation_vectors
from rlcc.verify.generators import verification_set
from rlcc.targets import TARGET_NAMES
from rlcc.verify.check import verify_firmware

from codegen_build import build_host, compile_riscv, describe, mismatches, run_host

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from int8_models import NAMES, example  # noqa: E402


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = {}
    for name in NAMES:
        d = tmp_path_factory.mktemp(name)
        out[name] = generate(example(name)[2], d, source_info={"policy": f"{name}.onnx"})
    return out


@pytest.mark.slow
@pytest.mark.parametrize("cc", ["zig", "gcc", "clang"])
@pytest.mark.parametrize("name", NAMES)
def test_host_bit_exact_and_warning_clean(name, cc, generated, tmp_path):
    model = example(name)[2]
    exe = build_host(generated[name]["c"], tmp_path / f"{name}_{cc}", sanitize=True, cc=cc)
    vectors = verification_set(model, n_random=3000, model_vectors=saturation_vectors)[0]
    out = run_host(exe, vectors, tmp_path)
    bad = mismatches(out, vectors)
    assert len(bad) == 0, describe(out, vectors, bad)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGET_NAMES)
@pytest.mark.parametrize("name", NAMES)
def test_riscv_builds_and_verifies_in_emulator(name, target, generated, tmp_path):
    compile_riscv(generated[name]["c"], target, tmp_path / "fw.o")
    result = verify_firmware(generated[name]["c"], target=target, random_count=300, budget_ns=1e6, support=SUPPORT)
    assert result.bit_exact and result.mismatches == 0 and result.vectors > 1000
    assert result.context_bytes == 4 * example(name)[2].context_words


@pytest.mark.slow
def test_generated_c_is_integer_only_and_deterministic(generated, tmp_path):
    for name in NAMES:
        text = generated[name]["c"].read_text()
        assert "float" not in text and "double" not in text and "malloc" not in text
        assert max(len(line) for line in text.splitlines()) <= 120
        again = generate(example(name)[2], tmp_path / name, source_info={"policy": f"{name}.onnx"})
        assert again["c"].read_bytes() == generated[name]["c"].read_bytes()
        assert again["manifest"].read_bytes() == generated[name]["manifest"].read_bytes()


@pytest.mark.slow
def test_prove_is_refused_for_int8(generated):
    with pytest.raises(BadInputError, match="tree firmware only"):
        verify_firmware(generated["rlcc_mlp"]["c"], random_count=0, prove=True, support=SUPPORT)


@pytest.mark.slow
def test_the_trees_checks_refuse_int8_firmware_clearly(generated):
    """Without the int8 kind's support, verify_firmware would run the trees' coverage on it."""
    with pytest.raises(BadInputError, match="int8 firmware, and these are the trees' checks"):
        verify_firmware(generated["rlcc_mlp"]["c"], random_count=0)


def test_doca_flavour_is_refused(tmp_path):
    with pytest.raises(BadInputError, match="--backend int8"):
        generate(example("rlcc_mlp")[2], tmp_path, sdk=choose("doca"))
