"""`rlcc-sim suite --address` on a two-node Ray cluster started on this machine.

Two `ray start` nodes of one CPU each (a head and a worker joining it) stand in for a cluster:
the reduced suite run through `--address` must write byte-identical files to a serial run, and
tasks sent the same way must land on both nodes. The cluster's processes are found by its private
temp dir and stopped when the test ends (never `ray stop`, which stops every Ray on the machine).

Every Ray driver here is a fresh interpreter, as a user's `rlcc-sim` is: a pytest worker that
already ran a local Ray session (tests/simulator/test_sweep.py) cannot reliably be a second
cluster's driver (CI saw OwnerDiedError). The nodes take the address Ray itself picks for this
machine, because a driver given 127.0.0.1 rewrites it to that address.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'rlcc[ray]')")

from rlcc.cli.simulate import simulate_command  # noqa: E402

BIN = str(Path(sys.executable).parent)
RAY_CLI = shutil.which("ray", path=BIN) or shutil.which("ray")
RLCC_SIM = shutil.which("rlcc-sim", path=BIN) or shutil.which("rlcc-sim")

# Four one-second tasks through rlcc's own runner; prints how many distinct nodes ran them.
SPREAD = """
import sys, time, ray
from rlcc.simulator.sweep import run_jobs
def node_of(seconds):
    time.sleep(seconds)
    return ray.get_runtime_context().get_node_id()
print(len(set(run_jobs(node_of, [1.0] * 4, backend="ray", address=sys.argv[1], progress=False))))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _processes() -> dict[int, tuple[int, str]]:
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            ppid = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out[int(name)] = (ppid, cmd)
    return out


def stop_cluster(marker: str) -> None:
    """SIGTERM, then SIGKILL, every process whose command line names ``marker`` and their children."""
    procs = _processes()
    ours, p = set(), os.getpid()
    while p in procs and p not in ours:  # this process and its ancestors are never stopped
        ours.add(p)
        p = procs[p][0]
    pids = {p for p, (_, cmd) in procs.items() if marker in cmd} - ours
    while True:
        kids = {p for p, (pp, _) in procs.items() if pp in pids} - pids - ours
        if not kids:
            break
        pids |= kids
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.1)


class Cluster:
    """A head node started in the background; ``join()`` waits for it and adds the worker node."""

    def __init__(self, temp: str, env: dict[str, str]) -> None:
        self.temp, self.env = temp, env
        ip = ray.util.get_node_ip_address()
        self.address = f"{ip}:{free_port()}"
        self.common = [f"--node-ip-address={ip}", "--num-cpus=1", f"--temp-dir={temp}", "--disable-usage-stats"]
        self.head = subprocess.Popen(
            [RAY_CLI, "start", "--head", f"--port={self.address.rsplit(':', 1)[1]}", "--include-dashboard=false",
             *self.common], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def join(self) -> None:
        _, err = self.head.communicate(timeout=120)
        assert self.head.returncode == 0, err
        worker = subprocess.run([RAY_CLI, "start", f"--address={self.address}", *self.common], env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
        assert worker.returncode == 0, worker.stderr
        deadline = time.monotonic() + 60
        while True:
            status = subprocess.run([RAY_CLI, "status", f"--address={self.address}"], env=self.env,
                                    capture_output=True, text=True, timeout=60)
            if status.stdout.count("node_") >= 2:
                return
            assert time.monotonic() < deadline, f"the worker node did not join: {status.stdout}{status.stderr}"
            time.sleep(0.5)


@pytest.fixture
def cluster(monkeypatch):
    if RAY_CLI is None or RLCC_SIM is None:
        pytest.skip("the ray or rlcc-sim command is not installed")
    # A token file left in ~/.ray switches token auth on for `ray start` unless the mode is set.
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    temp = tempfile.mkdtemp(prefix="rlcc-ray-", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    try:
        yield Cluster(temp, dict(os.environ))
    finally:
        stop_cluster(temp)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_suite_on_a_two_node_cluster_equals_the_serial_run(cluster, tmp_path):
    args = ["suite", "--suite", "reduced", "--controller", "dcqcn", "-q"]
    serial = CliRunner().invoke(simulate_command, [*args, "--backend", "serial", "-o", str(tmp_path / "serial")])
    assert serial.exit_code == 0, serial.output
    cluster.join()  # the head started while the serial run went
    on_ray = subprocess.run([RLCC_SIM, *args, "--address", cluster.address, "-o", str(tmp_path / "ray")],
                            env=cluster.env, capture_output=True, text=True, timeout=600)
    assert on_ray.returncode == 0, on_ray.stderr
    files = sorted(p.name for p in (tmp_path / "serial").iterdir())
    assert "suite.json" in files and files == sorted(p.name for p in (tmp_path / "ray").iterdir())
    for name in files:
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "serial" / name).read_bytes(), name
    spread = subprocess.run([sys.executable, "-c", SPREAD, cluster.address], env=cluster.env,
                            capture_output=True, text=True, timeout=300)
    assert spread.returncode == 0, spread.stderr
    assert spread.stdout.split() == ["2"]  # one CPU per node: the tasks spread over both
