"""Progress of the compile's long stages: a stage announces work and advances as it is done.

The pipeline only talks to ``Stage``; :func:`for_stderr` decides how stages show: a tqdm bar on a
terminal, one "done in" line per finished stage otherwise (piped and CI logs are not silent for
minutes), nothing with ``--quiet``. Amounts are in the stage's own unit (cost-weighted simulated
milliseconds for simulations, trees for boosting), so a bar moves with the work, not per call.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TextIO


class Stage:
    """A stage without display (also the interface of displayed ones)."""

    def add(self, total: float) -> None:
        """Announce ``total`` more units of work in this stage."""

    def advance(self, n: float) -> None:
        """``n`` units of the announced work are done."""


Progress = Callable[[str, str], AbstractContextManager[Stage]]  # (description, unit) -> stage


@contextlib.contextmanager
def silent(_desc: str = "", _unit: str = "") -> Iterator[Stage]:
    yield Stage()


class _Bar(Stage):
    """A tqdm bar, drawn from the first announced work on (no empty 0/0 frame)."""

    def __init__(self, desc: str, unit: str, file: TextIO) -> None:
        self.desc, self.unit, self.file = desc, unit, file
        self.bar = None

    def add(self, total: float) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=f"rlcc-compile: {self.desc}", unit=self.unit, file=self.file,
                            leave=False, dynamic_ncols=True, bar_format=_FORMAT)
        else:
            self.bar.total += total
            self.bar.refresh()

    def advance(self, n: float) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} {unit} [{elapsed}<{remaining}]"


def bars(file: TextIO | None = None) -> Progress:
    """Stages shown as tqdm bars on ``file`` (default stderr), removed when the stage ends."""

    @contextlib.contextmanager
    def stage(desc: str, unit: str) -> Iterator[Stage]:
        bar = _Bar(desc, unit, file or sys.stderr)
        try:
            yield bar
        finally:
            bar.close()

    return stage


def lines(file: TextIO | None = None, prefix: str = "rlcc-compile") -> Progress:
    """One line per stage on ``file`` (default stderr) when it ends, with its wall time; nothing
    while it runs (a log file gets no redrawn bars). A stage that raised prints nothing."""

    @contextlib.contextmanager
    def stage(desc: str, _unit: str) -> Iterator[Stage]:
        start = time.perf_counter()
        yield Stage()
        out = file or sys.stderr
        out.write(f"{prefix}: {desc}: done in {time.perf_counter() - start:.1f} s\n")
        out.flush()

    return stage


def for_stderr(quiet: bool, show: bool | None) -> Progress:
    """How a command's stages show on stderr: ``show`` True bars, False nothing; None (the
    default) bars on a terminal, else :func:`lines`; ``quiet`` nothing at all."""
    if quiet or show is False:
        return silent
    if show or sys.stderr.isatty():
        return bars()
    return lines()
