"""Fixtures of the CLI tests."""

from __future__ import annotations

import pytest

from rlcc.kinds import registry


@pytest.fixture
def no_compile(monkeypatch):
    """Any compile fails loudly: the inputs under test must be refused before the work (every
    kind's ``fit``, the first step that costs minutes)."""

    def refuse(*_args, **_kwargs):
        raise AssertionError("the compile ran")

    for kind in registry.KINDS.values():
        monkeypatch.setattr(type(kind), "fit", refuse)
