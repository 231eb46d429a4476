"""Keep README.md's measured figures equal to the results files behind them.

Every generated figure sits between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``
(NAME from ``readme_blocks.BLOCKS``). ``--write`` re-renders the blocks in place; ``--check``
exits 1 with a unified diff when README.md is stale, so CI (tests/test_readme_figures.py) fails
when a results file or the example changes without the README.

    python bench/readme_tables.py --check | --write [--readme README.md]
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

from readme_blocks import BLOCKS, ROOT, SourceError

MARK = re.compile(r"<!-- bench:(?P<name>[a-z0-9-]+) -->(?P<body>.*?)<!-- /bench:(?P=name) -->", re.DOTALL)


class MarkerError(Exception):
    """README markers do not match the generated blocks (missing, unknown or repeated)."""


def render(text: str) -> str:
    """``text`` with every generated block re-rendered from its source."""
    found = [m["name"] for m in MARK.finditer(text)]
    unknown = sorted(set(found) - set(BLOCKS))
    missing = sorted(set(BLOCKS) - set(found))
    repeated = sorted({n for n in found if found.count(n) > 1})
    if unknown or missing or repeated:
        raise MarkerError(f"README markers: unknown {unknown}, missing {missing}, repeated {repeated}")

    def block(m: re.Match) -> str:
        name = m["name"]
        fn, is_block = BLOCKS[name]
        try:
            body = fn()
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise SourceError(f"block {name!r}: its results file lacks {type(exc).__name__}: {exc}") from None
        if is_block:
            body = f"\n{body}\n\n"
        return f"<!-- bench:{name} -->{body}<!-- /bench:{name} -->"

    return MARK.sub(block, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 with a diff if README.md is stale")
    mode.add_argument("--write", action="store_true", help="rewrite the generated blocks")
    ap.add_argument("--readme", type=Path, default=ROOT / "README.md")
    args = ap.parse_args(argv)
    text = args.readme.read_text()
    try:
        new = render(text)
    except (SourceError, MarkerError) as exc:
        print(f"readme_tables: error: {exc}", file=sys.stderr)
        return 2
    if args.write:
        if new != text:
            args.readme.write_text(new)
        return 0
    if new == text:
        return 0
    sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                               f"{args.readme.name} (committed)", f"{args.readme.name} (from results)"))
    print(f"{args.readme.name} is stale: run python bench/readme_tables.py --write", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
