"""Console entry points: `rlcc` (group) and the standalone `rlcc-compile`, `rlcc-verify`, `rlcc-sim`, `rlcc-train`."""

from __future__ import annotations

import click

from rlcc import __version__
from rlcc.cli.compile import compile_command
from rlcc.cli.simulate import simulate_command
from rlcc.cli.train import train_command
from rlcc.cli.verify import verify_command

EXIT_CODES_HELP = """\b
Exit codes:
  0  success
  1  internal error (a bug in rlcc)
  2  bad command line
  3  bad input (model, spec, scenario, manifest, file)
  4  verification mismatch (firmware != golden model)
  5  decision-latency budget exceeded
  6  firmware build (cross-compilation) failed
  7  firmware faulted in the emulator"""


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
