"""Build firmware C into the SDK harness and run vectors through it in the emulator: the one
build-and-run sequence behind verification, mutation analysis, the cycle-budget fit and the
benchmarks.

    with firmware_build("out/firmware.c", "rv32imc") as fw:
        outputs = fw.runner().run(records_from_vectors(vectors))
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from pathlib import Path
from typing import Iterator

import numpy as np

from rlcc.codegen.sdk_flavours import SdkChoice, for_firmware
from rlcc.emulator.cycle_model import Profile, load_profile
from rlcc.fxp.vectors import Vectors
from rlcc.targets import Target, get_target
from rlcc.verify.build import build_harness_elf, firmware_footprint
from rlcc.verify.runner import HarnessRunner, records_from_vectors


@dataclasses.dataclass(frozen=True)
class FirmwareBuild:
    """A firmware linked into the harness for one target and cycle profile."""

    firmware_c: Path
    target: Target
    profile: Profile
    zbb: bool  # built with Zbb (the target allows it and the profile's core has it)
    elf: Path
    workdir: Path
    cc: str | None = None

    def runner(self) -> HarnessRunner:
        """A fresh emulator with the ELF loaded (one per process: it is not thread-safe)."""
        return HarnessRunner(self.elf, self.target.xlen, self.profile, zbb=self.zbb)

    def run(self, vectors: Vectors) -> np.ndarray:
        """Harness output records for ``vectors``, in order."""
        return self.runner().run(records_from_vectors(vectors))

    def footprint(self) -> dict[str, int]:
        """Code / rodata / data bytes of the firmware alone (see ``build.firmware_footprint``)."""
        return firmware_footprint(self.firmware_c, self.target.name, self.workdir, cc=self.cc, zbb=self.zbb)


def resolve(target: str | Target, profile: str | Path | Profile | None = None) -> tuple[Target, Profile, bool]:
    """The target record, its cycle profile (the target's default when None) and the Zbb choice."""
    t = get_target(target)
    prof = load_profile(profile if profile is not None else t.default_profile)
    return t, prof, t.uses_zbb(prof.zbb)


def build_in(workdir: Path, firmware_c: str | Path, target: str | Target, profile: str | Path | Profile | None = None,
             cc: str | None = None, flavour: SdkChoice | None = None, doca_layout: str | None = None) -> FirmwareBuild:
    """Build ``firmware_c`` into the harness ELF inside ``workdir`` (BuildError on failure).

    ``flavour``: its SDK flavour; by default the one its manifest ``<stem>.rlcc.json`` records
    (``--sdk doca`` firmware is linked with the DOCA harness adapter), the stub without a manifest.
    ``doca_layout``: the DOCA device layout to build and run it against (default: DOCA 2.5).
    """
    t, prof, zbb = resolve(target, profile)
    firmware_c = Path(firmware_c)
    choice = (flavour or for_firmware(firmware_c)).with_doca_layout(doca_layout)
    elf = build_harness_elf(firmware_c, t.name, Path(workdir), cc=cc, zbb=zbb, flavour=choice)
    return FirmwareBuild(firmware_c, t, prof, zbb, elf, Path(workdir), cc)


@contextlib.contextmanager
def firmware_build(firmware_c: str | Path, target: str | Target, profile: str | Path | Profile | None = None,
                   cc: str | None = None, doca_layout: str | None = None) -> Iterator[FirmwareBuild]:
    """``build_in`` a temporary directory that lives as long as the ``with`` block."""
    with tempfile.TemporaryDirectory(prefix="rlcc-fw-") as work:
        yield build_in(Path(work), firmware_c, target, profile, cc, doca_layout=doca_layout)


def run_firmware(firmware_c: str | Path, vectors: Vectors, target: str | Target,
                 profile: str | Path | Profile | None = None, cc: str | None = None) -> np.ndarray:
    """Build, run ``vectors`` and return the harness output records (rate, rtt_req, ctx_out, cycles...)."""
    with firmware_build(firmware_c, target, profile, cc) as fw:
        return fw.run(vectors)
