"""``sparsefs standing``: the standing benchmarks (docs/standing.md) from the shell."""

from __future__ import annotations

import argparse
import logging
import shlex
import sys
from pathlib import Path
from typing import Any

from sparsefs.cli._checks import convert

__all__ = ["add_parser", "cmd_standing"]

_WHICH = {"a": ["microarray"], "b": ["markers"], "c": ["clustering"],
          "microarray": ["microarray"], "markers": ["markers"], "clustering": ["clustering"],
          "all": ["microarray", "markers", "clustering"]}


def _jobs(text: str) -> int:
    value = convert(int, text, f"{text!r} is not an integer")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be >= 0 (0: in this process)")
    return value


def add_parser(sub: Any) -> None:
    """Add ``standing`` to the ``sparsefs`` sub-parsers."""
    from sparsefs.cli._common import add_progress_options

    p = sub.add_parser(
        "standing",
        help="the field's benchmarks (microarray, marker genes, clustering): where each "
        "method stands; writes OUT/standing.md",
        description="Run the standing benchmarks of issue #29 (configs/standing/*.toml) and "
        "write OUT/standing.md with its figures (OUT/standing/figures) from the results "
        "stored in OUT/standing/results: one file per data set, one record per method. A "
        "rerun computes only the cells (data set x method) not stored yet; --from-results "
        "computes nothing. Real data sets are read from SPARSEFS_DATA.",
    )
    p.add_argument("which", nargs="?", default="all",
                   help="a (microarray), b (markers), c (clustering), all (default), or a study "
                   "of configs/standing (defaults_smba_csfs: the defaults policy, which reuses "
                   "the microarray benchmark's stored cells)")
    p.add_argument("--out", "-o", default="docs",
                   help="output directory (default ./docs: docs/standing.md)")
    p.add_argument("--quick", action="store_true",
                   help="the reduced smoke run of each config ([quick]), stored apart "
                   "(OUT/standing/results/<benchmark>-quick) and written to "
                   "OUT/standing-quick.md")
    p.add_argument("--from-results", action="store_true",
                   help="compute nothing: re-render the page and its figures from the stored "
                   "results")
    p.add_argument("--n-jobs", "-j", type=_jobs, default=2,
                   help="worker processes, one thread each (default 2; 0: in this process, "
                   "no hard stop at the time budget)")
    p.add_argument("--force", action="store_true", help="recompute the stored cells too")
    p.add_argument("--retry", default="",
                   help="recompute stored cells with these statuses, comma-separated "
                   "(budget, error, missing)")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    p.add_argument("--config-dir", help="directory searched first for standing/<name>.toml")
    add_progress_options(p)


def _setup_logging(progress: bool | None) -> None:
    logger = logging.getLogger("sparsefs.harness")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("sparsefs: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.WARNING)


def render(out: Path, *, quick: bool, figures: bool, config_dir: str | None,
           command: str) -> tuple[Path, list[str]]:
    """Analyse every benchmark with stored results, draw the figures, write the page.

    Returns
    -------
    (page path, notes)
    """
    from sparsefs.harness.standing import (
        ResultStore,
        analyse,
        load_standing_spec,
        render_page,
        results_dir,
    )
    from sparsefs.harness.standing._defaults import defaults_section

    analyses: dict[str, Any] = {}
    notes: list[str] = []
    for bench in _WHICH["all"]:
        spec = load_standing_spec(bench, quick=quick, config_dir=config_dir)
        root = results_dir(out, bench, quick=quick)
        store = ResultStore(root)
        analyses[bench] = analyse(spec, store) if store.datasets() else None
    figs: dict[str, dict[str, tuple[str, str]]] = {}
    fig_dir = out / "standing" / ("figures-quick" if quick else "figures")
    if figures:
        try:
            from sparsefs.plotting import standing_figures
        except ImportError as exc:  # pragma: no cover - matplotlib is a test dependency
            notes.append(f"figures skipped: {exc}")
        else:
            for bench, a in analyses.items():
                if a is None:
                    continue
                made = standing_figures(a, fig_dir)
                rel = fig_dir.relative_to(out)
                figs[bench] = {k: (c, f"{rel.as_posix()}/{f}") for k, (c, f) in made.items()}
    extra = [] if quick else [s for s in [defaults_section(out, config_dir=config_dir)] if s]
    text = render_page(analyses, figs, command=command, extra_sections=extra,
                       results=(out / "standing" / "results").as_posix() + "/")
    if quick:
        text = text.replace("# Where each method stands: the field's own benchmarks",
                            "# Where each method stands (quick run: reduced benchmarks)", 1)
    page = out / ("standing-quick.md" if quick else "standing.md")
    page.write_text(text, encoding="utf-8")
    return page, notes


def cmd_standing(args: argparse.Namespace) -> int:
    """``sparsefs standing``: a terminated run (SIGTERM) stops its worker processes; the
    cells stored so far stay, and a rerun resumes."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return _standing(args)
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return _standing(args)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _standing(args: argparse.Namespace) -> int:
    from sparsefs.cli._common import progress_enabled
    from sparsefs.harness.standing import run_standing

    _setup_logging(args.progress)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    study = args.which not in _WHICH
    benches = [args.which] if study else _WHICH[args.which]
    retry = tuple(s.strip() for s in args.retry.split(",") if s.strip())
    bad = sorted(set(retry) - {"budget", "error", "missing"})
    if bad:
        from sparsefs.cli._common import CLIError

        raise CLIError(f"--retry {','.join(bad)}: statuses are budget, error, missing")
    computed = []
    if not args.from_results:
        for bench in benches:
            reuse = ()
            if study:
                from sparsefs.harness.standing import load_standing_spec

                reuse = (load_standing_spec(bench, config_dir=args.config_dir).benchmark,)
            outcomes = run_standing(bench, out, quick=args.quick, n_jobs=args.n_jobs,
                                    force=args.force, retry=retry,
                                    progress=progress_enabled(args),
                                    config_dir=args.config_dir, reuse_from=reuse)
            computed.append((bench, outcomes))
    command = "sparsefs standing all --from-results" + (" --quick" if args.quick else "") + \
        f" --out {shlex.quote(str(args.out))}"
    page, notes = render(out, quick=args.quick, figures=not args.no_figures,
                         config_dir=args.config_dir, command=command)
    for bench, outcomes in computed:
        by = {}
        for o in outcomes:
            by[o.status] = by.get(o.status, 0) + 1
        counts = ", ".join(f"{n} {s}" for s, n in sorted(by.items())) or "nothing new"
        print(f"{bench}: computed {len(outcomes)} cell(s) ({counts})")
    for n in notes:
        print(n)
    print(f"Wrote {page}")
    return 0
