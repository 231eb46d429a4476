"""``generate``: FxModel -> ``<name>.c``, ``<name>.h`` and the manifest ``<name>.rlcc.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlcc.codegen import manifest
from rlcc.codegen.context import build_context, runtime_header_text
from rlcc.codegen.render import render
from rlcc.fxp.model import FxModel
from rlcc.fxp.vectors import Vectors, default_vectors


def render_sources(model: FxModel, name: str = "firmware", tree_style: str = "oblivious",
                   source_info: dict[str, Any] | None = None,
                   inline_runtime: bool = False) -> tuple[dict[str, str], dict[str, Any]]:
    """The C sources as text ({"c": ..., "h": ...}) and the template context used.

    By default ``<name>.c`` includes the runtime header ``rlcc_runtime.h`` (SDK include
    directory: ``rlcc.firmware_sdk_stub.include_dirs()``); ``inline_runtime`` expands that include
    at render time from the same header file, giving one self-contained ``.c``.
    """
    context = build_context(model, name, tree_style, source_info or {})
    if inline_runtime:
        context["runtime_text"] = runtime_header_text().rstrip("\n")
    return {"c": render("firmware.c.j2", context), "h": render("firmware.h.j2", context)}, context


def generate(model: FxModel, out_dir: str | Path, name: str = "firmware", tree_style: str = "oblivious",
             vectors: Vectors | None = None, source_info: dict[str, Any] | None = None,
             inline_runtime: bool = False) -> dict[str, Path]:
    """Write ``<name>.c``, ``<name>.h`` and ``<name>.rlcc.json`` into ``out_dir``.

    ``vectors`` defaults to :func:`rlcc.fxp.vectors.default_vectors`; ``source_info`` (e.g. the
    source policy's path and hash) is copied into the C header comment and the manifest.
    ``inline_runtime``: see :func:`render_sources`. Output is byte-identical for identical inputs. Returns {"c", "h", "manifest"} -> path.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    texts, context = render_sources(model, name, tree_style, source_info, inline_runtime)
    if vectors is None:
        vectors = default_vectors(model)
    files = {"c": (f"{name}.c", texts["c"]), "h": (f"{name}.h", texts["h"])}
    data = manifest.build(model, context, files, vectors)
    paths = {"c": out / files["c"][0], "h": out / files["h"][0], "manifest": out / f"{name}.rlcc.json"}
    for key, (_, text) in files.items():
        paths[key].write_text(text, encoding="utf-8", newline="\n")
    paths["manifest"].write_text(manifest.dumps(data), encoding="utf-8", newline="\n")
    return paths
