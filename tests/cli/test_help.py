"""--help of every command and subcommand: each option explained, no stray ``%%``, the exit codes
at the end; the shared flags (-o, -q, --ports) mean one thing everywhere; `rlcc sim` names the
simulator as the standalone `rlcc-sim` does."""

from __future__ import annotations

import subprocess

import click
import pytest
from click.testing import CliRunner

from rlcc.cli.common import EXIT_CODES_HELP, PROGS
from rlcc.cli.main import rlcc
from rlcc.errors import EXIT_CODE_MEANINGS, ExitCode
from rlcc.firmware_sdk_stub.switch_layout import MAX_PORTS


def walk(cmd: click.Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """(argv path under `rlcc`, command) of ``cmd`` and every subcommand below it (through click's
    group interface: `rlcc` loads its commands on use)."""
    out = [(path, cmd)]
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in sorted(cmd.list_commands(ctx)):
            out += walk(cmd.get_command(ctx, name), path + (name,))
    return out


COMMANDS = walk(rlcc)
IDS = [" ".join(("rlcc",) + p) for p, _ in COMMANDS]


def test_the_walk_reaches_every_subcommand():
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"compile", "verify", "train", "sim", "sim many-to-one", "sim trace", "sim suite", "sim run"} <= names
    assert len(COMMANDS) >= 12


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=IDS)
def test_every_option_has_help_and_renders_cleanly(path, cmd):
    missing = [p.opts[0] for p in cmd.params if isinstance(p, click.Option) and not (p.help or "").strip()]
    assert missing == [], f"rlcc {' '.join(path)}: options without help: {missing}"
    r = CliRunner().invoke(rlcc, [*path, "--help"], prog_name="rlcc")
    assert r.exit_code == 0, r.output
    assert "%%" not in r.output, r.output


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=IDS)
def test_every_help_ends_with_the_exit_codes(path, cmd):
    r = CliRunner().invoke(rlcc, [*path, "--help"], prog_name="rlcc")
    tail = r.output.rstrip().splitlines()[-len(EXIT_CODE_MEANINGS) - 1:]
    assert tail[0].strip() == "Exit codes:", r.output
    assert [line.split()[0] for line in tail[1:]] == [str(int(c)) for c in ExitCode]
    assert cmd.epilog == EXIT_CODES_HELP  # the one helper, not a copy


def test_the_catch_finds_an_option_without_help():
    @click.command()
    @click.option("--x", type=int)
    def bare(x):
        pass

    assert [p.opts[0] for p in bare.params if isinstance(p, click.Option) and not p.help] == ["--x"]


def test_trace_cdf_help_has_no_doubled_percent():
    r = CliRunner().invoke(rlcc, ["sim", "trace", "--help"], prog_name="rlcc")
    assert "cdf_percent" in r.output and "%%" not in r.output


def test_network_options_say_their_units_and_defaults():
    out = " ".join(CliRunner().invoke(rlcc, ["sim", "many-to-one", "--help"], prog_name="rlcc").output.split())
    assert "--line-rate-gbps FLOAT link rate in Gb/s [default 100]" in out
    assert "--base-rtt-us FLOAT round-trip time of an empty network in us" in out and "[default 8]" in out
    assert "--buffer-bytes INTEGER switch buffer in bytes, shared by its ports [default 32000000]" in out


# ---- the group names the simulator `sim`, like the standalone rlcc-sim ----------------------------
def test_group_lists_sim_and_keeps_simulate_as_a_hidden_alias():
    out = CliRunner().invoke(rlcc, ["--help"], prog_name="rlcc").output
    listed = [line.split()[0] for line in out.split("Commands:")[1].split("Exit codes:")[0].splitlines() if line.strip()]
    assert listed == ["compile", "sim", "train", "verify"]
    assert sorted(PROGS) == sorted(listed)
    old = CliRunner().invoke(rlcc, ["simulate", "many-to-one", "--help"], prog_name="rlcc")
    assert old.exit_code == 0 and "Incast" in old.output


@pytest.mark.slow
def test_sim_errors_and_version_name_rlcc_sim():
    for argv in (["sim"], ["simulate"]):
        r = subprocess.run(["rlcc", *argv, "many-to-one", "--flows", "0"], capture_output=True, text=True, timeout=120)
        assert r.returncode == int(ExitCode.BAD_INPUT) and r.stderr.startswith("rlcc-sim: error: "), r.stderr
    v = subprocess.run(["rlcc-sim", "--version"], capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and v.stdout.startswith("rlcc-sim, version"), v.stdout


# ---- --ports: one range, the switch SDK's ------------------------------------------------------
@pytest.mark.parametrize("argv", [["compile", "m.onnx", "-o", "out"], ["verify", "fw.c"]])
def test_ports_range_is_the_switch_sdks(argv):
    cmd = rlcc.get_command(click.Context(rlcc), argv[0])
    ports = next(p for p in cmd.params if p.name in ("ports", "n_ports"))
    assert (ports.type.min, ports.type.max) == (1, MAX_PORTS)
    r = CliRunner().invoke(rlcc, [*argv, "--ports", str(MAX_PORTS + 1)], prog_name="rlcc")
    assert r.exit_code == int(ExitCode.BAD_INPUT), r.output  # out of range: bad input, one line (issue 32)
    assert r.output.strip().endswith(f"--ports must be between 1 and {MAX_PORTS}, got {MAX_PORTS + 1} "
                                     "(the switch SDK's SW_MAX_PORTS)") and r.output.count("\n") == 1


# ---- rlcc-train: -o and -q as the other tools ----------------------------------------------------
def test_train_short_out_and_quiet(tmp_path):
    out = tmp_path / "acc.onnx"
    r = subprocess.run(["rlcc-train", "--algo", "acc", "--episodes", "1", "-q", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "" and r.stdout.count("\n") == 1 and "1 episode," in r.stdout
    assert out.is_file() and (tmp_path / "acc.train.json").is_file()


def test_train_o_is_checked_before_training(tmp_path):
    (tmp_path / "d").mkdir()
    r = CliRunner().invoke(rlcc, ["train", "-o", str(tmp_path / "d"), "-q"], prog_name="rlcc")
    assert r.exit_code == int(ExitCode.BAD_INPUT) and "is a directory" in r.output
