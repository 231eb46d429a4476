"""Console entry points: `rlcc` (group) and the standalone `rlcc-compile`, `rlcc-verify`, `rlcc-sim`, `rlcc-train`."""

from __future__ import annotations

import click
from rlcc import __version__
from rlcc.cli.compile import compile_command
from rlcc.cli.simulate import simulate_command
from rlcc.cli.train import train_command
from rlcc.cli.verify import verify_command
from rlcc.errors import EXIT_CODE_MEANINGS

EXIT_CODES_HELP = "\b\nExit codes:\n" + "\n".join(f"  {int(code)}  {text}" for code, text in EXIT_CODE_MEANINGS.items())


class _AliasGroup(click.Group):
    """A group that also accepts short aliases of its commands (not listed in --help)."""

    aliases = {"sim": "simulate"}

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, self.aliases.get(cmd_name, cmd_name))


@click.group(cls=_AliasGroup, epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rlcc")
def rlcc() -> None:
    """Compile an RL congestion-control policy into verified NIC firmware.

    Pipeline: ONNX policy -> closed-loop samples (simulator) -> CatBoost trees ->
    fixed-point model -> C for a PCC-style SDK -> RISC-V emulation against a golden model.
    """


for _cmd in (compile_command, verify_command, simulate_command, train_command):
    _cmd.epilog = EXIT_CODES_HELP
    _cmd.context_settings = {"help_option_names": ["-h", "--help"]}
    click.version_option(__version__, prog_name=f"rlcc-{_cmd.name}")(_cmd)
    rlcc.add_command(_cmd)
