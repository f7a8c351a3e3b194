"""``python -m docs.sitebuild``: build the documentation site, check it in a browser.

    python -m docs.sitebuild                 # build docs/_build/html with -W (incremental)
    python -m docs.sitebuild --fresh         # the same from scratch, as on a clean checkout
    python -m docs.sitebuild check           # headless Chromium: render and check 5 pages
    python -m docs.sitebuild inventories     # rewrite docs/_inventories from the installed packages
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _build(args: argparse.Namespace) -> int:
    from ._build import build

    result = build(args.out, fresh=args.fresh, gallery=not args.no_gallery, jobs=args.jobs,
                   quiet=not args.verbose)
    where = result.html / "index.html"
    if result.returncode:
        print(f"sparsefs docs: the build failed after {result.seconds:.0f} s (warnings are "
              "errors: see above)", file=sys.stderr)
        return 1
    print(f"sparsefs docs: built in {result.seconds:.0f} s -> {where}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from ._browser import check_site, find_chromium
    from ._build import DOCS

    if find_chromium() is None:
        print("sparsefs docs: no chromium on the PATH (Debian: apt-get install chromium)",
              file=sys.stderr)
        return 2
    html = Path(args.html) if args.html else DOCS / "_build" / "html"
    out = Path(args.out) if args.out else html.parent / "screenshots"
    results = check_site(html, out)
    for c in results:
        r = c.report
        facts = (f"images {r.get('images', 0) - len(r.get('broken_images', []))}/"
                 f"{r.get('images', 0)}, math {r.get('math_typeset', 0)}/{r.get('math', 0)}, "
                 f"search hits {r.get('search_hits', 0)}")
        print(f"{'ok  ' if c.ok else 'FAIL'} {c.name:<12} {c.path:<58} {facts}")
        for problem in c.problems:
            print(f"       {problem}")
    print(f"screenshots and report.json in {out}")
    if args.record:
        from ._record import record_screenshots

        for path in record_screenshots(results, DOCS / "screenshots"):
            print(f"recorded {path}")
    return 0 if all(c.ok for c in results) else 1


def _inventories(args: argparse.Namespace) -> int:
    from ._build import DOCS
    from ._inventories import write_inventories

    for project, n in write_inventories(DOCS / "_inventories").items():
        print(f"{project}: {n} entries")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m docs.sitebuild", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="output folder (default docs/_build/html)")
    parser.add_argument("--fresh", action="store_true",
                        help="remove generated sources and the previous build first")
    parser.add_argument("--no-gallery", action="store_true",
                        help="do not run the examples (a quick, incomplete build)")
    parser.add_argument("-j", "--jobs", default="1", help="parallel jobs (a number or auto)")
    parser.add_argument("-v", "--verbose", action="store_true", help="Sphinx's progress too")
    sub = parser.add_subparsers(dest="command")
    check = sub.add_parser("check", help="render pages of the built site in headless Chromium")
    check.add_argument("--html", help="the built site (default docs/_build/html)")
    check.add_argument("--out", help="screenshots folder (default docs/_build/screenshots)")
    check.add_argument("--record", action="store_true",
                       help="also write small copies of the screenshots to docs/screenshots")
    sub.add_parser("inventories", help="rewrite docs/_inventories from the installed packages")
    args = parser.parse_args(argv)
    if args.command == "check":
        return _check(args)
    if args.command == "inventories":
        return _inventories(args)
    return _build(args)


if __name__ == "__main__":
    sys.exit(main())
