"""Rendered C: deterministic, reviewed golden text, warning-free for host and RISC-V, freestanding.

Golden files: ``tests/codegen/golden/`` holds the C rendered for ``tiny_model()``. After an
intended template change refresh them with ``RLCC_UPDATE_GOLDEN=1 pytest tests/codegen`` and
review the diff.
"""

from __future__ import annotations

import difflib

import os
import re
from pathlib import Path

import pytest
from codegen_build import WARN, ZIG_TARGET, compile_ok, compile_riscv, host_cc
from codegen_models import MODELS, SYNTHETIC_SPEC, random_model, tiny_model
from elftools.elf.elffile import ELFFile

from rlcc import firmware_sdk_stub as sdk
from rlcc import features as vocab
from rlcc.codegen import TREE_STYLES, generate, manifest, render_sources
from rlcc.verify.generators import pinned_vectors
from rlcc.errors import BadInputError

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.mark.parametrize("style", [s for s in TREE_STYLES if s not in ("bitmask-per-tree", "bitmask-branchfree")])
def test_golden_text(style):
    texts, _ = render_sources(tiny_model(), name="tiny", tree_style=style, source_info={"model": "tiny_model"})
    for key, text in texts.items():
        path = GOLDEN / f"tiny_{style}.{key}"
        if os.environ.get("RLCC_UPDATE_GOLDEN") == "1":
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, newline="\n")
        assert path.read_text() == text, f"{path.name} changed; refresh with RLCC_UPDATE_GOLDEN=1 and review"


def test_bitmask_styles_differ_only_in_searches():
    """The tiny model has no input with more cuts than the compare-sum limit, so the two bit-parallel
    styles that read one tree per lookup render it the same but for the header line naming the style
    (no golden text of their own)."""
    bitmask, _ = render_sources(tiny_model(), name="tiny", tree_style="bitmask-per-tree")
    flat, _ = render_sources(tiny_model(), name="tiny", tree_style="bitmask-branchfree")
    assert bitmask["h"] == flat["h"]
    a, b = bitmask["c"].splitlines(), flat["c"].splitlines()
    changed = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    assert len(changed) == 1  # one block of lines: the header's (wrapped) paragraph naming the style
    _, i1, i2, j1, j2 = changed[0]
    assert a[i1].startswith(" * Trees: bit-parallel (") and b[j1].startswith(" * Trees: bit-parallel, branch-free (")
    assert all(line.startswith(" * ") for line in a[i1:i2] + b[j1:j2])


@pytest.mark.slow
def test_byte_identical_for_same_inputs(tmp_path):
    model = MODELS["all_features"]
    a = generate(model, tmp_path / "a", name="fw", source_info={"k": "v"})
    b = generate(model, tmp_path / "b", name="fw", source_info={"k": "v"})
    for key in a:
        assert a[key].read_bytes() == b[key].read_bytes(), key


@pytest.mark.slow
@pytest.mark.parametrize("style", TREE_STYLES)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_warnings_as_errors_host_and_riscv(name, style, generated, tmp_path):
    c_file = generated(name, style)["c"]
    compile_ok([*host_cc("zig"), *WARN, "-pedantic", "-O2", f"-I{sdk.SDK_DIR}", f"-I{c_file.parent}", "-c", c_file,
                "-o", tmp_path / "host.o"])
    for target in ZIG_TARGET:
        obj = compile_riscv(c_file, target, tmp_path / f"{target}.o")
        with open(obj, "rb") as fh:
            symtab = ELFFile(fh).get_section_by_name(".symtab")
            undefined = {s.name for s in symtab.iter_symbols() if s["st_shndx"] == "SHN_UNDEF" and s.name}
            defined = {s.name for s in symtab.iter_symbols()
                       if s["st_shndx"] != "SHN_UNDEF" and s["st_info"]["bind"] == "STB_GLOBAL"}
        # no libcalls (soft-float, 64-bit division, memcpy...): only the SDK's parameter storage
        assert undefined <= {"pcc_params"}, undefined
        assert defined == {"user_algo", "user_init", "user_set_algo_params"}


@pytest.mark.slow
@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_warnings_as_errors_system_compilers(cc, generated, tmp_path):
    """gcc's and clang's own warnings (-pedantic) on every generated source, when installed."""
    cmd = host_cc(cc)
    for name in sorted(MODELS):
        for style in TREE_STYLES:
            c_file = generated(name, style)["c"]
            compile_ok([*cmd, *WARN, "-pedantic", "-O2", f"-I{sdk.SDK_DIR}", f"-I{c_file.parent}", "-c", c_file,
                        "-o", tmp_path / f"{name}_{style.replace('-', '_')}.o"])


@pytest.mark.slow
def test_source_is_freestanding_and_documented():
    texts, ctx = render_sources(MODELS["all_features"], name="fw", tree_style="oblivious")
    c = texts["c"]
    assert set(re.findall(r'#include [<"]([^>"]+)[>"]', c)) == {"rlcc_runtime.h", "fw.h"}
    code = re.sub(r"/\*.*?\*/", "", c, flags=re.S)
    assert not re.search(r"\b(float|double|malloc|free)\b", code)
    assert ctx["model_sha256"] in c and "rlcc " in c
    data = manifest.build(MODELS["all_features"], ctx, {}, pinned_vectors(MODELS["all_features"]))
    for t, tree in enumerate(MODELS["all_features"].trees):
        for k, s in enumerate(tree.splits):  # the C shows the real value, the manifest the provenance
            bits = vocab.get(MODELS["all_features"].spec.features[s.input % 6].name).frac_bits
            assert f"#define FW_THR_{t}_{k} INT32_C({s.threshold}) /* " in c and f"{s.threshold / 2**bits:.6g} */" in c
            assert f"{s.op} {s.threshold} (Q" in data["threshold_provenance"][t][k] and repr(s.border) in data["threshold_provenance"][t][k]
    assert "_Static_assert(RLCC_CTX_HISTORY + FW_HISTORY_WORDS <= RLCC_CTX_WORDS" in c
    assert "round(2^32 / 12000)" in texts["h"] and "beta = 1.25 -> round(1.25 * 2^16)" in texts["h"]


def test_oblivious_form_is_branch_free():
    texts, _ = render_sources(random_model(SYNTHETIC_SPEC, n_trees=4, depth=5), name="fw", tree_style="oblivious")
    body = texts["c"].split("static inline int32_t fw_eval_ensemble", 1)[1].split("\n}\n", 1)[0]
    assert "if" not in re.sub(r"/\*.*?\*/", "", body) and "?" not in body
    assert body.count("idx |= (uint32_t)(x[") + body.count("idx = (uint32_t)(x[") == 20


def test_bad_arguments():
    with pytest.raises(BadInputError):
        render_sources(tiny_model(), tree_style="switch")


@pytest.mark.parametrize("style", ["bitmask", "bitmask-branchfree"])
def test_bitmask_forms_name_every_cut(style):
    """The bit-parallel forms: no branch in the ensemble's sum, one search per input with cuts, one
    leaf lookup per tree, and every split's threshold a named cut whose comment names the split.
    The branch-free form has no branch in its searches either; the default's searches are nested
    comparisons with the cut constants, each outcome returning its input's word of split bits."""
    model = random_model(SYNTHETIC_SPEC, n_trees=4, depth=5)
    texts, ctx = render_sources(model, name="fw", tree_style=style)
    c = texts["c"]
    body = c.split("static inline int32_t fw_eval_ensemble", 1)[1].split("\n}\n", 1)[0]
    code = re.sub(r"/\*.*?\*/", "", body)
    assert "if" not in code and "?" not in code
    assert code.count("sum += fw_tables.leaves[") == len(model.trees)
    for t, tree in enumerate(model.trees):
        for k, s in enumerate(tree.splits):
            cut = s.threshold if s.op == ">" else s.threshold - 1
            assert re.search(rf"/\* [^\n]*tree {t} split {k}\b[^\n]*\*/\n#define FW_CUT_{s.input}_\d+ INT32_C\({cut}\)\n",
                             c), (t, k)
    searched = 0
    for b in ctx["bitmask"]["inputs"]:
        ret = "uint64_t" if b["returns_word"] else "uint32_t"
        fn = re.sub(r"/\*.*?\*/", "", c.split(f"static inline {ret} {b['bucket_fn']}(", 1)[1].split("\n}\n", 1)[0])
        if style == "bitmask-branchfree" or b["search"]["kind"] == "linear":
            assert "if" not in fn and "?" not in fn
            continue
        searched += 1
        assert b["returns_word"] and "?" not in fn
        ifs = re.findall(r"if \(x > (\w+)\)", fn)
        assert sorted(ifs) == sorted(cut["macro"] for cut in b["cuts"])  # one comparison per cut
        returns = re.findall(r"return (fw_tables\.bits_\d+)\[(\d+)\];", fn)
        assert sorted(int(k) for _, k in returns) == list(range(len(b["cuts"]) + 1))  # one outcome per bucket
    assert searched or style == "bitmask-branchfree"
