"""``--sdk doca`` code generation: the model part is the stub flavour's, byte for byte (one
template); the DOCA glue compiles warning-free against rlcc's DOCA contract headers, is a
clang-format fixed point, and the output directory carries INTEGRATION.md and the manifest's
``sdk`` entry. Bad flavour options fail with one line."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from codegen_build import ZIG_TARGET, compile_ok
from codegen_models import MODELS
from test_format import _first_difference, _formatted

from rlcc import firmware_sdk_stub as sdk
from rlcc.codegen import TREE_STYLES, generate, render_sources
from rlcc.codegen import sdk_flavours as fl
from rlcc.errors import BadInputError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hostcc import host_cc  # noqa: E402

WARN = ["-Wall", "-Wextra", "-Werror", "-Wconversion", "-pedantic", "-std=c11"]
MODEL_START = "/* ---- policy layout ---- */"


def _model_part(text: str) -> str:
    """The shared model section: from the policy layout to the end of the decision function."""
    start = text.index(MODEL_START)
    end = text.index("\n}\n", text.index("_decide(uint32_t c[RLCC_CTX_WORDS]")) + 3
    return re.sub(r"\n\{%.*", "", text[start:end])


def _params_section(text: str) -> str:
    return text[text.index("/* ---- parameters ---- */"):text.index("/* ---- one policy decision ---- */")]


@pytest.mark.parametrize("style", TREE_STYLES)
def test_model_part_is_the_stub_flavours(style):
    for name, model in sorted(MODELS.items()):
        stub, _ = render_sources(model, name="fw", tree_style=style)
        doca, _ = render_sources(model, name="fw", tree_style=style, sdk=fl.choose("doca", 5))
        params = _params_section(stub["c"])
        # the stub's parameter glue sits inside the model section; everything else is identical
        assert _model_part(stub["c"]).replace(params, "") == _model_part(doca["c"]).replace(_params_section(doca["c"]), ""), name
        assert _params_section(doca["c"]).startswith(params[:params.index("void user_init")]), name


def test_stub_rendering_ignores_the_flavour_machinery():
    """An explicit stub choice renders exactly the default (which tests/codegen/golden pins)."""
    model = MODELS["tiny"] if "tiny" in MODELS else next(iter(MODELS.values()))
    assert render_sources(model, name="fw")[0] == render_sources(model, name="fw", sdk=fl.choose("stub"))[0]


def test_doca_output_dir(tmp_path):
    model = next(iter(MODELS.values()))
    paths = generate(model, tmp_path, name="fw", sdk=fl.choose("doca", 3))
    data = json.loads(paths["manifest"].read_text())
    assert data["sdk"] == {"flavour": "doca", "slot": 3, "algo_index": 3}
    assert set(data["files"]) == {"c", "h", "INTEGRATION.md"}
    guide = paths["INTEGRATION.md"].read_text()
    assert "slot 3" in guide and "USER_PROGRAMMABLE_CC=1" in guide and "fw.c" in guide
    c = paths["c"].read_text()
    assert "void doca_pcc_dev_user_algo(" in c and "void user_algo(" not in c and "pcc_params" not in c
    assert "#define FW_DOCA_ALGO_SLOT 3u" in paths["h"].read_text()
    again = generate(model, tmp_path / "again", name="fw", sdk=fl.choose("doca", 3))
    for key in ("c", "h", "INTEGRATION.md", "manifest"):
        assert again[key].read_bytes() == paths[key].read_bytes(), key


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host", *ZIG_TARGET])
@pytest.mark.parametrize("algo_only", [False, True])
def test_doca_c_compiles_warning_free(tmp_path, target, algo_only):
    flags = [] if target == "host" else [*ZIG_TARGET[target], "-ffreestanding"]
    for name, model in sorted(MODELS.items()):
        for style in TREE_STYLES:
            paths = generate(model, tmp_path / f"{name}_{style}", name="fw", tree_style=style, sdk=fl.choose("doca", 1))
            extra = ["-DFW_ALGO_ONLY"] if algo_only else []
            compile_ok([*host_cc("zig"), *flags, *WARN, *extra, "-O2", f"-I{sdk.SDK_DIR}", f"-I{paths['c'].parent}",
                        "-c", paths["c"], "-o", tmp_path / f"{name}_{style}.o"])


@pytest.mark.slow
def test_doca_c_compiles_with_gcc(tmp_path):
    cc = host_cc("gcc")
    for name, model in sorted(MODELS.items()):
        paths = generate(model, tmp_path / name, name="fw", sdk=fl.choose("doca", 0))
        compile_ok([*cc, *WARN, "-O2", f"-I{sdk.SDK_DIR}", f"-I{paths['c'].parent}", "-c", paths["c"],
                    "-o", tmp_path / f"{name}.o"])


@pytest.mark.slow
@pytest.mark.parametrize("inline", [False, True])
@pytest.mark.parametrize("style", TREE_STYLES)
def test_doca_c_is_formatted(style, inline):
    for name, model in sorted(MODELS.items()):
        texts, _ = render_sources(model, name="firmware", tree_style=style, inline_runtime=inline, sdk=fl.choose("doca", 7))
        for key, text in texts.items():
            got = _formatted(text, f"{name}_fw.{key}")
            assert got == text, f"{name} {style} .{key}: {_first_difference(text, got)}"


@pytest.mark.parametrize("name, slot, message", [
    ("nvidia", None, "unknown SDK flavour 'nvidia'"),
    ("doca", 8, "--slot 8 is out of range"),
    ("doca", -1, "--slot -1 is out of range"),
    ("stub", 2, "--slot applies to --sdk doca only"),
])
def test_bad_choices(name, slot, message):
    with pytest.raises(BadInputError, match=re.escape(message)):
        fl.choose(name, slot)


def test_parameter_limit():
    choice = fl.choose("doca", 0)
    fl.check_param_count(choice, fl.DOCA_MAX_NUM_PARAMS_PER_ALGO)
    with pytest.raises(BadInputError, match="at most 30"):
        fl.check_param_count(choice, fl.DOCA_MAX_NUM_PARAMS_PER_ALGO + 1)
    fl.check_param_count(fl.choose("stub"), 31)  # the stub's own limit is its 32-word arrays


def test_manifest_round_trip():
    choice = fl.choose("doca", 6)
    assert fl.from_manifest({"sdk": choice.manifest_entry()}) == choice
    assert fl.from_manifest({}).flavour.name == "stub"
    with pytest.raises(BadInputError):
        fl.from_manifest({"sdk": {"flavour": "doca", "slot": 9}})
