"""SDK flavours of generated firmware: which device API the C is written against.

One record per flavour, the one place that knows its name (the CLI's ``--sdk`` choices), its
templates, the extra files ``rlcc-compile`` writes, and what ``rlcc-verify`` links it with. The
model part of the C is the same template for every flavour (``templates/firmware.c.j2``); a flavour
only swaps the SDK glue around it, and its harness adapter maps the SDK's calls back onto the
stub harness, so the same golden model, vectors, proof and cycle counts apply.

- ``stub`` (default): rlcc's own SDK stub names (``pcc_*``, ``user_algo``); ``firmware_sdk_stub``.
- ``doca``: the public NVIDIA DOCA PCC device API (``doca_pcc_dev_user_algo`` ...), one algorithm
  in one slot of the DOCA PCC reference application. The DOCA limits below are those of the public
  ``doca_pcc_dev.h`` (DOCA 2.5 LTS; the parameter and counter limits are the smallest over the device
  layouts of ``rlcc.firmware_sdk_stub.doca_layout``, since one generated C runs on each);
  ``tests/sdk/test_doca_headers.py`` checks the contract headers in ``firmware_sdk_stub/`` against them.
  The layout the DOCA build is verified against is part of the choice (``rlcc-verify --doca-layout``).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from rlcc import textio
from rlcc.errors import BadInputError
from rlcc.firmware_sdk_stub.doca_layout import DEFAULT_LAYOUT, LAYOUTS, MIN_MAX_PARAMS, DocaLayout, get_layout
from rlcc.fxp.model import PARAM_RULE, U32_MAX

# ---- DOCA PCC device API limits (doca_pcc_dev.h, DOCA 2.5 LTS) ----
DOCA_MAX_NUM_PORTS = 4  # DOCA_PCC_DEV_MAX_NUM_PORTS
DOCA_MAX_NUM_USER_SLOTS = 8  # DOCA_PCC_DEV_MAX_NUM_USER_SLOTS: user algorithm slots 0..7
DOCA_MAX_NUM_ALGOS = 8  # DOCA_PCC_DEV_MAX_NUM_ALGOS: algorithm indices 0..7
DOCA_MAX_NUM_PARAMS_PER_ALGO = MIN_MAX_PARAMS  # DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO (0x1E in DOCA 2.5)
DOCA_MAX_NUM_COUNTERS_PER_ALGO = min(lay.max_counters for lay in LAYOUTS.values())  # ..._COUNTERS_PER_ALGO
DOCA_ALGO_SLOT_INTERNAL = 0xF  # DOCA_PCC_DEV_ALGO_SLOT_INTERNAL: the library's built-in algorithm
# algo_id reported in the algorithm metadata (doca_pcc_dev_algo_meta_data.algo_id): rlcc's choice,
# "RL" in ASCII; the reference application's RTT template uses 0xBFFF.
DOCA_ALGO_ID = 0x524C

STUB = "stub"
DOCA = "doca"
DEFAULT_FLAVOUR = STUB


@dataclasses.dataclass(frozen=True)
class Flavour:
    """How one SDK flavour is generated and verified."""

    name: str
    title: str  # shown in the generated file's first comment line
    c_template: str
    h_template: str
    extra_templates: tuple[tuple[str, str], ...]  # (template, output file name) written beside the C
    adapter_sources: tuple[str, ...]  # SDK-directory files linked between the harness and the firmware
    has_slot: bool  # the firmware serves one algorithm slot (``--slot``)


FLAVOURS: dict[str, Flavour] = {
    STUB: Flavour(STUB, "PCC-style SDK", "firmware.c.j2", "firmware.h.j2", (), (), False),
    DOCA: Flavour(DOCA, "NVIDIA DOCA PCC device API", "firmware_doca.c.j2", "firmware_doca.h.j2",
                  (("integration_doca.md.j2", "INTEGRATION.md"),), ("harness_doca.c", "doca_pcc_dev_stub.c"), True),
}
FLAVOUR_NAMES: tuple[str, ...] = tuple(FLAVOURS)


@dataclasses.dataclass(frozen=True)
class SdkChoice:
    """A flavour plus its placement: for DOCA the algorithm slot and index (index = slot, as
    ``doca_pcc_dev.h`` recommends: "if possible it should be equal to the algo_idx")."""

    flavour: Flavour
    slot: int = 0
    layout: DocaLayout = LAYOUTS[DEFAULT_LAYOUT]  # DOCA: the device layout the build is verified against

    @property
    def algo_index(self) -> int:
        return self.slot

    def with_doca_layout(self, name: str | None) -> "SdkChoice":
        """This choice verified against DOCA layout ``name`` (None: unchanged). BadInputError for an
        unknown layout or a flavour that is not DOCA's."""
        if name is None:
            return self
        if self.flavour.name != DOCA:
            raise BadInputError(f"--doca-layout applies to --sdk {DOCA} firmware only; this is {self.flavour.name} firmware")
        return dataclasses.replace(self, layout=get_layout(name))

    def manifest_entry(self) -> dict[str, Any] | None:
        """The manifest's ``sdk`` entry; None for the stub, whose manifests predate flavours."""
        if self.flavour.name == STUB:
            return None
        return {"flavour": self.flavour.name, "slot": self.slot, "algo_index": self.algo_index}

    def build_defines(self) -> list[str]:
        """Compiler definitions the harness adapter needs: the slot every record is presented at and
        the device layout (which contract header, where the adapter lays out the event words)."""
        return [f"-DRLCC_DOCA_SLOT={self.slot}u", *self.layout.build_defines()] if self.flavour.name == DOCA else []


def choose(name: str = DEFAULT_FLAVOUR, slot: int | None = None) -> SdkChoice:
    """A validated flavour choice (BadInputError, exit 3, on an unknown flavour or a slot out of range)."""
    flavour = FLAVOURS.get(name)
    if flavour is None:
        raise BadInputError(f"unknown SDK flavour {name!r}; expected one of {', '.join(FLAVOUR_NAMES)}")
    if slot is not None and not flavour.has_slot:
        raise BadInputError(f"--slot applies to --sdk {DOCA} only (the {name} flavour serves every slot)")
    slot = 0 if slot is None else slot
    if flavour.name == DOCA and not 0 <= slot < DOCA_MAX_NUM_USER_SLOTS:
        raise BadInputError(f"--slot {slot} is out of range: DOCA PCC user algorithm slots are 0..{DOCA_MAX_NUM_USER_SLOTS - 1} "
                            f"(DOCA_PCC_DEV_MAX_NUM_USER_SLOTS; {DOCA_ALGO_SLOT_INTERNAL:#x} is the library's own)")
    return SdkChoice(flavour, slot)


def check_param_count(choice: SdkChoice, n_params: int) -> None:
    """The flavour's documented limit on an algorithm's parameters (BadInputError past it)."""
    if choice.flavour.name == DOCA and n_params > DOCA_MAX_NUM_PARAMS_PER_ALGO:
        raise BadInputError(f"the model has {n_params} host parameters; a DOCA PCC algorithm may have at most "
                            f"{DOCA_MAX_NUM_PARAMS_PER_ALGO} (DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO)")


def from_manifest(data: dict[str, Any]) -> SdkChoice:
    """The flavour a manifest was generated for (no ``sdk`` entry: the stub)."""
    entry = data.get("sdk")
    if entry is None:
        return choose(STUB)
    if not isinstance(entry, dict):
        raise BadInputError("malformed manifest: 'sdk' must be an object")
    try:
        return choose(str(entry["flavour"]), int(entry["slot"]) if "slot" in entry else None)
    except (KeyError, TypeError, ValueError) as exc:
        raise BadInputError(f"malformed manifest 'sdk' entry ({type(exc).__name__}: {exc})") from None


# The provenance line firmware_doca.c.j2 writes; read only where no manifest is at hand.
_DOCA_SOURCE_LINE = re.compile(r"^ \* DOCA PCC: algorithm index (\d+) in slot (\d+) of every port", re.M)


def for_firmware(firmware_c: str | Path) -> SdkChoice:
    """The flavour of ``firmware_c`` from the manifest beside it (``<stem>.rlcc.json``). Without
    one (a copy of generated C, e.g. a mutant built in a scratch directory) the DOCA flavour's
    header comment says which slot; any other C is the stub's (e.g. a hand-written algorithm)."""
    path = Path(firmware_c)
    manifest = path.with_name(path.stem + ".rlcc.json")
    if not manifest.is_file():
        text = textio.read_bytes(path, "firmware", textio.MAX_TEXT_BYTES).decode("utf-8", "replace") if path.is_file() else ""
        found = _DOCA_SOURCE_LINE.search(text)
        return choose(DOCA, int(found.group(2))) if found else choose(STUB)
    data = textio.load_json(manifest, "firmware manifest")
    return from_manifest(data if isinstance(data, dict) else {})


def template_context(choice: SdkChoice, ident: str, params: list[Any], runtime_version: int,
                     model_sha256: str) -> dict[str, Any]:
    """What the flavour's templates print beyond the shared model: ``sdk`` (title, slot, index) and,
    for DOCA, ``doca`` (registration strings, numeric parameter limits, metadata)."""
    sdk = {"name": choice.flavour.name, "title": choice.flavour.title, "slot": choice.slot,
           "algo_index": choice.algo_index}
    if choice.flavour.name != DOCA:
        return {"sdk": sdk}
    check_param_count(choice, len(params))
    descs = [{"key": p.key, "name": f"{ident}_param_desc_{p.id}", "text": f"{p.key}, valid {p.rule}",
              "min": f"{_numeric_bound(p.key, 'lo')}u", "max": f"{_numeric_bound(p.key, 'hi')}u"} for p in params]
    doca = {"algo_desc": f"rlcc {ident}, model sha256 {model_sha256[:16]}", "param_descs": descs,
            "algo_id": f"{DOCA_ALGO_ID:#06x}", "major": runtime_version, "minor": 0,
            "desc_bytes": max(len(d["text"]) for d in descs) + 1}
    return {"sdk": sdk, "doca": doca}


def _numeric_bound(key: str, side: str) -> int:
    """A parameter's numeric bound for ``doca_pcc_dev_algo_init_param``: the rule's number, or where
    the rule names another parameter, that parameter's own bound on the same side (the
    cross-parameter rule itself is checked in ``doca_pcc_dev_user_set_algo_params``)."""
    bound = getattr(PARAM_RULE[key], side)
    while isinstance(bound, str):
        bound = getattr(PARAM_RULE[bound], side)
    return min(max(int(bound), 0), U32_MAX)
