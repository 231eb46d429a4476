"""ONNX export of a trained policy (spec embedded): the MLP or the recurrent LSTM."""

from __future__ import annotations

from pathlib import Path

from rlcc.onnx_export import mlp_to_onnx
from rlcc.spec import ObservationSpec
from rlcc.train.lstm import Lstm, export_lstm
from rlcc.train.mlp import Mlp


def export_mlp(mlp: Mlp, spec: ObservationSpec, path: str | Path, doc: str = "") -> None:
    """Write the MLP; float32 weights, deterministic bytes for identical weights."""
    mlp_to_onnx(mlp.weights, mlp.activations, spec, path, biases=mlp.biases, producer="rlcc-train", doc=doc)


def export_policy(policy: Mlp | Lstm, spec: ObservationSpec, path: str | Path, doc: str = "") -> None:
    """``export_mlp`` or, for the LSTM, ``export_lstm`` (explicit h/c state, spec ``recurrent`` block)."""
    if isinstance(policy, Lstm):
        export_lstm(policy, spec, path, doc=doc)
    else:
        export_mlp(policy, spec, path, doc=doc)
