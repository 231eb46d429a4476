"""``generate``: FxModel -> ``<name>.c``, ``<name>.h`` and the manifest ``<name>.rlcc.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlcc.codegen import manifest
from rlcc.codegen.context import build_context, runtime_header_text
from rlcc.codegen.render import render
from rlcc.codegen.sdk_flavours import DEFAULT_FLAVOUR, SdkChoice, choose
from rlcc.errors import BadInputError
from rlcc.fxp.int8_net import Int8Net, is_int8
from rlcc.fxp.model import FxModel
from rlcc.fxp.vectors import Vectors, default_vectors

INT8_TEMPLATE = "firmware_int8.c.j2"  # the tree template with the decision replaced by the network


def render_sources(model: FxModel | Int8Net, name: str = "firmware", tree_style: str = "oblivious",
                   source_info: dict[str, Any] | None = None,
                   inline_runtime: bool = False, sdk: SdkChoice | None = None) -> tuple[dict[str, str], dict[str, Any]]:
    """The C sources as text ({"c": ..., "h": ...}) and the template context used.

    By default ``<name>.c`` includes the runtime header ``rlcc_runtime.h`` (SDK include
    directory: ``rlcc.firmware_sdk_stub.include_dirs()``); ``inline_runtime`` expands that include
    at render time from the same header file, giving one self-contained ``.c``. ``sdk``: the SDK
    flavour (``rlcc.codegen.sdk_flavours``; default the stub); the model part is the same for all.
    """
    sdk = sdk or choose()
    c_template = sdk.flavour.c_template
    if is_int8(model):
        from rlcc.codegen.int8_context import build_int8_context

        if sdk.flavour.name != DEFAULT_FLAVOUR:
            raise BadInputError(f"--backend int8 generates C for the {DEFAULT_FLAVOUR} SDK only, not --sdk {sdk.flavour.name}")
        context = build_int8_context(model, name, source_info or {}, sdk)
        c_template = INT8_TEMPLATE
    else:
        context = build_context(model, name, tree_style, source_info or {}, sdk)
    if inline_runtime:
        context["runtime_text"] = runtime_header_text().rstrip("\n")
    return {"c": render(c_template, context), "h": render(sdk.flavour.h_template, context)}, context


def generate(model: FxModel | Int8Net, out_dir: str | Path, name: str = "firmware", tree_style: str = "oblivious",
             vectors: Vectors | None = None, source_info: dict[str, Any] | None = None,
             inline_runtime: bool = False, sdk: SdkChoice | None = None,
             recipe: dict[str, Any] | None = None) -> dict[str, Path]:
    """Write ``<name>.c``, ``<name>.h`` and ``<name>.rlcc.json`` into ``out_dir``, plus the flavour's
    extra files (``--sdk doca``: ``INTEGRATION.md``).

    ``vectors`` defaults to :func:`rlcc.fxp.vectors.default_vectors`; ``source_info`` (e.g. the
    source policy's path and hash) is copied into the C header comment and the manifest.
    ``inline_runtime``, ``sdk``: see :func:`render_sources`. Output is byte-identical for identical
    inputs. ``recipe``: how the model was compiled from its policy (the manifest's ``compile``
    entry, which ``rlcc-verify --policy`` recompiles from). Returns {"c", "h", "manifest", extra
    file names...} -> path.
    """
    sdk = sdk or choose()
    texts, context = render_sources(model, name, tree_style, source_info, inline_runtime, sdk)  # checks name first
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if vectors is None:
        vectors = default_vectors(model)
    files = {"c": (f"{name}.c", texts["c"]), "h": (f"{name}.h", texts["h"])}
    for template, file_name in sdk.flavour.extra_templates:
        files[file_name] = (file_name, render(template, context))
    data = manifest.build(model, context, files, vectors, sdk.manifest_entry(), recipe)
    paths = {key: out / file_name for key, (file_name, _) in files.items()}
    paths["manifest"] = out / f"{name}.rlcc.json"
    for key, (_, text) in files.items():
        paths[key].write_text(text, encoding="utf-8", newline="\n")
    paths["manifest"].write_text(manifest.dumps(data), encoding="utf-8", newline="\n")
    return paths
