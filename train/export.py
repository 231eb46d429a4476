"""ONNX export of a trained MLP (spec embedded) and the config that reproduces it."""

from __future__ import annotations

from pathlib import Path

from rlcc.onnx_export import mlp_to_onnx
from rlcc.spec import ObservationSpec
from rlcc.train.mlp import Mlp


def export_mlp(mlp: Mlp, spec: ObservationSpec, path: str | Path, doc: str = "") -> None:
    """Write the bias-free MLP; float32 weights, deterministic bytes for identical weights."""
    mlp_to_onnx(mlp.weights, mlp.activations, spec, path, producer="rlcc-train", doc=doc)
