"""Hand-made fixed-point models for the code generator tests (no distillation needed)."""

from __future__ import annotations

import numpy as np

from rlcc import features as vocab
from rlcc import formats as fmt
from rlcc.fxp.model import FxConstants, FxModel, Split, Tree
from rlcc.spec import Action, Feature, ObservationSpec, RateLimits, Reward

SYNTHETIC_SPEC = ObservationSpec(features=(Feature("prev_action"), Feature("delta", scale=10.0)), history=2)

ALL_FEATURES_SPEC = ObservationSpec(
    features=(
        Feature("prev_action"),
        Feature("rtt_inflation", scale=0.5, offset=-1.0),
        Feature("rate", scale=-2.0),
        Feature("delta", scale=-10.0),
        Feature("cnp_count", scale=0.25),
        Feature("nack_count"),
    ),
    history=2,
    step_order="newest_first",
    reward=Reward(target=0.05, beta=1.25, base_rtt_ns=12000),
    action=Action(clamp_min=0.7, clamp_max=1.3),
    rate=RateLimits(initial=0.5, min=1.0 / 1024),
)

COUNTS_SPEC = ObservationSpec(
    features=(Feature("cnp_count"), Feature("nack_count", scale=-1.0), Feature("rtt_inflation")),
    history=3,
    reward=Reward(target=0.1, beta=2.0, base_rtt_ns=5000),
)

SINGLE_STEP_SPEC = ObservationSpec(features=(Feature("rate"), Feature("delta")), history=1)


def _threshold(spec: ObservationSpec, inp: int, border: float) -> tuple[str, int]:
    """Integer threshold for ``scaled > border`` on the device feature (op flips if scale < 0)."""
    f = spec.features[inp % spec.n_features]
    raw = (border - f.offset) / f.scale
    value = raw * (1 << vocab.get(f.name).frac_bits)
    if f.scale > 0:
        return ">", int(np.floor(value))
    return "<", int(np.ceil(value))


def random_model(spec: ObservationSpec, n_trees: int = 6, depth: int = 3, seed: int = 0) -> FxModel:
    """A random oblivious ensemble whose borders sit where realistic features fall."""
    rng = np.random.default_rng(seed)
    typical = {
        "prev_action": (0.8, 1.25),
        "rtt_inflation": (0.8, 6.0),
        "rate": (0.001, 1.0),
        "delta": (-3.0, 0.07),
        "cnp_count": (0.0, 5.0),
        "nack_count": (0.0, 3.0),
    }
    trees = []
    for _ in range(n_trees):
        splits = []
        for _ in range(depth):
            inp = int(rng.integers(0, spec.input_width))
            f = spec.features[inp % spec.n_features]
            lo, hi = typical[f.name]
            border = float(np.float32(f.scale * rng.uniform(lo, hi) + f.offset))
            op, thr = _threshold(spec, inp, border)
            splits.append(Split(inp, op, thr, border))
        leaves = tuple(int(v) for v in rng.integers(-6000, 6000, 1 << depth))
        trees.append(Tree(tuple(splits), leaves))
    return FxModel(spec=spec, constants=FxConstants.from_spec(spec), trees=tuple(trees), bias=fmt.FACTOR_ONE,
                   provenance={"source": "tests/codegen/models.py", "seed": seed})


def tiny_model() -> FxModel:
    """Two hand-written trees on the synthetic example's spec (the golden C files' model)."""
    spec = SYNTHETIC_SPEC
    trees = (
        Tree(
            splits=(Split(3, ">", -4194, -0.64), Split(2, ">", 65536, 1.0)),
            leaves=(-6554, 3277, -1638, 6554),
        ),
        Tree(
            splits=(Split(1, ">", 0, 0.0), Split(0, "<", 60000, 0.9155273)),
            leaves=(-1000, 500, 1000, 2000),
        ),
    )
    return FxModel(spec=spec, constants=FxConstants.from_spec(spec), trees=trees, bias=fmt.FACTOR_ONE,
                   provenance={"source": "tests/codegen/models.py:tiny_model"})


def edge_model() -> FxModel:
    """Thresholds at the int32 extremes and on the current-step rate (unsigned compare paths)."""
    spec = SINGLE_STEP_SPEC
    i32min, i32max = -(2**31), 2**31 - 1
    trees = (
        Tree((Split(0, ">", -5, -5e-6), Split(0, "<", 0, 0.0), Split(0, ">", i32max, 2048.0)), tuple(range(-4000, 4000, 1000))),
        Tree((Split(0, "<", 1 << 19, 0.5), Split(1, ">", i32min, -32768.0), Split(1, "<", i32max, 32768.0)), (0, 1, 2, 3, 4, 5, 6, 7)),
        Tree((Split(0, ">", i32min, -2048.0), Split(0, "<", i32min, -2048.0)), (10, -10, 20, -20)),
    )
    return FxModel(spec=spec, constants=FxConstants.from_spec(spec), trees=trees, bias=fmt.FACTOR_ONE,
                   provenance={"source": "tests/codegen/models.py:edge_model"})


def onnx_example_spec() -> ObservationSpec:
    """The spec embedded in examples/synthetic_mlp.onnx."""
    from pathlib import Path

    from rlcc.policy import OnnxPolicy

    return OnnxPolicy(str(Path(__file__).resolve().parents[2] / "examples" / "synthetic_mlp.onnx")).spec


def hosted_models() -> dict[str, FxModel]:
    """The models every hosted test runs: hand-made, extreme thresholds, all features, counts."""
    return {
        "tiny": tiny_model(),
        "edge": edge_model(),
        "onnx_spec": random_model(onnx_example_spec(), n_trees=20, depth=6, seed=1),
        "all_features": random_model(ALL_FEATURES_SPEC, n_trees=8, depth=4, seed=2),
        "counts_h3": random_model(COUNTS_SPEC, n_trees=6, depth=4, seed=3),
    }


MODELS = hosted_models()
