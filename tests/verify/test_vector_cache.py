"""rlcc.verify.vector_cache: the model-derived vectors (observable + boundary) come back from the
cache exactly as computed (same vectors, order and tags), a damaged entry is never used (it is
recomputed and rewritten), and an empty RLCC_CACHE_DIR turns the cache off."""

from __future__ import annotations

import dataclasses
import zipfile
from pathlib import Path

import numpy as np
import pytest

from rlcc.codegen import manifest as manifest_io
from rlcc.codegen.context import model_sha256
from rlcc.verify import generators, vector_cache
from rlcc.verify.generators import model_derived_vectors, verification_set
from verify_models import small_model

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "firmware" / "firmware.rlcc.json"


def _no_search(*_args, **_kwargs):
    raise AssertionError("the observable search ran although the cache holds its result")


def _entries(root: Path) -> list[Path]:
    return sorted((root / "vectors").glob("*.npz"))


def test_the_examples_cached_verification_set_is_the_computed_one(tmp_path, monkeypatch):
    """The bundled example (derived input, ramps, coupled slots): computed without a cache, then
    stored, then loaded with the search disabled: the same vectors in the same order, same tags."""
    _, model, _ = manifest_io.load(str(EXAMPLE))
    monkeypatch.setenv("RLCC_CACHE_DIR", "")
    plain, plain_tags = verification_set(model, 0, 200)
    assert vector_cache.cache_dir() is None
    monkeypatch.setenv("RLCC_CACHE_DIR", str(tmp_path))
    stored, _ = verification_set(model, 0, 200)
    assert len(_entries(tmp_path)) == 1
    monkeypatch.setattr(generators, "observable_vectors", _no_search)
    monkeypatch.setattr(generators, "boundary_vectors", _no_search)
    loaded, loaded_tags = verification_set(model, 0, 200)
    digest = vector_cache.content_digest(plain)
    assert vector_cache.content_digest(stored) == digest and vector_cache.content_digest(loaded) == digest
    assert loaded_tags == plain_tags and any(t.startswith("split:") for t in plain_tags)
    for name in ("ctx_in", "event", "attr", "ctx_out", "rate", "rtt_req"):
        assert getattr(loaded, name).dtype == getattr(plain, name).dtype
        assert np.array_equal(getattr(loaded, name), getattr(plain, name))


def test_another_seed_or_model_is_another_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("RLCC_CACHE_DIR", str(tmp_path))
    model_derived_vectors(small_model(), 0)
    model_derived_vectors(small_model(), 1)
    model_derived_vectors(small_model(4), 0)
    assert len(_entries(tmp_path)) == 3


def _tamper_column(path: Path) -> None:
    """Rewrite the entry with one changed value in ctx_in but the digest it had (an edited entry)."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["ctx_in"] = arrays["ctx_in"].copy()
    arrays["ctx_in"][0, 0] ^= 1
    np.savez(path.with_suffix(".tmp.npz"), **arrays)
    path.with_suffix(".tmp.npz").replace(path)


def _flip_byte(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


def _drop_tags(path: Path) -> None:
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files if k != "targets"}
    np.savez(path.with_suffix(".tmp.npz"), **arrays)
    path.with_suffix(".tmp.npz").replace(path)


@pytest.mark.parametrize("damage", [_tamper_column, _flip_byte, _truncate, _drop_tags],
                         ids=["edited-column", "flipped-byte", "truncated", "missing-tags"])
def test_a_damaged_entry_is_recomputed_and_rewritten(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("RLCC_CACHE_DIR", str(tmp_path))
    model = small_model()
    first = model_derived_vectors(model, 0)
    (entry,) = _entries(tmp_path)
    key = vector_cache.key(model_sha256(model), 0, "tree_vectors+boundary_vectors")
    assert entry.name == f"{key}.npz" and vector_cache.load(key) is not None
    damage(entry)
    assert vector_cache.load(key) is None  # never trusted
    calls = []
    search = generators.observable_vectors
    monkeypatch.setattr(generators, "observable_vectors", lambda *a, **k: calls.append(1) or search(*a, **k))
    again = model_derived_vectors(model, 0)
    assert calls == [1]  # recomputed
    assert vector_cache.content_digest(again) == vector_cache.content_digest(first)
    reloaded = vector_cache.load(key)  # and rewritten whole
    assert reloaded is not None and vector_cache.content_digest(reloaded) == vector_cache.content_digest(first)


def test_the_digest_covers_tags_and_dtypes():
    base = generators.boundary_vectors(small_model(), 0)
    digest = vector_cache.content_digest(base)
    retagged = dataclasses.replace(base, targets=np.array(["x"] * len(base), dtype=object))
    widened = dataclasses.replace(base, attr=base.attr.astype(np.int64))
    assert vector_cache.content_digest(retagged) != digest
    assert vector_cache.content_digest(widened) != digest


def test_an_unwritable_cache_is_skipped(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("RLCC_CACHE_DIR", str(blocker))
    v = model_derived_vectors(small_model(), 0)
    assert len(v) > 0 and not vector_cache.store("k", v)


def test_an_npz_that_is_not_a_zip_is_not_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("RLCC_CACHE_DIR", str(tmp_path))
    (tmp_path / "vectors").mkdir()
    (tmp_path / "vectors" / "k.npz").write_bytes(b"PK\x03\x04 not really")
    assert vector_cache.load("k") is None
    assert not zipfile.is_zipfile(tmp_path / "vectors" / "k.npz")


def test_a_verification_fills_the_cache_and_the_next_reuses_it(tmp_path, monkeypatch):
    """verify_firmware (rlcc-compile's own verification and rlcc-verify's) stores the model-derived
    vectors; the next verification of the same firmware skips the search with the same verdict,
    which is also the verdict without a cache."""
    from rlcc.codegen import generate
    from rlcc.verify.check import verify_firmware

    firmware = generate(small_model(), tmp_path / "fw")["c"]
    monkeypatch.setenv("RLCC_CACHE_DIR", "")
    plain = verify_firmware(firmware, random_count=300).to_dict()
    monkeypatch.setenv("RLCC_CACHE_DIR", str(tmp_path / "cache"))
    first = verify_firmware(firmware, random_count=300).to_dict()
    assert len(_entries(tmp_path / "cache")) == 1
    monkeypatch.setattr(generators, "observable_vectors", _no_search)
    again = verify_firmware(firmware, random_count=300).to_dict()
    assert plain == first == again and plain["passed"] and plain["coverage"]["splits"]["targets"] > 0
