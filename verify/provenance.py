"""The trust root of ``rlcc-verify``: tie the firmware to its manifest and to the reviewed policy.

The emulator check and the proof compare the C with the golden model *of its own manifest*, so
an edit made consistently to both (a bias, a threshold, recomputed vectors and hashes) verifies
and even proves. Three anchors, each stronger than the one before:

- consistency (always): the C, its header and the flavour's files hash to the manifest's
  records, and the model to ``model_sha256``; a mismatch fails (exit 9), it is not a note;
- digest (``--expect-sha256``): the manifest's sha256, which pins every file and the model by
  hash, equals a digest pinned when the policy was reviewed;
- policy (``--policy``): recompile the reviewed ONNX policy with the manifest's recorded recipe
  (the compile is deterministic) and require the manifest, C and header to be byte-identical to
  the result; the first differing fact names what was changed.

Without ``--policy`` or ``--expect-sha256`` the verdict is relative to the manifest, and says so.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import tempfile
import time
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Callable

from rlcc.errors import BadInputError, ProvenanceError
from rlcc.progress import Progress, silent
from rlcc.verify import compile_cache

ROOT_MANIFEST, ROOT_DIGEST, ROOT_POLICY = "manifest", "digest", "policy"
MAX_POLICY_BYTES = 256 << 20  # an ONNX policy a PCC core can run is kilobytes; this bounds the read
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclasses.dataclass
class Provenance:
    """What the verdict is anchored to (``to_dict``: the ``provenance`` entry of ``--json``)."""

    root: str  # manifest | digest | policy: the anchor asked for
    firmware_digest: str  # sha256 of the manifest file
    policy: dict[str, Any] | None = None  # --policy: path, sha256, how the expected files were obtained, seconds
    error: str | None = None  # why the anchor does not hold (the verdict then fails, exit 9)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def statement(self) -> str:
        """One line for the summary."""
        if self.error is not None:
            return f"NOT ANCHORED ({self.root}): {self.error}"
        if self.root == ROOT_POLICY:
            p = self.policy or {}
            how = "cached compile" if p.get("source") == "cache" else f"recompiled in {p.get('seconds', 0):.0f} s"
            return (f"anchored to the policy: {p.get('name')} (sha256 {str(p.get('sha256'))[:16]}) compiles to exactly "
                    f"these files ({how})")
        if self.root == ROOT_DIGEST:
            return f"anchored to the pinned digest: the manifest's sha256 is {self.firmware_digest}"
        return ("relative to the manifest only: the C matches the model its own manifest states; nothing ties that "
                "model to a reviewed policy (pass --policy MODEL.onnx or --expect-sha256 DIGEST)")

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "anchored": self.ok and self.root != ROOT_MANIFEST, "ok": self.ok,
                "firmware_digest": self.firmware_digest, "statement": self.statement, "policy": self.policy,
                "error": self.error}


def establish(raw: dict[str, Any], manifest_path: Path, firmware_c: Path, model_digest: str,
              policy: Path | None = None, expect_sha256: str | None = None, jobs: int = 1,
              log: Callable[[str], None] = lambda _m: None, progress: Progress = silent,
              rebuilders: Mapping[str, Rebuild] | None = None) -> Provenance:
    """Check consistency, then the pinned digest, then the policy (the strongest anchor asked for
    is the verdict's root); a failed check is the Provenance's ``error``, bad arguments raise.
    ``rebuilders``: recipe backend -> how to recompile it (the model kinds', ``rlcc.kinds.rebuilders``)."""
    root = ROOT_POLICY if policy is not None else ROOT_DIGEST if expect_sha256 is not None else ROOT_MANIFEST
    if expect_sha256 is not None:
        parse_digest(expect_sha256)
    if policy is not None and not Path(policy).is_file():
        raise BadInputError(f"--policy {policy}: no such file")
    result = Provenance(root, firmware_digest(manifest_path))
    try:
        check_consistency(raw, manifest_path, firmware_c, model_digest)
        if expect_sha256 is not None:
            check_digest(expect_sha256, manifest_path)
        if policy is not None:
            result.policy = check_policy(policy, raw, manifest_path, firmware_c, jobs, log, progress, rebuilders)
    except ProvenanceError as exc:
        result.error = str(exc)
    return result


def firmware_digest(manifest_path: Path) -> str:
    """sha256 of the manifest file: it pins the C, the header and the model by their hashes."""
    return hashlib.sha256(Path(manifest_path).read_bytes()).hexdigest()


def parse_digest(text: str) -> str:
    """``--expect-sha256``'s value: 64 hex digits, optionally prefixed ``sha256:``."""
    value = text.strip().lower().removeprefix("sha256:")
    if not _HEX64.fullmatch(value):
        raise BadInputError(f"--expect-sha256 must be 64 hexadecimal digits (a sha256), got {text!r}")
    return value


def _plain_name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or Path(value).name != value or value in (".", ".."):
        raise BadInputError(f"manifest: {what} must be a plain file name, got {value!r}")
    return value


def recorded_files(raw: dict[str, Any]) -> dict[str, str]:
    """The manifest's files: key ("c", "h", ...) -> file name (plain names only)."""
    files = raw.get("files")
    if not isinstance(files, dict) or "c" not in files:
        raise BadInputError("manifest: no 'files' entry for the C")
    out = {}
    for k, entry in files.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
            raise BadInputError(f"manifest: files.{k} has no sha256")
        out[k] = _plain_name(entry.get("path"), f"files.{k}.path")
    return out


def check_consistency(raw: dict[str, Any], manifest_path: Path, firmware_c: Path, model_digest: str) -> None:
    """Raise ProvenanceError unless the C (at ``firmware_c``), the files beside the manifest and the
    model (``model_digest``: its sha256 as the generator computes it) match the manifest."""
    names = recorded_files(raw)
    for k, name in names.items():
        path = Path(firmware_c) if k == "c" else Path(manifest_path).parent / name
        if not path.is_file():
            raise ProvenanceError(f"{name}: recorded in {Path(manifest_path).name} but missing beside it")
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != raw["files"][k]["sha256"]:
            raise ProvenanceError(f"{path.name} differs from the file its manifest records (sha256 {got[:16]} != "
                                  f"{raw['files'][k]['sha256'][:16]}): edited after rlcc-compile wrote it")
    if raw.get("model_sha256") != model_digest:
        raise ProvenanceError(f"{Path(manifest_path).name}: model_sha256 {str(raw.get('model_sha256'))[:16]} is not the "
                              f"sha256 of its model ({model_digest[:16]}): the model was edited")


def check_digest(expected: str, manifest_path: Path) -> str:
    """Raise ProvenanceError unless the manifest's sha256 is ``expected``; returns the digest."""
    got = firmware_digest(manifest_path)
    if got != parse_digest(expected):
        raise ProvenanceError(f"{Path(manifest_path).name} has sha256 {got}, not the pinned {parse_digest(expected)} "
                              "(--expect-sha256): the firmware is not the reviewed one")
    return got


# ---- --policy: recompile and compare -------------------------------------------------------------
# A model kind's recompile: (policy copy, manifest dict, jobs, log, progress) -> the files ``generate`` returns.
Rebuild = Callable[[Path, dict[str, Any], int, Callable[[str], None], Progress], dict[str, Path]]


def source_info(policy_path: Path) -> dict[str, str]:
    return {"policy": policy_path.name, "policy_sha256": hashlib.sha256(policy_path.read_bytes()).hexdigest()}


def check_policy(policy: Path, raw: dict[str, Any], manifest_path: Path, firmware_c: Path, jobs: int = 1,
                 log: Callable[[str], None] = lambda _m: None, progress: Progress = silent,
                 rebuilders: Mapping[str, Rebuild] | None = None) -> dict[str, Any]:
    """Recompile ``policy`` with the manifest's recipe (or take this rlcc's cached compile of it)
    and require byte-identical files; ProvenanceError naming the first differing fact otherwise.
    Returns the ``provenance.policy`` entry."""
    policy = Path(policy)
    if not policy.is_file():
        raise BadInputError(f"--policy {policy}: no such file")
    if policy.stat().st_size > MAX_POLICY_BYTES:
        raise BadInputError(f"--policy {policy}: larger than {MAX_POLICY_BYTES >> 20} MiB, not a PCC policy")
    data = policy.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    source = raw.get("source_info") if isinstance(raw.get("source_info"), dict) else {}
    if source.get("policy_sha256") != sha:
        raise ProvenanceError(f"the firmware was not compiled from {policy.name}: its manifest names policy "
                              f"{source.get('policy')!r} with sha256 {str(source.get('policy_sha256'))[:16]}, "
                              f"--policy has sha256 {sha[:16]}")
    recipe = raw.get("compile")
    if not isinstance(recipe, dict):
        raise ProvenanceError("the manifest records no compile recipe (written by an older rlcc-compile?): "
                              "recompile the policy with this rlcc to anchor it")
    kind = str(recipe.get("backend"))
    rebuilders = rebuilders or {}
    if kind not in rebuilders:
        raise BadInputError(f"--policy: recompiling the {kind!r} backend is not supported (supported: "
                            f"{', '.join(rebuilders) or 'none'}); use --expect-sha256")
    cache_key = compile_cache.key(sha, raw)
    t0 = time.monotonic()
    expected = compile_cache.load(cache_key)
    how = "cache"
    if expected is None:
        how = "recompiled"
        name = _plain_name(source.get("policy"), "source_info.policy")
        with tempfile.TemporaryDirectory(prefix="rlcc-provenance-") as tmp:
            copy = Path(tmp) / name  # the recorded name: it is part of the model's provenance
            copy.write_bytes(data)
            paths = rebuilders[kind](copy, raw, jobs, log, progress)
            expected = {p.name: p.read_text(encoding="utf-8") for p in paths.values()}
        compile_cache.store(cache_key, expected)
    manifest_name = _plain_name(f"{raw.get('name')}.rlcc.json", "name")
    actual = _actual_files(raw, manifest_path, firmware_c, manifest_name)
    diff = first_difference(expected, actual, manifest_name)
    if diff is not None:
        raise ProvenanceError(f"the firmware is not what {policy.name} compiles to: {diff}")
    return {"path": str(policy), "name": policy.name, "sha256": sha, "source": how,
            "seconds": round(time.monotonic() - t0, 1)}


def remember(paths: dict[str, Path]) -> None:
    """Cache the files ``rlcc-compile`` just generated (``paths`` as ``generate`` returns them),
    so a later ``rlcc-verify --policy`` of the same policy and recipe need not recompile."""
    raw = json.loads(paths["manifest"].read_text(encoding="utf-8"))
    sha = (raw.get("source_info") or {}).get("policy_sha256")
    if isinstance(sha, str) and isinstance(raw.get("compile"), dict):
        compile_cache.store(compile_cache.key(sha, raw), {p.name: p.read_text(encoding="utf-8") for p in paths.values()})


def _actual_files(raw: dict[str, Any], manifest_path: Path, firmware_c: Path, manifest_name: str) -> dict[str, str]:
    """The checked files under the names the compile gives them (the user may have renamed them)."""
    names = recorded_files(raw)
    files = {manifest_name: Path(manifest_path).read_text(encoding="utf-8", errors="replace")}
    for k, name in names.items():
        path = Path(firmware_c) if k == "c" else Path(manifest_path).parent / name
        files[name] = path.read_text(encoding="utf-8", errors="replace")
    return files


def first_difference(expected: dict[str, str], actual: dict[str, str], manifest_name: str) -> str | None:
    """The first fact that differs: in the manifest (model first, then the rest, vectors last),
    then the files line by line; None if every file is byte-identical."""
    if manifest_name in expected and manifest_name in actual and expected[manifest_name] != actual[manifest_name]:
        try:
            want, got = json.loads(expected[manifest_name]), json.loads(actual[manifest_name])
        except ValueError:
            want = got = None
        if isinstance(want, dict) and isinstance(got, dict):
            order = ["model", "model_sha256", "compile", "source_info", "spec"]
            order += sorted(k for k in set(want) | set(got) if k not in order and k != "vectors") + ["vectors"]
            for k in order:
                diff = _json_diff(want.get(k), got.get(k), k)
                if diff is not None:
                    return f"{manifest_name} {diff}"
    missing = sorted(set(expected) - set(actual))
    if missing:
        return f"{missing[0]} is missing"
    for name in sorted(expected, key=lambda n: (n == manifest_name, n)):
        if expected[name] != actual[name]:
            return _line_diff(name, expected[name], actual[name])
    extra = sorted(set(actual) - set(expected))
    return f"{extra[0]} is not part of the policy's compile" if extra else None


def _json_diff(want: Any, got: Any, path: str) -> str | None:
    if type(want) is not type(got) and not (isinstance(want, (int, float)) and isinstance(got, (int, float))):
        return f"{path}: the policy compiles to {_short(want)}, the firmware has {_short(got)}"
    if isinstance(want, dict):
        for k in sorted(set(want) | set(got)):
            if k not in got:
                return f"{path}.{k}: missing in the firmware's manifest"
            if k not in want:
                return f"{path}.{k}: not in the policy's compile"
            d = _json_diff(want[k], got[k], f"{path}.{k}")
            if d is not None:
                return d
        return None
    if isinstance(want, list):
        for i, (a, b) in enumerate(zip(want, got)):
            d = _json_diff(a, b, f"{path}[{i}]")
            if d is not None:
                return d
        if len(want) != len(got):
            return f"{path}: the policy compiles to {len(want)} entries, the firmware has {len(got)}"
        return None
    if want != got:
        return f"{path}: the policy compiles to {_short(want)}, the firmware has {_short(got)}"
    return None


def _line_diff(name: str, want: str, got: str) -> str:
    a, b = want.splitlines(), got.splitlines()
    for i, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return f"{name} line {i}: the policy compiles to {_short(x.strip())}, the firmware has {_short(y.strip())}"
    return f"{name}: the policy compiles to {len(a)} lines, the firmware has {len(b)}"


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
