"""The trust root of rlcc-verify (rlcc.verify.provenance): a firmware edited consistently with its
manifest passes only "relative to the manifest"; --policy and --expect-sha256 reject it (exit 9);
files that disagree with their manifest fail without either; a defect on one timestamp in 2^32
passes the sampled check and only --prove (and --require proven) catches it."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rlcc.codegen import bitmask, manifest as manifest_io
from rlcc.codegen.context import model_sha256
from rlcc.errors import ExitCode
from rlcc.fxp.model import FxModel
from rlcc.verify.generators import pinned_vectors
from rlcc.verify import compile_cache
from rlcc.verify.provenance import first_difference, parse_digest

REPO = Path(__file__).resolve().parents[2]
POLICY = REPO / "examples" / "rlcc_mlp.onnx"
TINY = ["--quick", "--samples", "600", "--scenarios", "many-to-one:2:5", "--candidates", "1"]


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900)


def verify(fw: Path, *extra: object) -> subprocess.CompletedProcess:
    return run("rlcc-verify", fw / "firmware.c", "--random", "0", *extra)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    """A small compile of the bundled policy, recorded in this test process's compile cache."""
    out = tmp_path_factory.mktemp("prov") / "fw"
    r = run("rlcc-compile", POLICY, "-o", out, "--no-verify", "-q", *TINY)
    assert r.returncode == 0, r.stderr
    return out


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "fw"
    shutil.copytree(src, dst)
    return dst


def _rewrite(fw: Path, c_text: str, raw: dict) -> None:
    """Write the C and a manifest consistent with it (the attacker's refresh of files.c.sha256)."""
    (fw / "firmware.c").write_text(c_text)
    raw["files"]["c"]["sha256"] = manifest_io.sha256_text(c_text)
    (fw / "firmware.rlcc.json").write_text(manifest_io.dumps(raw))


def tamper_bias(fw: Path, bias: int = 1 << 20) -> None:
    """The issue's attack: bias to the clamp's top in the C *and* the manifest's model, the
    vectors recomputed with rlcc's own golden model, model_sha256 and files.c.sha256 refreshed."""
    raw = json.loads((fw / "firmware.rlcc.json").read_text())
    raw["model"]["bias"] = bias
    model = FxModel.from_dict(raw["model"])
    raw["vectors"] = pinned_vectors(model).to_dict()
    raw["model_sha256"] = model_sha256(model)
    c_text = re.sub(r"#define FIRMWARE_BIAS INT32_C\(-?\d+\)", f"#define FIRMWARE_BIAS INT32_C({bias})",
                    (fw / "firmware.c").read_text())
    _rewrite(fw, c_text, raw)


@pytest.mark.slow
def test_consistent_tamper_passes_only_relative_to_the_manifest(compiled, tmp_path):
    digest = hashlib.sha256((compiled / "firmware.rlcc.json").read_bytes()).hexdigest()
    fw = _copy(compiled, tmp_path)
    tamper_bias(fw)
    r = verify(fw, "--json", tmp_path / "v.json")
    assert r.returncode == 0, r.stderr
    assert "PASS (sampled, relative to the manifest)" in r.stdout
    assert "provenance: relative to the manifest only" in r.stdout
    prov = json.loads((tmp_path / "v.json").read_text())["provenance"]
    assert prov["root"] == "manifest" and prov["anchored"] is False and prov["ok"] is True

    r = verify(fw, "--policy", POLICY)
    assert r.returncode == int(ExitCode.PROVENANCE), r.stdout + r.stderr
    assert "model.bias: the policy compiles to" in r.stderr and "the firmware has 1048576" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1

    r = verify(fw, "--expect-sha256", digest)
    assert r.returncode == int(ExitCode.PROVENANCE), r.stdout + r.stderr
    assert "not the pinned" in r.stderr


@pytest.mark.slow
def test_threshold_tamper_names_the_threshold(compiled, tmp_path):
    fw = _copy(compiled, tmp_path)
    raw = json.loads((fw / "firmware.rlcc.json").read_text())
    if raw["tree_style"] == "bitmask":  # a cut that serves one split only: the edit moves that split alone
        i, j, (t, k) = next((b.input, j, c.uses[0]) for b in bitmask.plan(FxModel.from_dict(raw["model"])).inputs
                            for j, c in enumerate(b.cuts) if len(c.uses) == 1)
        cut = f"CUT_{i}_{j}"
    else:
        cut, (t, k) = "THR_0_0", (0, 0)
    raw["model"]["trees"][t]["splits"][k]["threshold"] += 1
    model = FxModel.from_dict(raw["model"])
    raw["vectors"] = pinned_vectors(model).to_dict()
    raw["model_sha256"] = model_sha256(model)
    c = (fw / "firmware.c").read_text()
    c, n = re.subn(rf"(#define FIRMWARE_{cut} INT32_C\()(-?\d+)\)", lambda m: f"{m[1]}{int(m[2]) + 1})", c)
    assert n == 1
    _rewrite(fw, c, raw)
    assert verify(fw).returncode == 0
    r = verify(fw, "--policy", POLICY)
    assert r.returncode == int(ExitCode.PROVENANCE), r.stdout + r.stderr
    assert f"model.trees[{t}].splits[{k}].threshold" in r.stderr


@pytest.mark.slow
def test_untouched_firmware_is_anchored(compiled, tmp_path):
    digest = hashlib.sha256((compiled / "firmware.rlcc.json").read_bytes()).hexdigest()
    r = verify(compiled, "--policy", POLICY, "--expect-sha256", f"sha256:{digest.upper()}", "--json", tmp_path / "v.json")
    assert r.returncode == 0, r.stderr
    assert "PASS (sampled, anchored to the policy)" in r.stdout
    prov = json.loads((tmp_path / "v.json").read_text())["provenance"]
    assert prov["anchored"] is True and prov["policy"]["source"] == "cache" and prov["firmware_digest"] == digest


@pytest.mark.slow
def test_policy_recompiles_without_the_cache(compiled, tmp_path, monkeypatch):
    """No cached compile (another machine, an emptied cache): --policy recompiles, byte-identical."""
    monkeypatch.setenv("RLCC_CACHE_DIR", str(tmp_path / "empty-cache"))
    r = verify(compiled, "--policy", POLICY, "--json", tmp_path / "v.json")
    assert r.returncode == 0, r.stderr
    prov = json.loads((tmp_path / "v.json").read_text())["provenance"]
    assert prov["policy"]["source"] == "recompiled"
    assert "recompiled in" in r.stdout
    assert len(list((tmp_path / "empty-cache" / "compiles").glob("*.json"))) == 1  # and remembered


@pytest.mark.slow
def test_files_disagreeing_with_the_manifest_fail(compiled, tmp_path):
    fw = _copy(compiled, tmp_path)
    (fw / "firmware.c").write_text((fw / "firmware.c").read_text() + "/* reviewed */\n")
    r = verify(fw)
    assert r.returncode == int(ExitCode.PROVENANCE), r.stdout + r.stderr
    assert "firmware.c differs from the file its manifest records" in r.stderr

    fw2 = _copy(compiled, tmp_path / "b")
    raw = json.loads((fw2 / "firmware.rlcc.json").read_text())
    raw["model_sha256"] = "0" * 64
    (fw2 / "firmware.rlcc.json").write_text(manifest_io.dumps(raw))
    r = verify(fw2, "-q")
    assert r.returncode == int(ExitCode.PROVENANCE) and "model_sha256" in r.stderr, r.stderr

    fw3 = _copy(compiled, tmp_path / "c")
    (fw3 / "firmware.h").write_text((fw3 / "firmware.h").read_text().replace("firmware", "firmwarf", 1))
    r = verify(fw3, "-q")
    assert r.returncode == int(ExitCode.PROVENANCE) and "firmware.h differs" in r.stderr, r.stderr


@pytest.mark.slow
def test_another_policy_or_no_recipe_fails(compiled, tmp_path):
    other = REPO / "examples" / "synthetic_mlp.onnx"
    r = verify(compiled, "--policy", other)
    assert r.returncode == int(ExitCode.PROVENANCE) and "was not compiled from synthetic_mlp.onnx" in r.stderr, r.stderr

    fw = _copy(compiled, tmp_path)
    raw = json.loads((fw / "firmware.rlcc.json").read_text())
    del raw["compile"]
    (fw / "firmware.rlcc.json").write_text(manifest_io.dumps(raw))
    r = verify(fw, "--policy", POLICY, "-q")
    assert r.returncode == int(ExitCode.PROVENANCE) and "records no compile recipe" in r.stderr, r.stderr


@pytest.mark.slow
def test_one_timestamp_in_2_32_needs_the_proof(compiled, tmp_path):
    """A trojan firing on one timestamp passes every sampled vector; --prove finds it (exit 4), and
    a gate that requires proven cannot be passed by the sampled check alone."""
    fw = _copy(compiled, tmp_path)
    raw = json.loads((fw / "firmware.rlcc.json").read_text())
    c = (fw / "firmware.c").read_text()
    c = c.replace("    results->rate = c[RLCC_CTX_RATE];",
                  "    results->rate = now == 0x5EED1234u ? 0xFFFFFu : c[RLCC_CTX_RATE];")
    assert "0x5EED1234u" in c
    _rewrite(fw, c, raw)
    r = verify(fw)
    assert r.returncode == 0 and "PASS (sampled, relative to the manifest)" in r.stdout, r.stdout + r.stderr
    r = verify(fw, "--require", "proven", "--target", "rv64imac")
    assert r.returncode == int(ExitCode.MISMATCH), r.stdout + r.stderr
    assert "counterexample" in (r.stdout + r.stderr).lower()


@pytest.mark.slow
def test_require_proven_fails_when_the_proof_does_not_complete(compiled):
    r = verify(compiled, "--require", "proven", "--prove-timeout", "0.001", "-q")
    assert r.returncode == int(ExitCode.UNPROVEN), r.stdout + r.stderr
    assert r.stderr.startswith("rlcc-verify: error: --require proven: not proven")


def test_expect_sha256_must_be_a_digest(tmp_path):
    r = run("rlcc-verify", REPO / "examples" / "firmware" / "firmware.c", "--expect-sha256", "abc")
    assert r.returncode == int(ExitCode.BAD_INPUT) and "64 hexadecimal digits" in r.stderr, r.stderr
    assert parse_digest("SHA256:" + "A" * 64) == "a" * 64


def test_first_difference_orders_model_then_files():
    m = lambda bias, rate: json.dumps({"model": {"bias": bias}, "vectors": {"rate": rate}, "name": "f"})  # noqa: E731
    assert first_difference({"f.rlcc.json": m(1, [1]), "f.c": "a\nb\n"}, {"f.rlcc.json": m(2, [3]), "f.c": "a\nc\n"},
                            "f.rlcc.json") == "f.rlcc.json model.bias: the policy compiles to 1, the firmware has 2"
    assert first_difference({"f.rlcc.json": m(1, [1, 2]), "f.c": ""}, {"f.rlcc.json": m(1, [1]), "f.c": ""},
                            "f.rlcc.json").startswith("f.rlcc.json vectors.rate: the policy compiles to 2 entries")
    assert first_difference({"f.rlcc.json": m(1, [1]), "f.c": "a\nb\n"}, {"f.rlcc.json": m(1, [1]), "f.c": "a\nc\n"},
                            "f.rlcc.json") == "f.c line 2: the policy compiles to 'b', the firmware has 'c'"
    same = {"f.rlcc.json": m(1, [1]), "f.c": "x"}
    assert first_difference(same, dict(same), "f.rlcc.json") is None


def test_cache_key_depends_on_policy_recipe_and_code(monkeypatch, tmp_path):
    monkeypatch.setenv("RLCC_CACHE_DIR", str(tmp_path))
    raw = {"compile": {"backend": "trees", "options": {"seed": 0}}, "name": "firmware", "source_info": {"policy": "p.onnx"}}
    k = compile_cache.key("a" * 64, raw)
    assert k != compile_cache.key("b" * 64, raw)
    assert k != compile_cache.key("a" * 64, {**raw, "compile": {"backend": "trees", "options": {"seed": 1}}})
    assert compile_cache.store(k, {"firmware.c": "int x;\n"}) and compile_cache.load(k) == {"firmware.c": "int x;\n"}
    monkeypatch.setenv("RLCC_CACHE_DIR", "")
    assert compile_cache.load(k) is None and compile_cache.store(k, {}) is False


@pytest.mark.slow
def test_require_proven_on_switch_agent_firmware():
    """The switch prover's verdict ("proved") counts as proven; an unfinished proof exits 10."""
    acc = REPO / "examples" / "acc_firmware" / "firmware.c"
    r = run("rlcc-verify", acc, "--ports", "48", "--random", "0", "--require", "proven")
    assert r.returncode == 0 and "PASS (proven, relative to the manifest)" in r.stdout, r.stdout + r.stderr
    r = run("rlcc-verify", acc, "--ports", "48", "--random", "0", "--require", "proven", "--prove-timeout", "0.001", "-q")
    assert r.returncode == int(ExitCode.UNPROVEN), r.stdout + r.stderr
    assert r.stderr.startswith("rlcc-verify: error: --require proven: not proven")
