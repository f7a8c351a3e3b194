"""The runner: data sets x methods x folds as independent, seeded tasks (joblib)."""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from sparsefs.harness._data import MissingDataError, load_dataset
from sparsefs.harness._protocols import (
    ROW_COLUMNS,
    Task,
    build_method,
    method_requires_y,
    preprocess,
    run_task,
)
from sparsefs.harness._results import (
    SUPPORT_COLUMNS,
    LoadMonitor,
    Results,
    environment_metadata,
    utc_now,
)
from sparsefs.harness._seeds import DATA_STREAM, SPLIT_STREAM, derive_seed
from sparsefs.harness._spec import ExperimentSpec

__all__ = ["fit_method", "run"]

logger = logging.getLogger("sparsefs.harness")


def _stratify_on(spec: ExperimentSpec, y: np.ndarray) -> np.ndarray | None:
    """What the folds are stratified on: the classes, a survival target's event indicator
    (every fold keeps the censoring rate), nothing for a continuous target."""
    if spec.protocol == "regression":
        return None
    if spec.protocol == "survival":
        return y["event"].astype(np.intp)
    return y


def _splits(spec: ExperimentSpec, y: np.ndarray, seed: int, rep: int, n: int, label: str = "",
            groups: np.ndarray | None = None):
    """(fold, train, test) of one repetition ``rep``; folds are numbered across repetitions.

    With ``groups`` (the donor of every sample) every group stays whole: (stratified) group
    k-fold (scikit-learn's ``StratifiedGroupKFold``, ``GroupKFold`` for a continuous target)
    or a group hold-out (``GroupShuffleSplit``), so no group is in the training and the test
    rows of one fold."""
    cv = spec.cv
    if cv.scheme == "none":
        idx = np.arange(n)
        return [(rep, idx, idx)]
    strata = _stratify_on(spec, y)
    if groups is not None:
        n_groups = np.unique(groups).shape[0]
        needed = cv.n_splits if cv.scheme == "kfold" else 2
        if n_groups < needed:
            raise ValueError(
                f"{label}: {n_groups} groups cannot make {needed} folds that keep every group "
                "whole; lower the number of folds or drop the groups."
            )
    if cv.scheme == "kfold":
        from sklearn.model_selection import (
            GroupKFold,
            KFold,
            StratifiedGroupKFold,
            StratifiedKFold,
        )

        if groups is None:
            kind = KFold if strata is None else StratifiedKFold
        else:
            kind = GroupKFold if strata is None else StratifiedGroupKFold
        splitter = kind(n_splits=cv.n_splits, shuffle=True, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            folds = list(splitter.split(np.zeros(n), strata, groups))
        for w in caught:  # e.g. a class smaller than n_splits: logged, not printed
            logger.warning("%s: %s", label, w.message)
        return [(rep * cv.n_splits + i, tr, te) for i, (tr, te) in enumerate(folds)]
    if groups is not None:
        from sklearn.model_selection import GroupShuffleSplit

        splitter = GroupShuffleSplit(n_splits=1, train_size=cv.train_size, random_state=seed)
        tr, te = next(splitter.split(np.zeros(n), strata, groups))
        return [(rep, tr, te)]
    from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit

    kind = ShuffleSplit if strata is None else StratifiedShuffleSplit
    splitter = kind(n_splits=1, train_size=cv.train_size, random_state=seed)
    tr, te = next(splitter.split(np.zeros(n), strata))
    return [(rep, tr, te)]


def _target_summary(spec: ExperimentSpec, y) -> dict[str, Any]:
    """What the report's data table shows about an outcome target."""
    if spec.protocol == "survival":
        return {"n_events": int(y["event"].sum())}
    if spec.protocol == "regression":
        return {"target_range": f"{float(y.min()):.4g} to {float(y.max()):.4g}"}
    return {}


def _target(spec: ExperimentSpec, y, name: str):
    """``(y for the methods, number of classes)``: class indices for the class protocols,
    float values (regression) or the structured event / time array (survival)."""
    from sparsefs.utils._targets import resolve_target

    if spec.protocol == "regression":
        target = resolve_target(y, ("regression",), name=f"data set {name!r}")
        if target.y.ndim != 1:
            raise ValueError(f"data set {name!r}: the regression protocol takes one target.")
        return target.y, None
    if spec.protocol == "survival":
        return resolve_target(y, ("survival",), name=f"data set {name!r}",
                              hint="Give the file's time= and event= columns.").y, None
    classes, y_idx = np.unique(y, return_inverse=True)
    return y_idx.astype(np.intp), int(classes.shape[0])


def _redraw(spec: ExperimentSpec, i: int) -> bool:
    d = spec.datasets[i]
    if d.generator is None and d.loader is None and d.name != "default":
        return False
    return d.redraw if d.redraw is not None else spec.protocol == "clustering"


def _prepare(spec: ExperimentSpec, skipped: list[dict[str, str]], info: list[dict[str, Any]]):
    """Load every data set (and draw) and yield (i_data, rep, X, y_idx, support, splits)."""
    n_reps = spec.cv.n_repeats
    for i, dspec in enumerate(spec.datasets):
        redraw = _redraw(spec, i)
        reps = range(n_reps) if redraw else [None]
        for rep in reps:
            data_seed = derive_seed(spec.seed, i, DATA_STREAM, 0 if rep is None else rep)
            try:
                ds = load_dataset(dspec, seed=data_seed)
            except MissingDataError as exc:
                if spec.missing_data == "skip":
                    logger.warning("skipping data set %s: %s", dspec.display, exc)
                    skipped.append({"dataset": dspec.display, "reason": str(exc)})
                    break
                raise
            if ds.y is None:
                raise ValueError(
                    f"data set {dspec.display!r} has no labels; every protocol needs them for "
                    "evaluation (name the label column with target=...)."
                )
            y_idx, n_classes = _target(spec, ds.y, dspec.display)
            X = ds.X
            if not np.issubdtype(X.dtype, np.floating):
                X = X.astype(np.float64)
            groups = ds.groups
            if rep in (None, 0):
                info.append({
                    "dataset": dspec.display, "n_samples": int(X.shape[0]),
                    "n_features": int(X.shape[1]), "n_classes": n_classes,
                    **_target_summary(spec, y_idx),
                    "n_relevant": None if ds.support is None else int(ds.support.sum()),
                    "source": dspec.to_dict(), "redrawn": redraw,
                    "n_groups": None if groups is None else int(np.unique(groups).shape[0]),
                })
            if groups is not None and spec.preprocessing_scope == "global" and \
                    spec.preprocessing:
                raise ValueError(
                    f"data set {dspec.display!r} has groups: global preprocessing (SMOTE before "
                    "the split) would create samples of no group; use the per-fold scope."
                )
            if spec.preprocessing_scope == "global" and spec.preprocessing:
                seed = derive_seed(spec.seed, i, SPLIT_STREAM, 0 if rep is None else rep, 2)
                X, y_idx, _ = preprocess(spec.preprocessing, X, y_idx, None, seed,
                                         spec.smote_k_neighbors)
            rep_list = range(n_reps) if rep is None else [rep]
            for r in rep_list:
                split_seed = derive_seed(spec.seed, i, SPLIT_STREAM, r)
                splits = _splits(spec, y_idx, split_seed, r, X.shape[0], dspec.display,
                                 groups)
                yield i, r, X, y_idx, ds.support, splits


def _check_methods(spec: ExperimentSpec) -> None:
    """Fail early (before any data is loaded) on a method the protocol cannot evaluate."""
    for m in spec.methods:
        est = build_method(m, seed=0, n_classes=2)
        if spec.protocol == "clustering" and not hasattr(est, "fit_predict"):
            raise ValueError(
                f"method {m.display!r} is not a clusterer (no fit_predict); the clustering "
                "protocol scores each method's own labels. Evaluate selectors with the "
                "unsupervised protocol (k-means on the selected features)."
            )
        if spec.cv.scheme == "none" and method_requires_y(m, est):
            raise ValueError(
                f"method {m.display!r} is supervised, but cv = 'none' evaluates on the rows it "
                "was fitted on: its labels would leak into the evaluation. Use cv = 5 (k-means "
                "then runs on the held-out rows) or an unsupervised method."
            )


def run(
    spec: ExperimentSpec,
    *,
    n_jobs: int | None = 1,
    progress: bool | None = None,
    keep_predictions: bool = False,
    task_cost: Mapping[tuple[int, int], float] | None = None,
) -> Results:
    """Run an experiment.

    Every (data set, method, fold) is one task with its own seed
    ``SeedSequence(entropy=spec.seed, spawn_key=(i_data, i_method, fold))``; the CV splits
    (and SMOTE) depend on ``(i_data, fold)`` only, so all methods see the same folds. The
    numbers therefore do not depend on ``n_jobs`` or on the order in which tasks finish
    (only the timings do).

    Parameters
    ----------
    spec : ExperimentSpec
    n_jobs : int or None, default=1
        Tasks run in parallel with joblib (``-1``: all CPUs). Timings are measured inside
        each task, so they include contention when ``n_jobs > 1``.
    progress : bool or None, default=None
        Show a tqdm progress bar on stderr; ``None``: only when stderr is a terminal.
    keep_predictions : bool, default=False
        Keep every test fold's per-class scores (``Results.predictions``), for ROC curves.
    task_cost : mapping, optional
        ``(i_data, i_method) -> expected seconds`` of one task
        (:func:`sparsefs.harness._costs.task_costs`): the progress bar's remaining time weighs
        the tasks by it until each method's own tasks have been timed. Default: equal weights.

    Warnings raised inside a task in joblib's worker processes are re-issued here, in the
    calling process, once per distinct message, with their category (sequential tasks raise
    theirs directly).

    Returns
    -------
    Results
    """
    from sparsefs.harness._costs import TaskProgress

    if not isinstance(spec, ExperimentSpec):
        raise TypeError(f"spec must be an ExperimentSpec, got {type(spec).__name__}.")
    _check_methods(spec)
    monitor = LoadMonitor().start()
    started = utc_now()
    skipped: list[dict[str, str]] = []
    info: list[dict[str, Any]] = []
    labels = [d.display for d in spec.datasets]

    # Materialise the tasks with their data (the data of one data set is shared by its tasks).
    jobs: list[tuple[Task, Any, Any, Any]] = []
    for i, _r, X, y, support, splits in _prepare(spec, skipped, info):
        for fold, train, test in splits:
            for j in range(len(spec.methods)):
                task = Task(i_data=i, i_method=j, fold=fold, dataset=labels[i], train=train,
                            test=test, use_y=spec.cv.scheme != "none")
                jobs.append((task, X, y, support))
    logger.info("experiment %s: %d tasks on %d data set(s), n_jobs=%s", spec.name, len(jobs),
                len(info), n_jobs)

    show = progress if progress is not None else sys.stderr.isatty()
    bar = TaskProgress([(t.i_data, t.i_method) for t, *_ in jobs], task_cost, show, spec.name)
    results = []
    reissued: set[tuple[str, str]] = set()
    try:
        for res in _execute(jobs, spec, n_jobs, keep_predictions):
            results.append(res)
            for category, message, filename, lineno in res.warnings:
                if (category.__name__, message) not in reissued:
                    reissued.add((category.__name__, message))
                    warnings.warn_explicit(message, category, filename, lineno)
            bar.done(res.key[:2], res.elapsed)
    finally:
        bar.close()

    # Tasks may finish in any order: concatenate in (data set, method, fold) order.
    results.sort(key=lambda r: r.key)
    table = pd.DataFrame([row for r in results for row in r.rows], columns=list(ROW_COLUMNS))
    supports = None
    if spec.record_support:
        supports = pd.DataFrame([row for r in results for row in r.supports],
                                columns=list(SUPPORT_COLUMNS))
    predictions = _pool_predictions(results) if keep_predictions else None
    load = monitor.stop()
    meta = {
        "experiment": spec.name,
        "spec": spec.to_dict(),
        "spec_hash": spec.spec_hash(),
        "started": started,
        "finished": utc_now(),
        "n_jobs": n_jobs,
        "load": load,
        "datasets": info,
        "skipped": skipped,
        "leaky_preprocessing": spec.preprocessing_scope == "global" and bool(spec.preprocessing),
        **environment_metadata(),
    }
    logger.info("experiment %s: %d rows in %.1f s", spec.name, len(table), load["wall_s"])
    return Results(table=table, meta=meta, supports=supports, predictions=predictions)


def _execute(jobs, spec, n_jobs, keep_predictions) -> Iterable[Any]:
    if n_jobs in (None, 1) or len(jobs) <= 1:
        for task, X, y, support in jobs:
            yield run_task(task, X, y, support, spec, keep_predictions=keep_predictions)
        return
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    yield from parallel(
        delayed(run_task)(task, X, y, support, spec, keep_predictions=keep_predictions,
                          capture_warnings=True)
        for task, X, y, support in jobs
    )


def _pool_predictions(results) -> dict[tuple, tuple[np.ndarray, np.ndarray]]:
    parts: dict[tuple, list[tuple[int, np.ndarray, np.ndarray]]] = {}
    for r in results:
        for (dataset, method, est, k, fold), (_idx, y_true, scores) in r.predictions.items():
            parts.setdefault((dataset, method, est, k), []).append((fold, y_true, scores))
    out = {}
    for key, items in parts.items():
        items.sort(key=lambda t: t[0])
        out[key] = (np.concatenate([t[1] for t in items]), np.vstack([t[2] for t in items]))
    return out



def fit_method(
    spec: ExperimentSpec,
    method: int | str,
    dataset: Any,
    *,
    k: int | None = None,
) -> Any:
    """Fit one method of ``spec`` on a whole data set, with the spec's preprocessing.

    For figures and inspection after a run (the weights of the final model); never used for
    the scores of the results table, which always come from held-out rows.

    Parameters
    ----------
    spec : ExperimentSpec
    method : int or str
        Position or label of the method in ``spec.methods``.
    dataset : Dataset
    k : int, optional
        ``n_features_to_select`` (in ``rank`` and ``refit`` modes; default: the largest k).

    Returns
    -------
    estimator or None
        ``None`` for the all-features baseline.
    """
    labels = [m.display for m in spec.methods]
    i_method = method if isinstance(method, int) else labels.index(method)
    mspec = spec.methods[i_method]
    mode = mspec.resolved_mode(spec.protocol)
    y, n_classes = _target(spec, dataset.y, getattr(dataset, "name", "data"))
    X = dataset.X if np.issubdtype(dataset.X.dtype, np.floating) else dataset.X.astype(float)
    seed = derive_seed(spec.seed, 0, i_method, 0)
    if spec.preprocessing:
        X, y, _ = preprocess(spec.preprocessing, X, y, None, seed, spec.smote_k_neighbors)
    n_sel = None
    if mode in ("rank", "refit"):
        n_sel = min(k if k is not None else max(spec.k), X.shape[1])
    est = build_method(mspec, seed=seed, n_classes=n_classes, n_features_to_select=n_sel,
                       protocol=spec.protocol)
    if est is None:
        return None
    if method_requires_y(mspec, est) or spec.cv.scheme != "none":
        est.fit(X, y)
    else:
        est.fit(X)
    return est
