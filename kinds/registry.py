"""The registered model kinds. A new kind is a folder under ``kinds/`` with a ``ModelKind``
subclass, and one ``register`` line here (or a call at run time, as the tests' toy kind does)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlcc.errors import BadInputError
from rlcc.kinds.base import ModelKind
from rlcc.kinds.int8.kind import Int8Kind
from rlcc.kinds.switch_agent.kind import SwitchAgentKind
from rlcc.kinds.trees.kind import TreesKind
from rlcc.verify.provenance import Rebuild

KINDS: dict[str, ModelKind] = {}


def register(kind: ModelKind) -> ModelKind:
    """Add ``kind`` (replacing one of the same name); returns it."""
    KINDS[kind.name] = kind
    return kind


register(TreesKind())  # the first registered is the default
register(Int8Kind())
register(SwitchAgentKind())


def default() -> ModelKind:
    return next(iter(KINDS.values()))


def selectable() -> list[str]:
    """``--backend`` values: the kinds a user chooses (not those a model file declares)."""
    return [name for name, kind in KINDS.items() if kind.selectable]


def get(name: str) -> ModelKind:
    if name not in KINDS or not KINDS[name].selectable:
        raise BadInputError(f"--backend {name!r}: no such backend (choose from {', '.join(selectable() + ['auto'])})")
    return KINDS[name]


def declared_by(model: Path) -> ModelKind | None:
    """The kind ``model`` declares itself to be (the switch agent's metadata), if any."""
    return next((k for k in KINDS.values() if k.detects(model)), None)


def for_manifest(raw: dict[str, Any]) -> ModelKind:
    """The kind whose firmware ``raw`` (a manifest) is; the default kind for a manifest of none."""
    return next((k for k in KINDS.values() if k.owns_manifest(raw)), default())


def rebuilders() -> dict[str, Rebuild]:
    """Every kind's recompile, by the backend a manifest's recipe names (``rlcc-verify --policy``)."""
    return {name: kind.rebuild for name, kind in KINDS.items()}
