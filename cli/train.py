"""`rlcc-train` / `rlcc train`: train the RL-CC policy (MLP or LSTM) with ADPG, or the ACC switch
agent's Q-network with Double DQN (``--algo acc``), and export it to ONNX."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import click
from tqdm import tqdm

from rlcc.cli.common import guarded, standalone
from rlcc.pipeline.outdir import check_output_dir, check_writable_file
from rlcc.errors import BadInputError
from rlcc.train.acc_config import AccConfig
from rlcc.train.acc_trainer import train_acc, write_outputs
from rlcc.train.config import TrainConfig
from rlcc.train.export import export_policy
from rlcc.train.trainer import plot_log, train, write_log_csv

ALGOS = ("adpg", "acc")


@click.command("train")
@click.option("--config", "config_path", type=click.Path(), help="Training config JSON (default: built-in defaults).")
@click.option("-o", "--out", "out", required=True, type=click.Path(), help="Output ONNX file (the policy, or with --algo acc the Q-network).")
@click.option("--log-dir", type=click.Path(), help="Write train_log.csv and train_log.png here.")
@click.option("--seed", type=int, help="Override the config's seed (same seed, same bytes).")
@click.option("--iterations", type=int, help="Override the config's number of ADPG iterations.")
@click.option("--arch", type=click.Choice(["mlp", "lstm"]),
              help="Override the config's architecture; 'lstm' also sets the spec's history to 1.")
@click.option("--algo", type=click.Choice(ALGOS), default="adpg", show_default=True,
              help="'adpg': the NIC RL-CC policy; 'acc': the switch agent's ECN Q-network (Double DQN).")
@click.option("--episodes", type=int, help="Override the config's number of episodes (--algo acc).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines or bar; only the result and errors.")
@guarded("rlcc-train")
def train_command(config_path, out, log_dir, seed, iterations, arch, algo, episodes, quiet) -> None:
    """Train the shared deterministic RL-CC policy (ADPG) on small simulator scenarios.

    The policy is a bias-free MLP on the spec's input window (arch 'mlp') or an LSTM with
    per-flow h/c state fed one step per decision (arch 'lstm', trained through time).

    Writes OUT (ONNX with the rlcc.spec metadata) and OUT's config as <OUT stem>.train.json,
    which reproduces the run byte-for-byte: rlcc-train --config <that file> -o OUT.

    With --algo acc: train the ACC switch agent (one Q-network shared by every switch egress
    queue, DCQCN hosts) on an incast / trace curriculum; --config is an ACC config or a previous
    run's .train.json; writes OUT and <OUT stem>.train.json (config, per-episode reward, epsilon,
    wall time).
    """
    if algo == "acc":
        if iterations is not None or arch is not None or log_dir is not None:
            raise BadInputError("--iterations, --arch and --log-dir are ADPG options; --algo acc uses --episodes")
        _train_acc(config_path, out, seed, episodes, quiet)
        return
    if episodes is not None:
        raise BadInputError("--episodes needs --algo acc (ADPG uses --iterations)")
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


def _train_acc(config_path, out, seed, episodes, quiet) -> None:
    cfg = AccConfig.from_file(config_path) if config_path else AccConfig()
    overrides = {k: v for k, v in (("seed", seed), ("episodes", episodes)) if v is not None}
    cfg = AccConfig.from_dict({**cfg.to_dict(), **overrides})
    out_path = Path(out)
    check_writable_file(out_path, "--out", create_parents=True)
    check_writable_file(out_path.with_name(out_path.stem + ".train.json"), create_parents=True)
    bar = None
    if not quiet:
        bar = tqdm(total=cfg.episodes, desc="rlcc-train: acc", unit="episode", file=sys.stderr, dynamic_ncols=True)

    def progress(row: dict) -> None:
        if bar is not None:
            bar.set_postfix_str(f"reward {row['reward']:.3f} eps {row['epsilon']:.2f}", refresh=False)
            bar.update(1)

    try:
        result = train_acc(cfg, progress)
    finally:
        if bar is not None:
            bar.close()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    json_path = write_outputs(cfg, result, out_path)
    tail = [r["reward"] for r in result.log[-max(1, len(result.log) // 10):]]
    click.echo(f"rlcc-train: wrote {out_path} and {json_path} in {result.wall_s:.1f} s "
               f"({cfg.episodes} episode{'' if cfg.episodes == 1 else 's'}, mean reward of the last {len(tail)}: {sum(tail) / max(len(tail), 1):.4f})")


standalone(train_command)
