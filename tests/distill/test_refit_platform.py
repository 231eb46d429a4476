"""The leaf refit must not depend on the BLAS build or its thread count.

``np.linalg.solve`` (LAPACK through OpenBLAS) rounds differently per CPU kernel and thread
count; the float leaves then differed in the last bits between machines and the float-tree rows
of a compile's report.md with them (35.35 vs 35.44 us at 512 flows with 2 vs 1 OpenBLAS
threads), so regenerating examples/firmware/ was not byte-identical across machines. The refit
now solves with element-wise operations only (``fit._spd_solve``); LAPACK is the oracle for its
accuracy, and the digest must not move with the BLAS thread count.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

PROBE = """
import hashlib
import numpy as np
from rlcc.distill.fit import refit_leaves
from rlcc.tree_ir import FloatEnsemble, FloatSplit, FloatTree

rng = np.random.default_rng(0)
trees = tuple(FloatTree(tuple(FloatSplit(int(rng.integers(4)), float(np.float32(rng.normal()))) for _ in range(4)),
                        tuple(float(v) for v in rng.normal(0, 0.05, 16))) for _ in range(10))
ens = FloatEnsemble(n_inputs=4, trees=trees, bias=1.0)
x = rng.normal(size=(20000, 4)).astype(np.float32)
y = 1.0 + 0.1 * np.tanh(x @ rng.normal(size=4))
w = rng.uniform(1.0, 40.0, len(x))
print(hashlib.sha256(refit_leaves(ens, x, y, w).tobytes()).hexdigest())
"""


def _openblas() -> bool:
    try:
        cfg = np.show_config(mode="dicts")
    except TypeError:
        return False
    return "openblas" in str(cfg.get("Build Dependencies", {}).get("blas", {})).lower()


def _digest(threads: int) -> str:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads)}
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(not _openblas() or (os.cpu_count() or 1) < 2, reason="needs OpenBLAS and 2 cores to vary threads")
def test_refit_leaves_same_bits_for_any_blas_thread_count() -> None:
    assert _digest(1) == _digest(2)


def test_spd_solve_agrees_with_lapack() -> None:
    from rlcc.distill.fit import _spd_solve

    rng = np.random.default_rng(3)
    a = rng.normal(size=(160, 400))
    gram = a @ a.T + 1e-3 * np.eye(160)
    b = rng.normal(size=160)
    x = _spd_solve(gram, b)
    np.testing.assert_allclose(x, np.linalg.solve(gram, b), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gram @ x, b, atol=1e-9)


def test_spd_solve_refuses_an_indefinite_matrix() -> None:
    from rlcc.errors import BadInputError
    from rlcc.distill.fit import _spd_solve

    with pytest.raises(BadInputError, match="positive definite"):
        _spd_solve(np.array([[1.0, 2.0], [2.0, 1.0]]), np.ones(2))
