"""`rlcc-sim suite --address` on a two-node Ray cluster started on this machine.

Two `ray start` nodes of one CPU each (a head and a worker joining it) stand in for a cluster:
the reduced suite run through `--address` must write byte-identical files to a serial run, and
tasks sent the same way must land on both nodes. The cluster's processes are found by its private
temp dir and stopped when the test ends (never `ray stop`, which stops every Ray on the machine).
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
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

from rlcc.cli.simulate import simulate_command  # noqa: E402
from rlcc.simulator.sweep import run_jobs  # noqa: E402

RAY_CLI = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_of(seconds: float) -> str:
    """A task that holds its node's only CPU for a while and says which node ran it."""
    time.sleep(seconds)
    return ray.get_runtime_context().get_node_id()


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
        self.address = f"127.0.0.1:{free_port()}"
        self.common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", f"--temp-dir={temp}", "--disable-usage-stats"]
        self.head = subprocess.Popen(
            [RAY_CLI, "start", "--head", f"--port={self.address.rsplit(':', 1)[1]}", "--include-dashboard=false",
             *self.common], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def join(self) -> None:
        _, err = self.head.communicate(timeout=120)
        assert self.head.returncode == 0, err
        worker = subprocess.run([RAY_CLI, "start", f"--address={self.address}", *self.common], env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
        assert worker.returncode == 0, worker.stderr
        ray.init(address=self.address, log_to_driver=False)
        try:
            deadline = time.monotonic() + 60
            while sum(n["Alive"] for n in ray.nodes()) < 2:
                assert time.monotonic() < deadline, "the worker node did not join"
                time.sleep(0.2)
        finally:
            ray.shutdown()


@pytest.fixture
def cluster(monkeypatch):
    if RAY_CLI is None:
        pytest.skip("the ray command is not installed")
    if ray.is_initialized():
        ray.shutdown()
    # A token file left in ~/.ray switches token auth on for `ray start` unless the mode is set.
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    temp = tempfile.mkdtemp(prefix="rlcc-ray-", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    try:
        yield Cluster(temp, dict(os.environ))
    finally:
        if ray.is_initialized():
            ray.shutdown()
        stop_cluster(temp)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_suite_on_a_two_node_cluster_equals_the_serial_run(cluster, tmp_path):
    args = ["suite", "--suite", "reduced", "--controller", "dcqcn", "-q"]
    serial = CliRunner().invoke(simulate_command, [*args, "--backend", "serial", "-o", str(tmp_path / "serial")])
    assert serial.exit_code == 0, serial.output
    cluster.join()  # the head started while the serial run went
    on_ray = CliRunner().invoke(simulate_command, [*args, "--address", cluster.address, "-o", str(tmp_path / "ray")])
    assert on_ray.exit_code == 0, on_ray.output
    files = sorted(p.name for p in (tmp_path / "serial").iterdir())
    assert "suite.json" in files and files == sorted(p.name for p in (tmp_path / "ray").iterdir())
    for name in files:
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "serial" / name).read_bytes(), name
    assert not ray.is_initialized()  # the suite's own connection is closed again
    nodes = run_jobs(node_of, [1.0] * 4, backend="ray", address=cluster.address, progress=False)
    assert len(set(nodes)) == 2  # one CPU per node: the tasks spread over both
