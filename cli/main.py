"""Console entry points: `rlcc` (group) and the standalone `rlcc-compile`, `rlcc-verify`, `rlcc-sim`, `rlcc-train`.

Each standalone program is its command module's command (setup.cfg), so it imports only its own
stack; the group imports a command's module when that command runs (or --help lists them all)."""

from __future__ import annotations

import importlib
from typing import Any

import click
from rlcc import __version__
from rlcc.cli.common import EXIT_CODES_HELP, HELP_OPTIONS

# Command name -> (module, attribute): the modules import heavy stacks (the distiller and the
# simulator for compile and sim), so the group imports one only when its command is used.
COMMANDS = {
    "compile": ("rlcc.cli.compile", "compile_command"),
    "sim": ("rlcc.cli.simulate", "simulate_command"),
    "train": ("rlcc.cli.train", "train_command"),
    "verify": ("rlcc.cli.verify", "verify_command"),
}


def command(name: str) -> click.Command:
    """The click command ``name`` (a key of COMMANDS), importing its module."""
    module, attr = COMMANDS[name]
    return getattr(importlib.import_module(module), attr)


class _LazyGroup(click.Group):
    """A group whose commands load on use; it also accepts old names of its commands (not listed in --help)."""

    aliases = {"simulate": "sim"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        name = self.aliases.get(cmd_name, cmd_name)
        return command(name) if name in COMMANDS else None


@click.group(cls=_LazyGroup, epilog=EXIT_CODES_HELP, context_settings=HELP_OPTIONS)
@click.version_option(__version__, prog_name="rlcc")
def rlcc() -> None:
    """Compile an RL congestion-control policy into verified NIC firmware.

    Pipeline: ONNX policy -> closed-loop samples (simulator) -> CatBoost trees ->
    fixed-point model -> C for a PCC-style SDK -> RISC-V emulation against a golden model.
    """


def __getattr__(name: str) -> Any:
    """``rlcc.cli.main.verify_command`` and the like: each command by its attribute name, loaded on use."""
    for cmd_name, (_, attr) in COMMANDS.items():
        if attr == name:
            return command(cmd_name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
