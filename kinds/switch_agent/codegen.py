"""Switch-agent firmware: ``ClassEnsemble`` + ``SwitchAgentSpec`` -> ``<name>.c``, ``<name>.h`` and
the manifest ``<name>.rlcc.json`` (kind ``switch_agent``) for the switch SDK stub (``switch_sdk.h``).

The C implements ``rlcc.fxp.switch_agent`` exactly: the collector, the window kept in the
per-queue context, the oblivious trees (unsigned ``x > threshold``), int32 scores, the first-max
argmax and the template lookup. Every number the template prints is derived here.

Manifest (format ``rlcc.firmware`` v1, ``"kind": "switch_agent"``)::

    {"format", "version", "kind": "switch_agent", "rlcc_version", "name", "target",
     "files": {"c"|"h": {"path", "sha256"}}, "model_sha256", "spec": SwitchAgentSpec dict,
     "model": ClassEnsemble dict, "threshold_provenance": per tree and level, "source_info",
     "compile": the recipe rlcc.kinds.switch_agent.distill.switch_recipe wrote}
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from rlcc import textio
from rlcc import __version__
from rlcc.class_trees import ClassEnsemble
from rlcc.codegen.context import c_ident
from rlcc.codegen.manifest import FORMAT, VERSION, sha256_text
from rlcc.codegen.render import render
from rlcc.errors import BadInputError
from rlcc.kinds.switch_agent.vectors import CTX_ACTION, CTX_HIST
from rlcc.switch_spec import FEATURES, STAT_MAX, UTIL_ONE, SwitchAgentSpec
from rlcc.targets import DEFAULT_TARGET, Target, get_target

KIND = "switch_agent"
SDK_HEADER = "switch_sdk.h"
C_TEMPLATE = "switch_agent.c.j2"
H_TEMPLATE = "switch_agent.h.j2"
LEAVES_PER_ROW = 8
INT32_MIN = -(1 << 31)


def check_model(spec: SwitchAgentSpec, model: ClassEnsemble) -> None:
    """The classifier must read the spec's window and choose among its templates."""
    if model.n_inputs != spec.input_width or model.n_classes != spec.n_actions:
        raise BadInputError(f"classifier has {model.n_inputs} inputs and {model.n_classes} classes; the switch-agent "
                            f"spec needs {spec.input_width} inputs and {spec.n_actions} classes")


def model_sha256(model: ClassEnsemble) -> str:
    return hashlib.sha256(json.dumps(model.to_dict(), sort_keys=True).encode()).hexdigest()


def _int(v: int) -> str:
    return "(-2147483647 - 1)" if v == INT32_MIN else str(v)


def _rows(values: list[int], width: int, what: str) -> list[str]:
    """Initializer lines of ``values`` (rows of ``width``), at most LEAVES_PER_ROW per line, each
    ending in a comment naming its row, in clang-format's column layout of a braced list (column
    width: the widest cell + 1), as the NIC templates do."""
    lines: list[tuple[list[str], str]] = []
    for r in range(0, len(values), width):
        for c in range(0, width, LEAVES_PER_ROW):
            chunk = [_int(v) + "," for v in values[r + c : r + min(c + LEAVES_PER_ROW, width)]]
            where = f"{what} {r // width}" if width <= LEAVES_PER_ROW else f"{what} {r // width}, classes {c}.."
            lines.append((chunk, where))
    n_cols = max((len(cells) for cells, _ in lines), default=0)
    widths = [max(len(cells[j]) for cells, _ in lines if j < len(cells)) for j in range(n_cols)]
    return [" ".join(cell.ljust(widths[j]) if j < len(cells) - 1 else cell for j, cell in enumerate(cells))
            + f" /* {where} */" for cells, where in lines]


def _input_macro(P: str, name: str) -> str:
    """``qlen[t-2]`` -> ``<P>IN_QLEN_T2``, ``qlen[t]`` -> ``<P>IN_QLEN_T0``."""
    base, _, ago = name.partition("[t")
    return f"{P}IN_{base.upper()}_T{ago.strip('-]') or '0'}"


def describe_threshold(spec: SwitchAgentSpec, input_index: int, threshold: int) -> str:
    """The split ``x > threshold`` in the feature's units (provenance comment and manifest)."""
    name = spec.input_names()[input_index]
    feature = spec.features[input_index % spec.n_features]
    if threshold < 0:
        return f"{name} > {threshold}: always true"
    if threshold >= int(spec.feature_max()[input_index % spec.n_features]):
        return f"{name} > {threshold}: never true (above the feature's range)"
    if feature == "qlen":
        return f"{name} > {threshold} bytes"
    if feature in ("tx_util", "mark_util"):
        return f"{name} > {threshold}/{UTIL_ONE} = {threshold / UTIL_ONE:.6g} of the port's bytes per interval"
    return f"{name} > template {threshold}"


def _feature_code(name: str, p: str, P: str) -> str:
    return {
        "qlen": "st->qlen_bytes",
        "tx_util": f"{p}util_q16(st->tx_bytes, info->util_mul)",
        "mark_util": f"{p}util_q16({p}marked_bytes(st->marked_pkts), info->util_mul)",
        "ecn_action": "action",
    }[name]


def build_context(spec: SwitchAgentSpec, model: ClassEnsemble, name: str,
                  source_info: dict[str, Any] | None = None) -> dict[str, Any]:
    check_model(spec, model)
    ident = c_ident(name)
    p, P, IDENT = ident + "_", ident.upper() + "_", ident.upper()
    names = spec.input_names()
    inputs = [{"index": i, "name": n, "macro": _input_macro(P, n)} for i, n in enumerate(names)]
    features = [{"index": i, "name": f, "macro": f"{P}F_{f.upper()}", "meaning": FEATURES[f],
                 "c_code": _feature_code(f, p, P)} for i, f in enumerate(spec.features)]
    trees = []
    for t, tree in enumerate(model.trees):
        splits, terms = [], []
        for k, s in enumerate(tree.splits):
            comment = describe_threshold(spec, s.input, s.threshold)
            fmax = int(spec.feature_max()[s.input % spec.n_features])
            if s.threshold < 0:
                splits.append({"level": k, "macro": None, "comment": comment})
                terms.append(f"{1 << k}u; /* level {k}: always true */")
            elif s.threshold >= min(fmax, STAT_MAX):
                splits.append({"level": k, "macro": None, "comment": comment})
            else:
                macro = f"{P}THR_{t}_{k}"
                splits.append({"level": k, "macro": macro, "value": s.threshold, "comment": comment})
                shift = f" << {k}" if k else ""
                terms.append(f"(uint32_t)(x[{inputs[s.input]['macro']}] > {macro}){shift};")
        lines = [("leaf = " if i == 0 else "leaf |= ") + term for i, term in enumerate(terms)] or ["leaf = 0u;"]
        flat = [v for row in tree.leaves for v in row]
        trees.append({"index": t, "splits": splits, "index_lines": lines, "leaves_name": f"{p}leaves_{t}",
                      "n_leaves": len(tree.leaves), "leaf_rows": _rows(flat, model.n_classes, "leaf")})
    hist_words = (spec.history - 1) * spec.n_features
    return {
        "name": name, "ident": ident, "IDENT": IDENT, "p": p, "P": P,
        "rlcc_version": __version__, "model_sha256": model_sha256(model), "sdk_header": SDK_HEADER,
        "source_info": sorted((str(k), str(v)) for k, v in (source_info or {}).items()),
        "history": spec.history, "n_features": spec.n_features, "n_inputs": spec.input_width,
        "feature_names": ", ".join(spec.features), "interval_us": f"{spec.interval_us:g}",
        "interval_ns": spec.interval_ns, "hist_words": hist_words, "packet_bytes": spec.packet_bytes,
        "initial_action": spec.initial_action, "features": features, "inputs": inputs,
        "uses_action": "ecn_action" in spec.features,
        "uses_util": any(f in spec.features for f in ("tx_util", "mark_util")),
        "uses_mark": "mark_util" in spec.features,
        "ctx_action": CTX_ACTION, "ctx_hist": CTX_HIST,
        "action_macro": f"{P}F_ECN_ACTION",
        "templates": [{"index": i, "kmin": a.kmin_bytes, "kmax": a.kmax_bytes, "pmax_q16": a.pmax_q16,
                       "label": a.label()} for i, a in enumerate(spec.actions)],
        "n_classes": model.n_classes, "leaf_frac_bits": model.leaf_frac_bits, "bias_rows": _rows(list(model.bias), model.n_classes, "bias"),
        "trees": trees, "max_depth": model.max_depth, "n_operations": model.n_operations,
        "leaf_bytes": 4 * sum(len(t.leaves) * model.n_classes for t in model.trees),
    }


def render_switch_sources(spec: SwitchAgentSpec, model: ClassEnsemble, name: str = "firmware",
                          source_info: dict[str, Any] | None = None) -> tuple[dict[str, str], dict[str, Any]]:
    """({"c": text, "h": text}, template context) without writing anything."""
    context = build_context(spec, model, name, source_info)
    return {"c": render(C_TEMPLATE, context), "h": render(H_TEMPLATE, context)}, context


def threshold_provenance(spec: SwitchAgentSpec, model: ClassEnsemble) -> list[list[str]]:
    return [[describe_threshold(spec, s.input, s.threshold) for s in t.splits] for t in model.trees]


def generate_switch_firmware(spec: SwitchAgentSpec, model: ClassEnsemble, out_dir: str | Path,
                             target: str | Target = DEFAULT_TARGET, name: str = "firmware",
                             source_info: dict[str, Any] | None = None,
                             recipe: dict[str, Any] | None = None) -> dict[str, Path]:
    """Write ``<name>.c``, ``<name>.h`` and ``<name>.rlcc.json``; byte-identical for identical inputs.

    ``target`` (the C is the same for every target) is recorded as the manifest's default for
    verification; ``recipe``: how the model was compiled from its policy (the manifest's
    ``compile`` entry, ``rlcc.verify.provenance``). Returns {"c", "h", "manifest"} -> path.
    """
    target_rec = get_target(target)
    texts, context = render_switch_sources(spec, model, name, source_info)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"c": f"{name}.c", "h": f"{name}.h"}
    manifest = {
        "format": FORMAT, "version": VERSION, "kind": KIND, "rlcc_version": __version__, "name": name,
        "target": target_rec.name,
        "files": {k: {"path": files[k], "sha256": sha256_text(texts[k])} for k in sorted(files)},
        "model_sha256": context["model_sha256"], "spec": spec.to_dict(), "model": model.to_dict(),
        "threshold_provenance": threshold_provenance(spec, model), "source_info": dict(context["source_info"]),
        **({"compile": recipe} if recipe is not None else {}),
    }
    paths = {k: out / f for k, f in files.items()}
    for k, path in paths.items():
        path.write_text(texts[k], encoding="utf-8", newline="\n")
    paths["manifest"] = out / f"{name}.rlcc.json"
    paths["manifest"].write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n", encoding="utf-8", newline="\n")
    return paths


def load_switch_manifest(path: str | Path) -> tuple[dict[str, Any], SwitchAgentSpec, ClassEnsemble]:
    """Read a switch-agent manifest: (raw dict, spec, classifier); BadInputError when malformed."""
    data = textio.load_json(path, "firmware manifest")
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("kind") != KIND:
        raise BadInputError(f"{path}: not an rlcc switch-agent firmware manifest")
    try:
        spec = SwitchAgentSpec.from_dict(data["spec"])
        model = ClassEnsemble.from_dict(data["model"])
    except KeyError as exc:
        raise BadInputError(f"{path}: malformed manifest (missing {exc})") from None
    except BadInputError as exc:
        raise BadInputError(f"{path}: {exc}") from None
    check_model(spec, model)
    return data, spec, model


def manifest_kind(path: str | Path) -> str | None:
    """The ``kind`` of a firmware manifest (None: a NIC manifest, or unreadable: its loader reports)."""
    try:
        data = textio.load_json(path, "firmware manifest")
    except textio.InputFileError:
        return None
    return data.get("kind") if isinstance(data, dict) else None
