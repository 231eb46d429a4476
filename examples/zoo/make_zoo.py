"""Build the policy zoo: policies rlcc's compile must hold for although rlcc did not shape them.

Every entry of ``zoo.json`` is made here, deterministically (the same bytes on every run):
``adpg`` entries are trained by ``rlcc.train`` from the entry's config overrides on top of the
trainer's defaults (the effective config is written beside the model as ``<name>.train.json``,
so ``rlcc-train --config examples/zoo/<name>.train.json`` rebuilds it alone); ``analytic``
entries are hand-designed controllers written as small ONNX networks by the functions below.

    python examples/zoo/make_zoo.py [NAME ...] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np

from rlcc.onnx_export import mlp_to_onnx
from rlcc.spec import ObservationSpec
from rlcc.train.config import DEFAULT_SPEC, TrainConfig
from rlcc.train.export import export_policy
from rlcc.train.trainer import train

HERE = Path(__file__).resolve().parent
CATALOGUE = HERE / "zoo.json"


def entries() -> list[dict]:
    return json.loads(CATALOGUE.read_text())["policies"]


def spec_of(entry: dict) -> ObservationSpec:
    return ObservationSpec.from_dict({**DEFAULT_SPEC, **entry.get("spec", {})})


# ---- hand-designed controllers: (weights, activations, biases) on the entry's spec -------------
def pd_on_delta(spec: ObservationSpec, now: float, change: float) -> tuple:
    """``y = tanh(now * D_t + change * (D_t - D_{t-1}))``, D = the scaled delta input: rate up when
    under-utilized, down when congested, harder on a change than on a persisting condition."""
    w = np.zeros((spec.input_width, 1))
    w[spec.input_index(0, 1), 0] = now + change
    w[spec.input_index(1, 1), 0] = -change
    return [w], ["tanh"], None


def proportional_linear(spec: ObservationSpec, k: float) -> tuple:
    """The factor ``1 + k * D_t`` itself (spec action type ``factor``), clipped by the clamp."""
    w = np.zeros((spec.input_width, 1))
    w[spec.input_index(0, 1), 0] = k
    return [w], ["identity"], [np.ones(1)]


def momentum(spec: ObservationSpec, k_delta: float, k_prev: float) -> tuple:
    """``y = tanh(k_delta * D_t + k_prev * P_t)``, P = previous factor - 1: positive feedback on its
    own last move (a hard case on purpose: it overshoots and rings)."""
    w = np.zeros((spec.input_width, 1))
    w[spec.input_index(0, 1), 0] = k_delta
    w[spec.input_index(0, 0), 0] = k_prev
    return [w], ["tanh"], None


ANALYTIC = {"pd_on_delta": pd_on_delta, "proportional_linear": proportional_linear, "momentum": momentum}


def make(entry: dict) -> tuple[str, float]:
    t0 = time.perf_counter()
    out = HERE / f"{entry['name']}.onnx"
    doc = f"rlcc policy zoo: {entry['name']}: {entry['about']}"
    if entry["made_by"] == "adpg":
        cfg = TrainConfig.from_dict({**entry["config"], "spec": {**DEFAULT_SPEC, **entry.get("spec", {})}})
        result = train(cfg)
        export_policy(result.policy, cfg.observation_spec(), out, doc=doc)
        (HERE / f"{entry['name']}.train.json").write_text(cfg.to_json())
    else:
        spec = spec_of(entry)
        weights, acts, biases = ANALYTIC[entry["function"]](spec, **entry["args"])
        mlp_to_onnx(weights, acts, spec, out, biases=biases, producer="rlcc-zoo", doc=doc)
    return entry["name"], time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="entries to build (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    todo = [e for e in entries() if not args.names or e["name"] in args.names]
    missing = set(args.names) - {e["name"] for e in todo}
    if missing:
        sys.exit(f"make_zoo: unknown entries: {', '.join(sorted(missing))}")
    # Longest first so that two workers finish together.
    todo.sort(key=lambda e: -e.get("config", {}).get("iterations", 0))
    with multiprocessing.get_context("spawn").Pool(max(1, args.jobs)) as pool:
        for name, seconds in pool.imap_unordered(make, todo):
            print(f"make_zoo: {name}: {seconds:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
