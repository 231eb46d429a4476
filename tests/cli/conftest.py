"""Fixtures of the CLI tests."""

from __future__ import annotations

import pytest

from rlcc.cli import compile as compile_cli


@pytest.fixture
def no_compile(monkeypatch):
    """Any compile fails loudly: the inputs under test must be refused before the work."""

    def refuse(*_args, **_kwargs):
        raise AssertionError("the compile ran")

    monkeypatch.setattr(compile_cli, "compile_policy", refuse)
    monkeypatch.setattr(compile_cli, "_switch", refuse)
