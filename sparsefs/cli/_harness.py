"""Sub-commands ``compare`` and ``reproduce``: the evaluation harness from the shell."""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["add_parsers", "cmd_compare", "cmd_reproduce"]

_RESULT_FILES = ("results.csv", "report.md")


def add_progress_options(parser: argparse.ArgumentParser) -> None:
    from sparsefs.cli._common import add_progress_options as add

    add(parser)


def _fail(message: str):
    from sparsefs.cli._common import CLIError

    raise CLIError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be >= 1 (or -1 for all CPUs)")
    return value


def add_parsers(sub: Any) -> None:
    """Add ``compare`` and ``reproduce`` to the ``sparsefs`` sub-parsers."""
    p = sub.add_parser(
        "compare",
        help="evaluate methods on data sets by cross-validation; write results, report, figures",
        description="Cross-validated comparison of feature-selection methods: selection on each "
        "training fold, then (supervised) linear SVM, naive Bayes, 5-NN and a decision tree on "
        "the top-k features for every k, or (--unsupervised) k-means 20 times. Writes "
        "results.csv (+ results.meta.json), report.md and PNG figures into --out.",
    )
    p.add_argument("data", nargs="+",
                   help="data file(s) (.mat/.csv/.tsv/.parquet/.npz/.h5ad), 'default' (the "
                   "embedded data), a benchmark name such as ALLAML or ALLAML.mat (found via "
                   "SPARSEFS_DATA) or a make_* generator; resolved as 'sparsefs select' does")
    p.add_argument("--target", "-t", help="label column (CSV/TSV/Parquet) or obs key (h5ad); a "
                   "column of numbers with decimals is a continuous outcome (the regression "
                   "protocol: ridge regression, R2 and RMSE)")
    p.add_argument("--continuous", action="store_true",
                   help="regression protocol with --target read as numbers even when they are "
                   "whole numbers (ages, counts)")
    p.add_argument("--time", metavar="COL", help="survival protocol (a ridge Cox model, "
                   "Harrell's C-index, folds stratified on the event): the follow-up time "
                   "column; with --event")
    p.add_argument("--event", metavar="COL",
                   help="the event column (1 / True = observed, 0 / False = censored)")
    p.add_argument("--transpose", action="store_true", help="the files are features x samples")
    p.add_argument("--groups", metavar="COLUMN", default=None,
                   help="column (CSV/TSV/Parquet), obs key (h5ad) or variable (.mat/.npz) with "
                   "the group of every sample, e.g. the donor of every cell: every group stays "
                   "whole in the folds (no donor in training and test at once)")
    p.add_argument("--methods", "-m", required=True,
                   help="comma-separated stems (see 'sparsefs methods'); 'all' adds the "
                   "all-features baseline")
    p.add_argument("--k", default="1:80",
                   help="numbers of selected features: '1:80', '1:80:5', '5,10,20' "
                   "(default 1:80; values above the number of features are dropped)")
    p.add_argument("--cv", default="5",
                   help="folds of stratified K-fold CV (default 5), 'split' (random "
                   "stratified splits, see --train-size, --repeats) or 'none' (unsupervised "
                   "methods only)")
    p.add_argument("--repeats", type=_positive_int, default=1,
                   help="repetitions of the CV scheme (default 1)")
    p.add_argument("--train-size", type=float, default=2 / 3,
                   help="training fraction for --cv split (default 2/3)")
    p.add_argument("--estimators", help="downstream estimators, comma-separated "
                   "(default svm,nb,knn,tree; kmeans with --unsupervised; ridge for a "
                   "continuous outcome, cox for survival); 'self' scores a "
                   "classifier's own predictions, as the sparse center and class-specific "
                   "papers do (it implies --mode refit)")
    p.add_argument("--mode", choices=("rank", "refit", "own"), default=None,
                   help="how each method gives its subsets: 'rank' (one fit per fold, the top k "
                   "of its ranking for every k; the default), 'refit' (one fit per k, needed by "
                   "--estimators self) or 'own' (one fit, the method's own rule decides k)")
    p.add_argument("--metrics", help="metrics, comma-separated (default: all of the protocol)")
    p.add_argument("--unsupervised", action="store_true",
                   help="unsupervised protocol: k-means on the selected features, ACC and NMI")
    p.add_argument("--runs", type=_positive_int, default=20,
                   help="k-means runs per k with --unsupervised (default 20)")
    p.add_argument("--no-zscore", action="store_true",
                   help="do not z-score the features (by default a scaler is fitted on each "
                   "training fold)")
    p.add_argument("--smote", action="store_true",
                   help="oversample minority classes with SMOTE inside each training fold")
    p.add_argument("--k-max", type=_positive_int, default=None,
                   help="best-over-k tables consider k <= K_MAX only (e.g. 20, as the papers)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--n-jobs", "-j", type=_positive_int, default=1,
                   help="parallel tasks (default 1; -1 for all CPUs)")
    p.add_argument("--out", "-o", required=True,
                   help="output directory (created if needed; written in a temporary folder "
                   "beside it and moved into place only when the run succeeds)")
    p.add_argument("--parquet", action="store_true", help="also write results.parquet")
    p.add_argument("--force", action="store_true", help="overwrite results in --out")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    p.add_argument("--stability", action="store_true",
                   help="record every fold's selected features: the report gains a stability "
                   "section (Nogueira index across folds with its CI, the features chosen in "
                   ">= 80%% of the folds) and a stability figure")
    add_progress_options(p)

    p = sub.add_parser(
        "reproduce",
        help="run a paper's reproduction (configs/<stem>.toml) and write its report",
        description="Run the reproduction of one paper as declared in configs/<STEM>.toml and "
        "write OUT/<STEM>.md (our numbers beside the paper's, each labelled) with the results "
        "and figures in OUT/<STEM>/. Real data sets are read from SPARSEFS_DATA.",
    )
    p.add_argument("stem", nargs="?", help="the reproduction's stem, or a .toml path")
    p.add_argument("--list", action="store_true", help="list the available reproductions")
    p.add_argument("--quick", action="store_true",
                   help="a reduced run (fewer data sets, k values and folds) for a smoke test")
    p.add_argument("--out", "-o", default="reproductions",
                   help="output directory (default ./reproductions; the repository keeps its "
                   "reports in docs/reproductions)")
    p.add_argument("--config-dir", help="directory searched first for <stem>.toml")
    p.add_argument("--from-results", action="store_true",
                   help="re-render OUT/<STEM>.md from the results stored in OUT/<STEM>/ "
                   "without recomputing (tables, claims and hooks; the stored figures are kept)")
    p.add_argument("--n-jobs", "-j", type=_positive_int, default=1, help="parallel tasks")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    add_progress_options(p)


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    return items or None


def _compare_command(args: argparse.Namespace) -> str:
    """The ``sparsefs compare`` command line that reproduces this run (for the report)."""
    parts = ["sparsefs", "compare", *args.data]
    for flag, value, default in (
        ("--target", args.target, None), ("--time", getattr(args, "time", None), None),
        ("--event", getattr(args, "event", None), None),
        ("--groups", getattr(args, "groups", None), None), ("--methods", args.methods, None),
        ("--k", args.k, "1:80"), ("--cv", args.cv, "5"), ("--repeats", args.repeats, 1),
        ("--train-size", args.train_size, 2 / 3), ("--estimators", args.estimators, None),
        ("--metrics", args.metrics, None), ("--runs", args.runs, 20),
        ("--k-max", args.k_max, None), ("--seed", args.seed, 0), ("--n-jobs", args.n_jobs, 1),
        ("--mode", args.mode, None),
    ):
        if value is not None and value != default:
            parts += [flag, str(value)]
    for flag, on in (("--transpose", args.transpose), ("--unsupervised", args.unsupervised),
                     ("--continuous", getattr(args, "continuous", False)),
                     ("--no-zscore", args.no_zscore), ("--smote", args.smote),
                     ("--stability", getattr(args, "stability", False))):
        if on:
            parts.append(flag)
    parts += ["--out", args.out]
    return " ".join(shlex.quote(str(p)) for p in parts)


def _figures(results, outdir: Path, prefix: str = "", dpi: int = 110
             ) -> tuple[list[tuple[str, str]], str | None]:
    try:
        from sparsefs.plotting import report_figures

        return report_figures(results, outdir, prefix=prefix, dpi=dpi), None
    except ImportError as exc:
        return [], str(exc)


def _check_out(out: Path, names: tuple[str, ...], force: bool, *, create: bool = True) -> None:
    if out.exists() and not out.is_dir():
        _fail(f"--out {out}: exists and is not a directory")
    clash = [n for n in names if (out / n).exists()]
    if clash and not force:
        _fail(f"{out / clash[0]} exists; pass --force to overwrite it")
    parent = out.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        _fail(f"--out {out}: {parent} is not a writable directory")
    if create:
        out.mkdir(parents=True, exist_ok=True)


class _StagedDir:
    """Write a run's files into a temporary folder beside ``out``; :meth:`commit` moves them
    into ``out`` (created if needed), :meth:`discard` removes them. A failed run leaves
    neither an empty nor a partial ``out`` behind."""

    def __init__(self, out: Path):
        self.out = out
        self._made_parents: list[Path] = []
        parent = out.absolute().parent
        missing = []
        while not parent.exists():
            missing.append(parent)
            parent = parent.parent
        for d in reversed(missing):
            d.mkdir()
            self._made_parents.append(d)
        self.path = Path(tempfile.mkdtemp(dir=out.absolute().parent, prefix=f".{out.name}."))
        umask = os.umask(0)  # mkdtemp makes the folder private (0700); give it mkdir's mode
        os.umask(umask)
        self.path.chmod(0o777 & ~umask)

    def commit(self) -> None:
        if not self.out.exists():
            os.replace(self.path, self.out)
            return
        for item in self.path.iterdir():
            target = self.out / item.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            os.replace(item, target)
        self.path.rmdir()

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        for d in reversed(self._made_parents):
            try:
                d.rmdir()
            except OSError:
                break


def _check_k(spec, k_text: str, load_dataset) -> None:
    """One up-front error when every k exceeds a data set's number of features."""
    from sparsefs.harness._spec import parse_k_grid

    try:
        grid = parse_k_grid(k_text)
    except ValueError as exc:
        _fail(f"--k {k_text!r}: {exc}")
    ranked = [m for m in spec.methods if m.resolved_mode(spec.protocol) in ("rank", "refit")]
    if not ranked:
        return
    for dspec in spec.datasets:
        ds = load_dataset(dspec, seed=spec.seed)
        p = ds.X.shape[1]
        if min(grid) > p:
            _fail(f"--k {k_text}: every value exceeds the number of features of "
                  f"{dspec.display} (p = {p}); give values <= {p}")


def _setup_logging(quiet: bool) -> None:
    logger = logging.getLogger("sparsefs.harness")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("sparsefs: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.WARNING)


def cmd_compare(args: argparse.Namespace) -> int:
    """``sparsefs compare``."""
    from sparsefs.cli._common import resolve_data
    from sparsefs.harness import (
        CVSpec,
        DataSpec,
        ExperimentSpec,
        MethodSpec,
        best_over_k,
        fit_method,
        headline,
        load_dataset,
        markdown_report,
        run,
    )
    from sparsefs.utils import get_method

    _setup_logging(args.progress is False)
    protocol = "unsupervised" if args.unsupervised else "supervised"
    if (args.time is None) != (args.event is None):
        _fail("--time and --event: a survival outcome needs both columns")
    if args.time is not None:
        if args.target or args.unsupervised or args.continuous:
            _fail("--time/--event (survival) go without --target, --continuous and "
                  "--unsupervised")
        protocol = "survival"
    elif args.continuous:
        if not args.target or args.unsupervised:
            _fail("--continuous reads --target as a continuous outcome: give --target, without "
                  "--unsupervised")
        protocol = "regression"
    names = _split(args.methods)
    if not names:
        _fail("--methods: give at least one stem (see 'sparsefs methods')")
    estimators = _split(args.estimators)
    mode = args.mode
    if mode is None and estimators and "self" in estimators:
        mode = "refit"  # a method's own predictions need one fit per k
    methods = []
    for m in (MethodSpec.from_value(n) for n in names):
        if m.stem:
            get_method(m.stem)  # an unknown stem fails here, listing the known ones
            if mode is not None:
                m = MethodSpec(stem=m.stem, mode=mode)
        methods.append(m)
    if estimators and "self" in estimators:
        no_predict = [m.stem for m in methods
                      if m.stem and not hasattr(get_method(m.stem).estimator, "predict")]
        if no_predict:
            _fail(f"--estimators self scores a method's own predictions; "
                  f"{', '.join(no_predict)} cannot predict (use classifiers, see "
                  "'sparsefs methods')")
    datasets = []
    for text in args.data:
        d = DataSpec.from_string(resolve_data(text))
        if d.path is not None and (args.target or args.transpose or args.time or args.groups):
            d = DataSpec(path=d.path, target=args.target, transpose=args.transpose,
                         time=args.time, event=args.event, groups=args.groups)
        elif args.time is not None:
            _fail(f"{text}: --time/--event name columns of a data file")
        elif args.groups:
            _fail(f"{text}: --groups names a column of a data file (a generator's groups, "
                  "e.g. make_multi_donor_counts's donors, are used without it)")
        datasets.append(d)
    if protocol == "supervised" and args.target and datasets[0].path is not None:
        # a --target of numbers with decimals is a continuous outcome: the regression protocol
        from sklearn.utils.multiclass import type_of_target

        first = load_dataset(datasets[0], seed=args.seed)
        if first.y is not None and type_of_target(first.y) == "continuous":
            protocol = "regression"
    cv_text = args.cv.strip().lower()
    if cv_text == "split":
        cv = CVSpec(scheme="split", n_repeats=args.repeats, train_size=args.train_size)
    elif cv_text == "none":
        cv = CVSpec(scheme="none", n_repeats=args.repeats)
    else:
        try:
            cv = CVSpec(scheme="kfold", n_splits=int(cv_text), n_repeats=args.repeats)
        except ValueError:
            _fail(f"--cv {args.cv!r}: give a number of folds (>= 2), 'split' or 'none'")
    if cv_text == "none" and protocol in ("supervised", "regression", "survival"):
        _fail(f"--cv none: the {protocol} protocol needs held-out rows; give a number of folds, "
              "'split', or add --unsupervised")
    if args.smote and protocol in ("regression", "survival"):
        _fail("--smote oversamples classes; it has no place with a continuous or survival "
              "outcome")
    prep = [] if args.no_zscore else ["zscore"]
    if args.smote:
        prep.append("smote")
    spec = ExperimentSpec(
        name="compare",
        protocol=protocol,
        datasets=datasets,
        methods=methods,
        k=args.k,
        cv=cv,
        estimators=estimators,
        metrics=_split(args.metrics),
        preprocessing=prep,
        n_runs=args.runs,
        seed=args.seed,
        report={"k_max": args.k_max},
        record_support=bool(getattr(args, "stability", False)),
    )
    out = Path(args.out)
    _check_out(out, _RESULT_FILES, args.force, create=False)
    _check_k(spec, args.k, load_dataset)
    stage = _StagedDir(out)
    try:
        results = run(spec, n_jobs=args.n_jobs, progress=args.progress,
                      keep_predictions=not args.no_figures and protocol == "supervised")
        results.save(stage.path / "results.csv")
        if args.parquet:
            results.save(stage.path / "results.parquet")
        figures: list[tuple[str, str]] = []
        note = None
        if not args.no_figures:
            figures, note = _figures(results, stage.path)
            if note is None:
                figures += _score_figures(spec, results, stage.path, fit_method, load_dataset)
                if spec.record_support:
                    from sparsefs.cli._stability import stability_figures

                    figures += stability_figures(results, stage.path)
        command = _compare_command(args)
        extra = [f"Figures skipped: {note}\n"] if note else []
        text = markdown_report(results, title="sparsefs compare", command=command,
                               figures={"compare": figures}, extra_sections=extra)
        (stage.path / "report.md").write_text(text, encoding="utf-8")
        metric, estimator, k_max = headline(results)
        best = best_over_k(results, metric, estimator, k_max=k_max)
        _check_out(out, _RESULT_FILES, args.force, create=False)  # nothing appeared meanwhile
        stage.commit()
    except BaseException:
        stage.discard()
        raise

    order_d = {d.display: i for i, d in enumerate(spec.datasets)}
    order_m = {m.display: i for i, m in enumerate(spec.methods)}
    best = best.assign(_d=best["dataset"].map(order_d), _m=best["method"].map(order_m))
    best = best.sort_values(["_d", "_m"], kind="stable")
    rows = [(r.dataset, r.method, f"{r.value:.3f}", f"{r.sd:.3f}", int(r.k))
            for r in best.itertuples()]
    from sparsefs.cli._common import print_table as _print_table

    if protocol in ("supervised", "regression", "survival"):
        spread = "over folds"
    elif spec.cv.scheme == "none":
        spread = f"over {args.runs} k-means runs"
    else:
        spread = f"over folds and {args.runs} k-means runs"
    print(f"Best {metric} over k ({estimator}), mean and sd {spread}:")
    _print_table(("dataset", "method", metric, "sd", "k"), rows)
    n_fig = len(figures)
    print(f"\nWrote {out / 'results.csv'}, {out / 'report.md'} and {n_fig} figure(s) to {out}"
          + (f" ({note})" if note else ""))
    return 0


def scores_are_ranks(est) -> bool:
    """Whether ``est.scores_`` only encode an order: the values (p - i) / p, i = 0..p-1, as
    MRMR's greedy selection order gives. Such a panel shows ranks, not magnitudes."""
    import numpy as np

    scores = getattr(est, "scores_", None)
    if scores is None:
        return False
    values = np.sort(np.asarray(scores, dtype=float))[::-1]
    p = values.size
    return p > 1 and np.allclose(values, (p - np.arange(p)) / p)


def _score_figures(spec, results, out: Path, fit_method, load_dataset) -> list[tuple[str, str]]:
    """One figure per data set: each method's scores on all rows, its best-k support
    highlighted (and the true support when known)."""
    from sparsefs.harness import best_over_k, headline
    from sparsefs.plotting import new_figure, plot_feature_scores, save_figure
    from sparsefs.plotting._figures import _slug

    metric, estimator, k_max = headline(results)
    try:
        best = best_over_k(results, metric, estimator, k_max=k_max)
    except ValueError:
        return []
    made = []
    for dspec in spec.datasets:
        label = dspec.display
        rows = best[(best["dataset"] == label)]
        ranked = [m for m in spec.methods if m.resolved_mode(spec.protocol) != "all"]
        if rows.empty or not ranked:
            continue
        ds = load_dataset(dspec, seed=None)
        fig, axes = new_figure(7.5, 4.0 * len(ranked), len(ranked), 1)
        for ax, m in zip(axes[:, 0], ranked):
            hit = rows[rows["method"] == m.display]
            k = int(hit["k"].iloc[0]) if len(hit) else None
            est = fit_method(spec, m.display, ds, k=k if k else None)
            top = None if ds.n_features <= 60 else 30
            plot_feature_scores(est, true_support=ds.support, feature_names=ds.feature_names,
                                top=top, ax=ax)
            ranks = scores_are_ranks(est)
            ax.set_title(f"{label} — {m.display}" + (f", k = {k}" if k else "")
                         + (f" (top {top} shown)" if top else "")
                         + ("\nscores are ranks (1 - position/p), not magnitudes" if ranks
                            else ""))
            if ranks:
                ax.set_ylabel("rank score (1 - position/p)")
        name = f"{_slug(label)}_scores.png"
        save_figure(fig, out / name)
        made.append((f"{label}: each method's scores fitted on all rows (for illustration; "
                     "the tables use held-out rows only), its best-k selection in colour"
                     + ("; triangles: the truly relevant features" if ds.support is not None
                        else ""), name))
    return made


def cmd_reproduce(args: argparse.Namespace) -> int:
    """``sparsefs reproduce``."""
    from sparsefs.harness import (
        ReproductionSpec,
        find_config,
        list_reproductions,
        markdown_report,
        reproduce,
        run_hooks,
    )
    from sparsefs.harness._results import utc_now

    _setup_logging(args.progress is False)
    if args.list or not args.stem:
        stems = list_reproductions(args.config_dir)
        if not args.list:
            _fail("give a reproduction STEM (see 'sparsefs reproduce --list')")
        for s in stems:
            print(s)
        return 0
    path = find_config(args.stem, args.config_dir)
    spec = ReproductionSpec.from_toml(path)
    stem = spec.stem
    if args.from_results:
        from sparsefs.harness import render_report

        try:
            report = render_report(spec, args.out)
        except FileNotFoundError as exc:
            _fail(str(exc))
        print(f"Re-rendered {report} from the stored results in {Path(args.out) / stem}")
        return 0
    out = Path(args.out)
    sub = out / stem
    out.mkdir(parents=True, exist_ok=True)
    sub.mkdir(parents=True, exist_ok=True)
    repro = reproduce(spec, quick=args.quick, n_jobs=args.n_jobs,
                      progress=args.progress, keep_predictions=not args.no_figures)
    figures: dict[str, list[tuple[str, str]]] = {}
    notes = []
    for res in repro.results:
        name = res.meta["experiment"]
        res.save(sub / f"{name}.csv.gz")
        if not args.no_figures and not res.table.empty:
            figs, note = _figures(res, sub, prefix=f"{name}_", dpi=90)
            if note:
                notes.append(note)
            figures[name] = [(c, f"{stem}/{f}") for c, f in figs]
    extra = run_hooks(repro, sub)
    if notes:
        extra.append(f"Figures skipped: {notes[0]}\n")
    command = f"sparsefs reproduce {stem}" + (" --quick" if args.quick else "") + \
        f" --out {shlex.quote(str(args.out))}"
    title = f"Reproduction: {spec.title}" + (" (quick run)" if args.quick else "")
    text = markdown_report(repro.results, title=title, command=command, date=utc_now(),
                           figures=figures, reproduction=repro.spec, quick=args.quick,
                           extra_sections=extra)
    report = out / f"{stem}.md"
    report.write_text(text, encoding="utf-8")
    skipped = [s["dataset"] for r in repro.results for s in r.meta.get("skipped", [])]
    print(f"Wrote {report} (results and figures in {sub})"
          + (f"; skipped data sets not found locally: {', '.join(skipped)}" if skipped else ""))
    return 0
