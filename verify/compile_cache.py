"""A cache of firmware files by what they were compiled from, so ``rlcc-verify --policy`` need not
redo a compile this machine already did.

The key is the policy's sha256, the manifest's compile recipe and naming fields, and a digest of
rlcc's own code and templates: another rlcc, policy or option is another key. ``rlcc-compile``
stores what it wrote; ``rlcc-verify --policy`` stores what it recompiled. The cache lives in
``$RLCC_CACHE_DIR`` (default ``$XDG_CACHE_HOME/rlcc``, else ``~/.cache/rlcc``); an empty
``RLCC_CACHE_DIR`` turns it off. It is as trusted as the account that owns it: it holds what this
rlcc compiled, never what a checked repository contains. Writes are atomic; a cache that cannot
be written is skipped silently (the check then recompiles).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import tempfile
from pathlib import Path
from typing import Any

MAX_ENTRIES = 32  # oldest entries go first; an entry is the firmware files of one compile (~1-3 MB)
# rlcc's packages whose code decides the bytes of a compile (the CLI and trainer do not).
_CODE_PACKAGES = ("rlcc", "rlcc.fxp", "rlcc.simulator", "rlcc.simulator.controllers", "rlcc.distill", "rlcc.codegen",
                  "rlcc.templates", "rlcc.firmware_sdk_stub", "rlcc.emulator", "rlcc.verify")
_CODE_SUFFIXES = (".py", ".j2", ".h", ".c", ".S", ".ld", ".json")


def cache_root() -> Path | None:
    """rlcc's cache directory (compiles, vectors), or None when turned off (``RLCC_CACHE_DIR=``)."""
    configured = os.environ.get("RLCC_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rlcc"


def cache_dir() -> Path | None:
    """The compile cache's directory, or None when turned off (``RLCC_CACHE_DIR=``)."""
    root = cache_root()
    return None if root is None else root / "compiles"


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """sha256 over the source files of the packages that decide a compile's bytes (found without
    importing them: rlcc-verify would otherwise load the simulator and the distiller for a digest)."""
    h = hashlib.sha256()
    for name in _CODE_PACKAGES:
        root = _package_dir(name)
        for path in sorted(p for p in root.iterdir() if p.is_file() and p.suffix in _CODE_SUFFIXES):
            h.update(f"{name}/{path.name}\0".encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def _package_dir(name: str) -> Path:
    """The folder of package ``name``; only ``rlcc`` itself is imported (a subpackage of a
    subpackage is found in its parent's folder, so its parent's ``__init__`` does not run)."""
    parent, _, last = name.rpartition(".")
    if parent and parent != "rlcc":
        return _package_dir(parent) / last
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"code digest: package {name} not found")
    return Path(list(spec.submodule_search_locations)[0])


def key(policy_sha256: str, manifest: dict[str, Any]) -> str:
    """The cache key of the compile a manifest records (its recipe, names and flavour)."""
    fields = {k: manifest.get(k) for k in ("compile", "name", "tree_style", "sdk", "kind", "backend", "target")}
    fields["policy_name"] = (manifest.get("source_info") or {}).get("policy")
    blob = json.dumps({"policy_sha256": policy_sha256, "manifest": fields, "code": code_digest()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def load(cache_key: str) -> dict[str, str] | None:
    """The cached files (name -> text) of ``cache_key``, or None."""
    root = cache_dir()
    if root is None:
        return None
    try:
        data = json.loads((root / f"{cache_key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        return None
    return files


def store(cache_key: str, files: dict[str, str]) -> bool:
    """Keep ``files`` (name -> text) under ``cache_key``; False if the cache is off or unwritable."""
    root = cache_dir()
    if root is None:
        return False
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry.", dir=root)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"files": files}, fh, sort_keys=True)
        os.replace(tmp, root / f"{cache_key}.json")
        entries = sorted(root.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[MAX_ENTRIES:]:
            old.unlink(missing_ok=True)
    except OSError:
        return False
    return True
