"""Jinja2 rendering of the firmware templates (package data of ``rlcc.templates``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

import rlcc.templates

TEMPLATE_DIR = Path(rlcc.templates.__file__).resolve().parent


def environment() -> jinja2.Environment:
    """Strict, deterministic environment: undefined names fail, output ends with a newline."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render(template: str, context: dict[str, Any]) -> str:
    """Render one template; lines never end in whitespace."""
    text = environment().get_template(template).render(**context)
    return "\n".join(line.rstrip() for line in text.split("\n"))
