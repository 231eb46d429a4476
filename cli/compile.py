"""`rlcc-compile`: ONNX policy -> closed-loop samples -> CatBoost trees -> exact fixed-point model.

Writes into OUT atomically: ``model.rlcc.json`` (the FxModel), ``catboost.json``, ``report.json``,
``report.md``, ``spec.json``, then the firmware and verification hooks (other stages).
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from rlcc.cli.common import atomic_output_dir, guarded
from rlcc.distill import report as report_mod
from rlcc.distill.pipeline import CompileOptions, compile_policy
from rlcc.fxp.model import FxModel
from rlcc.policy import OnnxPolicy
from rlcc.spec import ObservationSpec


@click.command("compile")
@click.argument("model", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output directory (written atomically).")
@click.option("--spec", "spec_file", type=click.Path(dir_okay=False, path_type=Path), help="Observation spec JSON (overrides the one in the ONNX metadata).")
@click.option("--trees", type=int, default=10, show_default=True, help="Maximum number of trees.")
@click.option("--depth", type=int, default=4, show_default=True, help="Depth of each oblivious tree.")
@click.option("--budget-ops", type=int, default=150, show_default=True, help="Operations budget (comparisons + additions); caps the tree count.")
@click.option("--samples", type=int, default=None, help="Closed-loop decisions to sample [default: 30000, --quick 6000].")
@click.option("--scenarios", default=None, help="Sampling mix, comma list of kind:size[:duration_ms] (kinds: many-to-one, all-to-all, long-short).")
@click.option("--dagger-rounds", type=int, default=0, show_default=True, help="DAgger rounds: the fixed-point model drives, the teacher labels.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of sampling and training; same seed, same bytes.")
@click.option("--quick", is_flag=True, help="Few samples and short simulations (smoke runs, tests).")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@guarded("rlcc-compile")
def compile_command(model: Path, out: Path, spec_file: Path | None, trees: int, depth: int, budget_ops: int,
                    samples: int | None, scenarios: str | None, dagger_rounds: int, seed: int, quick: bool, force: bool) -> None:
    """Compile MODEL (ONNX policy with an rlcc.spec) into a fixed-point tree model in OUT."""
    start = time.perf_counter()
    spec = ObservationSpec.from_file(str(spec_file)) if spec_file else None
    policy = OnnxPolicy(model, spec)
    overrides = {k: v for k, v in (("samples", samples), ("scenarios", scenarios)) if v is not None}
    common = dict(trees=trees, depth=depth, budget_ops=budget_ops, dagger_rounds=dagger_rounds, seed=seed, **overrides)
    options = CompileOptions.quick(**common) if quick else CompileOptions(**common)
    options.validate()
    if out.exists() and not force:
        raise click.UsageError(f"{out} already exists (use --force to replace it)")

    def log(msg: str) -> None:
        click.echo(f"rlcc-compile: [{time.perf_counter() - start:5.1f}s] {msg}")

    result = compile_policy(policy, options, log)
    with atomic_output_dir(out) as stage:
        (stage / "spec.json").write_text(policy.spec.to_json())
        (stage / "model.rlcc.json").write_text(result.model.to_json())
        (stage / "catboost.json").write_text(result.fit.catboost_json or "{}\n")
        (stage / "report.json").write_text(report_mod.to_json(result.report))
        (stage / "report.md").write_text(report_mod.to_markdown(result.report))
        _emit_firmware(result.model, stage, source=policy.path.name)
        _verify_firmware(result.model, stage)
    f, s = result.report["fidelity"], result.report["sizes"]
    click.echo(
        f"rlcc-compile: wrote {out}: {s['trees']} trees, {s['operations']} ops, state {s['state_bytes']} B; "
        f"RMSE vs teacher {f['float_vs_teacher_rmse']:.4f}, quantization path changes "
        f"{f['path_changed_fraction']:.4f} ({time.perf_counter() - start:.1f}s)"
    )


def _emit_firmware(model: FxModel, out_dir: Path, source: str) -> None:
    """Integration hook: generate C firmware with ``rlcc.codegen`` when that stage is installed."""
    try:
        from rlcc.codegen import generate
    except ImportError:
        return
    generate(model, out_dir, name="firmware", source_info={"source": source})


def _verify_firmware(model: FxModel, out_dir: Path) -> None:
    """Integration hook: the integrator wires ``rlcc.verify`` (emulated firmware vs golden) here."""
    del model, out_dir
