"""Console entry points: `rlcc` (group) and the standalone `rlcc-compile`, `rlcc-verify`, `rlcc-sim`, `rlcc-train`."""

from __future__ import annotations

import click
from rlcc import __version__
from rlcc.cli.common import EXIT_CODES_HELP, PROGS
from rlcc.cli.compile import compile_command
from rlcc.cli.simulate import simulate_command
from rlcc.cli.train import train_command
from rlcc.cli.verify import verify_command

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}


class _AliasGroup(click.Group):
    """A group that also accepts old names of its commands (not listed in --help)."""

    aliases = {"simulate": "sim"}

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, self.aliases.get(cmd_name, cmd_name))


@click.group(cls=_AliasGroup, epilog=EXIT_CODES_HELP, context_settings=HELP_OPTIONS)
@click.version_option(__version__, prog_name="rlcc")
def rlcc() -> None:
    """Compile an RL congestion-control policy into verified NIC firmware.

    Pipeline: ONNX policy -> closed-loop samples (simulator) -> CatBoost trees ->
    fixed-point model -> C for a PCC-style SDK -> RISC-V emulation against a golden model.
    """


def _with_exit_codes(cmd: click.Command) -> None:
    """End ``cmd``'s help, and each subcommand's, with the exit codes."""
    cmd.epilog = EXIT_CODES_HELP
    for sub in getattr(cmd, "commands", {}).values():
        _with_exit_codes(sub)


for _cmd in (compile_command, verify_command, simulate_command, train_command):
    _with_exit_codes(_cmd)
    _cmd.context_settings = dict(HELP_OPTIONS)
    click.version_option(__version__, prog_name=PROGS[_cmd.name])(_cmd)
    rlcc.add_command(_cmd)
