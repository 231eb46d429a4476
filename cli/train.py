"""`rlcc-train` / `rlcc train`: train the RL-CC policy (MLP or LSTM) with ADPG and export it to ONNX."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click
from rlcc.cli.common import check_output_dir, check_writable_file, guarded


@click.command("train")
@click.option("--config", "config_path", type=click.Path(), help="Training config JSON (default: built-in defaults).")
@click.option("--out", "out", required=True, type=click.Path(), help="Output ONNX policy.")
@click.option("--log-dir", type=click.Path(), help="Write train_log.csv and train_log.png here.")
@click.option("--seed", type=int, help="Override the config's seed.")
@click.option("--iterations", type=int, help="Override the config's number of ADPG iterations.")
@click.option("--arch", type=click.Choice(["mlp", "lstm"]),
              help="Override the config's architecture; 'lstm' also sets the spec's history to 1.")
@click.option("--quiet", is_flag=True, help="No per-iteration progress lines.")
@guarded("rlcc-train")
def train_command(config_path, out, log_dir, seed, iterations, arch, quiet) -> None:
    """Train the shared deterministic RL-CC policy (ADPG) on small simulator scenarios.

    The policy is a bias-free MLP on the spec's input window (arch 'mlp') or an LSTM with
    per-flow h/c state fed one step per decision (arch 'lstm', trained through time).

    Writes OUT (ONNX with the rlcc.spec metadata) and OUT's config as <OUT stem>.train.json,
    which reproduces the run byte-for-byte: rlcc-train --config <that file> --out OUT.
    """
    from rlcc.train.config import TrainConfig
    from rlcc.train.export import export_policy
    from rlcc.train.trainer import plot_log, train, write_log_csv

    cfg = TrainConfig.from_file(config_path) if config_path else TrainConfig()
    overrides = {k: v for k, v in (("seed", seed), ("iterations", iterations)) if v is not None}
    cfg = dataclasses.replace(cfg, **overrides)
    if arch is not None:
        cfg = cfg.with_arch(arch)
    # Every output is checked before the minute of training, not after.
    out_path = Path(out)
    check_writable_file(out_path, "--out", create_parents=True)
    check_writable_file(out_path.with_name(out_path.stem + ".train.json"), create_parents=True)
    if log_dir:
        check_output_dir(log_dir, overwrite=True, option="--log-dir")

    def progress(row: dict) -> None:
        if not quiet:
            click.echo(
                f"iter {int(row['iteration']):4d}  |delta| {row['mean_abs_delta']:.4f}  reward {row['reward']:.4g}  "
                f"goodput {row['goodput']:.3f}  rtt {row['rtt_inflation']:.3f}  drop fraction {row['drop_fraction']:.4f}",
                err=True,
            )

    result = train(cfg, progress)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    spec = cfg.observation_spec()
    kind = "LSTM (per-flow h/c state)" if cfg.arch == "lstm" else "MLP"
    export_policy(result.policy, spec, out_path,
                  doc=f"RL-CC {kind} trained by rlcc-train (ADPG), seed {cfg.seed}, {cfg.iterations} iterations")
    cfg_path = out_path.with_name(out_path.stem + ".train.json")
    cfg_path.write_text(cfg.to_json())
    if log_dir:
        d = Path(log_dir)
        d.mkdir(parents=True, exist_ok=True)
        write_log_csv(result.log, d / "train_log.csv")
        click.echo(f"wrote log: {d / 'train_log.csv'}", err=True)
        click.echo(f"wrote plot: {plot_log(result.log, d / 'train_log.png')}", err=True)
    last = result.log[-1]
    click.echo(
        f"rlcc-train: wrote {out_path} and {cfg_path} in {result.wall_s:.1f} s "
        f"(final |delta| {last['mean_abs_delta']:.4f}, goodput {last['goodput']:.3f})"
    )
