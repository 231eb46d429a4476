"""Keep the documentation's measured figures equal to the results files behind them.

Every generated figure sits between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``
(NAME from ``readme_blocks.BLOCKS``) in one of the documents (README.md, bench/README.md,
docs/*.md); each block appears exactly once across them. ``--write`` re-renders the blocks in
place; ``--check`` exits 1 with a unified diff when a document is stale, so CI
(tests/test_readme_figures.py) fails when a results file or the example changes without the docs.

    python bench/readme_tables.py --check | --write [--docs FILE ...]
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


def documents() -> list[Path]:
    """The Markdown files that may hold generated blocks."""
    return [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def check_markers(texts: list[str]) -> None:
    """Every block of BLOCKS appears exactly once across ``texts``, and no other."""
    found = [m["name"] for text in texts for m in MARK.finditer(text)]
    unknown = sorted(set(found) - set(BLOCKS))
    missing = sorted(set(BLOCKS) - set(found))
    repeated = sorted({n for n in found if found.count(n) > 1})
    if unknown or missing or repeated:
        raise MarkerError(f"README markers: unknown {unknown}, missing {missing}, repeated {repeated}")


def render(text: str) -> str:
    """``text`` with every generated block in it re-rendered from its source."""

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
    mode.add_argument("--check", action="store_true", help="exit 1 with a diff if a document is stale")
    mode.add_argument("--write", action="store_true", help="rewrite the generated blocks")
    ap.add_argument("--docs", type=Path, nargs="+", default=None, help="the documents (default: all)")
    args = ap.parse_args(argv)
    paths = args.docs or documents()
    texts = [p.read_text() for p in paths]
    try:
        check_markers(texts)
        new = [render(t) for t in texts]
    except (SourceError, MarkerError) as exc:
        print(f"readme_tables: error: {exc}", file=sys.stderr)
        return 2
    stale = []
    for path, old, fresh in zip(paths, texts, new):
        if fresh == old:
            continue
        if args.write:
            path.write_text(fresh)
            continue
        stale.append(path.name)
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), fresh.splitlines(True),
                                                   f"{path} (committed)", f"{path} (from results)"))
    if stale:
        print(f"{', '.join(stale)} stale: run python bench/readme_tables.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
