"""`rlcc-verify`: check generated firmware against the golden model in the RISC-V emulator."""

from __future__ import annotations

from pathlib import Path

import click

from rlcc.cli.common import guarded
from rlcc.errors import BadInputError


@click.command("verify")
@click.argument("firmware", type=click.Path(dir_okay=False, path_type=Path))
@guarded("rlcc-verify")
def verify_command(firmware: Path) -> None:
    """Cross-compile FIRMWARE (C) and check it bit for bit against its manifest's golden model."""
    if not firmware.is_file():
        raise BadInputError(f"{firmware}: no such file")
    click.echo("rlcc-verify: emulation and verification are not yet implemented")
