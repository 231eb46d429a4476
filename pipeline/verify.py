"""``rlcc-verify`` end to end: the manifest names the firmware's kind; that kind verifies it,
with every kind's recompile at hand for ``--policy`` (a recipe names its own backend)."""

from __future__ import annotations

import dataclasses
from typing import Any

from rlcc import textio
from rlcc.errors import BadInputError, ExitCode
from rlcc.kinds import registry
from rlcc.kinds.base import Log, ModelKind, VerifyOutcome, VerifyRequest
from rlcc.verify.check import assurance_level


def kind_of(request: VerifyRequest) -> ModelKind:
    """The kind the manifest declares; the default kind when it cannot be read (its loader reports why)."""
    try:
        raw = textio.load_json(request.manifest, "firmware manifest")
    except textio.InputFileError:
        return registry.default()
    return registry.for_manifest(raw if isinstance(raw, dict) else {})


def verify(request: VerifyRequest, log: Log = lambda _m: None) -> VerifyOutcome:
    """Verify ``request.firmware`` with its kind; refuses flags that kind does not read."""
    kind = kind_of(request)
    unsupported = [flag for key, flag in kind.refused_verify_flags() if request.options.get(key)]
    if unsupported:
        raise BadInputError(f"{', '.join(unsupported)}: not supported for {kind.name.replace('_', '-')} firmware")
    return kind.verify(dataclasses.replace(request, rebuilders=registry.rebuilders()), log)


def verdict(outcome: VerifyOutcome, require: str) -> tuple[ExitCode, str]:
    """The command's exit code and its line: the first failed check's error, else ``--require
    proven`` unmet (exit 10), else PASS with what it rests on (the level and the anchor)."""
    failures = outcome.failures()
    if failures:
        return failures[0]
    if require == "proven" and assurance_level(outcome.proof) != "proven":
        proof: dict[str, Any] | None = outcome.proof
        why = (proof.get("assurance") or f"not proven ({proof['status']}: {proof.get('detail')})") if proof is not None \
            else "no proof ran"
        return ExitCode.UNPROVEN, f"--require proven: {why}"
    prov = outcome.provenance
    anchor = "relative to the manifest" if prov is None or prov.root == "manifest" else f"anchored to the {prov.root}"
    return ExitCode.OK, f"PASS ({outcome.level}, {anchor})"
