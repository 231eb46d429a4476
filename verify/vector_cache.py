"""A cache of the vectors verification derives from the model alone (the trees' observable set and
the boundary and edge vectors: seconds of search per model), so ``rlcc-verify`` of firmware this
machine compiled (or verified before) reuses what ``rlcc-compile``'s own verification found.

The key is the model's sha256, the seed and the digest of rlcc's code (``compile_cache.code_digest``):
another model, seed or rlcc is another key. Entries live beside the compile cache
(``$RLCC_CACHE_DIR/vectors``; an empty ``RLCC_CACHE_DIR`` turns both off). An entry stores the
sha256 of its own content and is checked on every load: a damaged or edited entry is not used (the
vectors are recomputed and the entry rewritten). Writes are atomic; an unwritable cache is skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from rlcc.fxp.vectors import Vectors
from rlcc.verify import compile_cache

MAX_ENTRIES = 16  # oldest entries go first; an entry is a few hundred vectors (~100 KB)
_ARRAYS = ("ctx_in", "event", "attr", "ctx_out", "rate", "rtt_req")


def cache_dir() -> Path | None:
    """The cache directory, or None when turned off (``RLCC_CACHE_DIR=``)."""
    root = compile_cache.cache_root()
    return None if root is None else root / "vectors"


def key(model_sha256: str, seed: int, generator: str) -> str:
    """The key of ``generator``'s vectors (a stable name of what produced them) for one model and seed."""
    blob = json.dumps({"model_sha256": model_sha256, "seed": int(seed), "generator": generator,
                       "code": compile_cache.code_digest()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def content_digest(vectors: Vectors) -> str:
    """sha256 over every column (dtype, shape and bytes) and the target tags, in order."""
    h = hashlib.sha256()
    for name in _ARRAYS:
        a = np.ascontiguousarray(getattr(vectors, name))
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    h.update(json.dumps([str(t) for t in vectors.targets]).encode())
    return h.hexdigest()


def load(cache_key: str) -> Vectors | None:
    """The cached vectors of ``cache_key``; None when absent, unreadable or not matching their digest."""
    root = cache_dir()
    if root is None:
        return None
    try:
        with np.load(root / f"{cache_key}.npz", allow_pickle=False) as data:
            columns = {name: data[name] for name in _ARRAYS}
            targets = data["targets"].tolist()
            stored = str(data["digest"])
        vectors = Vectors(**columns, targets=np.array(targets, dtype=object))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    return vectors if content_digest(vectors) == stored else None


def store(cache_key: str, vectors: Vectors) -> bool:
    """Keep ``vectors`` under ``cache_key``; False if the cache is off or unwritable."""
    root = cache_dir()
    if root is None:
        return False
    columns = {name: getattr(vectors, name) for name in _ARRAYS}
    targets = np.array([str(t) for t in vectors.targets], dtype=str)
    tmp = None
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry.", dir=root)
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **columns, targets=targets, digest=np.array(content_digest(vectors)))
        os.replace(tmp, root / f"{cache_key}.npz")
        tmp = None
        entries = sorted(root.glob("*.npz"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[MAX_ENTRIES:]:
            old.unlink(missing_ok=True)
    except OSError:
        return False
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    return True
