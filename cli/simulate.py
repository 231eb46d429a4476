"""`rlcc-sim` / `rlcc sim`: run a simulator scenario and print its metrics.

    rlcc-sim many-to-one --flows 1024 --controller policy --policy p.onnx --duration-ms 5
    rlcc-sim all-to-all --hosts 16 --controller swift
    rlcc-sim long-short --short-flows 32 --controller dcqcn --plot run.png
    rlcc-sim run scenario.json --controller swift --json
    rlcc-sim all-to-all --hosts 64 --flows-per-pair 2 --topology fat-tree --controller hpcc
    rlcc-sim osu --hosts 16 --message-bytes 1048576 --topology fat-tree
    rlcc-sim trace --cdf websearch --load 0.5 --hosts 64 --topology fat-tree
    rlcc-sim suite --controller teacher=examples/rlcc_mlp.onnx --controller firmware=examples/firmware \
        --controller dcqcn --controller swift --controller hpcc -o suite-out
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click
import numpy as np
from tqdm import tqdm

from rlcc import textio
from rlcc.cli.common import NON_NEGATIVE_FLOAT, POSITIVE_FLOAT, OptionValueError, guarded, prog_name, standalone
from rlcc.errors import BadInputError, ExitCode
from rlcc.kinds.switch_agent.agents import ecn_agent
from rlcc.pipeline.outdir import atomic_output_dir, check_writable_file, claimed_output_dir
from rlcc.simulator import make_controller, simulate
from rlcc.simulator.nic import MAX_CORES, MAX_THREADS, verify_cycles
from rlcc.simulator.params import LOSS_RECOVERY
from rlcc.simulator.scenarios import DEFAULT_DECISION_LATENCY_US, Network, Scenario
from rlcc.simulator.suite import LOSS_MODES, STARTS, SUITES, ControllerSpec, load_firmware, run_suite
from rlcc.targets import DEFAULT_TARGET
from rlcc.simulator.suite_report import write_report
from rlcc.simulator.switch_metrics import switch_metrics
from rlcc.simulator.trace import TraceConfig
from rlcc.spec import ObservationSpec

PROG = "rlcc-sim"
NET = Network()  # its defaults are shown in --help
FAIR, CONTROLLER = "fair", "controller"
INITIAL_RATE_HELP = (
    "start rate of the flows. 'fair' (default of many-to-one and all-to-all): each flow's equal "
    "share of its bottleneck (1/N for an N-flow incast), the steady state from t = 0. 'controller' "
    "(default of long-short, whose short flows' line-rate burst is the scenario): the controller's "
    "own start rate, line rate for swift, dcqcn and the bundled policies. That is the incast "
    "startup transient: N flows at line rate fill the 32 MB buffer (2.56 ms of queue at 100G), "
    "which the bundled RL policy (at most ~15 % rate change per RTT, now 2.5 ms) needs ~50 ms to "
    "drain at 16 flows: use --duration-ms 100 or more (metrics cover the second half). Or a "
    "fraction of line rate in (0, 1]. For run: the file's initial_rate unless given."
)


class StartRate(click.ParamType):
    """``fair``, ``controller`` or a fraction of line rate in (0, 1] (else one line, exit 2/3)."""

    name = "fair|controller|fraction"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str | float:
        if value in (FAIR, CONTROLLER) or isinstance(value, float):
            return value
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise OptionValueError(f"--initial-rate must be fair, controller or a number, got {value!r}",
                                   prog_name(ctx), ExitCode.USAGE) from None
        if not (math.isfinite(x) and 0 < x <= 1):
            raise OptionValueError(f"--initial-rate must be in (0, 1] (fraction of line rate), got {value}", prog_name(ctx))
        return x


def _common(fn: Callable) -> Callable:
    """Options shared by every scenario subcommand."""
    options = [
        click.option("--controller", "controller", default="swift", show_default=True,
                     help="swift, dcqcn, hpcc, policy (--policy FILE.onnx) or firmware (--policy DIR: compiled firmware)"),
        click.option("--policy", "policy", type=click.Path(), help="ONNX policy (controller 'policy') or firmware directory"),
        click.option("--topology", default=None, help="single (default: one switch), fat-tree, star, or a topology JSON file"),
        click.option("--hosts-per-leaf", type=int, default=None, help="fat-tree hosts per leaf [16]"),
        click.option("--leaves", type=int, default=None, help="fat-tree leaves [4]"),
        click.option("--spines", type=int, default=None, help="fat-tree spines [2]"),
        click.option("--links-per-pair", type=int, default=None, help="fat-tree cables per leaf-spine pair [4]"),
        click.option("--fabric-gbps", type=POSITIVE_FLOAT, default=None, help="fat-tree leaf-spine link rate [line rate]"),
        click.option("--buffer-alpha", type=POSITIVE_FLOAT, default=None, help="switches' dynamic-threshold alpha [1]"),
        click.option("--spec", "spec_file", type=click.Path(), help="observation spec JSON if not in the ONNX file"),
        click.option("--ecn-agent", type=click.Path(), default=None,
                     help="switch ECN agent (ACC) on every switch egress queue: a Q-network ONNX with an rlcc.switch_agent "
                          "spec (the teacher), or compiled switch-agent firmware (its .rlcc.json manifest or directory)"),
        click.option("--ecn-static", type=int, default=None,
                     help="with --ecn-agent: apply template INDEX of its action table everywhere (static ECN baseline)"),
        click.option("--duration-ms", type=POSITIVE_FLOAT, default=None,
                     help=f"simulated time in ms [default {Scenario.duration_ms:g}]"),
        click.option("--seed", type=int, default=None, help=f"random seed [default {Scenario.seed}]"),
        click.option("--decision-latency-us", type=NON_NEGATIVE_FLOAT, default=None, help=f"decision latency in us [default: the controller's, else {DEFAULT_DECISION_LATENCY_US:g}]"),
        click.option("--serial-decisions/--pipelined-decisions", "serial_decisions", default=None,
                     help="a flow's next RTT probe leaves when its decision completes (NIC-like) / when the previous one returns [default]"),
        click.option("--nic-cores", type=click.IntRange(1, MAX_CORES), default=None,
                     help="NIC decision processor: cores per sending host (RTT events queue FIFO for its threads; "
                          "a flow's next probe leaves when its decision completes) [default: off]"),
        click.option("--nic-threads", type=click.IntRange(1, MAX_THREADS), default=None,
                     help="NIC decision processor: hardware threads per core [default 1]"),
        click.option("--decision-cycles", default=None,
                     help="NIC decision processor: cycles per decision, or an rlcc-verify verify.json (its measured "
                          "worst case and clock) [default: with --nic-cores, the firmware's verify.json, else required]"),
        click.option("--nic-profile", default=None,
                     help=f"cycle profile whose clock times a --decision-cycles number [default: {DEFAULT_TARGET.default_profile}]"),
        click.option("--initial-rate", type=StartRate(), default=None, help=INITIAL_RATE_HELP),
        click.option("--line-rate-gbps", type=POSITIVE_FLOAT, default=None,
                     help=f"link rate in Gb/s [default {NET.line_rate_gbps:g}]"),
        click.option("--base-rtt-us", type=POSITIVE_FLOAT, default=None,
                     help=f"round-trip time of an empty network in us (the single switch's; fat-tree paths "
                          f"take their own from the links) [default {NET.base_rtt_us:g}]"),
        click.option("--buffer-bytes", type=int, default=None,
                     help=f"switch buffer in bytes, shared by its ports [default {NET.buffer_bytes}]"),
        click.option("--dt-ns", type=POSITIVE_FLOAT, default=None, help=f"time step in ns [default {NET.dt_ns:g}]"),
        click.option("--pfc", default=None, metavar="off|dynamic|XOFF,XON",
                     help="lossless mode: PFC per switch ingress port with the peer's dynamic thresholds, or static "
                          "XOFF,XON bytes; off: the lossy buffer [default: the scenario's network.pfc, else off]"),
        click.option("--loss-recovery", type=click.Choice(LOSS_RECOVERY), default=None,
                     help="what a drop costs: go-back-n (RoCE NICs resend from the lost packet; discarded bytes "
                          f"excluded from goodput) or none (only the dropped bytes) [default {NET.loss_recovery}]"),
        click.option("--plot", type=click.Path(), help="save rates/queue over time to a PNG (.png added without a suffix; .pdf/.svg also work)"),
        click.option("--trace", "trace_file", type=click.Path(), help="record decisions to an .npz"),
        click.option("--trace-capacity", type=int, default=TraceConfig.capacity, show_default=True,
                     help="with --trace: most decisions recorded (later ones are not)"),
        click.option("--trace-stride", type=int, default=TraceConfig.stride, show_default=True,
                     help="with --trace: record every Nth decision"),
        click.option("--json", "as_json", is_flag=True, help="print metrics as JSON"),
        click.option("--full", is_flag=True, help="metrics over the whole run, not the converged window"),
        click.option("--quiet", "-q", is_flag=True, help="no progress bar"),
    ]
    for opt in reversed(options):
        fn = opt(fn)
    return fn


NETWORK_OPTS = ("line_rate_gbps", "base_rtt_us", "buffer_bytes", "dt_ns", "loss_recovery")
SCENARIO_OPTS = ("duration_ms", "seed", "decision_latency_us", "serial_decisions")
TOPOLOGY_OPTS = ("hosts_per_leaf", "leaves", "spines", "links_per_pair", "fabric_gbps", "buffer_alpha")


def _topology(opts: dict[str, Any], base: Any) -> Any:
    """The scenario's ``topology`` entry from --topology and the fat-tree options (None: single switch)."""
    name = opts.get("topology")
    extra = {k: opts[k] for k in TOPOLOGY_OPTS if opts.get(k) is not None}
    if name is None and not extra:
        return base
    if name in (None, "single"):
        if extra:
            raise BadInputError(f"--{next(iter(extra)).replace('_', '-')} needs --topology fat-tree, star or a file")
        return None
    if name in ("fat-tree", "star"):
        return {"kind": name, **extra}
    if not Path(name).is_file():
        raise BadInputError(f"--topology {name}: not single, fat-tree, star or an existing topology file")
    return {"kind": "file", "path": name, **extra}


def _pfc_option(value: str) -> dict[str, int] | None:
    """``--pfc``: off (None), dynamic ({}: PfcParams' defaults) or XOFF,XON (static thresholds, bytes)."""
    if value == "off":
        return None
    if value == "dynamic":
        return {}
    parts = value.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise OptionValueError(f"--pfc must be off, dynamic or XOFF,XON (bytes), got {value!r}", PROG, ExitCode.USAGE)
    return {"xoff_bytes": int(parts[0]), "xon_bytes": int(parts[1])}


def _nic(opts: dict[str, Any]) -> dict[str, Any] | None:
    """The scenario's ``nic`` entry from --nic-cores/--nic-threads/--decision-cycles (None: off).
    A cycle count is timed by the --nic-profile clock; a verify.json brings its own cycles and clock
    (``simulator.nic.verify_cycles``); firmware (--controller firmware) defaults to its verify.json."""
    cores, threads, cycles = opts.get("nic_cores"), opts.get("nic_threads"), opts.get("decision_cycles")
    if cores is None and threads is None:
        if cycles is not None or opts.get("nic_profile") is not None:
            raise BadInputError("--decision-cycles/--nic-profile need the decision processor (--nic-cores, --nic-threads)")
        return None
    if cycles is None and opts.get("controller") == "firmware" and opts.get("policy"):
        cycles = str(Path(opts["policy"]) / "verify.json")
    if cycles is None:
        raise BadInputError("--nic-cores/--nic-threads need --decision-cycles N or a verify.json")
    try:
        n, clock = int(cycles), None
    except ValueError:
        if not Path(cycles).is_file():
            raise BadInputError(f"--decision-cycles {cycles}: neither a cycle count nor an existing verify.json") from None
        if opts.get("nic_profile") is not None:
            raise BadInputError("--nic-profile times a cycle count; a verify.json carries its own clock")
        n, clock = verify_cycles(Path(cycles))
    if clock is None:
        from rlcc.emulator.cycle_model import load_profile  # the profile's clock: one source for its speed

        clock = load_profile(opts.get("nic_profile") or DEFAULT_TARGET.default_profile).clock_hz
    return {"cores": cores or 1, "threads": threads or 1, "decision_cycles": n, "clock_hz": clock}


def _execute(kind: str, base: dict[str, Any], opts: dict[str, Any], start: str | None) -> None:
    """Run the scenario ``base`` + options; ``start``: the command's default --initial-rate
    (None: the scenario's own ``initial_rate``)."""

    data = dict(base)
    data.setdefault("kind", kind)
    net_opts = {k: opts[k] for k in NETWORK_OPTS if opts.get(k) is not None}
    net = data.get("network", {})
    if opts.get("pfc") is not None:
        net_opts["pfc"] = _pfc_option(opts["pfc"])
    if net_opts and isinstance(net, Mapping):  # anything else: from_dict names what network must be
        data["network"] = {**net, **net_opts}
    data.update({k: opts[k] for k in SCENARIO_OPTS if opts.get(k) is not None})
    data["topology"] = _topology(opts, data.get("topology"))
    if data["topology"] is None:
        data.pop("topology")
    nic = _nic(opts)
    if nic is not None:
        data["nic"] = nic
    start = opts["initial_rate"] if opts.get("initial_rate") is not None else start
    if isinstance(start, float):
        data["initial_rate"] = start
    elif start == CONTROLLER:
        data["initial_rate"] = None
    scenario = Scenario.from_dict(data)
    if start == FAIR:
        scenario = dataclasses.replace(scenario, initial_rate=scenario.fair_rate())
    # Outputs are checked before minutes of simulation, not after.
    if opts.get("trace_file"):
        check_writable_file(_npz_path(opts["trace_file"]), "--trace")
    if opts.get("plot"):
        from rlcc.simulator.plot import plot_path  # lazy: matplotlib costs a second at start-up

        check_writable_file(plot_path(opts["plot"]), "--plot")
    spec = ObservationSpec.from_file(opts["spec_file"]) if opts.get("spec_file") else None
    if opts["controller"] == "firmware":
        if not opts.get("policy"):
            raise BadInputError("controller 'firmware' needs the firmware directory (--policy DIR)")
        controller = load_firmware(opts["policy"])
    else:
        controller = make_controller(opts["controller"], opts.get("policy"), spec)
    agent = ecn_agent(opts.get("ecn_agent"), opts.get("ecn_static"))
    trace = None
    if opts.get("trace_file"):
        trace = TraceConfig(capacity=opts["trace_capacity"], stride=opts["trace_stride"], seed=scenario.seed)
        trace.validate()
    steps = round(scenario.duration_ns / scenario.network.dt_ns)
    show = not opts["quiet"] and sys.stderr.isatty() and steps > 20_000
    bar = None
    if show:
        bar = tqdm(total=steps, unit="step", desc=PROG, file=sys.stderr, leave=False)
    try:
        result = simulate(scenario, controller, trace=trace, progress=bar.update if bar else None, switch_agent=agent)
    finally:
        if bar is not None:
            bar.close()
    metrics = dict(result.metrics_full if opts["full"] else result.metrics)
    if agent is not None and np.isfinite(result.flows["size_bytes"]).any():
        metrics.update({f"acc_{k}": v for k, v in switch_metrics(result).items()})
    # Where each file went, on stderr: stdout stays the metrics (valid JSON with --json).
    if opts.get("trace_file"):
        result.trace.save(opts["trace_file"])
        click.echo(f"wrote trace: {_npz_path(opts['trace_file'])}", err=True)
    if opts.get("plot"):
        from rlcc.simulator.plot import plot_result  # lazy: matplotlib costs a second at start-up

        click.echo(f"wrote plot: {plot_result(result, opts['plot'])}", err=True)
    # A metric without samples (no probe returned, no short flow or iteration finished) is NaN
    # inside; it leaves as null (JSON) or n/a, never as NaN or inf.
    metrics = {k: None if isinstance(v, (float, np.floating)) and not np.isfinite(v) else v for k, v in metrics.items()}
    if opts["as_json"]:
        click.echo(json.dumps({"scenario": scenario.to_dict(), "controller": result.controller, "metrics": metrics},
                              indent=2, allow_nan=False))
        return
    click.echo(f"{scenario.kind}  controller={result.controller}  flows={len(result.flows['sent_bytes'])}  "
               f"duration={scenario.duration_ms:g} ms  seed={scenario.seed}  start={_start_label(start, scenario)}")
    width = max(len(k) for k in metrics)
    for key, value in metrics.items():
        click.echo(f"  {key:<{width}}  {'n/a' if value is None else format(value, '.6g')}")


def _start_label(start: str | float | None, scenario: Any) -> str:
    """How the flows started, for the header line."""
    if scenario.initial_rate is None:
        return "controller's rate"
    rate = f"{scenario.initial_rate:.4g}"
    return f"fair share {rate}" if start == FAIR else rate


def _npz_path(path: str) -> str:
    """The file numpy's savez writes for ``path`` (it appends .npz when missing)."""
    return path if path.endswith(".npz") else path + ".npz"


@click.group("sim", help="Run a datacenter simulator scenario and print its metrics.")
def simulate_command() -> None:
    """Run a datacenter simulator scenario and print its metrics."""


@simulate_command.command("many-to-one")
@click.option("--flows", type=int, default=16, show_default=True, help="long-lived flows into the one receiver")
@click.option("--hosts", type=int, default=None, help="sender hosts [default min(flows, 64)]")
@_common
@guarded(PROG)
def many_to_one(flows: int, hosts: int | None, **opts: Any) -> None:
    """Incast: FLOWS long-lived flows from HOSTS senders into one switch port."""
    _execute("many-to-one", {"flows": flows, "hosts": hosts}, opts, FAIR)


@simulate_command.command("all-to-all")
@click.option("--hosts", type=int, default=8, show_default=True, help="hosts, each sending to every other")
@click.option("--flows-per-pair", type=int, default=1, show_default=True, help="flows per (sender, receiver) pair")
@_common
@guarded(PROG)
def all_to_all(hosts: int, flows_per_pair: int, **opts: Any) -> None:
    """Every host sends to every other host; one switch port per receiver."""
    _execute("all-to-all", {"hosts": hosts, "flows_per_pair": flows_per_pair}, opts, FAIR)


@simulate_command.command("long-short")
@click.option("--short-flows", type=int, default=16, show_default=True, help="short flows per burst")
@click.option("--short-bytes", type=int, default=64_000, show_default=True, help="size of each short flow in bytes")
@click.option("--bursts", type=int, default=1, show_default=True, help="bursts of short flows")
@_common
@guarded(PROG)
def long_short(short_flows: int, short_bytes: int, bursts: int, **opts: Any) -> None:
    """One long flow plus bursts of short flows starting mid-run."""
    _execute("long-short", {"short_flows": short_flows, "short_bytes": short_bytes, "bursts": bursts}, opts, CONTROLLER)


@simulate_command.command("osu")
@click.option("--hosts", type=int, default=8, show_default=True, help="MPI ranks (one per host)")
@click.option("--message-bytes", type=int, default=65536, show_default=True, help="bytes each rank sends to each other rank")
@click.option("--iterations", type=int, default=4, show_default=True, help="all-to-all iterations, one after another")
@_common
@guarded(PROG)
def osu(hosts: int, message_bytes: int, iterations: int, **opts: Any) -> None:
    """OSU MPI all-to-all: per iteration every rank sends MESSAGE_BYTES to every other rank."""
    if opts.get("full") is False:
        opts["full"] = True  # iterations run from t = 0: the whole run is the measurement
    _execute("osu", {"hosts": hosts, "message_bytes": message_bytes, "iterations": iterations}, opts, CONTROLLER)


@simulate_command.command("trace")
@click.option("--hosts", type=int, default=8, show_default=True, help="hosts, each sending to random others")
@click.option("--cdf", default="websearch", show_default=True,
              help="flow sizes: websearch, hadoop or a CDF file of 'size_bytes cdf_percent' lines")
@click.option("--load", type=POSITIVE_FLOAT, default=0.5, show_default=True, help="fraction of each host's NIC rate")
@_common
@guarded(PROG)
def trace(hosts: int, cdf: str, load: float, **opts: Any) -> None:
    """Poisson arrivals of flows with sizes from a published CDF (FCT slowdown metrics)."""
    opts["full"] = True
    _execute("trace", {"hosts": hosts, "cdf": cdf, "load": load}, opts, CONTROLLER)


@simulate_command.command("suite")
@click.option("--controller", "controllers", multiple=True, required=True,
              help="NAME=PATH (an .onnx policy or a firmware directory) or swift, dcqcn, hpcc; repeat for each")
@click.option("-o", "--out", required=True, type=click.Path(), help="output directory (suite.md, suite.json, PNGs)")
@click.option("--suite", "suite_name", type=click.Choice(list(SUITES)), default="full", show_default=True,
              help="full: the paper's evaluation; reduced: the few runs rlcc-compile checks (seconds, not minutes)")
@click.option("--seeds", default="0", show_default=True, help="comma-separated seeds")
@click.option("--start", type=click.Choice(STARTS), default=None,
              help="many-to-one and all-to-all flows start at line rate (the paper's; Table IV splits bring-up and "
                   "steady losses) or at their fair share [default: full line-rate, reduced fair-share]")
@click.option("--loss-recovery", type=click.Choice(LOSS_RECOVERY), default=None,
              help="go-back-n (RoCE NICs) or none, for every run [default: full go-back-n, reduced none]")
@click.option("--backend", type=click.Choice(["auto", "ray", "serial"]), default="auto", show_default=True,
              help="where the simulations run: Ray (local unless --address; auto: when installed, pip install 'rlcc[ray]') "
                   "or in this process; results are identical")
@click.option("--address", default=None, help="Ray cluster address, e.g. ray://head:10001 or auto (implies --backend ray)")
@click.option("--num-cpus", type=int, default=None, help="local Ray CPUs [all]")
@click.option("--loss-mode", type=click.Choice([*LOSS_MODES, "both"]), default="lossy", show_default=True,
              help="lossy shared buffers, lossless (PFC, the ns-3 peer's dynamic thresholds), or both (Table V per mode)")
@click.option("--force", is_flag=True, help="replace an existing output directory")
@click.option("--quiet", "-q", is_flag=True, help="no progress bar")
@guarded(PROG)
def suite(controllers: tuple[str, ...], out: str, suite_name: str, seeds: str, start: str | None,
          loss_recovery: str | None, backend: str, address: str | None, num_cpus: int | None, loss_mode: str,
          force: bool, quiet: bool) -> None:
    """The RL-CC paper's evaluation (Tables IV and V, goodput and latency per scale, OSU, long-short,
    FCT) for every controller: Markdown, JSON and PNG plots in OUT."""

    try:
        seed_list = [int(x) for x in seeds.split(",") if x.strip()]
    except ValueError:
        raise OptionValueError(f"--seeds must be comma-separated integers, got {seeds!r}", PROG, ExitCode.USAGE) from None
    if not seed_list or any(x < 0 for x in seed_list):
        raise OptionValueError(f"--seeds must be non-negative integers, got {seeds!r}", PROG, ExitCode.USAGE)
    specs = [ControllerSpec.parse(c) for c in controllers]
    with claimed_output_dir(out, force, "--out", marker="suite.json"):  # checked and locked before the runs
        if address:
            backend = "ray"
        elif backend == "auto":
            backend = "ray" if importlib.util.find_spec("ray") else "serial"
        modes = LOSS_MODES if loss_mode == "both" else (loss_mode,)
        results = run_suite(specs, suite_name, seed_list, backend=backend, address=address, num_cpus=num_cpus,
                            progress=False if quiet else None, loss_modes=modes, start=start,
                            loss_recovery=loss_recovery)
        with atomic_output_dir(Path(out), overwrite=force, marker="suite.json") as staging:
            written = write_report(results, staging)
        for path in written:
            click.echo(str(Path(out) / Path(path).name))


@simulate_command.command("run")
@click.argument("scenario_file", type=click.Path())
@_common
@guarded(PROG)
def run_file(scenario_file: str, **opts: Any) -> None:
    """Run a scenario described by a JSON file (see simulator/README.md)."""
    data = textio.parse_json(textio.read_bytes(scenario_file, "scenario file"), "scenario", scenario_file)
    if not isinstance(data, dict):
        raise BadInputError(f"invalid scenario in {scenario_file}: top level must be a JSON object")
    _execute(str(data.get("kind")), data, opts, None)


standalone(simulate_command)
