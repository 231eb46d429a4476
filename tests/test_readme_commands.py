"""Every command the Markdown shows a user still works: its subcommand and options exist (each one
runs with ``--help``, which click checks before anything else), short ``rlcc-sim`` runs run for
real, a synopsis names only real options, and the exit-code table's commands exit as it says.
Long commands (compiles, proofs, training) run for real in CI's gate, not here."""

from __future__ import annotations

import configparser
import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from readme_commands import ROOT, TOOLS, Command, all_commands, commands, readme_test_command

SETUP = configparser.ConfigParser()
SETUP.read(ROOT / "setup.cfg")
PLACEHOLDERS = {"…", "...", "|", "#"}  # a command shown only up to here (illustrative tail)


def entry_points() -> dict[str, click.Command]:
    """Console scripts from setup.cfg, resolved to their click commands."""
    found = {}
    for line in SETUP["options.entry_points"]["console_scripts"].strip().splitlines():
        name, _, target = (p.strip() for p in line.partition("="))
        module, _, attr = target.partition(":")
        found[name] = getattr(importlib.import_module(module), attr)
    return found


TOOL_COMMANDS = entry_points()
COMMANDS = all_commands()


def _shown(cmd: Command) -> list[str]:
    argv = cmd.argv()
    cut = next((i for i, a in enumerate(argv) if a in PLACEHOLDERS or a.startswith("<")), len(argv))
    return argv[:cut]


def _variants(argv: list[str]) -> list[list[str]]:
    """``rlcc-sim many-to-one|all-to-all ...`` is one command per alternative subcommand."""
    if len(argv) > 1 and "|" in argv[1] and not argv[1].startswith("-"):
        return [[argv[0], alt, *argv[2:]] for alt in argv[1].split("|")]
    return [argv]


def test_the_docs_show_commands():
    assert set(TOOL_COMMANDS) == set(TOOLS)
    assert sum(c.kind == "block" for c in COMMANDS) >= 5 and sum(c.kind == "synopsis" for c in COMMANDS) >= 2


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.kind != "synopsis"], ids=lambda c: f"{c.where} {c.text[:60]}")
def test_command_is_accepted(cmd: Command):
    argv = _shown(cmd)
    if argv[0] == "pip":
        extras = set(SETUP["options.extras_require"])
        for spec in argv[2:]:
            for extra in re.findall(r"\[([\w,]+)\]", spec):
                assert set(extra.split(",")) <= extras, f"{cmd.where}: unknown extra in {spec}"
        return
    if argv[:3] == ["python", "-m", "pytest"]:
        markers = {m.split(":")[0].strip() for m in SETUP["tool:pytest"]["markers"].strip().splitlines()}
        if "-m" in argv[3:]:
            names = set(re.findall(r"\w+", argv[argv.index("-m", 3) + 1])) - {"not", "and", "or"}
            assert names <= markers, f"{cmd.where}: unregistered marker in {argv}"
        return
    for variant in _variants(argv):
        variant = _without_dangling_option(TOOL_COMMANDS[variant[0]], variant, cmd)
        result = CliRunner().invoke(TOOL_COMMANDS[variant[0]], [*variant[1:], "--help"])
        assert result.exit_code == 0, f"{cmd.where}: `{' '.join(variant)}` is not accepted:\n{result.output}"
        assert "Usage:" in result.output


def _without_dangling_option(command: click.Command, argv: list[str], cmd: Command) -> list[str]:
    """Prose names an option without its value (`rlcc-compile --probe-timeout-us`): check that the
    option exists, then drop it, so that ``--help`` is not taken as its value."""
    if len(argv) < 2 or not argv[-1].startswith("--"):
        return argv
    for word in argv[1:-1]:
        if isinstance(command, click.Group) and not word.startswith("-"):
            command = command.get_command(click.Context(command), word) or command
    param = next((p for p in command.params if argv[-1] in p.opts), None)
    if param is None or getattr(param, "is_flag", False) or param.nargs == 0:
        return argv
    return argv[:-1]


def _options(command: click.Command) -> set[str]:
    names = set()
    for p in command.params:
        names.update(p.opts)
        names.update(p.secondary_opts)
    return names


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.kind == "synopsis"], ids=lambda c: c.where)
def test_synopsis_names_real_options(cmd: Command):
    argv = cmd.argv()
    command = TOOL_COMMANDS[argv[0]]
    shown = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", cmd.text))
    for flag in shown:
        for part in flag.split("/"):
            assert part in _options(command) | {"-h", "--help"}, f"{cmd.where}: {argv[0]} has no option {part}"


def test_the_readme_test_command_is_pytest():
    assert readme_test_command().split()[:3] == ["python", "-m", "pytest"]


# ---- short simulator runs, for real -------------------------------------------------------------
SIM_RUNS = [c for c in COMMANDS if c.kind == "block" and _shown(c)[:1] == ["rlcc-sim"] and "suite" not in _shown(c)]


@pytest.mark.parametrize("cmd", SIM_RUNS, ids=lambda c: f"{c.where} {c.text[:60]}")
def test_simulator_command_runs(cmd: Command, tmp_path: Path):
    """The command as shown, cut to 0.5 simulated ms; inputs the docs leave to the reader skip."""
    argv = _shown(cmd)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    missing = [a for a in argv[1:] if re.search(r"\.(onnx|json|c)$|_out$", a) and not (tmp_path / a).exists()
               and not any(argv[i - 1] in ("--json", "--trace", "--plot") for i in range(1, len(argv)) if argv[i] == a)]
    if missing:
        pytest.skip(f"the docs leave {missing} to the reader")
    proc = subprocess.run([*argv, "--duration-ms", "0.5"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{cmd.where}: {proc.stderr}"


# ---- the exit-code table -------------------------------------------------------------------------
def exit_code_rows() -> list[tuple[int, str, int, str]]:
    """(line, command, exit code, example cell) for each full command in the README's bad-input table."""
    rows = []
    lines = (ROOT / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| input class | example | exit |"))
    for n, line in enumerate(lines[start + 2:], start + 3):
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        code = re.match(r"\d+", cells[2])
        for span in re.findall(r"`([^`]+)`", cells[1]):
            if span.split()[0] in TOOLS and not PLACEHOLDERS & set(span.split()) and code:
                rows.append((n, span, int(code.group()), cells[1]))
    return rows


def _fixtures(where: Path, example: str) -> None:
    """The inputs the table's commands name: each is the bad input its row describes."""
    (where / "notes.txt").write_text("not an ONNX model\n")
    shutil.copy(ROOT / "examples" / "rlcc_mlp.onnx", where / "m.onnx")
    if example.startswith("second "):  # OUT exists from a first run
        (where / "out").mkdir()
    (where / "bad.json").write_text("{not json")
    (where / "bad.cdf").write_text("1000 50\n500 100\n")
    shutil.copytree(ROOT / "examples" / "firmware", where / "fw")


EXIT_ROWS = exit_code_rows()


def test_the_exit_code_table_has_commands():
    assert len(EXIT_ROWS) >= 6


@pytest.mark.slow
@pytest.mark.parametrize("line,command,code,example", EXIT_ROWS, ids=[f"README.md:{r[0]}" for r in EXIT_ROWS])
def test_exit_code_table_command(line: int, command: str, code: int, example: str, tmp_path: Path):
    _fixtures(tmp_path, example)
    proc = subprocess.run(command.split(), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == code, f"README.md:{line}: `{command}` exits {proc.returncode}, the table says {code}: {proc.stderr}"
    assert "Traceback" not in proc.stderr


def test_commands_are_found_in_fenced_and_inline_code(tmp_path, monkeypatch):
    """The extractor itself, on a document with each form (what the tests above rely on)."""
    doc = tmp_path / "doc.md"
    doc.write_text("Run `rlcc-sim osu --hosts 4` or\n```sh\nrlcc-verify a.c \\\n  --prove  # proof\n"
                   "pip install x && rlcc-train -h\n```\n```\nrlcc-verify F [--prove] [-q]\n```\n"
                   "```yaml\n- run: rlcc-sim run s.json\n```\n`python -m pytest -m \"not slow\"`\n")
    import readme_commands

    monkeypatch.setattr(readme_commands, "ROOT", tmp_path)
    got = [(c.line, c.kind, c.text) for c in commands("doc.md")]
    assert got == [(1, "inline", "rlcc-sim osu --hosts 4"), (3, "block", "rlcc-verify a.c --prove"),
                   (5, "block", "pip install x"), (5, "block", "rlcc-train -h"),
                   (8, "synopsis", "rlcc-verify F [--prove] [-q]"), (11, "block", "rlcc-sim run s.json"),
                   (13, "inline", 'python -m pytest -m "not slow"')]
