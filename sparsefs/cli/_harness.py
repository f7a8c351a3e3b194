"""Sub-commands ``compare`` and ``reproduce``: the evaluation harness from the shell.

Every check that needs only the arguments and the file system (:func:`plan_compare`,
:func:`plan_reproduce`) runs before the harness is imported.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparsefs.cli._checks import (
    OutputPlan,
    k_grid_type,
    locate_data,
    parse_count,
    parse_cv,
    parse_k_grid,
    parse_seed,
    parse_train_size,
)
from sparsefs.cli._common import CLIError, add_progress_options, emit_note

__all__ = ["EVERY", "add_parsers", "cmd_compare", "cmd_reproduce", "plan_compare"]

_RESULT_FILES = ("results.csv", "results.meta.json", "report.md")
#: ``--methods every``: every registered method.
EVERY = "every"
#: The harness's downstream estimators and metrics (``sparsefs.harness._spec``; a test keeps
#: them equal), for checks before the harness is imported.
ESTIMATORS = ("svm", "nb", "knn", "tree", "self", "kmeans", "ridge", "cox")
METRICS = {
    "supervised": ("accuracy", "error", "precision_macro", "recall_macro", "f1_macro",
                   "roc_auc"),
    "unsupervised": ("acc", "nmi"),
    "regression": ("r2", "rmse"),
    "survival": ("c_index",),
}


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
                   help="comma-separated stems (see 'sparsefs methods'); 'every' for every "
                   "registered method; 'all' adds the all-features baseline (e.g. 'every,all')")
    p.add_argument("--k", type=k_grid_type, default="1:80",
                   help="numbers of selected features: '1:80', '1:80:5', '5,10,20' "
                   "(default 1:80; values above the number of features are dropped)")
    p.add_argument("--cv", type=parse_cv, default="5",
                   help="folds of stratified K-fold CV (default 5), 'split' (random "
                   "stratified splits, see --train-size, --repeats) or 'none' (unsupervised "
                   "methods only)")
    p.add_argument("--repeats", type=parse_count(1), default=1,
                   help="repetitions of the CV scheme (default 1)")
    p.add_argument("--train-size", type=parse_train_size, default=2 / 3,
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
    p.add_argument("--runs", type=parse_count(1), default=20,
                   help="k-means runs per k with --unsupervised (default 20)")
    p.add_argument("--no-zscore", action="store_true",
                   help="do not z-score the features (by default a scaler is fitted on each "
                   "training fold)")
    p.add_argument("--smote", action="store_true",
                   help="oversample minority classes with SMOTE inside each training fold")
    p.add_argument("--k-max", type=parse_count(1), default=None,
                   help="best-over-k tables consider k <= K_MAX only (e.g. 20, as the papers)")
    p.add_argument("--seed", type=parse_seed, default=0, help="root seed (default 0)")
    p.add_argument("--n-jobs", "-j", type=parse_count(1, all_cpus=True), default=1,
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
        "and figures in OUT/<STEM>/. The configs ship with sparsefs (see --list); real data "
        "sets are read from SPARSEFS_DATA.",
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
    p.add_argument("--force", action="store_true",
                   help="replace an existing report OUT/<STEM>.md and its results OUT/<STEM>/")
    p.add_argument("--n-jobs", "-j", type=parse_count(1, all_cpus=True), default=1,
                   help="parallel tasks")
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


# ------------------------------------------------------------------------------------------
# staged output folders
# ------------------------------------------------------------------------------------------

#: ``.<out name>.sparsefs-<pid>-<random>``: a staged folder, removable once <pid> is gone
_STAGE_RE = re.compile(r"^\.(?P<name>.+)\.sparsefs-(?P<pid>\d+)-[A-Za-z0-9_]+$")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's live process (or unknown): keep its folder
    return True


def remove_stale_stages(out: Path) -> list[Path]:
    """Staged folders beside ``out`` left by a run that was killed (SIGKILL leaves no chance
    to clean up): removed when the process that made them no longer exists."""
    parent = out.absolute().parent
    removed = []
    if not parent.is_dir():
        return removed
    for item in parent.iterdir():
        m = _STAGE_RE.match(item.name)
        if m and m.group("name") == out.name and item.is_dir() and not _pid_alive(
                int(m.group("pid"))):
            shutil.rmtree(item, ignore_errors=True)
            removed.append(item)
    return removed


class _StagedDir:
    """Write a run's files into a temporary folder beside ``out``; :meth:`commit` moves them
    into ``out`` (created if needed), :meth:`discard` removes them. A failed, interrupted or
    terminated run leaves neither an empty nor a partial ``out`` behind (a killed one leaves a
    folder that the next run beside it removes, :func:`remove_stale_stages`)."""

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
        remove_stale_stages(out)
        self.path = Path(tempfile.mkdtemp(dir=out.absolute().parent,
                                          prefix=f".{out.name}.sparsefs-{os.getpid()}-"))
        try:  # a SIGTERM (SystemExit) before the caller's try: block must not leave the stage
            umask = os.umask(0)  # mkdtemp makes the folder private (0700); give it mkdir's mode
            os.umask(umask)
            self.path.chmod(0o777 & ~umask)
        except BaseException:
            self.discard()
            raise

    def commit(self) -> None:
        _merge_into(self.path, self.out)

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        for d in reversed(self._made_parents):
            try:
                d.rmdir()
            except OSError:
                break


# ------------------------------------------------------------------------------------------
# compare
# ------------------------------------------------------------------------------------------


@dataclass
class ComparePlan:
    """What ``compare`` will run, once every light check passed."""

    methods: list[str]
    estimators: list[str] | None
    metrics: list[str] | None
    mode: str | None
    data: list[Any] = field(default_factory=list)
    out: Path = Path()
    #: from the flags; "supervised" with a --target of numbers with decimals becomes
    #: "regression" once the data are read
    protocol: str = "supervised"


def compare_protocol(args: argparse.Namespace) -> str:
    """The protocol the flags ask for: ``survival`` (--time/--event), ``regression``
    (--continuous), ``unsupervised`` or ``supervised``; the outcome flags' combinations are
    checked here."""
    time_col, event_col = getattr(args, "time", None), getattr(args, "event", None)
    continuous = getattr(args, "continuous", False)
    if (time_col is None) != (event_col is None):
        raise CLIError("--time and --event: a survival outcome needs both columns")
    if time_col is not None:
        if args.target or args.unsupervised or continuous:
            raise CLIError("--time/--event (survival) go without --target, --continuous and "
                           "--unsupervised")
        return "survival"
    if continuous:
        if not args.target or args.unsupervised:
            raise CLIError("--continuous reads --target as a continuous outcome: give --target, "
                           "without --unsupervised")
        return "regression"
    return "unsupervised" if args.unsupervised else "supervised"


def plan_compare(args: argparse.Namespace) -> ComparePlan:
    """Every check of ``compare`` that needs no heavy import: methods, estimators, metrics,
    the CV scheme against the protocol, every DATA argument, and the output folder (writable,
    existing results need --force, never a file that is an input)."""
    from sparsefs.utils._registry import get_method, list_methods

    protocol = compare_protocol(args)
    names = _split(args.methods)
    if not names:
        raise CLIError("--methods: give at least one stem (see 'sparsefs methods')")
    methods: list[str] = []
    for n in names:
        if n.lower() == EVERY:
            methods += [m.stem for m in list_methods()]
        elif n.lower() == "all":
            methods.append("all")
        else:
            try:
                methods.append(get_method(n).stem)
            except ValueError as exc:
                raise CLIError(f"--methods: {exc} ('every' runs them all)") from None
    methods = list(dict.fromkeys(methods))
    estimators = _split(args.estimators)
    for e in estimators or ():
        if e not in ESTIMATORS:
            raise CLIError(f"--estimators {e!r}: not one of {', '.join(ESTIMATORS)}")
    if estimators and protocol == "unsupervised" and set(estimators) - {"kmeans"}:
        raise CLIError("--unsupervised evaluates with k-means only: --estimators kmeans (the "
                       "default)")
    metrics = _split(args.metrics)
    # a --target may turn out continuous (the regression protocol): checked again after reading
    known = METRICS[protocol] + (METRICS["regression"] if protocol == "supervised"
                                 and args.target else ())
    for m in metrics or ():
        if m not in known:
            raise CLIError(f"--metrics {m!r}: the {protocol} protocol computes "
                           f"{', '.join(METRICS[protocol])}")
    if args.cv == "none" and protocol != "unsupervised":
        raise CLIError(f"--cv none: the {protocol} protocol needs held-out rows; give a number "
                       "of folds, 'split', or add --unsupervised")
    if getattr(args, "smote", False) and protocol in ("regression", "survival"):
        raise CLIError("--smote oversamples classes; it has no place with a continuous or "
                       "survival outcome")
    mode = args.mode
    if mode is None and estimators and "self" in estimators:
        mode = "refit"  # a method's own predictions need one fit per k
    refs = [locate_data(text) for text in args.data]
    for ref in refs:
        if ref.kind != "file" and (args.target or args.transpose):
            raise CLIError(f"{ref.argument}: --target and --transpose apply to data files only")
        if ref.kind != "file" and getattr(args, "time", None) is not None:
            raise CLIError(f"{ref.argument}: --time/--event name columns of a data file")
        if ref.kind != "file" and getattr(args, "groups", None):
            raise CLIError(f"{ref.argument}: --groups names a column of a data file (a "
                           "generator's groups, e.g. make_multi_donor_counts's donors, are "
                           "used without it)")
    out = Path(args.out)
    plan = OutputPlan(inputs=[r.path for r in refs if r.path is not None], force=args.force)
    names_out = [*_RESULT_FILES, *(["results.parquet"] if args.parquet else [])]
    plan.add_folder("--out", out, names_out, patterns=("*.png",))
    return ComparePlan(methods=methods, estimators=estimators, metrics=metrics, mode=mode,
                       data=refs, out=out, protocol=protocol)


def _check_k(spec, k_text: str, datasets) -> None:
    """One up-front error when every k exceeds a data set's number of features."""
    grid = parse_k_grid(k_text)
    ranked = [m for m in spec.methods if m.resolved_mode(spec.protocol) in ("rank", "refit")]
    if not ranked:
        return
    for dspec, ds in zip(spec.datasets, datasets):
        p = ds.X.shape[1]
        if min(grid) > p:
            raise CLIError(f"--k {k_text}: every value exceeds the number of features of "
                           f"{dspec.display} (p = {p}); give values <= {p}")


#: ``compare`` notes its expected time up front from this many seconds (or a slow method)
NOTE_SECONDS = 30.0


def _cost_note(spec, datasets, n_tasks: int, costs) -> None:
    """The up-front note of ``compare``: how many fits, the expected time, the slow methods."""
    from sparsefs.utils._registry import get_method

    total = sum(costs)
    slow = []
    for m in spec.methods:
        if not m.stem:
            continue
        info = get_method(m.stem)
        if info.slow_size is None:
            continue
        for ds in datasets:
            n, p = ds.X.shape
            if n * p >= info.slow_size:
                slow.append(f"{info.stem} ({info.cost})")
                break
    if total < NOTE_SECONDS and not slow:
        return
    n_data = len(spec.datasets)
    text = (f"{len(spec.methods)} method(s) x {n_data} data set(s): {n_tasks} fold fits, "
            f"about {_duration(total)} on a quiet 2-core machine by the methods' measured costs")
    if slow:
        text += "; slow at this size: " + "; ".join(slow)
    emit_note(text + " (--progress shows the remaining time)")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def cmd_compare(args: argparse.Namespace) -> int:
    """``sparsefs compare``."""
    plan = plan_compare(args)  # no heavy import before this point
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
    from sparsefs.harness._costs import task_costs
    from sparsefs.utils import get_method

    protocol = plan.protocol
    methods = []
    for m in (MethodSpec.from_value(n) for n in plan.methods):
        if m.stem and plan.mode is not None:
            m = MethodSpec(stem=m.stem, mode=plan.mode)
        methods.append(m)
    if plan.estimators and "self" in plan.estimators:
        no_predict = [m.stem for m in methods
                      if m.stem and not hasattr(get_method(m.stem).estimator, "predict")]
        if no_predict:
            raise CLIError(f"--estimators self scores a method's own predictions; "
                           f"{', '.join(no_predict)} cannot predict (use classifiers, see "
                           "'sparsefs methods')")
    datasets = []
    for ref in plan.data:
        d = DataSpec.from_string(ref.resolved)
        if d.path is not None and (args.target or args.transpose or args.time or args.groups):
            d = DataSpec(path=d.path, target=args.target, transpose=args.transpose,
                         time=args.time, event=args.event, groups=args.groups)
        datasets.append(d)
    if protocol == "supervised" and args.target and datasets[0].path is not None:
        # a --target of numbers with decimals is a continuous outcome: the regression protocol
        from sklearn.utils.multiclass import type_of_target

        first = load_dataset(datasets[0], seed=args.seed)
        if first.y is not None and type_of_target(first.y) == "continuous":
            protocol = "regression"
            if args.smote:
                raise CLIError(f"--target {args.target} is a continuous outcome (numbers with "
                               "decimals); --smote oversamples classes: drop it")
            for m in plan.metrics or ():
                if m not in METRICS[protocol]:
                    raise CLIError(f"--metrics {m!r}: --target {args.target} is a continuous "
                                   f"outcome; the regression protocol computes "
                                   f"{', '.join(METRICS[protocol])}")
    if args.cv == "split":
        cv = CVSpec(scheme="split", n_repeats=args.repeats, train_size=args.train_size)
    elif args.cv == "none":
        cv = CVSpec(scheme="none", n_repeats=args.repeats)
    else:
        cv = CVSpec(scheme="kfold", n_splits=int(args.cv), n_repeats=args.repeats)
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
        estimators=plan.estimators,
        metrics=plan.metrics,
        preprocessing=prep,
        n_runs=args.runs,
        seed=args.seed,
        report={"k_max": args.k_max},
        record_support=bool(getattr(args, "stability", False)),
    )
    loaded = [load_dataset(d, seed=spec.seed) for d in spec.datasets]
    _check_k(spec, args.k, loaded)
    weights = task_costs(spec, loaded)
    n_folds = (cv.n_splits if cv.scheme == "kfold" else 1) * cv.n_repeats
    _cost_note(spec, loaded, len(spec.methods) * len(loaded) * n_folds,
               [w * n_folds for w in weights.values()])
    out = plan.out
    stage = _StagedDir(out)
    try:
        results = run(spec, n_jobs=args.n_jobs, progress=args.progress,
                      keep_predictions=not args.no_figures and protocol == "supervised",
                      task_cost=weights)
        results.save(stage.path / "results.csv")
        if args.parquet:
            results.save(stage.path / "results.parquet")
        figures: list[tuple[str, str]] = []
        note = None
        if not args.no_figures:
            figures, note = _figures(results, stage.path)
            if note is None:
                figures += _score_figures(spec, results, stage.path, fit_method, loaded)
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
        plan_compare(args)  # nothing appeared meanwhile
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


def _score_figures(spec, results, out: Path, fit_method, loaded) -> list[tuple[str, str]]:
    """Per data set: each method's scores on all rows, its best-k support highlighted (and the
    true support when known); one panel per method in a grid of bounded size (several figures
    when there are many methods)."""
    from sparsefs.harness import best_over_k, headline
    from sparsefs.plotting import plot_feature_scores, save_figure
    from sparsefs.plotting._figures import _slug, panel_grid

    metric, estimator, k_max = headline(results)
    try:
        best = best_over_k(results, metric, estimator, k_max=k_max)
    except ValueError:
        return []
    made = []
    for dspec, ds in zip(spec.datasets, loaded):
        label = dspec.display
        rows = best[(best["dataset"] == label)]
        ranked = [m for m in spec.methods if m.resolved_mode(spec.protocol) != "all"]
        if rows.empty or not ranked:
            continue
        top = None if ds.n_features <= 60 else 30
        pages = panel_grid(len(ranked))
        for page, (fig, axes) in enumerate(pages):
            chunk = ranked[page * axes.size:(page + 1) * axes.size]
            for ax, m in zip(axes.ravel(), chunk):
                hit = rows[rows["method"] == m.display]
                k = int(hit["k"].iloc[0]) if len(hit) else None
                est = fit_method(spec, m.display, ds, k=k if k else None)
                plot_feature_scores(est, true_support=ds.support, feature_names=ds.feature_names,
                                    top=top, ax=ax)
                ranks = scores_are_ranks(est)
                ax.set_title(f"{label} — {m.display}" + (f", k = {k}" if k else "")
                             + (f" (top {top} shown)" if top else "")
                             + ("\nscores are ranks (1 - position/p), not magnitudes" if ranks
                                else ""), fontsize="medium")
                if ranks:
                    ax.set_ylabel("rank score (1 - position/p)")
            for ax in axes.ravel()[len(chunk):]:
                ax.set_visible(False)
            suffix = "" if len(pages) == 1 else f"_{page + 1}"
            name = f"{_slug(label)}_scores{suffix}.png"
            save_figure(fig, out / name)
            part = "" if len(pages) == 1 else f" (part {page + 1} of {len(pages)})"
            made.append((f"{label}: each method's scores fitted on all rows (for illustration; "
                         "the tables use held-out rows only), its best-k selection in colour"
                         + ("; triangles: the truly relevant features" if ds.support is not None
                            else "") + part, name))
    return made


# ------------------------------------------------------------------------------------------
# reproduce
# ------------------------------------------------------------------------------------------


def plan_reproduce(args: argparse.Namespace) -> tuple[Path, Path]:
    """The report and results folder of ``reproduce``, checked before anything runs: an
    existing report or non-empty results folder needs ``--force`` (``--from-results``
    re-renders the report in place, its purpose), and the folder must take new files."""
    stem = Path(args.stem).stem if args.stem.endswith(".toml") else args.stem
    out = Path(args.out)
    report, sub = out / f"{stem}.md", out / stem
    if report.is_dir():
        raise CLIError(f"--out {out}: {report} is a directory")
    if out.exists() and not out.is_dir():
        raise CLIError(f"--out {out}: exists and is not a directory")
    plan = OutputPlan(force=args.force or args.from_results)
    plan.add_folder("--out", out, [])
    if not args.force and not args.from_results:
        if report.exists():
            raise CLIError(f"{report} exists; pass --force to replace it and its results in "
                           f"{sub}")
        if sub.is_dir() and any(p.name.endswith(_GENERATED) for p in sub.iterdir()):
            raise CLIError(f"{sub} holds results of an earlier run; pass --force to replace "
                           "them")
    return report, sub


#: the files a reproduction writes into OUT/<stem>/ (a hand-written notes.md is not one)
_GENERATED = (".csv.gz", ".meta.json", ".png")


def _merge_into(src: Path, dest: Path) -> None:
    """Move every entry of ``src`` into ``dest`` (created if needed), replacing namesakes and
    leaving other files of ``dest`` alone; ``src`` is removed."""
    if not dest.exists():
        os.replace(src, dest)
        return
    for item in src.iterdir():
        target = dest / item.name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(item, target)
    src.rmdir()


def cmd_reproduce(args: argparse.Namespace) -> int:
    """``sparsefs reproduce``."""
    if args.list or not args.stem:
        from sparsefs.harness._reproduce import config_dirs, list_reproductions

        if not args.list:
            raise CLIError("give a reproduction STEM (see 'sparsefs reproduce --list')")
        stems = list_reproductions(args.config_dir)
        if not stems:
            where = ", ".join(str(d) for d in config_dirs(args.config_dir)) or "nowhere"
            raise CLIError(f"no reproduction configs found (searched {where}); pass "
                           "--config-dir or set SPARSEFS_CONFIGS")
        for s in stems:
            print(s)
        return 0
    report, sub = plan_reproduce(args)
    from sparsefs.harness import (
        ReproductionSpec,
        find_config,
        markdown_report,
        reproduce,
        run_hooks,
    )
    from sparsefs.harness._results import utc_now

    path = find_config(args.stem, args.config_dir)
    spec = ReproductionSpec.from_toml(path)
    stem = spec.stem
    if args.from_results:
        from sparsefs.harness import render_report

        try:
            rendered = render_report(spec, args.out)
        except FileNotFoundError as exc:
            raise CLIError(str(exc)) from None
        print(f"Re-rendered {rendered} from the stored results in {Path(args.out) / stem}")
        return 0
    out = Path(args.out)
    made_out = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    remove_stale_stages(sub)
    # results, figures and report are written under a temporary folder in OUT, in a folder
    # named <stem> (the hooks link their figures as <stem>/...), and moved into place last
    stage = Path(tempfile.mkdtemp(dir=out, prefix=f".{stem}.sparsefs-{os.getpid()}-"))
    work = stage / stem
    work.mkdir()
    try:
        repro = reproduce(spec, quick=args.quick, n_jobs=args.n_jobs,
                          progress=args.progress, keep_predictions=not args.no_figures)
        figures: dict[str, list[tuple[str, str]]] = {}
        notes = []
        for res in repro.results:
            name = res.meta["experiment"]
            res.save(work / f"{name}.csv.gz")
            if not args.no_figures and not res.table.empty:
                figs, note = _figures(res, work, prefix=f"{name}_", dpi=90)
                if note:
                    notes.append(note)
                figures[name] = [(c, f"{stem}/{f}") for c, f in figs]
        extra = run_hooks(repro, work)
        if notes:
            extra.append(f"Figures skipped: {notes[0]}\n")
        command = f"sparsefs reproduce {stem}" + (" --quick" if args.quick else "") + \
            f" --out {shlex.quote(str(args.out))}"
        title = f"Reproduction: {spec.title}" + (" (quick run)" if args.quick else "")
        text = markdown_report(repro.results, title=title, command=command, date=utc_now(),
                               figures=figures, reproduction=repro.spec, quick=args.quick,
                               extra_sections=extra)
        (stage / f"{stem}.md").write_text(text, encoding="utf-8")
        plan_reproduce(args)  # nothing appeared meanwhile
        _merge_into(work, sub)  # files of this run replace their namesakes; notes.md stays
        os.replace(stage / f"{stem}.md", report)
        stage.rmdir()
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        if made_out:
            with contextlib.suppress(OSError):
                out.rmdir()
        raise
    skipped = [s["dataset"] for r in repro.results for s in r.meta.get("skipped", [])]
    print(f"Wrote {report} (results and figures in {sub})"
          + (f"; skipped data sets not found locally: {', '.join(skipped)}" if skipped else ""))
    return 0

