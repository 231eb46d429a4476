"""`rlcc-sim` / `rlcc simulate`: run a simulator scenario (being built; see issue 3)."""

import click

from rlcc.cli.common import guarded


@click.command("simulate")
@guarded("rlcc-sim")
def simulate_command() -> None:
    """Run a datacenter simulator scenario and print its metrics."""
    click.echo("rlcc-sim: the simulator is not yet implemented")
