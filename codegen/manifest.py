"""The firmware manifest ``<name>.rlcc.json``: everything a verifier needs to check the C.

Schema (format ``rlcc.firmware``, version 1)::

    {"format": "rlcc.firmware", "version": 1, "rlcc_version": str, "name": str,
     "tree_style": one of rlcc.codegen.context.TREE_STYLES ("bitmask" | "bitmask-branchfree" | "oblivious" | "ifelse"),
     "files": {"c": {"path": "<name>.c", "sha256": hex}, "h": {"path": "<name>.h", "sha256": hex}},
     "model_sha256": hex of the FxModel JSON, "spec": ObservationSpec dict, "model": FxModel dict,
     "runtime": {"header", "version", "sha256", "inlined"} of rlcc_runtime.h,
     "threshold_provenance": per tree and level, scaled border -> raw -> device integer,
     "parameters": [{"id", "name", "default", "provenance", "valid"}],
     "events": {"enabled": [names], "disabled": [names], "disable_event_mask": int},
     "source_info": {str: str},
     "sdk": {"flavour": "doca", "slot": int, "algo_index": int} (only for a flavour other than the stub),
     "backend": "int8" (only for an int8 network, ``rlcc.fxp.int8_net``; "model" is then its JSON),
     "compile": {"backend", "options", "spec", "budget_cycles", "target"}: how rlcc-compile made the model
                 from the policy ``source_info`` names (``rlcc.verify.provenance`` recompiles from it),
     "vectors": {"count": N, "ctx_in": [[12 ints]], "event": [[8 ints]], "attr": [ints],
                 "ctx_out": [[12 ints]], "rate": [ints], "rtt_req": [ints], "targets": [strs]} (optional)}

The manifest describes the model and its provenance; verification generates its vectors from the
model (``rlcc.verify.generators``). ``vectors`` is a small pinned set (``pinned_vectors``: chained
events from a zeroed context) for a replay of the C without rlcc (older manifests carried
~2,000 and still load). They are the golden model's outputs (``rlcc.fxp.vectors``); the C (even
hand-edited) must reproduce them through user_init + user_algo with default parameters. ``targets`` names what each
vector was built to observe (``rlcc.verify.observable`` ids such as ``split:t3:l2:T+1``, or the
generator: "boundary", "edge", "random", "sequence"); manifests without it load with "" tags.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from rlcc import textio
from rlcc import formats as fmt
from rlcc.errors import BadInputError
from rlcc.fxp.int8_net import BACKEND, Int8Net, load_model_dict
from rlcc.fxp.model import FxModel
from rlcc.fxp.quantize import input_affine
from rlcc.fxp.vectors import Vectors, expected
from rlcc.codegen.context import RUNTIME_HEADER, runtime_header_text

FORMAT = "rlcc.firmware"
VERSION = 1


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build(model: FxModel, context: dict[str, Any], files: dict[str, tuple[str, str]], vectors: Vectors | None,
          sdk: dict[str, Any] | None = None, recipe: dict[str, Any] | None = None) -> dict[str, Any]:
    """Manifest dict; ``files`` maps "c"/"h" (and a flavour's extra files) to (file name, text);
    ``sdk``: the flavour entry (``SdkChoice.manifest_entry``), absent for the stub; ``recipe``:
    the compile recipe (absent for a model not compiled from a policy)."""
    names = {v: k for k, v in fmt.EVENT_NAMES.items()}
    extra = {} if sdk is None else {"sdk": sdk}
    if recipe is not None:
        extra["compile"] = recipe
    if vectors is not None:
        extra["vectors"] = vectors.to_dict()
    if model.backend != FxModel.backend:  # absent: the tree backend (manifests before backends existed read alike)
        extra["backend"] = model.backend
    return {
        **extra,
        "format": FORMAT,
        "version": VERSION,
        "rlcc_version": context["rlcc_version"],
        "name": context["name"],
        "tree_style": context["tree_style"],
        "files": {k: {"path": path, "sha256": sha256_text(text)} for k, (path, text) in sorted(files.items())},
        "model_sha256": context["model_sha256"],
        "runtime": {"header": RUNTIME_HEADER, "version": context["runtime_version"],
                    "sha256": sha256_text(runtime_header_text()), "inlined": context["runtime_text"] is not None},
        "threshold_provenance": threshold_provenance(model),
        "spec": model.spec.to_dict(),
        "model": model.to_dict(),
        "parameters": [
            {"id": p.id, "name": p.key, "default": p.default, "provenance": p.provenance, "valid": p.rule}
            for p in context["params"]
        ],
        "events": {
            "enabled": context["enabled_events"],
            "disabled": context["disabled_events"],
            "disable_event_mask": sum(1 << names[e] for e in context["disabled_events"]),
        },
        "source_info": dict(context["source_info"]),
    }


def threshold_provenance(model: FxModel) -> list[list[str]]:
    """Per tree and level, where the integer threshold comes from (the C shows only its real value)."""
    spec = model.spec
    names = spec.student_input_names()
    out = []
    for tree in model.trees:
        rows = []
        for s in tree.splits:
            scale, offset, bits = input_affine(spec, s.input)
            raw = (s.border - offset) / scale
            rows.append(f"{names[s.input]} {s.op} {s.threshold} (Q{bits}): scaled border {s.border!r} -> raw "
                        f"({s.border!r} - {offset!r}) / {scale!r} = {raw!r} -> * 2^{bits} = {raw * 2**bits!r}")
        out.append(rows)
    return out


def dumps(manifest: dict[str, Any]) -> str:
    """Canonical JSON (sorted keys); vector columns are written one row per line."""
    if "vectors" not in manifest:
        return json.dumps(manifest, sort_keys=True, indent=1) + "\n"
    placeholder = "@@vectors@@"
    text = json.dumps({**manifest, "vectors": placeholder}, sort_keys=True, indent=1)
    return text.replace(json.dumps(placeholder), _vectors_json(manifest["vectors"])) + "\n"


def _vectors_json(vectors: dict[str, Any]) -> str:
    parts = []
    for key in sorted(vectors):
        value = vectors[key]
        if isinstance(value, list) and value and isinstance(value[0], list):
            rows = ",\n   ".join(json.dumps(r, separators=(",", ":")) for r in value)
            parts.append(f'  "{key}": [\n   {rows}\n  ]')
        else:
            parts.append(f'  "{key}": {json.dumps(value, separators=(",", ":"))}')
    return "{\n" + ",\n".join(parts) + "\n }"


def load(path: str) -> tuple[dict[str, Any], FxModel | Int8Net, Vectors]:
    """Read a manifest: (raw dict, model (an ``Int8Net`` for ``"backend": "int8"``), vectors)."""
    data = textio.load_json(path, "firmware manifest")
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise BadInputError(f"{path}: not an rlcc firmware manifest ({FORMAT} v{VERSION})")
    try:
        if data.get("backend", "trees") not in ("trees", BACKEND):
            raise BadInputError(f"{path}: unknown backend {data.get('backend')!r}")
        model = load_model_dict(data["model"])
        pinned = Vectors.from_dict(data["vectors"]) if "vectors" in data else expected(model, [], [])
        return data, model, pinned
    except BadInputError as exc:
        raise BadInputError(f"{path}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise BadInputError(f"{path}: malformed manifest ({type(exc).__name__}: {exc})") from None
