"""`rlcc-compile`: ONNX policy -> verified firmware (stages land issue by issue)."""

from __future__ import annotations

from pathlib import Path

import click

from rlcc.cli.common import atomic_output_dir, guarded
from rlcc.policy import OnnxPolicy
from rlcc.spec import ObservationSpec


@click.command("compile")
@click.argument("model", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output directory (written atomically).")
@click.option("--spec", "spec_file", type=click.Path(dir_okay=False, path_type=Path), help="Observation spec JSON (overrides the one in the ONNX metadata).")
@guarded("rlcc-compile")
def compile_command(model: Path, out: Path, spec_file: Path | None) -> None:
    """Compile MODEL (ONNX policy with an rlcc.spec) into firmware in OUT."""
    spec = ObservationSpec.from_file(str(spec_file)) if spec_file else None
    policy = OnnxPolicy(model, spec)
    with atomic_output_dir(out) as stage:
        (stage / "spec.json").write_text(policy.spec.to_json())
    click.echo(f"rlcc-compile: {model}: valid policy, inputs {', '.join(policy.spec.input_names())}")
    click.echo("rlcc-compile: sampling, distillation, codegen and verification are not yet implemented")
