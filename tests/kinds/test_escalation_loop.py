"""The compile template's escalation loop (``ModelKind.compile_into``): attempts after a miss go
to scratch directories inside the staging directory, the best attempt's files end up in it, the
scratch directories are gone, and the report hears about every attempt."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from rlcc.kinds.base import ATTEMPT_PREFIX, Attempt, CompileRequest, ModelKind, Outcome, RunContext


@dataclasses.dataclass
class Job:
    level: int


class LadderKind(ModelKind):
    """Attempt k scores ``scores[k]`` (lower is better); it escalates while the score is > 0."""

    name = "ladder"

    def __init__(self, scores: list[int]):
        self.scores = scores
        self.noted: list[str] = []

    def owns_manifest(self, raw):
        return False

    def prepare(self, request):
        return Job(0)

    def fit(self, job, run):
        return self.scores[job.level]

    def write_model(self, job, result, stage):
        (stage / "model.rlcc.json").write_text(f"{job.level}\n")

    def generate(self, job, result, stage):
        (stage / "firmware.c").write_text(f"/* attempt {job.level} */\n")
        (stage / "firmware.rlcc.json").write_text("{}\n")  # no policy digest: nothing to cache
        return {"c": stage / "firmware.c", "manifest": stage / "firmware.rlcc.json"}

    def verify_compiled(self, job, result, paths, stage, run):
        return None, None

    def closed_loop(self, job, result, verdict, stage, run):
        (stage / f"only-in-{job.level}.txt").write_text("x")
        return result

    def escalation(self, job, tried: list[Attempt]):
        last = tried[-1]
        if last.checked == 0 or len(tried) == len(self.scores):
            return None
        return f"level {len(tried)}", Job(len(tried))

    def rank(self, attempt: Attempt) -> Any:
        return attempt.checked

    def note_attempts(self, kept, tried):
        self.noted = [a.what for a in tried]
        return kept.checked

    def report(self, job, checked, verdict, failure, stage, run):
        (stage / "report.md").write_text(f"kept {job.level} score {checked}\n")
        return Outcome(self.name, stage, gate_passed=checked == 0)

    def verify(self, request, log):
        raise NotImplementedError

    def rebuild(self, policy, raw, jobs, log, progress):
        raise NotImplementedError


def _compile(kind: LadderKind, stage: Path) -> Outcome:
    return kind.compile_into(CompileRequest(model=Path("p.onnx"), run_verify=False), stage, RunContext())


def test_the_best_attempt_is_kept_and_the_scratch_is_gone(tmp_path):
    kind = LadderKind([5, 2, 3])
    out = _compile(kind, tmp_path / "stage")
    files = sorted(p.name for p in (tmp_path / "stage").iterdir())
    assert files == ["firmware.c", "firmware.rlcc.json", "model.rlcc.json", "only-in-1.txt", "report.md"]
    assert (tmp_path / "stage" / "firmware.c").read_text() == "/* attempt 1 */\n"
    assert (tmp_path / "stage" / "report.md").read_text() == "kept 1 score 2\n"
    assert kind.noted == ["default compile", "level 1", "level 2"]
    assert not out.gate_passed and not any(p.name.startswith(ATTEMPT_PREFIX) for p in (tmp_path / "stage").iterdir())


def test_the_default_attempt_stays_when_it_is_best_or_passes(tmp_path):
    kind = LadderKind([1, 4])
    _compile(kind, tmp_path / "a")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["firmware.c", "firmware.rlcc.json", "model.rlcc.json",
                                                                  "only-in-0.txt", "report.md"]
    kind = LadderKind([0, 9])
    out = _compile(kind, tmp_path / "b")
    assert out.gate_passed and kind.noted == ["default compile"]
