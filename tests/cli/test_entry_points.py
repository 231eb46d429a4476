"""Each console script imports only its own command's stack: ``rlcc-verify`` loads neither the
distiller nor the simulator (nor networkx), and the ``rlcc`` group loads a command when it runs."""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

import pytest

SETUP = configparser.ConfigParser()
SETUP.read(Path(__file__).resolve().parents[2] / "setup.cfg")
SCRIPTS = dict(line.replace(" ", "").split("=") for line in
               SETUP["options.entry_points"]["console_scripts"].strip().splitlines())
# The compile side's stacks (the distiller's pipeline and sampling, the simulator and what they pull in).
HEAVY = {"rlcc.distill.pipeline", "rlcc.distill.sampling", "rlcc.simulator", "networkx", "matplotlib", "catboost",
         "onnxruntime"}


def loaded_after(code: str) -> set[str]:
    """Every module in sys.modules after ``code`` in a fresh interpreter."""
    probe = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return set(out.stdout.split())


def test_each_tool_is_its_command_module():
    assert SCRIPTS["rlcc"] == "rlcc.cli.main:rlcc"
    for tool, module in (("rlcc-compile", "compile"), ("rlcc-verify", "verify"), ("rlcc-sim", "simulate"),
                         ("rlcc-train", "train")):
        assert SCRIPTS[tool].startswith(f"rlcc.cli.{module}:"), SCRIPTS[tool]


def test_rlcc_verify_loads_neither_distiller_nor_simulator():
    module, _, attr = SCRIPTS["rlcc-verify"].partition(":")
    loaded = loaded_after(f"from {module} import {attr}")
    assert not loaded & HEAVY, sorted(loaded & HEAVY)


def test_the_group_loads_a_command_on_use():
    loaded = loaded_after("import rlcc.cli.main")
    assert not {"rlcc.cli.compile", "rlcc.cli.verify", "rlcc.cli.simulate", "rlcc.cli.train"} & loaded
    loaded = loaded_after("from rlcc.cli.main import rlcc\nimport click\nrlcc.get_command(click.Context(rlcc), 'verify')")
    assert "rlcc.cli.verify" in loaded and not loaded & HEAVY


@pytest.mark.parametrize("tool", ["rlcc-verify", "rlcc-compile", "rlcc-sim", "rlcc-train"])
def test_version_names_the_tool(tool):
    r = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith(f"{tool}, version"), (r.stdout, r.stderr)
