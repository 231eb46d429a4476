"""``generate``: FxModel -> ``<name>.c``, ``<name>.h`` and the manifest ``<name>.rlcc.json``."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

from rlcc.codegen import manifest
from rlcc.codegen.context import TREE_STYLES, build_context, runtime_header_text
from rlcc.codegen.render import render
from rlcc.codegen.sdk_flavours import SdkChoice, choose
from rlcc.errors import BadInputError
from rlcc.fxp.model import FxModel
from rlcc.fxp.vectors import Vectors


@dataclasses.dataclass(frozen=True)
class Lowering:
    """How a model kind's device model becomes C: its template context builder
    ``(model, name, tree_style, source_info, sdk) -> dict``, its C template (None: the SDK
    flavour's) and the SDK flavours it supports (None: every one)."""

    context: Callable[[Any, str, str, dict[str, Any], SdkChoice], dict[str, Any]]
    c_template: str | None = None
    flavours: tuple[str, ...] | None = None
    backend: str = "trees"  # for messages: ``--backend NAME``


TREES = Lowering(build_context)


def render_sources(model: Any, name: str = "firmware", tree_style: str = TREE_STYLES[0],
                   source_info: dict[str, Any] | None = None, inline_runtime: bool = False, sdk: SdkChoice | None = None,
                   lowering: Lowering = TREES) -> tuple[dict[str, str], dict[str, Any]]:
    """The C sources as text ({"c": ..., "h": ...}) and the template context used.

    By default ``<name>.c`` includes the runtime header ``rlcc_runtime.h`` (SDK include
    directory: ``rlcc.firmware_sdk_stub.include_dirs()``); ``inline_runtime`` expands that include
    at render time from the same header file, giving one self-contained ``.c``. ``sdk``: the SDK
    flavour (``rlcc.codegen.sdk_flavours``; default the stub); the model part is the same for all.
    ``lowering``: the model kind's (default the trees').
    """
    sdk = sdk or choose()
    if lowering.flavours is not None and sdk.flavour.name not in lowering.flavours:
        raise BadInputError(f"--backend {lowering.backend} generates C for the {', '.join(lowering.flavours)} SDK "
                            f"only, not --sdk {sdk.flavour.name}")
    c_template = lowering.c_template or sdk.flavour.c_template
    context = lowering.context(model, name, tree_style, source_info or {}, sdk)
    if inline_runtime:
        context["runtime_text"] = runtime_header_text().rstrip("\n")
    return {"c": render(c_template, context), "h": render(sdk.flavour.h_template, context)}, context


def generate(model: FxModel | Any, out_dir: str | Path, name: str = "firmware", tree_style: str = TREE_STYLES[0],
             vectors: Vectors | None = None, source_info: dict[str, Any] | None = None,
             inline_runtime: bool = False, sdk: SdkChoice | None = None,
             recipe: dict[str, Any] | None = None, lowering: Lowering = TREES) -> dict[str, Path]:
    """Write ``<name>.c``, ``<name>.h`` and ``<name>.rlcc.json`` into ``out_dir``, plus the flavour's
    extra files (``--sdk doca``: ``INTEGRATION.md``).

    ``vectors``: the pinned golden vectors the manifest carries (none by default; verification
    generates its own from the model); ``source_info`` (e.g. the
    source policy's path and hash) is copied into the C header comment and the manifest.
    ``inline_runtime``, ``sdk``: see :func:`render_sources`. Output is byte-identical for identical
    inputs. ``recipe``: how the model was compiled from its policy (the manifest's ``compile``
    entry, which ``rlcc-verify --policy`` recompiles from). Returns {"c", "h", "manifest", extra
    file names...} -> path.
    """
    sdk = sdk or choose()
    texts, context = render_sources(model, name, tree_style, source_info, inline_runtime, sdk, lowering)  # checks name first
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
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
