"""Every documented simulator limit holds in memory and time: a topology at MAX_NODES routes in
bounded memory, larger structures are refused before they are built (exit 3, one line), extreme
physical values and flow-size CDFs are bad input, and no NaN or inf reaches the output."""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rlcc.cli.simulate import simulate_command
from rlcc.errors import BadInputError
from rlcc.simulator import AllToAll, ManyToOne, Network, TopologyConfig, make_controller, simulate
from rlcc.simulator import engine
from rlcc.simulator.topology import MAX_NODES, MAX_PATH_LINKS, from_dict

BIG_HOSTS = 99_990  # with its 10 switches: under MAX_NODES


def _limited(code: str, mem_mb: int = 1536, timeout: float = 120) -> tuple[int, str, float]:
    """Run ``code`` in a child Python under an address-space limit (the old code failed fast
    instead of swapping): (exit code, stderr, the child's peak RSS in MB, 0 if it did not finish)."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))

    code += "\nimport resource\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=cap, env=env, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"still running after {timeout} s")
    return proc.returncode, err, int(out.split()[-1]) / 1024 if proc.returncode == 0 else 0.0


def _big_topology(path: Path, switches: int = 10) -> None:
    hosts = [f"h{i}" for i in range(BIG_HOSTS)]
    sw = [f"s{i}" for i in range(switches)]
    links = [{"a": h, "b": sw[i % switches], "rate_gbps": 100, "delay_ns": 1000} for i, h in enumerate(hosts)]
    links += [{"a": sw[i], "b": sw[i + 1], "rate_gbps": 400, "delay_ns": 1000} for i in range(switches - 1)]
    path.write_text(json.dumps({"hosts": hosts, "switches": sw, "links": links}))


def test_a_topology_at_max_nodes_routes_in_bounded_memory(tmp_path):
    """99,990 hosts on 10 switches (a chain): the next-hop table was nodes x hosts tuples (> 6 GB,
    hours); now per destination switch, and 100,000 flows' paths come out within 1.5 GB."""
    f = tmp_path / "big.json"
    _big_topology(f)
    assert BIG_HOSTS + 10 <= MAX_NODES
    rc, err, rss_mb = _limited(
        "import numpy as np\n"
        "from rlcc.simulator.topology import load, Routing\n"
        f"t = load({str(f)!r})\n"
        "n = 100_000\n"
        "p = Routing(t).paths(np.arange(n) % t.n_hosts, (np.arange(n) * 7 + 1) % t.n_hosts, np.arange(n), 0)\n"
        "assert p.shape[1] <= 11 and (t.link_dst[p[np.arange(n), (p >= 0).sum(1) - 1]] == (np.arange(n) * 7 + 1) % t.n_hosts).all()\n")
    assert rc == 0, err[-2000:]
    assert rss_mb < 512


def test_a_run_on_a_topology_too_large_for_memory_is_refused(tmp_path):
    """The fabric's per-(host, queue) rate matrix would be 99,990 x 99,991 doubles (80 GB): exit 3."""
    f = tmp_path / "big.json"
    _big_topology(f)
    rc, err, _ = _limited(f"from rlcc.cli.simulate import simulate_command\n"
                          f"simulate_command(['many-to-one', '--topology', {str(f)!r}, '--flows', '4', '-q'])\n")
    assert rc == 3, err[-2000:]
    assert err.startswith("rlcc-sim: error: invalid scenario: 99990 hosts x") and err.count("\n") == 1, err
    assert "rate cells on this topology, more than the limit" in err


@pytest.mark.parametrize("args, needle", [
    (["--leaves", "4096", "--spines", "4096", "--links-per-pair", "4096", "--hosts-per-leaf", "1"],
     "this fat-tree has 12288 nodes and 68719480832 links; the limits are 100000 nodes and 1000000 links"),
    (["--leaves", "4096", "--hosts-per-leaf", "4096"], "16781314 nodes and 16809984 links"),
])
def test_oversized_fat_trees_are_refused_before_they_are_built(args, needle):
    rc, err, _ = _limited("from rlcc.cli.simulate import simulate_command\n"
                          f"simulate_command(['many-to-one', '--topology', 'fat-tree', '-q', *{args!r}])\n", timeout=60)
    assert rc == 3 and err.startswith("rlcc-sim: error: ") and err.count("\n") == 1, err
    assert needle in err


def _cli_in_child(args: list, timeout: float = 60) -> str:
    """``rlcc-sim ARGS`` in a memory-capped child that must end with exit 3 and one line: that line."""
    rc, err, _ = _limited(f"from rlcc.cli.simulate import simulate_command\nsimulate_command({[str(a) for a in args]!r})\n",
                          timeout=timeout)
    assert rc == 3 and err.startswith("rlcc-sim: error: ") and err.count("\n") == 1, (rc, err[-2000:])
    return err


def test_routing_work_is_bounded_before_any_search(tmp_path):
    """A 40,000-switch chain with a host on each: 40,000 searches over 120,000 switch links."""
    n = 40_000
    hosts, sw = [f"h{i}" for i in range(n)], [f"s{i}" for i in range(n)]
    links = [{"a": h, "b": s, "rate_gbps": 100, "delay_ns": 1} for h, s in zip(hosts, sw)]
    links += [{"a": sw[i], "b": sw[i + 1], "rate_gbps": 100, "delay_ns": 1} for i in range(n - 1)]
    f = tmp_path / "chain.json"
    f.write_text(json.dumps({"hosts": hosts, "switches": sw, "links": links}))
    err = _cli_in_child(["many-to-one", "--topology", f, "--flows", "2", "-q"])
    assert "routing searches" in err and "more than the limit 2e+08" in err, err


def test_duplicate_names_in_a_large_topology_are_found_in_linear_time(tmp_path):
    hosts = [f"h{i}" for i in range(MAX_NODES - 2)] + ["h5"]
    f = tmp_path / "dup.json"
    f.write_text(json.dumps({"hosts": hosts, "switches": ["s"], "links": []}))
    assert len(hosts) + 1 == MAX_NODES
    err = _cli_in_child(["many-to-one", "--topology", f, "--flows", "2", "-q"], timeout=30)
    assert "node name 'h5' is used twice" in err, err


def test_a_topology_file_beyond_the_link_limit_is_refused_before_its_links_are_read(tmp_path, monkeypatch):
    from rlcc.simulator import topology

    monkeypatch.setattr(topology, "MAX_CABLES", 1)
    f = tmp_path / "two.json"
    f.write_text(json.dumps(_star()))
    _bad(["many-to-one", "--topology", f, "--flows", "2", "-q"], "2 links, more than the limit 1")


def _chain(switches: int) -> dict:
    sw = [f"s{i}" for i in range(switches)]
    links = [{"a": "a", "b": sw[0], "rate_gbps": 100, "delay_ns": 1}, {"a": "b", "b": sw[-1], "rate_gbps": 100, "delay_ns": 1}]
    links += [{"a": sw[i], "b": sw[i + 1], "rate_gbps": 100, "delay_ns": 1} for i in range(switches - 1)]
    return {"hosts": ["a", "b"], "switches": sw, "links": links}


def test_paths_longer_than_the_limit_are_refused(tmp_path):
    f = tmp_path / "fits.json"
    f.write_text(json.dumps(_chain(MAX_PATH_LINKS - 1)))  # 16 links from a to b: fits
    r = CliRunner().invoke(simulate_command, ["many-to-one", "--topology", str(f), "--flows", "1", "--duration-ms", "0.1", "-q"])
    assert r.exit_code == 0, r.output
    f = tmp_path / "long.json"
    f.write_text(json.dumps(_chain(MAX_PATH_LINKS)))
    r = CliRunner().invoke(simulate_command, ["many-to-one", "--topology", str(f), "--flows", "1", "-q"])
    assert r.exit_code == 3 and r.output.count("\n") == 1, r.output
    assert "invalid topology: the path from host b to host a crosses more than 16 links" in r.output


# ---- memory of a run: block arrays and queue samples are capped, results unchanged -------------
def test_block_arrays_are_capped_without_changing_results(monkeypatch):
    sc = AllToAll(hosts=8, flows_per_pair=2, duration_ms=0.4, topology=TopologyConfig(hosts_per_leaf=4, leaves=2))
    sc = dataclasses.replace(sc, initial_rate=min(1.0, 4 * sc.fair_rate()))
    policy = Path(__file__).resolve().parents[2] / "examples" / "rlcc_mlp.onnx"
    from rlcc.simulator import PolicyController

    full = simulate(sc, PolicyController(str(policy)))
    seen = []
    real = engine._Run.__init__

    def spy(self, *a, **k):
        real(self, *a, **k)
        seen.append(self.block_steps)

    monkeypatch.setattr(engine._Run, "__init__", spy)
    monkeypatch.setattr(engine, "MAX_BLOCK_CELLS", 1)  # fewer cells than one step holds: one-step blocks
    capped = simulate(sc, PolicyController(str(policy)))
    assert seen == [1]  # base RTT / dt = 8 steps uncapped
    timing = ("wall_s", "sim_speed")
    assert {k: v for k, v in capped.metrics.items() if k not in timing} == {k: v for k, v in full.metrics.items() if k not in timing}
    assert np.array_equal(capped.flows["sent_bytes"], full.flows["sent_bytes"])


def test_queue_samples_of_a_topology_stay_within_their_cell_limit(monkeypatch):
    monkeypatch.setattr(engine, "MAX_QUEUE_CELLS", 5000)
    sc = ManyToOne(flows=2, duration_ms=1.0, topology=TopologyConfig(hosts_per_leaf=4, leaves=2))
    run = engine._Run(sc, make_controller("swift"), None)
    assert run.q_samples.size <= 5000 + run.q_samples.shape[1]  # rows = steps // q_every + 1


# ---- physical values and flow-size CDFs -----------------------------------------------------------
def _bad(args: list, *needles: str) -> None:
    r = CliRunner().invoke(simulate_command, [str(a) for a in args])
    assert r.exit_code == 3, r.output
    assert r.output.startswith("rlcc-sim: error: ") and r.output.count("\n") == 1, r.output
    for n in needles:
        assert n in r.output, r.output


def _star(rate=100, delay=1000, buffer=None) -> dict:
    t = {"hosts": ["h0", "h1"], "switches": ["s0"],
         "links": [{"a": "h0", "b": "s0", "rate_gbps": rate, "delay_ns": delay},
                   {"a": "h1", "b": "s0", "rate_gbps": 100, "delay_ns": 1000}]}
    return t if buffer is None else {**t, "buffer_bytes": buffer}


@pytest.mark.parametrize("topo, needle", [
    (_star(rate=1e-300), "link h0-s0 has rate_gbps 1e-300: must be in [0.001, 100000]"),
    (_star(rate=1e300), "link h0-s0 has rate_gbps 1e+300: must be in [0.001, 100000]"),
    (_star(delay=1e300), "link h0-s0 has delay_ns 1e+300: must be in [0, 1e+09]"),
    (_star(buffer=1e-300), "buffer_bytes must be in [64, 2^40] (at least one packet), got 1e-300"),
    (_star(buffer=1e300), "buffer_bytes must be in [64, 2^40]"),
])
def test_topology_physical_values_that_make_a_run_meaningless_are_refused(tmp_path, topo, needle):
    """A 1e-300 Gb/s link ran to exit 0 with a 9e300 us queue and NaN RTT inflation."""
    f = tmp_path / "t.json"
    f.write_text(json.dumps(topo))
    _bad(["many-to-one", "--topology", f, "--flows", "2", "--duration-ms", "1", "-q"], "invalid topology", needle)


@pytest.mark.parametrize("lines, needle", [
    ("0 0\n1e300 100\n", "line 2: flow size 1e+300 is above the limit 2^40 bytes"),
    ("0 0\n1e-300 100\n", "mean flow size 5e-301 bytes is below 1 byte"),
    ("0 0\n1e308 50\n1e308 100\n", "flow size 1e+308 is above the limit"),
    ("0 0\n1099511627776 100\n", "no flow arrives in 0.8 ms"),
])
def test_extreme_flow_size_cdfs_are_bad_input(tmp_path, lines, needle):
    """A CDF reaching 1e300 bytes ended in ZeroDivisionError (exit 1): no flow arrived."""
    f = tmp_path / "x.cdf"
    f.write_text(lines)
    _bad(["trace", "--cdf", f, "--duration-ms", "1", "-q"], needle)


def test_a_trace_scenario_with_no_arrivals_is_bad_input():
    with pytest.raises(BadInputError, match="no flow arrives"):
        from rlcc.simulator import Scenario

        Scenario.from_dict({"kind": "trace", "load": 1e-300, "duration_ms": 1})


def test_metrics_without_samples_are_null_never_nan():
    """No OSU iteration finishes in 0.1 ms with 1 TB messages: iteration_us has no sample."""
    args = ["osu", "--message-bytes", str(1 << 40), "--duration-ms", "0.1", "-q"]
    r = CliRunner().invoke(simulate_command, args + ["--json"])
    assert r.exit_code == 0, r.output

    def refuse(name):
        raise AssertionError(f"{name} in the JSON output")

    m = json.loads(r.output, parse_constant=refuse)["metrics"]
    assert m["iteration_us"] is None and m["iterations_completed"] == 0
    text = CliRunner().invoke(simulate_command, args).output
    assert "nan" not in text.lower().replace("inflation", "") and "n/a" in text
    assert all(v is None or np.isfinite(v) for v in m.values())


def test_cdf_files_beyond_the_point_limit_are_refused(tmp_path):
    from rlcc.simulator.flowsize import MAX_CDF_POINTS

    f = tmp_path / "many.cdf"
    n = MAX_CDF_POINTS + 1
    f.write_text("".join(f"{i + 1} {100 * (i + 1) / n}\n" for i in range(n)))
    _bad(["trace", "--cdf", f, "--duration-ms", "1", "-q"], f"line {n}: more than {MAX_CDF_POINTS} points")


def test_a_trace_buffer_beyond_its_memory_limit_is_refused_before_it_is_allocated(tmp_path):
    """1e8 records (the record limit) x 60 bytes would be 5.6 GiB, allocated at the start."""
    _bad(["many-to-one", "--flows", "2", "--duration-ms", "0.1", "-q", "--trace", tmp_path / "t.npz",
          "--trace-capacity", str(10**8)], "capacity 100000000 x 60 bytes per record = 5.59 GiB, more than the limit 1 GiB")
